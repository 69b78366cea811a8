package report_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/store/storetest"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload/oltp"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// noRows discards load progress.
type noRows struct{}

func (noRows) SetTotal(int64)   {}
func (noRows) Add(int64, int64) {}

// quiet discards what a run reports as it goes.
type quiet struct{}

func (quiet) Begin(*execute.Session, *execute.Spec, []string) {}
func (quiet) Interval(runner.Interval, map[string]float64)    {}

// realRuns runs oltp_read_only on real MariaDB and PostgreSQL sandboxes:
// for each server, rounds runs at each thread count (tagged as --rounds
// tags them), monitored, stored in a fresh store, and read back.
func realRuns(t *testing.T, threads []int, rounds int) []*summary.Run {
	t.Helper()
	ctx := context.Background()
	st := storetest.Temp(t)
	home := t.TempDir()
	for _, fl := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		tg := sandboxtest.Start(t, fl)
		newWL := func() *oltp.Workload {
			w := oltp.NewReadOnly()
			fs := pflag.NewFlagSet("w", pflag.ContinueOnError)
			w.Flags(fs)
			if err := fs.Parse([]string{"--tables=1", "--table-size=2000"}); err != nil {
				t.Fatal(err)
			}
			return w
		}
		if err := execute.PrepareOn(ctx, tg, newWL(), 2, noRows{}); err != nil {
			t.Fatalf("prepare on %s: %v", fl, err)
		}
		for _, th := range threads {
			for r := 1; r <= rounds; r++ {
				cfg := runner.DefaultConfig()
				cfg.Threads, cfg.Duration, cfg.ReportInterval = th, 3*time.Second, 500*time.Millisecond
				w := newWL()
				execute.SetThreads(w, th)
				spec := execute.Spec{Workload: w, Config: cfg, Monitor: execute.MonitorOn, Home: home,
					Tags: map[string]string{"t": t.Name(), "threads": strconv.Itoa(th), "round": strconv.Itoa(r)}}
				out, err := execute.RunOn(ctx, st, tg, spec, quiet{})
				if err != nil {
					t.Fatalf("run on %s: %v", fl, err)
				}
				if out.Run.Status != summary.StatusComplete || out.StoreErr != nil {
					t.Fatalf("run on %s: %s (store: %v)", fl, out.Run.Status, out.StoreErr)
				}
			}
		}
	}
	runs, err := report.Load(ctx, st, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// figureInfo is what the page says and shows of one chart.
type figureInfo struct {
	ID, Kind, Caption   string
	Series, Colors      []string
	Size                [2]float64
	Plots               [][4]float64
	Legend              []float64
	Whiskers            int
	SVGColors           []string // fill and stroke colours in the SVG
	LegendText          []string // texts drawn outside every data area
	TextsInsidePlotArea []string
}

// pageFigures reads every chart of the page open in d: its data
// attributes, the colours its SVG draws with, and where the browser put
// each text of the SVG relative to the chart's data areas.
func pageFigures(t *testing.T, d *webDriver) []figureInfo {
	t.Helper()
	const script = `
const out = [];
for (const f of document.querySelectorAll('figure.chart')) {
  const svg = f.querySelector('svg');
  const vb = svg.viewBox.baseVal, sr = svg.getBoundingClientRect();
  const k = sr.width / vb.width;
  const plots = (f.dataset.plots || '').split(';').filter(s => s).map(s => s.split(',').map(Number));
  // gonum/plot's y grows upwards from the bottom.
  const toClient = r => ({l: sr.left + r[0]*k, r: sr.left + r[2]*k, t: sr.top + (vb.height - r[3])*k, b: sr.top + (vb.height - r[1])*k});
  const areas = plots.map(toClient);
  const inside = [], outside = [];
  for (const tx of svg.querySelectorAll('text')) {
    const b = tx.getBoundingClientRect();
    const s = tx.textContent.trim();
    if (!s) continue;
    const overlaps = areas.some(a => b.left < a.r && b.right > a.l && b.top < a.b && b.bottom > a.t);
    (overlaps ? inside : outside).push(s);
  }
  const colors = new Set();
  for (const p of svg.querySelectorAll('path')) {
    const st = p.getAttribute('style') || '';
    for (const m of st.matchAll(/(fill|stroke):(#[0-9A-Fa-f]{6})/g)) colors.add(m[2].toUpperCase());
  }
  out.push({ID: f.id, Kind: f.dataset.kind, Caption: f.querySelector('figcaption').textContent,
    Series: (f.dataset.series || '').split('|').filter(s => s), Colors: (f.dataset.colors || '').split('|').filter(s => s),
    Size: (f.dataset.size || '0,0').split(',').map(Number), Plots: plots,
    Legend: (f.dataset.legend || '').split(',').filter(s => s).map(Number),
    Whiskers: Number(f.dataset.whiskers || 0), SVGColors: [...colors], LegendText: outside, TextsInsidePlotArea: inside});
}
return out;`
	var figs []figureInfo
	if err := json.Unmarshal(d.call("POST", "/execute/sync", map[string]any{"script": script, "args": []any{}}), &figs); err != nil {
		t.Fatal(err)
	}
	return figs
}

// checkComparisonCharts asserts what issue #32 asks of charts that
// compare: each chart says in a caption what it compares; series share
// axes (one chart holds every series); a series has one colour on the
// whole page, drawn in its SVG; legends sit outside the data areas; a
// single thread count is drawn as bars with interval whiskers.
func checkComparisonCharts(t *testing.T, figs []figureInfo, series []string, singleThreads bool, rounds int) {
	t.Helper()
	colorOf := map[string]string{}
	kinds := map[string]int{}
	for _, f := range figs {
		kinds[f.Kind]++
		if len(strings.Fields(f.Caption)) < 8 {
			t.Errorf("%s: caption %q does not say what is compared", f.ID, f.Caption)
		}
		if len(f.Series) != len(f.Colors) {
			t.Errorf("%s: %d series, %d colours", f.ID, len(f.Series), len(f.Colors))
			continue
		}
		for i, s := range f.Series {
			base := strings.SplitN(s, " (run ", 2)[0]
			if c, ok := colorOf[base]; ok && c != f.Colors[i] {
				t.Errorf("%s: series %q drawn in %s, elsewhere in %s", f.ID, base, f.Colors[i], c)
			}
			colorOf[base] = f.Colors[i]
			if !slices.Contains(f.SVGColors, f.Colors[i]) {
				t.Errorf("%s: series %q's colour %s is not drawn (SVG colours %v)", f.ID, s, f.Colors[i], f.SVGColors)
			}
		}
		if len(f.Legend) == 4 {
			for _, p := range f.Plots {
				if f.Legend[0] < p[2] && f.Legend[2] > p[0] && f.Legend[1] < p[3] && f.Legend[3] > p[1] {
					t.Errorf("%s: legend %v overlaps data area %v", f.ID, f.Legend, p)
				}
			}
			for _, s := range f.Series {
				if strings.HasPrefix(f.ID, "chart-run-") {
					continue // one run's resources: its legend keys the parts, the title names the series
				}
				if slices.Contains(f.TextsInsidePlotArea, s) || !slices.Contains(f.LegendText, s) {
					t.Errorf("%s: legend entry %q is not drawn outside the data areas (outside: %q)", f.ID, s, f.LegendText)
				}
			}
		}
		if strings.HasPrefix(f.ID, "chart-throughput-") || strings.HasPrefix(f.ID, "chart-latency-") || strings.HasPrefix(f.ID, "chart-over-time-") {
			for _, s := range series {
				if !slices.Contains(f.Series, s) {
					t.Errorf("%s: series %q is not on the shared axes (it draws %q)", f.ID, s, f.Series)
				}
				if !strings.Contains(f.Caption, s) {
					t.Errorf("%s: caption %q does not name %q", f.ID, f.Caption, s)
				}
			}
			if len(f.Legend) != 4 {
				t.Errorf("%s: no legend", f.ID)
			}
		}
		if strings.HasPrefix(f.ID, "chart-throughput-") && singleThreads {
			if f.Kind != "bars" {
				t.Errorf("%s: a single thread count is drawn as %q, want bars", f.ID, f.Kind)
			}
			if rounds >= 2 && f.Whiskers != len(series) {
				t.Errorf("%s: %d whiskers for %d series of %d rounds", f.ID, f.Whiskers, len(series), rounds)
			}
		}
	}
	for _, s := range series {
		if colorOf[s] == "" {
			t.Errorf("series %q is in no chart", s)
		}
	}
	seen := map[string]string{}
	for s, c := range colorOf {
		if o, ok := seen[c]; ok {
			t.Errorf("series %q and %q share colour %s", s, o, c)
		}
		seen[c] = s
	}
	for _, want := range []string{"chart-throughput-1", "chart-latency-1", "chart-relative-1", "chart-over-time-1"} {
		if !slices.ContainsFunc(figs, func(f figureInfo) bool { return f.ID == want }) {
			t.Errorf("no chart %s", want)
		}
	}
}

// TestComparisonChartsInChromium renders reports of real runs on MariaDB
// and PostgreSQL sandboxes and opens them in headless Chromium at desktop
// and laptop widths: one thread count with rounds (bars and whiskers) and
// several thread counts (lines on shared axes).
func TestComparisonChartsInChromium(t *testing.T) {
	d := startBrowser(t)
	cases := []struct {
		name    string
		threads []int
		rounds  int
	}{
		{"one thread count", []int{2}, 2},
		{"thread sweep", []int{1, 4}, 1},
	}
	shots := os.Getenv("DBARENA_REPORT_SHOTS")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runs := realRuns(t, c.threads, c.rounds)
			rep, err := report.Build(runs, report.NewOptions())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Series) != 2 {
				t.Fatalf("series %q, want MariaDB and PostgreSQL", rep.Series)
			}
			var buf bytes.Buffer
			if err := rep.WriteHTML(&buf); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, width := range []int{1400, 1000} {
				d.call("POST", "/window/rect", map[string]any{"width": width, "height": 1000})
				d.call("POST", "/url", map[string]any{"url": "file://" + page})
				figs := pageFigures(t, d)
				if len(figs) != len(rep.Charts()) {
					t.Fatalf("%d px: %d figures, report has %d charts", width, len(figs), len(rep.Charts()))
				}
				t.Run(fmt.Sprintf("%dpx", width), func(t *testing.T) {
					checkComparisonCharts(t, figs, rep.Series, len(c.threads) == 1, c.rounds)
					checkWhyCharts(t, figs)
				})
				if shots != "" {
					saveShot(t, d, filepath.Join(shots, fmt.Sprintf("test-%s-%d.png", strings.ReplaceAll(c.name, " ", "-"), width)))
				}
			}
		})
	}
}

