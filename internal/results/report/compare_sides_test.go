package report_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload/micro"
)

// TestCompareSidesDiffer: two micro runs of the same server version on two
// sandboxes are told apart by sandbox and start; what differs lists the
// sandbox, the differing server variables (not ports or paths) and the
// tags, never the durations a suite ends by itself at (#35).
func TestCompareSidesDiffer(t *testing.T) {
	a := microRun(1, "mariadb", "10.11.6-MariaDB", map[string]float64{"select_key": 1.0, "insert": 2})
	b := microRun(2, "mariadb", "10.11.6-MariaDB", map[string]float64{"select_key": 1.01, "insert": 4})
	a.ID, b.ID = 1, 2
	a.Target.Sandbox, b.Target.Sandbox = "left", "right"
	a.DurationS, b.DurationS = 10, 12
	a.Tags = map[string]string{"disk": "nvme"}
	b.Tags = map[string]string{"disk": "ssd"}
	a.SettingsAll = map[string]string{"port": "3306", "datadir": "/a", "innodb_io_capacity": "200", "sort_buffer_size": "262144"}
	b.SettingsAll = map[string]string{"port": "3307", "datadir": "/b", "innodb_io_capacity": "2000", "sort_buffer_size": "262144"}
	c, err := report.Compare([]*summary.Run{a}, []*summary.Run{b})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"A (baseline): run 1: micro on mariadb 10.11.6-MariaDB (sandbox left), 1 threads, started ",
		"B:            run 2: micro on mariadb 10.11.6-MariaDB (sandbox right), 1 threads, started ",
		"sandbox / target", "variable innodb_io_capacity", "tag disk",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("compare lacks %q:\n%s", want, s)
		}
	}
	for _, not := range []string{"variable port", "variable datadir", "variable sort_buffer_size", "\ntime "} {
		if strings.Contains(s, not) {
			t.Errorf("compare lists %q:\n%s", not, s)
		}
	}
	if !strings.Contains(s, "select_key") || !strings.Contains(s, "tie") {
		t.Errorf("select_key within 5%% of single runs is not a tie:\n%s", s)
	}
	if strings.Contains(s, reporttest.Password) {
		t.Error("password in compare")
	}
}

// TestMicroTie: the noise a tie is judged by.
func TestMicroTie(t *testing.T) {
	single := stats.Ratio{Value: 1.04}
	for _, tc := range []struct {
		name      string
		r         stats.Ratio
		a, b, res float64
		want      bool
	}{
		{"single runs within 5%", single, 1, 1.04, 0, true},
		{"single runs 20% apart", stats.Ratio{Value: 1.2}, 1, 1.2, 0, false},
		{"rounds, interval includes 1", stats.Ratio{Value: 1.5, HasCI: true, Significant: false}, 1, 1.5, 0, true},
		{"rounds, significant", stats.Ratio{Value: 1.02, HasCI: true, Significant: true}, 1, 1.02, 0, false},
		{"within sql-bench's whole seconds", stats.Ratio{Value: math.NaN()}, 0, 1, 1, true},
		{"beyond them", stats.Ratio{Value: 3}, 1, 3, 1, false},
	} {
		if got := report.MicroTie(tc.r, tc.a, tc.b, tc.res); got != tc.want {
			t.Errorf("%s: tie %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCompareSQLBenchImport: an imported sql-bench file sets its operations
// beside a micro run's, labelled by its file; a difference within its
// whole seconds is a tie; its "?" shows.
func TestCompareSQLBenchImport(t *testing.T) {
	text := "Testing server 'MySQL 10.11.6 MariaDB' at 2024-03-01 10:00:05\n" +
		"Warning: wrong count\n" +
		"Time for select_key (20): 0 wallclock secs ( 0.00 usr  0.00 sys +  0.00 cusr  0.00 csys =  0.00 CPU)\n" +
		"Time for insert (3000): 9 wallclock secs ( 0.18 usr  0.26 sys +  0.00 cusr  0.00 csys =  0.44 CPU)\n" +
		"Total time:  9 wallclock secs ( 0.18 usr  0.26 sys +  0.00 cusr  0.00 csys =  0.44 CPU)\n"
	sb, err := store.ParseSQLBench("insert-mysql-Linux", strings.NewReader(text), micro.SQLBenchName)
	if err != nil {
		t.Fatal(err)
	}
	sb.ID = 7
	m := microRun(3, "mariadb", "10.11.6-MariaDB", map[string]float64{"select_key": 0.4, "insert": 2, "connect": 0.1})
	m.ID = 8
	// The same work for select_key and insert; connect ran 100 times in
	// sql-bench's file and 10 in micro's run: unlike work.
	m.PerType = map[string]summary.Type{"select_key": {Count: 20}, "insert": {Count: 3000}, "connect": {Count: 10}}
	sb.PerType["connect"] = summary.Type{Count: 100}
	sb.Figures["micro.seconds.connect"] = 3
	c, err := report.Compare([]*summary.Run{sb}, []*summary.Run{m})
	if err != nil {
		t.Fatal(err)
	}
	if c.Micro == nil {
		t.Fatal("no micro table")
	}
	var out strings.Builder
	if err := c.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"run 7: sql-bench on mariadb 10.11.6-MariaDB (sql-bench file insert-mysql-Linux)", "?0.000", "workload",
		"3.000 *100", "0.100 *10", "unlike work"} {
		if !strings.Contains(s, want) {
			t.Errorf("compare lacks %q:\n%s", want, s)
		}
	}
	for _, op := range c.Micro.Ops {
		switch op.Op {
		case "select_key":
			if !op.Tie {
				t.Errorf("select_key 0 s (whole seconds) against 0.4 s: not a tie")
			}
		case "insert":
			if op.Tie || op.Winner != "B" {
				t.Errorf("insert 9 s against 2 s: winner %q tie %v", op.Winner, op.Tie)
			}
		case "connect":
			if !op.Unlike || op.Winner != "" || op.Tie {
				t.Errorf("connect 100 times against 10: unlike %v winner %q tie %v", op.Unlike, op.Winner, op.Tie)
			}
		}
	}
}
