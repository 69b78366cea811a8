package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/report/reporttest"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	db, ids := reporttest.Store(t, dir, reporttest.AllRuns())
	res := "--results=" + db
	first, tpcc := itoa(ids[0]), itoa(ids[len(ids)-3])
	tests := []struct {
		name  string
		args  []string
		file  string
		wants []string
	}{
		{"html by plan", []string{"report", "--plan", reporttest.Plan, "-o", filepath.Join(dir, "r.html"), res}, "r.html",
			[]string{"<svg", "Summary of plan sweep", "significantly higher"}},
		{"md by tag", []string{"report", "--tag", "plan=" + reporttest.Plan, "--format", "md", "-o", filepath.Join(dir, "r.md"), res}, "r.md",
			[]string{"](r-charts/throughput-1.png)", "| Series |"}},
		{"csv by ids", []string{"report", first, tpcc, "-o", filepath.Join(dir, "r.csv"), res}, "r.csv",
			[]string{"id,started_at", "tpcc"}},
		{"csv cells", []string{"report", "--plan", reporttest.Plan, "--csv-rows", "cell", "-o", filepath.Join(dir, "c.csv"), res}, "c.csv",
			[]string{"series,workload,threads", "postgres-16"}},
		{"json", []string{"report", tpcc, "--format", "json", "-o", filepath.Join(dir, "r.json"), res}, "r.json",
			[]string{`"schema": "dbarena.report/v1"`, `"tpmc": 5670.5`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dbarena(t, tt.args...).mustSucceed(t)
			if !strings.Contains(r.stdout, filepath.Join(dir, tt.file)) {
				t.Errorf("stdout does not name the file: %q", r.stdout)
			}
			b, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.wants {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lacks %q", tt.file, w)
				}
			}
			if strings.Contains(string(b), reporttest.Password) {
				t.Errorf("%s shows the password", tt.file)
			}
		})
	}
	t.Run("json to stdout", func(t *testing.T) {
		r := dbarena(t, "report", first, "--format", "json", "-o", "-", res).mustSucceed(t)
		if !strings.HasPrefix(r.stdout, "{") || !strings.Contains(r.stdout, `"cells"`) {
			t.Errorf("stdout %.200q", r.stdout)
		}
	})
	t.Run("compare", func(t *testing.T) {
		// Runs 1 and the postgres run with the same threads and round
		// layout: 3 servers x 7 threads x 3 rounds per workload.
		pg := itoa(ids[2*len(reporttest.Threads)*reporttest.Rounds])
		r := dbarena(t, "compare", first, pg, res).mustSucceed(t)
		for _, w := range []string{"Rounds: A 3, B 3", "+30.0%", "significantly higher", "What differs"} {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("compare output lacks %q:\n%s", w, r.stdout)
			}
		}
		r = dbarena(t, "compare", tpcc, itoa(ids[len(ids)-2]), res).mustSucceed(t)
		if !strings.Contains(r.stdout, "significance cannot be judged") {
			t.Errorf("single runs: %s", r.stdout)
		}
	})
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func TestReportBadInput(t *testing.T) {
	db, _ := reporttest.Store(t, t.TempDir(), reporttest.AllRuns()[:3])
	res := "--results=" + db
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no selection", []string{"report", "-o", "x.html", res}, "select runs"},
		{"no output", []string{"report", "1", res}, "-o FILE"},
		{"bad format", []string{"report", "1", "--format", "pdf", "-o", "x.pdf", res}, "--format"},
		{"bad id", []string{"report", "one", "-o", "x.html", res}, "not a run ID"},
		{"missing id", []string{"report", "1", "999", "-o", "x.html", res}, "no run 999"},
		{"html to stdout", []string{"report", "1", "--format", "html", "-o", "-", res}, "needs a file"},
		{"bad csv rows", []string{"report", "1", "--csv-rows", "table", "-o", "x.csv", res}, "--csv-rows"},
		{"no match", []string{"report", "--plan", "nosuch", "-o", "x.html", res}, "no stored run"},
		{"bad baseline", []string{"report", "1", "--baseline", "nosuch", "-o", filepath.Join(t.TempDir(), "x.html"), res}, "baseline"},
		{"compare one id", []string{"compare", "1", res}, "two run IDs"},
		{"compare bad id", []string{"compare", "1", "x", res}, "not a run ID"},
		{"compare missing", []string{"compare", "1", "999", res}, "no run 999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dbarena(t, tt.args...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitUsage, r.stderr)
			}
			if strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("stderr %q: want one line naming %q", r.stderr, tt.want)
			}
		})
	}
}
