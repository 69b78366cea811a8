package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/store"
)

// TestConnectAxisPlan: connect: [persistent, per-event] runs each cell
// with its --connect (per-event cells open a connection per event, the
// persistent ones none), stores the coordinate and shows it in plan show.
func TestConnectAxisPlan(t *testing.T) {
	needServers(t)
	my := suite.mariadb.Target()
	path := writePlan(t, fmt.Sprintf(`name: connaxis
servers:
  - name: maria
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
workloads:
  - name: oltp_point_select
    params: {tables: 1, table-size: 1000}
axes:
  threads: [2]
  connect: [persistent, per-event]
rounds: 1
warmup: 0
duration: 1s
`, my.User, my.Password, my.Port, my.Database))
	results := filepath.Join(t.TempDir(), "r.db")
	dbarena(t, "plan", "run", path, "--results", results).mustSucceed(t)
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows := planRuns(t, results, "connaxis")
	if len(rows) != 2 {
		t.Fatalf("%d runs, want 2", len(rows))
	}
	for _, row := range rows {
		run, err := st.Run(context.Background(), row.ID)
		if err != nil {
			t.Fatal(err)
		}
		mode := run.Plan.Coords["connect"]
		switch {
		case mode == "per-event" && (run.Totals.Events == 0 || run.Totals.Connects+2 < run.Totals.Events): // each worker's first event may use its first connection
			t.Errorf("per-event: %d connects for %d events", run.Totals.Connects, run.Totals.Events)
		case mode == "persistent" && run.Totals.Connects != 0:
			t.Errorf("persistent: %d connects", run.Totals.Connects)
		case mode != "per-event" && mode != "persistent":
			t.Errorf("run %d: coords %v", row.ID, run.Plan.Coords)
		}
	}
	show := dbarena(t, "plan", "show", "connaxis", "--results", results).mustSucceed(t)
	for _, want := range []string{"threads=2 connect=persistent", "threads=2 connect=per-event"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("plan show lacks %q:\n%s", want, show.stdout)
		}
	}
}
