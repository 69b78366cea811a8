package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dbarena/dbarena/internal/results/store"
)

// TestPlanEventLimit: a plan cell of script with number-of-queries runs
// exactly that many events (mysqlslap's --number-of-queries), not the
// plan's default 60 s, as `dbarena run script` does.
func TestPlanEventLimit(t *testing.T) {
	needServers(t)
	my := suite.mariadb.Target()
	path := writePlan(t, fmt.Sprintf(`name: qlimit
servers:
  - name: maria
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
workloads:
  - name: script
    params: {query: SELECT 1, number-of-queries: 7}
axes:
  threads: [2]
rounds: 1
warmup: 0
`, my.User, my.Password, my.Port, my.Database))
	results := filepath.Join(t.TempDir(), "r.db")
	dbarena(t, "plan", "run", path, "--results", results).mustSucceed(t)
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows := planRuns(t, results, "qlimit")
	if len(rows) != 1 {
		t.Fatalf("%d runs, want 1", len(rows))
	}
	run, err := st.Run(context.Background(), rows[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "complete" || run.Totals.Events != 7 {
		t.Errorf("run: %s %q, %d events; want complete, 7", run.Status, run.Error, run.Totals.Events)
	}
}
