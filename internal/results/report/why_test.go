package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
)

// whyFixture is the fixture plan at 4 threads, oltp_read_write: mariadb
// (the baseline), mysql (the same costs) and postgres, whose server CPU
// per transaction is planted at twice mariadb's; every run's bottleneck
// is worked out again from its samples.
func whyFixture(t *testing.T) *report.Report {
	t.Helper()
	runs := reporttest.PlanRuns(reporttest.Options{Threads: []int{4}, Workloads: []string{"oltp_read_write"}})
	for i, r := range runs {
		r.ID = int64(i + 1)
		if r.Target.Flavor == "postgres" {
			r.Monitor.PerTxn["server_cpu_us"] = 2*184 + float64(i%3)
		}
		r.Bottleneck = monitor.Verdict(r)
	}
	rep, err := report.Build(runs, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestWhyTables: each series against the baseline gets the table of
// where the difference comes from, with intervals over the 3 rounds,
// the planted cost marked significant and named by the reading; the
// HTML and Markdown reports carry them in a section of their own.
func TestWhyTables(t *testing.T) {
	rep := whyFixture(t)
	ts := rep.WhyTables()
	if len(ts) != 2 {
		t.Fatalf("%d why tables, want 2 (mysql and postgres against mariadb)", len(ts))
	}
	var pg report.Table
	for _, tb := range ts {
		if strings.Contains(tb.Title, "postgres-16 vs mariadb-10.11") {
			pg = tb
		}
	}
	if pg.Title == "" || !strings.Contains(pg.Note, "Reading: B spends 2.0x more server CPU per transaction") || !strings.Contains(pg.Note, "Rounds: A 3, B 3") {
		t.Fatalf("postgres table %q: %q", pg.Title, pg.Note)
	}
	row := pg.Rows[0]
	if row[0].Text != "server CPU us/txn" || row[3].Text != "2.01x" || row[3].Class != "sig" || !strings.HasPrefix(row[4].Text, "[1.9") {
		t.Errorf("server CPU row %+v", row)
	}
	// mysql has the same costs and row-lock waits as mariadb: nothing stands out.
	my := ts[0]
	if !strings.Contains(my.Title, "mysql-8.0") || !strings.Contains(my.Note, "the costs per transaction are within 20%") ||
		!slices.ContainsFunc(my.Rows, func(r []report.Entry) bool { return r[0].Text == "row-lock wait %" }) {
		t.Errorf("mysql table %q: %q %v", my.Title, my.Note, my.Rows)
	}
	var html bytes.Buffer
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	checkContains(t, "html", html.String(), `<h2 id="why">Where the difference comes from</h2>`, `href="#why"`,
		"Reading: B spends 2.0x more server CPU per transaction", `id="chart-why-1"`, `id="chart-waits-`)
	dir := t.TempDir()
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md, filepath.Join(dir, "c"), "c"); err != nil {
		t.Fatal(err)
	}
	checkContains(t, "markdown", md.String(), "## Where the difference comes from", "**2.01x**", "![Costs and waits: postgres-16 vs mariadb-10.11")
	if _, err := os.Stat(filepath.Join(dir, "c", "why-2.png")); err != nil {
		t.Errorf("no PNG of the second cost chart: %v", err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Relatives []struct {
			Series string
			Why    *struct {
				Reading string
				Figures []struct {
					Key   string
					Ratio *struct{ Value, Low, High float64 }
				}
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Relatives) != 2 {
		t.Fatalf("json: %v, %d relatives", err, len(doc.Relatives))
	}
	for _, r := range doc.Relatives {
		if r.Series != "postgres-16" {
			continue
		}
		if r.Why == nil || !strings.HasPrefix(r.Why.Reading, "B spends 2.0x more server CPU") || r.Why.Figures[0].Key != "per_txn.server_cpu_us" ||
			r.Why.Figures[0].Ratio == nil || r.Why.Figures[0].Ratio.Low <= 1 {
			t.Errorf("json why of postgres: %+v", r.Why)
		}
	}
}

// TestWhyCharts: a cost chart per comparison in its own section, and a
// wait profile chart under each over-time chart for each run that has
// one (PostgreSQL's classes; the MySQL family's row-lock waits), on the
// same time axis; each draws its data area and a legend beside it.
func TestWhyCharts(t *testing.T) {
	rep := whyFixture(t)
	var ids []string
	byID := map[string]report.Chart{}
	for _, c := range rep.Charts() {
		ids = append(ids, c.ID)
		byID[c.ID] = c
	}
	why := slices.Index(ids, "why-1")
	if why < 0 || byID["why-1"].Section != report.SectionCosts || !slices.Contains(ids, "why-2") {
		t.Fatalf("no cost charts: %v", ids)
	}
	ot := slices.Index(ids, "over-time-1")
	if ot < 0 || !strings.HasPrefix(ids[ot+1], "waits-") {
		t.Fatalf("no wait chart under the over-time chart: %v", ids)
	}
	n := 0
	for _, id := range ids {
		if !strings.HasPrefix(id, "waits-") {
			continue
		}
		n++
		c := byID[id]
		lay := c.Layout()
		if c.Section != report.SectionTimeSeries || lay.Kind != "area" || len(lay.Plots) != 1 || lay.Legend.Size().X == 0 {
			t.Errorf("%s: section %q, layout %+v", id, c.Section, lay)
		}
		if lay.Legend.Max.Y > lay.Plots[0].Min.Y {
			t.Errorf("%s: legend %v reaches into the data area %v", id, lay.Legend, lay.Plots[0])
		}
	}
	if n != 3 { // postgres (classes), mariadb and mysql (row-lock waits)
		t.Errorf("%d wait charts, want 3: %v", n, ids)
	}
	pg := ""
	for _, r := range rep.TimeSeries {
		if r.Target.Flavor == "postgres" {
			pg = "waits-" + report.RunName(r)
		}
	}
	if c, ok := byID[pg]; !ok || !strings.Contains(c.Caption, "on CPU, IO, Lock, LWLock, waiting for the client") {
		t.Errorf("postgres wait chart %q: %q", pg, c.Caption)
	}
	w1 := byID["why-1"]
	lay := w1.Layout()
	if len(lay.Plots) != 2 || lay.Kind != "bars" || len(lay.Series) != 2 || lay.Whiskers == 0 {
		t.Errorf("why-1 layout %+v", lay)
	}
	for _, id := range []string{"why-1", pg} {
		c := byID[id]
		png, err := c.PNG()
		if err != nil || len(png) < 2000 {
			t.Errorf("%s: PNG of %d bytes: %v", id, len(png), err)
		}
		if dir := os.Getenv("DBARENA_REPORT_SHOTS"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, id+".png"), png, 0o644)
		}
	}
}

// TestWhyNoMonitor: runs without the monitor's figures get no table, no
// cost chart and no wait chart.
func TestWhyNoMonitor(t *testing.T) {
	runs := reporttest.PlanRuns(reporttest.Options{Threads: []int{4}, Workloads: []string{"oltp_read_write"}})
	for i, r := range runs {
		r.ID = int64(i + 1)
		r.Monitor, r.Bottleneck = nil, nil
	}
	rep, err := report.Build(runs, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	if ts := rep.WhyTables(); ts != nil {
		t.Errorf("tables without figures: %v", ts)
	}
	for _, c := range rep.Charts() {
		if strings.HasPrefix(c.ID, "why-") || strings.HasPrefix(c.ID, "waits-") {
			t.Errorf("chart %s without figures", c.ID)
		}
	}
}
