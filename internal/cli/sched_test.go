package cli

import (
	"runtime"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/measure/cpusched"
)

// TestRunSched: by default (auto) a closed-loop run on the lean PostgreSQL
// client runs its threads under SCHED_BATCH, and other runs (MariaDB,
// --rate, --client sql) under the normal policy; --sched batch|normal
// decides instead. The summary says which, the process's threads get the
// default policy back after the run, and a bad --sched is refused in one
// line, exit 2.
func TestRunSched(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	dbarena(t, "prepare", "oltp_point_select", "--tables", "1", "--table-size", "1000", pgTarget).mustSucceed(t)
	defer dbarena(t, "cleanup", "oltp_point_select", pgTarget)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{pgTarget}, "batch"},
		{[]string{pgTarget, "--sched", "normal"}, "normal"},
		{[]string{pgTarget, "--rate", "500"}, "normal"},
		{[]string{pgTarget, "--client", "sql"}, "normal"},
		{nil, "normal"},
		{[]string{"--sched", "batch"}, "batch"},
		{[]string{"--rate", "500", "--sched", "batch"}, "batch"},
	} {
		js := jsonPath(t)
		args := append([]string{"run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "2",
			"--events", "50", "--report-interval", "0", "--monitor", "off", "--json", js}, tc.args...)
		dbarena(t, args...).mustSucceed(t)
		if run := readSummary(t, js); run.Sched != tc.want || run.Totals.Events != 50 {
			t.Errorf("%v: sched %q, %d events; want %q, 50", tc.args, run.Sched, run.Totals.Events, tc.want)
		}
		if got := cpusched.Current(); got != cpusched.Normal {
			t.Errorf("%v: after the run this thread is under %s, want normal", tc.args, got)
		}
	}
	r := dbarena(t, "run", "oltp_point_select", "--events", "10", "--sched", "fifo")
	if r.code != ExitUsage || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, "--sched") {
		t.Errorf("--sched fifo: exit %d, stderr %q; want exit %d and one line naming --sched", r.code, r.stderr, ExitUsage)
	}
}

// TestRunPlacement: by default a closed-loop run on the lean clients with
// a thread per worker, against a sandbox (127.0.0.1), follows its server
// processes' CPUs, and the summary says so; --placement kernel, --jobs and
// --rate do not (no thread of its own to move); a bad --placement is
// refused in one line, exit 2.
func TestRunPlacement(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	dbarena(t, "prepare", "oltp_point_select", "--tables", "1", "--table-size", "1000", pgTarget).mustSucceed(t)
	defer dbarena(t, "cleanup", "oltp_point_select", pgTarget)
	follow := "follow"
	if runtime.NumCPU() < 2 {
		follow = "" // one CPU: nothing to follow
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{pgTarget}, follow},
		{nil, follow},
		{[]string{pgTarget, "--placement", "kernel"}, ""},
		{[]string{pgTarget, "--jobs", "1"}, ""},
		{[]string{pgTarget, "--rate", "500"}, ""},
	} {
		js := jsonPath(t)
		args := append([]string{"run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "2",
			"--events", "200", "--report-interval", "0", "--monitor", "off", "--json", js}, tc.args...)
		dbarena(t, args...).mustSucceed(t)
		if run := readSummary(t, js); run.Placement != tc.want || run.Totals.Events != 200 || (run.Placement == "" && run.PlacementMoves != 0) {
			t.Errorf("%v: placement %q (%d moves), %d events; want %q, 200", tc.args, run.Placement, run.PlacementMoves, run.Totals.Events, tc.want)
		}
	}
	r := dbarena(t, "run", "oltp_point_select", "--events", "10", "--placement", "pinned")
	if r.code != ExitUsage || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, "--placement") {
		t.Errorf("--placement pinned: exit %d, stderr %q; want exit %d and one line naming --placement", r.code, r.stderr, ExitUsage)
	}
}
