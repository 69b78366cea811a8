package report_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// fixture saves the full fixture in a store and builds a report of every
// run read back from it.
func fixture(t testing.TB) (*report.Report, *store.Store) {
	t.Helper()
	path, _ := reporttest.Store(t, t.TempDir(), reporttest.AllRuns())
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	runs, err := report.Load(context.Background(), st, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	o := report.NewOptions()
	o.Version = "v9.9.9-test"
	o.Generated = time.Date(2025, 6, 3, 10, 0, 0, 0, time.UTC)
	o.MaxTimeSeries = 5
	rep, err := report.Build(runs, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep, st
}

func TestBuild(t *testing.T) {
	rep, _ := fixture(t)
	nPlan := len(reporttest.Servers) * len(reporttest.Threads) * len(reporttest.Workloads)
	tests := []struct {
		name      string
		got, want any
	}{
		{"runs", len(rep.Runs), nPlan*reporttest.Rounds + 3},
		// plan cells + tpcc + replay; the interrupted run is left out
		{"cells", len(rep.Cells), nPlan + 2},
		{"baseline", rep.Baseline, "mariadb-10.11"},
		{"series", strings.Join(rep.Series, ","), "mariadb-10.11,mysql-8.0,postgres-16,mariadb 10.11.6-MariaDB"},
		{"relatives", len(rep.Relatives), 2 * len(reporttest.Threads) * len(reporttest.Workloads)},
		{"rounds per plan cell", len(rep.Cells[0].Runs), reporttest.Rounds},
		{"time series capped", len(rep.TimeSeries), 5},
		{"hosts", len(rep.Context.Hosts), 1},
		{"versions", strings.Join(rep.Context.Versions, ","), "v0.3.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	t.Run("verdicts", func(t *testing.T) {
		for _, r := range rep.Relatives {
			want := "no significant difference"
			if r.Series == "postgres-16" {
				want = "significantly higher"
			}
			if got := report.Verdict(r.TPS); got != want {
				t.Errorf("%s %s %d: verdict %q (ratio %+v), want %q", r.Series, r.Workload, r.Threads, got, r.TPS, want)
			}
		}
	})
	t.Run("heat", func(t *testing.T) {
		for _, h := range rep.Heat {
			if h.Series == "postgres-16" && (h.Ratio < 1.29 || h.Ratio > 1.31) {
				t.Errorf("heat %s %s = %v, want 1.3", h.Series, h.Workload, h.Ratio)
			}
		}
	})
	t.Run("bad baseline", func(t *testing.T) {
		o := report.NewOptions()
		o.Baseline = "nosuch"
		if _, err := report.Build(rep.Runs, o); err == nil || !strings.Contains(err.Error(), "nosuch") {
			t.Errorf("Build with an unknown baseline: err %v", err)
		}
	})
	t.Run("no runs", func(t *testing.T) {
		if _, err := report.Build(nil, report.NewOptions()); err == nil {
			t.Error("Build(nil) succeeded")
		}
	})
}

// checkContains fails for every want missing from text, and for the
// fixture's password anywhere in it.
func checkContains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
	if strings.Contains(text, reporttest.Password) {
		t.Errorf("%s shows the password", what)
	}
}

// context is what every report must say about where it was measured.
var contextWants = []string{"bench-01", "AMD EPYC 7B13", "10.11.6-MariaDB", "8.0.36", "16.2",
	"innodb_flush_log_at_trx_commit", "shared_buffers", "table_size", "v0.3.0", "v9.9.9-test", "2025-06-0",
	"dbarena:***@127.0.0.1"}

func TestRenderFormats(t *testing.T) {
	rep, _ := fixture(t)
	t.Run("html", func(t *testing.T) {
		var b bytes.Buffer
		if err := rep.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		checkContains(t, "html", s, append(contextWants, "<!DOCTYPE html>", "What was measured where",
			"Summary of plan sweep", "no significant difference", "significantly higher", "TpmC 5670.50",
			"[NG]", "[OK]", "new_order", "stock_level", "ETime", "RTime", "TRate", "Conc", "LA", "MEM",
			"Throughput vs threads: oltp_read_write", "p95 and p99 latency", "relative to mariadb-10.11",
			"Relative throughput", "Over time: oltp_read_write", "Host resources, run 1: oltp_read_write", "iowait", "did not complete")...)
		if n, want := strings.Count(s, "<svg"), len(rep.Charts()); n != want {
			t.Errorf("html has %d inline SVGs, want %d", n, want)
		}
		for _, bad := range []string{"<script src", "href=\"http", "src=\"http", "<link"} {
			if strings.Contains(s, bad) {
				t.Errorf("html loads an external asset (%q)", bad)
			}
		}
	})
	t.Run("markdown", func(t *testing.T) {
		dir := t.TempDir()
		var b bytes.Buffer
		if err := rep.WriteMarkdown(&b, filepath.Join(dir, "r-charts"), "r-charts"); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		checkContains(t, "markdown", s, append(contextWants, "# dbarena report", "| Series |", "---:|",
			"**[NG]**", "[OK]", "![Throughput vs threads: oltp_read_write](r-charts/throughput-1.png)",
			"ETime", "**+30.0%")...)
		files, _ := filepath.Glob(filepath.Join(dir, "r-charts", "*.png"))
		if len(files) != len(rep.Charts()) {
			t.Errorf("%d PNG files, want %d", len(files), len(rep.Charts()))
		}
		for _, f := range files {
			if !strings.Contains(s, "r-charts/"+filepath.Base(f)) {
				t.Errorf("markdown does not link %s", filepath.Base(f))
			}
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(fh)
			fh.Close()
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if b := img.Bounds(); inkPixels(img) < b.Dx()*b.Dy()/100 {
				t.Errorf("%s is blank", f)
			}
		}
	})
	t.Run("csv by run", func(t *testing.T) {
		var b bytes.Buffer
		if err := rep.WriteCSV(&b, report.ByRun); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(rep.Runs)+1 || recs[0][0] != "id" || recs[0][22] != "tps" {
			t.Fatalf("csv: %d records, header %v", len(recs), recs[0])
		}
		checkContains(t, "csv", b.String())
	})
	t.Run("csv by cell", func(t *testing.T) {
		var b bytes.Buffer
		if err := rep.WriteCSV(&b, report.ByCell); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(rep.Cells)+1 || recs[0][0] != "series" {
			t.Fatalf("csv: %d records, want %d", len(recs), len(rep.Cells)+1)
		}
		if recs[1][5] != "3" || recs[1][len(recs[1])-1] != "" {
			t.Errorf("first cell row %v: want 3 rounds and no ratio (baseline)", recs[1])
		}
	})
	t.Run("csv bad rows", func(t *testing.T) {
		if err := rep.WriteCSV(&bytes.Buffer{}, "table"); err == nil {
			t.Error("WriteCSV(table) succeeded")
		}
	})
	t.Run("json", func(t *testing.T) {
		var b bytes.Buffer
		if err := rep.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Schema    string            `json:"schema"`
			Cells     []json.RawMessage `json:"cells"`
			Relatives []struct {
				Series     string `json:"series"`
				TPSVerdict string `json:"tps_verdict"`
			} `json:"relatives"`
			Runs []summary.Run `json:"runs"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Schema != report.JSONSchema || len(doc.Cells) != len(rep.Cells) || len(doc.Runs) != len(rep.Runs) ||
			len(doc.Relatives) != len(rep.Relatives) || doc.Relatives[0].TPSVerdict == "" {
			t.Errorf("json: schema %q, %d cells, %d runs, %d relatives", doc.Schema, len(doc.Cells), len(doc.Runs), len(doc.Relatives))
		}
		if doc.Runs[0].Histogram != "" {
			t.Error("json keeps histograms")
		}
		checkContains(t, "json", b.String(), contextWants...)
	})
}

// TestPasswordsMaskedAgain builds a report from runs that were never
// through the store, as a defence in depth: the report masks DSNs, errors
// and commands itself.
func TestPasswordsMaskedAgain(t *testing.T) {
	runs := reporttest.PlanRuns(reporttest.Options{Servers: 2, Threads: []int{1, 2}, Workloads: []string{"oltp_read_only"}})
	runs[0].Error = "dial mysql://dbarena:" + reporttest.Password + "@127.0.0.1:3306/sbtest: refused"
	rep, err := report.Build(runs, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	var h, j, c bytes.Buffer
	if err := rep.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteCSV(&c, report.ByRun); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"html": h.String(), "json": j.String(), "csv": c.String()} {
		checkContains(t, name, s, "dbarena:***@")
	}
	if !strings.Contains(runs[0].Target.DSN, reporttest.Password) {
		t.Error("Build modified its input runs")
	}
}

func TestSiegeTable(t *testing.T) {
	r := reporttest.ReplayRun()
	tb := report.SiegeTable([]*summary.Run{r})
	var names []string
	for _, c := range tb.Columns {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "Run / server ETime RTime TRate Conc OK LA MEM" {
		t.Errorf("columns %q", got)
	}
	// Source document 000's MariaDB 10.0 XtraDB row: 222.55 4.38 4.49 19.66 1000.
	row := tb.Rows[0]
	want := []string{"223.35", "4.38", "4.48", "19.62", "1000"}
	for i, w := range want {
		if row[i+1].Text != w {
			t.Errorf("column %s = %q, want %q", names[i+1], row[i+1].Text, w)
		}
	}
}

func TestCompare(t *testing.T) {
	rep, st := fixture(t)
	ctx := context.Background()
	find := func(series string, threads int, workload string) *summary.Run {
		for _, c := range rep.Cells {
			if c.Series == series && c.Threads == threads && c.Workload == workload {
				return c.Runs[1]
			}
		}
		t.Fatalf("no cell %s %d", series, threads)
		return nil
	}
	tests := []struct {
		name  string
		a, b  *summary.Run
		wants []string
	}{
		{"rounds, significant", find("mariadb-10.11", 8, "oltp_read_write"), find("postgres-16", 8, "oltp_read_write"),
			[]string{"Rounds: A 3, B 3", "+30.0%", "significantly higher (better)", "significantly lower (better)",
				"setting shared_buffers", "server"}},
		{"rounds, same", find("mariadb-10.11", 8, "oltp_read_write"), find("mysql-8.0", 8, "oltp_read_write"),
			[]string{"no significant difference", "setting innodb_flush_log_at_trx_commit  1"}},
		{"single runs", reporttest.TPCCRun(), reporttest.ReplayRun(),
			[]string{"significance cannot be judged", "cannot judge (single runs)", "workload", "tpcc", "replay_urls"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := report.Rounds(ctx, st, tt.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := report.Rounds(ctx, st, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			cmp, err := report.Compare(a, b)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := cmp.Write(&out); err != nil {
				t.Fatal(err)
			}
			checkContains(t, "compare", out.String(), tt.wants...)
		})
	}
}

// BenchmarkHTML300 renders the HTML report of 300 runs (the default cap on
// time series).
func BenchmarkHTML300(b *testing.B) {
	runs := large()
	for b.Loop() {
		rep, err := report.Build(runs, report.NewOptions())
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := rep.WriteHTML(&buf); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
		if path := os.Getenv("DBARENA_REPORT_300"); path != "" {
			_ = os.WriteFile(path, buf.Bytes(), 0o644)
		}
	}
}

// large is 300 runs: 3 servers x 10 thread counts x 5 workloads x 2
// rounds, 60 intervals each.
func large() []*summary.Run {
	var runs []*summary.Run
	for _, w := range []string{"a", "b", "c", "d", "e"} {
		rs := reporttest.PlanRuns(reporttest.Options{Threads: []int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32}, Workloads: []string{"oltp_" + w}, Intervals: 60})
		for _, r := range rs {
			if r.Plan.Round < 3 {
				runs = append(runs, r)
			}
		}
	}
	for i, r := range runs {
		r.ID = int64(i + 1)
	}
	return runs
}
