package replay

import (
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Helpers for the external tests (compare_test.go).

func SetupDB(t testing.TB, env workload.Env, name string, v2 int) { setupDB(t, env, name, v2) }

func TrafficFile(t testing.TB, fam target.Family, db string) string {
	return traffic(fam, db, 400).file(t)
}

func ReplayRun(t testing.TB, env workload.Env, file string, flags ...string) *summary.Run {
	run, _ := replayRun(t, env, file, flags...)
	run.Workload = "replay"
	return run
}
