package cli

import (
	"strings"
	"testing"
)

// TestNumberOfQueries: mysqlslap's --number-of-queries N runs N statements
// in all, as whole events of the --query statements, across workers.
func TestNumberOfQueries(t *testing.T) {
	needServers(t)
	js := jsonPath(t)
	dbarena(t, "run", "script", "--query", "SELECT 1;SELECT 2", "--number-of-queries", "101", "--threads", "3",
		"--report-interval", "0", "--monitor", "none", "--json", js).mustSucceed(t)
	run := readSummary(t, js)
	// 101 statements of 2 a run: 51 events, 102 statements.
	if run.Totals.Events != 51 || run.Totals.Queries.Total != 102 {
		t.Errorf("events %d, statements %d; want 51 and 102", run.Totals.Events, run.Totals.Queries.Total)
	}
	if run.ServerCounters["selects"] < 102 {
		t.Errorf("server selects %d, want >= 102", run.ServerCounters["selects"])
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--query", "SELECT 1", "--number-of-queries", "5", "--events", "5"}, "give one"},
		{[]string{"--builtin", "select-only", "--number-of-queries", "5"}, "--query only"},
		{[]string{"--query", "SELECT 1", "--query", "SELECT 1;SELECT 2", "--number-of-queries", "5"}, "same number"},
	} {
		r := dbarena(t, append([]string{"run", "script"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
