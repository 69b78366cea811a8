package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunJobs: --jobs runs the workers on fewer threads (poller groups)
// with every event counted, through reconnects (--connect per-event makes
// a new socket per event, attached to the worker's group), and is refused
// in one line, exit 2, where workers cannot share threads.
func TestRunJobs(t *testing.T) {
	needServers(t)
	dbarena(t, "prepare", "script", "--scale", "1", "--threads", "2", pgTarget).mustSucceed(t)
	defer dbarena(t, "cleanup", "script", pgTarget)

	js := jsonPath(t)
	dbarena(t, "run", "script", "--builtin", "tpcb-like", "--protocol", "prepared", "--threads", "5", "--jobs", "2",
		"--events", "300", "--report-interval", "0", "--monitor", "off", "--json", js, pgTarget).mustSucceed(t)
	run := readSummary(t, js)
	if n := run.PerType["tpcb-like"].Count; n != 300 || run.Jobs != 2 || run.Threads != 5 {
		t.Errorf("tpcb-like events %d, jobs %d, threads %d; want 300, 2, 5", n, run.Jobs, run.Threads)
	}
	if got := run.Figures["stmt.tpcb-like:6.count"]; got != 300 {
		t.Errorf("stmt.tpcb-like:6.count = %v, want 300", got)
	}
	if c := run.ServerCounters["commits"]; c < 300 {
		t.Errorf("server commits %d < 300 transactions", c)
	}

	// Grouped script workers run their events in steps on the group's
	// stack; an error goes back to the worker's coroutine, which retries
	// (40001) or counts it (22012, ignored) and steps on.
	file := filepath.Join(t.TempDir(), "fail.sql")
	if err := os.WriteFile(file, []byte("\\set r random(1, 6)\n\\if :r = 1\nSELECT 1/0;\n\\elif :r = 2\n"+
		"DO $$BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END$$;\n\\endif\nSELECT :r;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js = jsonPath(t)
	dbarena(t, "run", "script", "--file", file, "--threads", "4", "--jobs", "2", "--ignore-errors", "22012",
		"--events", "300", "--report-interval", "0", "--monitor", "off", "--json", js, pgTarget).mustSucceed(t)
	run = readSummary(t, js)
	if n := run.PerType[file].Count; n != 300 || run.Totals.Errors == 0 || run.Totals.Retries == 0 {
		t.Errorf("failing script: %d events, %d errors, %d retries; want 300 and some of each", n, run.Totals.Errors, run.Totals.Retries)
	}
	if got := run.Figures["stmt."+file+":7.count"]; got != 300 {
		t.Errorf("stmt.%s:7.count = %v, want 300 (one per event)", file, got)
	}

	js = jsonPath(t)
	dbarena(t, "run", "script", "--builtin", "select-only", "--threads", "4", "--jobs", "2", "--connect", "per-event",
		"--events", "200", "--report-interval", "0", "--monitor", "off", "--json", js, pgTarget).mustSucceed(t)
	run = readSummary(t, js)
	if n := run.PerType["select-only"].Count; n != 200 || run.Totals.Connects < 196 {
		t.Errorf("select-only events %d, connects %d; want 200 events and >= 196 connects", n, run.Totals.Connects)
	}

	// OLTP workers prepare their statements while they connect, before
	// their group runs.
	dbarena(t, "cleanup", "oltp_point_select", "--tables", "1", pgTarget) // another test's tables
	dbarena(t, "prepare", "oltp_point_select", "--tables", "1", "--table-size", "1000", pgTarget).mustSucceed(t)
	js = jsonPath(t)
	dbarena(t, "run", "oltp_read_write", "--tables", "1", "--table-size", "1000", "--threads", "3", "--jobs", "2",
		"--events", "100", "--report-interval", "0", "--monitor", "off", "--json", js, pgTarget).mustSucceed(t)
	if run = readSummary(t, js); run.Totals.Events != 100 || run.Totals.Queries.Read < 100*14 {
		t.Errorf("oltp_read_write: %d events, %+v queries; want 100 and >= 1400 reads (retries add some)", run.Totals.Events, run.Totals.Queries)
	}
	dbarena(t, "cleanup", "oltp_point_select", pgTarget).mustSucceed(t)

	// MariaDB's workers on mysqlwire share threads too.
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	js = jsonPath(t)
	dbarena(t, "run", "oltp_read_write", "--tables", "1", "--table-size", "1000", "--threads", "3", "--jobs", "2",
		"--events", "100", "--report-interval", "0", "--monitor", "off", "--json", js).mustSucceed(t)
	if run = readSummary(t, js); run.Totals.Events != 100 || run.Totals.Queries.Read < 100*14 || run.Jobs != 2 {
		t.Errorf("MariaDB oltp_read_write: %d events, %+v queries, jobs %d; want 100, >= 1400 reads, 2", run.Totals.Events, run.Totals.Queries, run.Jobs)
	}

	for _, args := range [][]string{
		// database/sql cannot share threads.
		{"run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--events", "10", "--jobs", "2", "--client", "sql"},
		{"run", "script", "--builtin", "select-only", "--events", "10", "--jobs", "2", "--rate", "100", pgTarget},
		{"run", "script", "--builtin", "select-only", "--events", "10", "--jobs", "-1", pgTarget},
	} {
		r := dbarena(t, args...)
		if r.code != ExitUsage || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, "--jobs") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line naming --jobs", args, r.code, r.stderr, ExitUsage)
		}
	}
}
