package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

func parseFile(t *testing.T, name string, rename func(string) string) *summary.Run {
	t.Helper()
	p := filepath.Join("testdata", "sqlbench", name)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := ParseSQLBench(p, f, rename)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestParseSQLBenchRUN: run-all-tests' RUN file gives one run with every
// operation of its "Totals per operation" table, "+" as extrapolated, "?"
// as a wrong result counted as an error, the server read from "Server
// version", and a failed program failing the run.
func TestParseSQLBenchRUN(t *testing.T) {
	run := parseFile(t, "RUN-mysql-Linux_x86_64", func(op string) string {
		if op == "select_simple" {
			return "select_1"
		}
		return op
	})
	if run.Workload != SQLBenchWorkload || !run.HasSection(summary.SectionMicro) || run.Threads != 1 {
		t.Errorf("workload %q sections %q threads %d", run.Workload, run.Sections, run.Threads)
	}
	if run.Target.Flavor != "mariadb" || run.Target.Version != "10.11.6-MariaDB-0+deb12u1" {
		t.Errorf("target %+v", run.Target)
	}
	if !run.StartedAt.Equal(time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)) || run.DurationS != 2 {
		t.Errorf("started %v duration %v", run.StartedAt, run.DurationS)
	}
	for k, v := range map[string]float64{
		"micro.seconds.connect": 1, "micro.usr.connect": 0.01, "micro.sys.connect": 0.02,
		"micro.seconds.select_1": 1, "micro.extrapolated.select_1": 1, "micro.wrong.count_distinct": 1,
		"sqlbench.total.connect": 2, SQLBenchResolution: 1,
	} {
		if run.Figures[k] != v {
			t.Errorf("figure %s = %v, want %v", k, run.Figures[k], v)
		}
	}
	if _, ok := run.Figures["micro.seconds.select_simple"]; ok {
		t.Error("select_simple stored under its own name, not the renamed one")
	}
	if run.PerType["select_1"].Count != 1000 || run.Totals.Events != 1300 || run.Totals.ErrorsByCode["wrong_result"] != 1 {
		t.Errorf("per type %+v, events %d, errors %v", run.PerType["select_1"], run.Totals.Events, run.Totals.ErrorsByCode)
	}
	if run.Status != summary.StatusFailed || !strings.Contains(strings.Join(run.Notes, "\n"), "transactions: Test skipped") {
		t.Errorf("status %s, notes %q", run.Status, run.Notes)
	}
	if run.Params["arguments"] != "--small-test --create-options=ENGINE=InnoDB" || run.Params["sqlbench_version"] != "2.15" || run.Params["comments"] != "a test file" {
		t.Errorf("params %v", run.Params)
	}
	if err := validate(run, finalStatuses); err != nil {
		t.Error(err)
	}
}

// TestParseSQLBenchOutput: a test program's output file: repeated
// operations summed (select_in, printed without the colon), a Warning line
// marking the next operation wrong, "Estimated time" extrapolated, "drop
// table(2)" and "Time to" read, the Total time line as the duration.
func TestParseSQLBenchOutput(t *testing.T) {
	run := parseFile(t, "insert-mysql-Linux_x86_64", nil)
	if run.Params["test"] != "insert" || run.DurationS != 9 || run.Status != summary.StatusComplete {
		t.Errorf("test %v duration %v status %s", run.Params["test"], run.DurationS, run.Status)
	}
	want := map[string]int64{"insert": 3000, "select_in": 20, "count": 100, "update_big": 10, "drop": 2, "delete_big": 1}
	for op, n := range want {
		if run.PerType[op].Count != n {
			t.Errorf("%s: count %d, want %d", op, run.PerType[op].Count, n)
		}
	}
	if len(run.PerType) != len(want) {
		t.Errorf("operations %v", run.PerType)
	}
	if run.Figures["micro.seconds.select_in"] != 1 || run.Figures["micro.usr.select_in"] != 0.01 {
		t.Errorf("select_in figures %v", run.Figures)
	}
	if run.Figures["micro.wrong.count"] != 1 || run.Figures["micro.wrong.insert"] != 0 || run.Figures["micro.extrapolated.update_big"] != 1 {
		t.Errorf("marks %v", run.Figures)
	}
	// dbarena's own micro lines read as sql-bench's.
	run = parseFile(t, "micro-dbarena", nil)
	if run.Target.Flavor != "postgres" || run.Figures["micro.seconds.select_key"] != 0.012 || run.PerType["select_key"].Count != 10 {
		t.Errorf("micro lines: target %+v figures %v", run.Target, run.Figures)
	}
}

// TestParseSQLBenchBad: other files are refused with the file and line.
func TestParseSQLBenchBad(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"export", `{"schema":"dbarena.export/v1"}`, "f line 1: it begins with neither"},
		{"empty", "\n\n", "f: empty"},
		{"no ops", "Testing server 'MySQL 8.0' at 2024-01-01 00:00:00\nnothing\n", "no operation times"},
		{"bad table", "Benchmark DBD suite: 2.15\nTotals per operation:\nOperation seconds\nconnect lots\n", "f line 4: \"connect lots\" is not a line"},
		{"huge", "Testing server 'x' at 2024-01-01 00:00:00\nTime for a (1): 99999999999999.5 wallclock secs ( 0.00 usr 0.00 sys + 0 cusr 0 csys = 0.00 CPU)\n", "f line 2"},
	} {
		_, err := ParseSQLBench("f", strings.NewReader(tc.text), nil)
		if err == nil || !errors.Is(err, ErrNotSQLBench) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	if IsSQLBench([]byte(`{"schema":"dbarena.export/v1"}`)) || !IsSQLBench([]byte("\xef\xbb\xbf\nBenchmark DBD suite: 2.15")) {
		t.Error("IsSQLBench")
	}
}

// FuzzParseSQLBench: any input either fails with ErrNotSQLBench or gives a
// run that the store accepts, with finite, non-negative seconds.
func FuzzParseSQLBench(f *testing.F) {
	for _, n := range []string{"RUN-mysql-Linux_x86_64", "insert-mysql-Linux_x86_64", "micro-dbarena"} {
		b, err := os.ReadFile(filepath.Join("testdata", "sqlbench", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("Testing server 'x' at 2024-13-45 99:99:99\nTime for a (:1): 1 secs (1 usr 1 sys = 1 cpu)\n")
	f.Fuzz(func(t *testing.T, text string) {
		run, err := ParseSQLBench("fuzz", strings.NewReader(text), nil)
		if err != nil {
			if !errors.Is(err, ErrNotSQLBench) {
				t.Fatalf("error %v is not ErrNotSQLBench", err)
			}
			return
		}
		if err := validate(run, finalStatuses); err != nil {
			t.Fatal(err)
		}
		for k, v := range run.Figures {
			if v < 0 || v != v {
				t.Fatalf("figure %s = %v", k, v)
			}
		}
	})
}
