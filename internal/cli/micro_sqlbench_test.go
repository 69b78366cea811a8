package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMicroWrongScaleRefused: tables prepared at one --scale refuse a run
// at another before it starts (exit 2, one line naming --scale and the
// scale they were prepared with), and nothing is stored (#35: it used to
// warn and store a complete run whose key lookups found nothing).
func TestMicroWrongScaleRefused(t *testing.T) {
	needServers(t)
	res := "--results=" + filepath.Join(t.TempDir(), "results.db")
	for _, f := range flavors() {
		dbarena(t, withTarget(f.target, "prepare", "micro", "--scale", "0.02")...).mustSucceed(t)
		for _, scale := range []string{"0.05", "0.01"} {
			r := dbarena(t, withTarget(f.target, "run", "micro", "--scale", scale, "--tests", "connect", res)...)
			if r.code != ExitUsage || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 ||
				!strings.Contains(r.stderr, "--scale "+scale+" wants") || !strings.Contains(r.stderr, "prepared with --scale 0.02") {
				t.Errorf("%s --scale %s: exit %d, stderr %q; want exit 2, one line naming both scales", f.name, scale, r.code, r.stderr)
			}
		}
		dbarena(t, withTarget(f.target, "run", "micro", "--scale", "0.02", "--tests", "connect", "--report-interval", "0", res)...).mustSucceed(t)
		dbarena(t, withTarget(f.target, "cleanup", "micro")...).mustSucceed(t)
	}
	r := dbarena(t, "results", "list", res).mustSucceed(t)
	if n := strings.Count(r.stdout, " micro "); n != 2 {
		t.Errorf("results list shows %d micro runs, want the 2 that ran:\n%s", n, r.stdout)
	}
}

// TestHelpCompare: `dbarena help compare` prints compare's own help.
func TestHelpCompare(t *testing.T) {
	r := dbarena(t, "help", "compare").mustSucceed(t)
	for _, want := range []string{"dbarena compare ID_A ID_B", "--threshold", "tie", "What differs"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help compare lacks %q:\n%s", want, r.stdout)
		}
	}
	dbarena(t, "help", "report").mustSucceed(t)
}

// sqlBenchRUN is a small RUN file of sql-bench's run-all-tests.
const sqlBenchRUN = `Benchmark DBD suite: 2.15
Date of test:        2024-03-01 10:00:00
Running tests on:    Linux 6.1.0 x86_64
Arguments:           --small-test
Comments:            
Limits from:         
Server version:      MySQL 10.11.6 MariaDB 0+deb12u1
Optimization:        None
Hardware:            

connect: Total time:  3 wallclock secs ( 0.05 usr  0.14 sys +  0.00 cusr  0.00 csys =  0.19 CPU)

All 1 test executed successfully

Totals per operation:
Operation             seconds     usr     sys     cpu   tests
connect                                1.00    0.01    0.02    0.03     100 
connect+select_simple                  1.00    0.01    0.01    0.02     100 
select_simple                          1.00    0.00    0.03    0.03    1000 
TOTALS                                 3.00    0.01    0.06    0.08    1200 
`

// TestResultsImportSQLBench: sql-bench's RUN file is imported as a run
// (again: skipped), and compared with a micro run operation by operation,
// sql-bench's connect+select_simple and select_simple beside micro's
// connect+select_1 and select_1; a file that is neither sql-bench's nor an
// export is refused with exit 2 and its line.
func TestResultsImportSQLBench(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	res := "--results=" + filepath.Join(dir, "results.db")
	runFile := filepath.Join(dir, "RUN-mysql-Linux_x86_64")
	if err := os.WriteFile(runFile, []byte(sqlBenchRUN), 0o644); err != nil {
		t.Fatal(err)
	}
	r := dbarena(t, "results", "import", runFile, res).mustSucceed(t)
	if !strings.Contains(r.stdout, "Imported 1 sql-bench result file(s)") || !strings.Contains(r.stdout, "as runs 1 (workload sql-bench)") {
		t.Fatalf("import: %s", r.stdout)
	}
	r = dbarena(t, "results", "import", runFile, res).mustSucceed(t)
	if !strings.Contains(r.stdout, "Skipped 1 runs already in the store (runs 1)") {
		t.Errorf("second import: %s", r.stdout)
	}
	dbarena(t, "prepare", "micro", "--scale", "0.01").mustSucceed(t)
	dbarena(t, "run", "micro", "--scale", "0.01", "--tests", "connect", "--report-interval", "0", res).mustSucceed(t)
	dbarena(t, "cleanup", "micro").mustSucceed(t)
	r = dbarena(t, "compare", "1", "2", res).mustSucceed(t)
	for _, want := range []string{"run 1: sql-bench on mariadb 10.11.6-MariaDB-0+deb12u1 (sql-bench file RUN-mysql-Linux_x86_64)",
		"run 2: micro on mariadb ", "(sandbox default)", "Micro suite: seconds per operation", "connect+select_1 ", "select_1 ", "What differs"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("compare lacks %q:\n%s", want, r.stdout)
		}
	}
	bad := filepath.Join(dir, "RUN-bad")
	if err := os.WriteFile(bad, []byte("Benchmark DBD suite: 2.15\nTotals per operation:\nconnect many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = dbarena(t, "results", "import", bad, res)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "RUN-bad line 3") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("bad file: exit %d, stderr %q", r.code, r.stderr)
	}
	r = dbarena(t, "results", "list", res).mustSucceed(t)
	if strings.Count(r.stdout, "\n") != 3 { // header and two runs
		t.Errorf("results list after a refused import:\n%s", r.stdout)
	}
}
