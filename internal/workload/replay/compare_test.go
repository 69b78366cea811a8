package replay_test

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload/replay"
)

// TestCompareReplay: the same capture replayed into two databases, one
// with a planted difference (items 2), compares with a result difference
// for exactly the fingerprint that reads it, with that statement as the
// example, and the per-fingerprint table first in `compare`'s output.
func TestCompareReplay(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	replay.SetupDB(t, env, "cmp_a", 20)
	replay.SetupDB(t, env, "cmp_b", 99)
	file := replay.TrafficFile(t, target.Postgres, "cmp_a")
	a := replay.ReplayRun(t, env, file, "--speed", "max", "--record-results")
	b := replay.ReplayRun(t, env, file, "--speed", "max", "--record-results", "--db", "cmp_b")
	a.ID, b.ID = 1, 2
	rc := report.CompareReplay([]*summary.Run{a}, []*summary.Run{b}, 0.2)
	if rc == nil || !rc.Paired {
		t.Fatalf("comparison %+v", rc)
	}
	var differ []report.ReplayFP
	for _, f := range rc.FPs {
		if f.ResultDiffs > 0 {
			differ = append(differ, f)
		}
		if f.CountA != f.CountB || f.ErrorsOnly != "" || f.RowsA != f.RowsB {
			t.Errorf("fingerprint %s: %+v", f.ID, f)
		}
	}
	// Each of the 4 sessions executes the prepared select for items 1 and 2.
	if len(differ) != 1 || differ[0].ResultDiffs != 4 || !strings.HasPrefix(differ[0].Text, "select v from items where id = ?") ||
		!strings.Contains(differ[0].Example, "SELECT v FROM items WHERE id = $1") {
		t.Fatalf("result differences: %+v", differ)
	}
	if differ[0].Slower < 0 || differ[0].Faster < 0 {
		t.Errorf("paired statements not counted: %+v", differ[0])
	}

	cmp, err := report.Compare([]*summary.Run{a}, []*summary.Run{b})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := cmp.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	t.Log(s)
	fp, tps := strings.Index(s, "Replay by fingerprint"), strings.Index(s, "tps")
	if fp < 0 || tps < 0 || fp > tps || !strings.Contains(s, "Results differ for "+differ[0].ID+" (4 statements)") {
		t.Errorf("compare output:\n%s", s)
	}
}
