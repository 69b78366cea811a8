package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A script error names FILE:LINE on one line and exits 2 before any run.
func TestScriptErrorExit2(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.sql")
	if err := os.WriteFile(bad, []byte("SELECT 1;\n\\set x 1 +\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "script", "--file", bad, "--target", "sandbox:nosuch"}, bad + ":2: \\set x: syntax error"}, // 1/0 fails when run, as in pgbench
		{[]string{"run", "script", "--builtin", "tpcb-fast"}, "--builtin"},
		{[]string{"run", "script", "--builtin", "select-only", "--protocol", "binary"}, "--protocol"},
	} {
		r := dbarena(t, tc.args...)
		if r.code != ExitUsage || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, r.code, r.stderr, ExitUsage, tc.want)
		}
	}
}

// pgbench's tpcb-like through the whole pipeline on both families: per
// script counts from the runner, per statement figures from the workload,
// and the server's commits.
func TestScriptRun(t *testing.T) {
	needServers(t)
	const events = 400
	for _, f := range flavors() {
		t.Run(f.name, func(t *testing.T) {
			dbarena(t, withTarget(f.target, "prepare", "script", "--scale", "1", "--threads", "2")...).mustSucceed(t)
			js := jsonPath(t)
			r := dbarena(t, withTarget(f.target, "run", "script", "--builtin", "tpcb-like@3", "--builtin", "select-only@1",
				"--protocol", "prepared", "--threads", "2", "--events", "400", "--json", js)...).mustSucceed(t)
			if !strings.Contains(r.stdout, "UPDATE pgbench_accounts") {
				t.Errorf("output lacks the per-statement table:\n%s", r.stdout)
			}
			run := readSummary(t, js)
			tpcb, sel := run.PerType["tpcb-like"].Count, run.PerType["select-only"].Count
			if tpcb+sel != events || tpcb < sel {
				t.Fatalf("per script: tpcb-like %d, select-only %d; want %d in all, weighted 3:1", tpcb, sel, events)
			}
			if got := run.Figures["stmt.tpcb-like:6.count"]; int64(got) != tpcb {
				t.Errorf("stmt.tpcb-like:6.count = %v, want %d", got, tpcb)
			}
			if got := run.Figures["stmt.select-only:2.count"]; int64(got) != sel {
				t.Errorf("stmt.select-only:2.count = %v, want %d", got, sel)
			}
			q := run.Totals.Queries
			if q.Write != 4*tpcb || q.Read != tpcb+sel || q.Other != 2*tpcb {
				t.Errorf("queries %+v, want %d writes, %d reads, %d other", q, 4*tpcb, tpcb+sel, 2*tpcb)
			}
			// Every tpcb-like event commits one transaction; the server
			// counts also the pipeline's own reads.
			if c := run.ServerCounters["commits"]; c < tpcb {
				t.Errorf("server commits %d < %d tpcb-like transactions", c, tpcb)
			}
			dbarena(t, withTarget(f.target, "cleanup", "script")...).mustSucceed(t)
		})
	}
}