// saveShot writes a screenshot of the whole page.
func saveShot(t *testing.T, d *webDriver, path string) {
	t.Helper()
	var h int
	if err := json.Unmarshal(d.call("POST", "/execute/sync", map[string]any{"script": "return document.body.scrollHeight", "args": []any{}}), &h); err != nil {
		t.Fatal(err)
	}
	var rect struct{ Width int }
	_ = json.Unmarshal(d.call("GET", "/window/rect", nil), &rect)
	d.call("POST", "/window/rect", map[string]any{"width": rect.Width, "height": h + 100})
	var b64 string
	if err := json.Unmarshal(d.call("GET", "/screenshot", nil), &b64); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkWhyCharts asserts the charts of issue #31 on a page of monitored
// runs: a cost chart (two panels: costs normalised to A, wait shares)
// and, right under an over-time chart, the PostgreSQL run's wait profile
// (stacked areas), each with a legend outside its data areas and none of
// its texts inside them but the tick labels' own.
func checkWhyCharts(t *testing.T, figs []figureInfo) {
	t.Helper()
	var why, waits *figureInfo
	for i := range figs {
		f := &figs[i]
		switch {
		case f.ID == "chart-why-1":
			why = f
		case strings.HasPrefix(f.ID, "chart-waits-") && waits == nil:
			waits = f
			if i == 0 || !strings.HasPrefix(figs[i-1].ID, "chart-over-time-") && !strings.HasPrefix(figs[i-1].ID, "chart-waits-") {
				t.Errorf("%s is not under an over-time chart", f.ID)
			}
		}
	}
	if why == nil || waits == nil {
		t.Fatalf("cost chart %v, wait chart %v: want both", why != nil, waits != nil)
	}
	if why.Kind != "bars" || len(why.Plots) < 1 || len(why.Series) != 2 {
		t.Errorf("%s: kind %s, %d panels, series %q", why.ID, why.Kind, len(why.Plots), why.Series)
	}
	// The caption names the classes the run's samples saw: a short run
	// at 1 thread may never catch its backend on CPU, but always waiting
	// for the client.
	if waits.Kind != "area" || len(waits.Plots) != 1 || !strings.Contains(waits.Caption, "waiting for the client") {
		t.Errorf("%s: kind %s, %d panels, caption %q", waits.ID, waits.Kind, len(waits.Plots), waits.Caption)
	}
	for _, f := range []*figureInfo{why, waits} {
		if len(f.Legend) != 4 {
			t.Errorf("%s: no legend", f.ID)
			continue
		}
		for _, p := range f.Plots {
			if f.Legend[0] < p[2] && f.Legend[2] > p[0] && f.Legend[1] < p[3] && f.Legend[3] > p[1] {
				t.Errorf("%s: legend %v overlaps data area %v", f.ID, f.Legend, p)
			}
		}
		for _, s := range f.Series {
			if slices.Contains(f.TextsInsidePlotArea, s) || !slices.Contains(f.LegendText, s) {
				t.Errorf("%s: legend entry %q is not drawn outside the data areas", f.ID, s)
			}
		}
		for _, s := range []string{"on CPU", "waiting for the client"} {
			if f == waits && slices.Contains(f.TextsInsidePlotArea, s) {
				t.Errorf("%s: legend text %q inside a data area", f.ID, s)
			}
		}
	}
}
