package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// oldMySQLBasedir is the basedir of the MySQL 5.5 in the server catalogue
// of $DBARENA_HOME (or the default home), where scripts/fetch-servers
// registers mysql-5.5.9. Missing: the test is skipped with a line saying
// so, or fails under CI, whose test step fetches it.
func oldMySQLBasedir(t *testing.T) string {
	t.Helper()
	home := os.Getenv("DBARENA_HOME")
	if home == "" {
		h, _ := os.UserHomeDir()
		home = filepath.Join(h, ".local", "share", "dbarena")
	}
	entries, err := catalog.Open(home).List()
	for _, e := range entries {
		if e.Flavor == target.FlavorMySQL && sandbox.CompareVersions(e.Version, "5.5") >= 0 && sandbox.CompareVersions(e.Version, "5.6") < 0 {
			return e.Basedir
		}
	}
	msg := "no MySQL 5.5 in the server catalogue of " + home + " (run scripts/fetch-servers test to fetch mysql-5.5.9)"
	if err != nil {
		msg += ": " + err.Error()
	}
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestMySQL55Workloads: what runs on MariaDB runs on MySQL 5.5.9 started
// from the catalogue: oltp_read_write on the lean wire client and on
// database/sql, TPC-C with one warehouse, a pgbench-language script and
// micro, each agreeing with the server's own counters; the summary
// records Oracle MySQL as the flavor.
func TestMySQL55Workloads(t *testing.T) {
	needServers(t)
	basedir := oldMySQLBasedir(t)
	dbarena(t, "server", "start", "m55", "--basedir", basedir, "--profile", "fast").mustSucceed(t)
	t.Cleanup(func() { dbarena(t, "server", "rm", "m55") })
	tg := "--target=sandbox:m55"

	t.Run("oltp_read_write", func(t *testing.T) {
		dbarena(t, "prepare", "oltp_read_write", "--tables", "2", "--table-size", "2000", tg).mustSucceed(t)
		const events = 1500
		for _, client := range []string{"auto", "sql"} {
			t.Run(client, func(t *testing.T) {
				js := jsonPath(t)
				r := dbarena(t, "run", "oltp_read_write", "--tables", "2", "--table-size", "2000", "--threads", "2",
					"--events", strconv.Itoa(events), "--client", client, "--json", js, tg).mustSucceed(t)
				assertNoPassword(t, "stdout", r.stdout)
				run := readSummary(t, js)
				if run.Target.Flavor != "mysql" || run.Target.Version != "5.5.9" {
					t.Fatalf("target %+v, want mysql 5.5.9", run.Target)
				}
				if run.Totals.Events != events || run.Totals.Errors != 0 {
					t.Fatalf("events %d errors %d, want %d and 0", run.Totals.Events, run.Totals.Errors, events)
				}
				sc := run.ServerCounters
				within(t, "Questions vs queries", sc["queries"], run.Totals.Queries.Total, 0.02)
				within(t, "Com_commit vs events", sc["commits"], run.Totals.Events, 0.02)
				if sc["rows_inserted"] < events {
					t.Errorf("Innodb_rows_inserted %d < events %d", sc["rows_inserted"], events)
				}
			})
		}
	})

	t.Run("tpcc", func(t *testing.T) {
		dbarena(t, "prepare", "tpcc", "--warehouses", "1", tg).mustSucceed(t)
		js := jsonPath(t)
		dbarena(t, "run", "tpcc", "--warehouses", "1", "--threads", "2", "--events", "400", "--json", js, tg).mustSucceed(t)
		run := readSummary(t, js)
		if run.Totals.Events != 400 {
			t.Fatalf("events %d, want 400", run.Totals.Events)
		}
		sc := run.ServerCounters
		within(t, "Questions vs queries", sc["queries"], run.Totals.Queries.Total, 0.02)
		// Delivery commits once per district: commits do not count events.
		q := run.Totals.Queries
		within(t, "Com_select vs reads", sc["selects"], q.Read, 0.02)
		within(t, "Com_insert+update+delete vs writes", sc["inserts"]+sc["updates"]+sc["deletes"], q.Write, 0.02)
		r := dbarena(t, "check", "tpcc", "--warehouses", "1", tg).mustSucceed(t)
		if strings.Contains(r.stdout, "[FAIL]") {
			t.Errorf("check tpcc after the run:\n%s", r.stdout)
		}
	})

	t.Run("script", func(t *testing.T) {
		dbarena(t, "prepare", "script", "--builtin", "tpcb-like", "--scale", "1", tg).mustSucceed(t)
		js := jsonPath(t)
		dbarena(t, "run", "script", "--builtin", "tpcb-like", "--scale", "1", "--threads", "2", "--events", "1000", "--json", js, tg).mustSucceed(t)
		run := readSummary(t, js)
		if run.Totals.Events != 1000 || run.Totals.Errors != 0 {
			t.Fatalf("events %d errors %d", run.Totals.Events, run.Totals.Errors)
		}
		within(t, "Questions vs queries", run.ServerCounters["queries"], run.Totals.Queries.Total, 0.02)
		within(t, "Com_commit vs transactions", run.ServerCounters["commits"], run.Totals.Events, 0.02)
	})

	t.Run("micro", func(t *testing.T) {
		dbarena(t, "prepare", "micro", "--scale", "0.02", tg).mustSucceed(t)
		js := jsonPath(t)
		r := dbarena(t, "run", "micro", "--scale", "0.02", "--json", js, tg).mustSucceed(t)
		run := readSummary(t, js)
		if run.Totals.Errors != 0 || strings.Contains(r.stdout, "Warning:") {
			t.Errorf("micro on MySQL 5.5: %d errors %v\n%s", run.Totals.Errors, run.Totals.ErrorsByCode, tail(r.stdout, 30))
		}
		if len(run.PerType) < 78 {
			t.Errorf("%d operations, want 78", len(run.PerType))
		}
	})
}
