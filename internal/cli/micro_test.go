package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMicro runs the micro suite on both sandboxes (it ends by itself,
// without --time or --events), then compares and reports the two runs:
// the winner table appears.
func TestMicro(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	res := "--results=" + filepath.Join(dir, "results.db")
	var ids []string
	for _, f := range flavors() {
		dbarena(t, withTarget(f.target, "prepare", "micro", "--scale", "0.01")...).mustSucceed(t)
		js := filepath.Join(dir, f.name+".json")
		r := dbarena(t, withTarget(f.target, "run", "micro", "--scale", "0.01", "--tests", "connect,transactions",
			"--report-interval", "0", "--json", js, res)...).mustSucceed(t)
		for _, want := range []string{"Time for connect (1): ", "Time for commit (10): ", "Time for rollback (10): ", " ops/s ", "TOTALS: "} {
			if !strings.Contains(r.stdout, want) {
				t.Fatalf("%s: output lacks %q:\n%s", f.name, want, r.stdout)
			}
		}
		run := readSummary(t, js)
		if run.Status != "complete" || run.PerType["commit"].Count != 10 || run.Totals.Events != 1+1+10+10+10 {
			t.Fatalf("%s: status %s, commit %d, events %d", f.name, run.Status, run.PerType["commit"].Count, run.Totals.Events)
		}
		ids = append(ids, fmt.Sprint(run.ID))
		dbarena(t, withTarget(f.target, "cleanup", "micro")...).mustSucceed(t)
	}
	r := dbarena(t, "compare", ids[0], ids[1], res).mustSucceed(t)
	if !strings.Contains(r.stdout, "Micro suite: seconds per operation") || !strings.Contains(r.stdout, "rollback") {
		t.Fatalf("compare lacks the winner table:\n%s", r.stdout)
	}
	md := filepath.Join(dir, "r.md")
	dbarena(t, "report", ids[0], ids[1], "-o", md, res).mustSucceed(t)
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "## Micro suite") || !strings.Contains(string(b), "| commit |") {
		t.Fatalf("markdown report lacks the winner table:\n%s", b)
	}
	assertNoPassword(t, "micro", r.stdout+string(b))
}

func TestMicroBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"run", "micro", "--tests", "select,nope"},
		{"run", "micro", "--scale", "0"},
		{"prepare", "micro", "--scale", "-1"},
	} {
		r := dbarena(t, args...)
		if r.code != ExitUsage || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, args[2]) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %s", args, r.code, r.stderr, args[2])
		}
	}
}
