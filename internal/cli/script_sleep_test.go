package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// writeScript writes a pgbench script into the test's directory.
func writeScript(t *testing.T, src string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "s.sql")
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestScriptSleepOutOfRange: a \sleep past the longest duration used to
// wrap and not sleep at all; it is refused with FILE:LINE (exit 2) before
// anything runs, or, through a variable, fails the run naming the line.
func TestScriptSleepOutOfRange(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"SELECT 1;\n\\sleep 9300000000 s\n", ":2: \\sleep: 9300000000 s is out of range (at most 9223372036 s)"},
		{"\\sleep -99999999999999999999 ms\n", ":1: \\sleep: -99999999999999999999 ms is out of range"},
	} {
		f := writeScript(t, tc.src)
		r := dbarena(t, "run", "script", "--file", f, "--target", "sandbox:nosuch")
		if r.code != ExitUsage || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, f+tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", tc.src, r.code, r.stderr, f+tc.want)
		}
	}

	needServers(t)
	f := writeScript(t, "\\set n 9300000000\n\\sleep :n s\n")
	js := jsonPath(t)
	r := dbarena(t, "run", "script", "--file", f, "--events", "1", "--json", js, "--results", filepath.Join(t.TempDir(), "r.db"))
	run := readSummary(t, js)
	if want := f + ":2: \\sleep: 9300000000 s is out of range"; r.code != ExitFailed || run.Status != summary.StatusFailed ||
		!strings.Contains(run.Error, want) {
		t.Errorf("exit %d status %s error %q; want 1, failed and %q", r.code, run.Status, run.Error, want)
	}
}

// TestScriptSleepEndsOnTime: a \sleep longer than the time left used to
// hold the run for the 10 s stop grace; it wakes at the run's end.
func TestScriptSleepEndsOnTime(t *testing.T) {
	needServers(t)
	f := writeScript(t, "SELECT 1;\n\\sleep 30 s\n")
	for _, fl := range flavors() {
		for _, jobs := range []string{"0", "1"} { // a thread per worker; a poller group (PostgreSQL's lean client)
			if jobs == "1" && fl.target != pgTarget {
				continue // scripts on the MySQL family run on database/sql
			}
			t.Run(fl.name+"/jobs="+jobs, func(t *testing.T) {
				js := jsonPath(t)
				start := time.Now()
				r := dbarena(t, withTarget(fl.target, "run", "script", "--file", f, "--time", "2s", "--threads", "2",
					"--jobs", jobs, "--json", js, "--results", filepath.Join(t.TempDir(), "r.db"))...)
				took := time.Since(start)
				t.Logf("--time 2s with \\sleep 30 s: ended after %.1f s", took.Seconds())
				r.mustSucceed(t)
				// 2 s, the set-up and the storing; the stop grace is 10 s.
				if took > 8*time.Second {
					t.Errorf("run took %v: the sleep held it past --time 2s", took)
				}
				run := readSummary(t, js)
				if run.Status != summary.StatusComplete || run.Totals.Unfinished != 2 || run.Totals.Errors != 0 {
					t.Errorf("status %s unfinished %d errors %d: want complete, the 2 sleeping events unfinished",
						run.Status, run.Totals.Unfinished, run.Totals.Errors)
				}
			})
		}
	}
}
