package micro

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// runAllTestsRE is the pattern sql-bench's run-all-tests reads "Time for"
// lines with (copied from its source, Perl's case-insensitive match).
var runAllTestsRE = regexp.MustCompile(`(?i)^(estimated |)time (to|for) ([^\s:]*)\s*\((\d*)(:\d*)*\)[^:]*:\s*([\d.]+) .*secs \(\s*([^\s]*) usr\s*\+*\s*([^\s]*) sys.*=\s+([\d.]*)\s+cpu`)

// TestTimeForLinesReadBySQLBench: every operation's line of the summary
// is one run-all-tests summarises, with micro's seconds, count and CPU;
// a capped one is "Estimated", a wrong one follows a Warning line, and the
// summary ends with run-all-tests' "Total time:" line.
func TestTimeForLinesReadBySQLBench(t *testing.T) {
	wl := New().(*Workload)
	run := &summary.Run{PerType: map[string]summary.Type{}, Figures: map[string]float64{},
		Notes: []string{"select_key: 3 wrong result(s), marked \"?\" (first: instance 1: got 0 rows, want 1)"}}
	for i, op := range Ops() {
		run.PerType[op] = summary.Type{Count: int64(i + 1)}
		run.Figures[SecondsPrefix+op] = float64(i) + 0.5
		run.Figures[UsrPrefix+op] = 0.25
		run.Figures[SysPrefix+op] = 0.5
	}
	run.Figures[ExtrapolatedPrefix+"insert"] = 1
	run.Figures[WrongPrefix+"select_key"] = 3
	out := wl.FormatSummary(run)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	seen := 0
	for i, l := range lines {
		m := runAllTestsRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		seen++
		op := m[3]
		if m[4] != itoa(run.PerType[op].Count) || m[6] != strconv.FormatFloat(run.Figures[SecondsPrefix+op], 'f', 3, 64) {
			t.Errorf("%s: count %s", op, m[4])
		}
		if m[7] != "0.25" || m[8] != "0.50" || m[9] != "0.75" {
			t.Errorf("%s: usr %s sys %s cpu %s", op, m[7], m[8], m[9])
		}
		if (m[1] != "") != (op == "insert") {
			t.Errorf("%s: estimated %q", op, m[1])
		}
		if op == "select_key" && !strings.HasPrefix(lines[i-1], "Warning: select_key returned 3 wrong result(s) (first: instance 1") {
			t.Errorf("select_key's line follows %q", lines[i-1])
		}
	}
	if seen != len(Ops()) {
		t.Errorf("run-all-tests reads %d of %d lines:\n%s", seen, len(Ops()), out)
	}
	if last := lines[len(lines)-1]; !regexp.MustCompile(`(?i)Total time:`).MatchString(last) || !strings.Contains(last, "CPU)") {
		t.Errorf("last line %q", last)
	}
}

// TestSQLBenchMap: every operation sql-bench's map names is micro's, and
// no two sql-bench operations are stored under one name.
func TestSQLBenchMap(t *testing.T) {
	ops := Ops()
	stored := map[string]string{}
	for _, m := range SQLBench {
		if m.Micro != "" && !contains(ops, m.Micro) {
			t.Errorf("%s: micro has no %s", m.Name, m.Micro)
		}
		if m.Micro == "" && m.Why == "" {
			t.Errorf("%s: no counterpart and no reason", m.Name)
		}
		n := SQLBenchName(m.Name)
		if other, ok := stored[n]; ok && other != m.Name {
			t.Errorf("%s and %s both stored as %s", other, m.Name, n)
		}
		stored[n] = m.Name
	}
	if SQLBenchName("select_simple") != "select_1" || SQLBenchName("select_1_row") != "select_1_row" {
		t.Error("SQLBenchName")
	}
}
