package cli

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/workload/web"
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

// TestRepsLimitEvents: an http run with --reps and no --time is not cut by
// the default --time: it goes until threads x reps requests.
func TestRepsLimitEvents(t *testing.T) {
	w := web.New()
	var o runOptions
	fs := newFlagSet("run http")
	o.flags(fs)
	w.Flags(fs)
	if err := parseFlags(fs, []string{"--url", "http://127.0.0.1:1/", "--reps", "5", "--threads", "4"}); err != nil {
		t.Fatal(err)
	}
	if err := validate(o.validate(fs), w.Validate()); err != nil {
		t.Fatal(err)
	}
	// The request `dbarena run` makes (before, run configured the
	// workload before telling it its threads: --reps did not limit it).
	a := &App{Getenv: func(string) string { return "" }}
	req := a.runRequest(w, &o, execute.Given{Threads: fs.Changed("threads"), Time: fs.Changed("time"), Events: fs.Changed("events")})
	if err := req.Configure(); err != nil {
		t.Fatal(err)
	}
	if req.Config.Events != 20 || req.Config.Duration != 0 {
		t.Errorf("events %d, time %v; want 20 and none", req.Config.Events, req.Config.Duration)
	}
}
