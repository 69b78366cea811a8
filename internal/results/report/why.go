package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// SectionCosts is the charts' section of the comparisons' costs and
// wait shares side by side.
const SectionCosts = "Costs side by side"

// maxWhyCharts caps the cost charts: one per comparison with the
// baseline, the first ones.
const maxWhyCharts = 12

// whyPair is a comparison with the baseline that has the monitor's
// figures: the baseline cell (A), the cell (B) and their rows.
type whyPair struct {
	A, B *Cell
	Rows []monitor.WhyRow
}

// whyPairs returns the comparisons with the baseline (Report.Relatives)
// whose cells both have per-transaction costs or wait shares.
func (rep *Report) whyPairs() []whyPair {
	var out []whyPair
	for _, r := range rep.Relatives {
		b := rep.findCell(r.Series, r.Workload, r.Threads)
		a := rep.findCell(rep.Baseline, r.Workload, r.Threads)
		if a == nil || b == nil {
			continue
		}
		if rows := monitor.Why(a.Runs, b.Runs); len(rows) > 0 {
			out = append(out, whyPair{A: a, B: b, Rows: rows})
		}
	}
	return out
}

// WhyTables returns, for each comparison with the baseline that has the
// monitor's figures, "where the difference comes from" (monitor.Why): the
// per-transaction costs by ratio and the wait shares by points, each with
// its 95% interval over the rounds (bold where it excludes no
// difference), a share's part of the session time per transaction, and
// the one-line reading as the table's note.
func (rep *Report) WhyTables() []Table {
	var out []Table
	for i, p := range rep.whyPairs() {
		a, b := p.A, p.B
		t := Table{
			ID:    fmt.Sprintf("why-%d", i+1),
			Title: fmt.Sprintf("Where the difference comes from: %s vs %s, %s at %d threads", b.Series, a.Series, b.Workload, b.Threads),
			Columns: []Column{{Name: "Figure"}, {Name: a.Series + " (A)", Numeric: true}, {Name: b.Series + " (B)", Numeric: true},
				{Name: "B vs A", Numeric: true, Help: "costs: B / A; shares of session time: B - A in points"},
				{Name: "95% CI", Numeric: true, Help: "over the rounds; bold where Welch's test of B - A tells B from A"},
				{Name: "ms/txn B-A", Numeric: true, Help: "a wait share's part of the difference in session time per transaction: share x threads / tps"}},
		}
		rounds := fmt.Sprintf("Rounds: A %d, B %d; 95%% confidence intervals over the rounds, bold where Welch's test of B - A tells B from A.", len(a.Runs), len(b.Runs))
		if len(a.Runs) < 2 || len(b.Runs) < 2 {
			rounds = fmt.Sprintf("Rounds: A %d, B %d: no confidence intervals from single rounds.", len(a.Runs), len(b.Runs))
		}
		if msA, msB, d, ok := monitor.WhySessionMS(a.Runs, b.Runs); ok {
			rounds += fmt.Sprintf(" Session time per transaction (threads / tps): A %.3f ms, B %.3f ms (%+.3f ms).", msA, msB, d.Value)
		}
		t.Note = "Reading: " + monitor.WhyReading(p.Rows) + ". " + rounds
		for _, r := range p.Rows {
			rel, ci, contrib := txt("-"), txt(""), txt("")
			switch {
			case r.Share:
				rel = txt(fmt.Sprintf("%+.1f pts", r.Points.Value))
				if r.Points.HasCI {
					ci = txt(fmt.Sprintf("[%+.1f, %+.1f]", r.Points.Low, r.Points.High))
				}
				if r.HasContrib {
					contrib = txt(fmt.Sprintf("%+.3f", r.Contrib.Value))
					if r.Contrib.HasCI {
						contrib.Text += fmt.Sprintf(" [%+.3f, %+.3f]", r.Contrib.Low, r.Contrib.High)
					}
				}
			case !math.IsNaN(r.Ratio):
				rel = txt(fmt.Sprintf("%.2fx", r.Ratio))
				if r.RatioCI.HasCI {
					ci = txt(fmt.Sprintf("[%.2fx, %.2fx]", r.RatioCI.Low, r.RatioCI.High))
				}
			}
			if r.Significant() {
				rel.Class, ci.Class = "sig", "sig"
			}
			t.Rows = append(t.Rows, []Entry{txt(r.Name), num(r.A, 3), num(r.B, 3), rel, ci, contrib})
		}
		out = append(out, t)
	}
	return out
}

// waitClasses are the layers of a run's wait profile over time, bottom
// first: PostgreSQL's shares of backend time (wait.CLASS), or the MySQL
// family's shares of performance_schema wait time (wait.class.CLASS).
// Their colours are the classes', the same in every wait chart, and
// distinct in lightness from one another.
var (
	pgWaitClasses = []waitClass{
		{"wait.cpu", "on CPU", color.RGBA{0x2E, 0x7D, 0x32, 0xFF}},
		{"wait.io", "IO", color.RGBA{0x15, 0x65, 0xC0, 0xFF}},
		{"wait.lock", "Lock", color.RGBA{0xC6, 0x28, 0x28, 0xFF}},
		{"wait.lwlock", "LWLock", color.RGBA{0xEF, 0x6C, 0x00, 0xFF}},
		{"wait.ipc", "IPC", color.RGBA{0x6A, 0x1B, 0x9A, 0xFF}},
		{"wait.other", "other", color.RGBA{0x8D, 0x6E, 0x63, 0xFF}},
		{"wait.client", "waiting for the client", color.RGBA{0xB0, 0xBE, 0xC5, 0xFF}},
		{"wait.idle", "idle", color.RGBA{0xE0, 0xE0, 0xE0, 0xFF}},
	}
	myWaitClasses = []waitClass{
		{"wait.class.io", "file IO", color.RGBA{0x15, 0x65, 0xC0, 0xFF}},
		{"wait.class.mutex", "mutex", color.RGBA{0xEF, 0x6C, 0x00, 0xFF}},
		{"wait.class.rwlock", "rwlock", color.RGBA{0xF9, 0xA8, 0x25, 0xFF}},
		{"wait.class.cond", "cond", color.RGBA{0x6A, 0x1B, 0x9A, 0xFF}},
		{"wait.class.lock", "table lock", color.RGBA{0xC6, 0x28, 0x28, 0xFF}},
		{"wait.class.table_io", "table IO", color.RGBA{0x2E, 0x7D, 0x32, 0xFF}},
		{"wait.class.other", "other", color.RGBA{0x8D, 0x6E, 0x63, 0xFF}},
		{"wait.class.network", "network (client)", color.RGBA{0xB0, 0xBE, 0xC5, 0xFF}},
	}
)

type waitClass struct {
	key, name string
	color     color.RGBA
}

// waitProfile returns a run's wait layers over time: the samples that
// carry a profile, and the classes that were ever above zero; ok is false
// without a profile.
func waitProfile(r *summary.Run) (xs []float64, layers [][]float64, classes []waitClass, what string, ok bool) {
	if r.Monitor == nil {
		return nil, nil, nil, "", false
	}
	for _, set := range []struct {
		classes []waitClass
		marker  string
		what    string
	}{
		{pgWaitClasses, "wait.ticks", "share of the sampled backends' time (pg_stat_activity)"},
		{myWaitClasses, "wait.time_ms", "share of the sessions' performance_schema wait time"},
	} {
		var keep []summary.Sample
		for _, s := range r.Monitor.Samples {
			if _, has := s.Values[set.marker]; has {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			continue
		}
		for _, c := range set.classes {
			ys := make([]float64, len(keep))
			seen := false
			for i, s := range keep {
				ys[i] = s.Values[c.key]
				seen = seen || ys[i] > 0
			}
			if seen {
				layers = append(layers, ys)
				classes = append(classes, c)
			}
		}
		for _, s := range keep {
			xs = append(xs, s.TS)
		}
		return xs, layers, classes, set.what, len(layers) > 0
	}
	// The MySQL family without performance_schema: the row-lock waits
	// alone, as the verdict counts them.
	if r.Threads <= 0 {
		return nil, nil, nil, "", false
	}
	var ys []float64
	seen := false
	for _, s := range r.Monitor.Samples {
		ms, has := s.Values["wait.row_lock_ms"]
		if !has {
			continue
		}
		n := float64(r.Threads)
		y := math.Min(100, math.Max(ms/1000/n*100, s.Values["wait.row_lock_sessions"]/n*100))
		xs, ys = append(xs, s.TS), append(ys, y)
		seen = seen || y > 0
	}
	if !seen {
		return nil, nil, nil, "", false
	}
	return xs, [][]float64{ys}, []waitClass{rowLockClass}, "the sessions' time in InnoDB row-lock waits; no performance_schema", true
}

var rowLockClass = waitClass{"wait.row_lock_ms", "row-lock wait", color.RGBA{0xC6, 0x28, 0x28, 0xFF}}

// ratioTicks label a logarithmic ratio axis at 1, 2 and 5 times the powers
// of ten ("0.5x", "2x"), thinned to 1 and 10 where the range is wide.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	if !(lo > 0) || !(hi > lo) {
		return ticks
	}
	steps := []float64{1, 2, 5}
	if hi/lo > 1e3 {
		steps = []float64{1}
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range steps {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64) + "x"})
			}
		}
	}
	return ticks
}

// waitChart draws a run's wait profile over time as stacked areas, one
// layer per wait class in the class's colour, on the time axis of its
// group's over-time chart (xmax), which it is placed under.
func (rep *Report) waitChart(r *summary.Run, xmax float64) (Chart, bool) {
	xs, layers, classes, what, ok := waitProfile(r)
	if !ok {
		return Chart{}, false
	}
	s := rep.seriesOf(r)
	f := newFigure("area")
	// The series' colour as a rule along the top: which run this is.
	top := plotter.NewFunction(func(float64) float64 { return 100 })
	top.Color, top.Width = rep.SeriesColor(s), vg.Points(3)
	f.addSeries(s, rep.SeriesColor(s), top)
	st := stacked{xs: xs, layers: layers}
	var names []string
	for _, c := range classes {
		st.colors = append(st.colors, c.color)
		f.addKey(c.name, swatch{c.color})
		names = append(names, c.name)
	}
	p := panelPlot("% of session time", xmax)
	p.Add(st)
	p.Y.Max = 100
	title := fmt.Sprintf("Wait profile, run %s: %s on %s, %d threads", RunName(r), r.Workload, s, r.Threads)
	p.Title.Text = title
	p.X.Label.Text = "seconds since the measured period began"
	p.Add(top)
	f.panels = []*plot.Plot{p}
	return Chart{ID: "waits-" + RunName(r), Section: SectionTimeSeries, Title: title,
		Caption: fmt.Sprintf("Where the sessions of run %s (%s, %s at %d threads) spent their time per report interval, stacked (%s): %s; on the time axis of the chart above, the series' colour along the top.",
			RunName(r), s, r.Workload, r.Threads, what, strings.Join(names, ", ")),
		W: chartW, H: panelH + vg.Points(60), draw: f.draw}, true
}

// logBars draws bars on a logarithmic axis, from the axis' bottom.
type logBars []bar

func (bs logBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, b := range bs {
		x0, x1, y0, y1 := trX(b.x-b.w/2), trX(b.x+b.w/2), trY(p.Y.Min), trY(b.y)
		c.FillPolygon(b.color, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
		if b.ci {
			xm, lo, hi, cp := trX(b.x), trY(math.Max(b.lo, p.Y.Min)), trY(math.Min(b.hi, p.Y.Max)), (x1-x0)/5
			c.StrokeLine2(whiskerStyle, xm, lo, xm, hi)
			c.StrokeLine2(whiskerStyle, xm-cp, lo, xm+cp, lo)
			if b.hi <= p.Y.Max {
				c.StrokeLine2(whiskerStyle, xm-cp, hi, xm+cp, hi)
			}
		}
	}
}

func (bs logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, b := range bs {
		xmin, xmax = math.Min(xmin, b.x-b.w/2), math.Max(xmax, b.x+b.w/2)
		ymin, ymax = math.Min(ymin, b.y), math.Max(ymax, b.y)
	}
	return
}

// whyChart draws a comparison's costs and wait shares side by side: per
// cost, A's and B's bars normalised to A = 1 on a logarithmic axis (so
// that costs of different units and sizes fit), B's with its 95%
// interval; per wait share, A's and B's percent of session time, B's with
// the interval of the difference.
func (rep *Report) whyChart(i int, p whyPair) (Chart, bool) {
	ca, cb := rep.SeriesColor(p.A.Series), rep.SeriesColor(p.B.Series)
	var costs, shares []monitor.WhyRow
	for _, r := range p.Rows {
		switch {
		case r.Share:
			shares = append(shares, r)
		case r.Ratio > 0 && !math.IsNaN(r.Ratio) && !math.IsInf(r.Ratio, 0):
			costs = append(costs, r)
		}
	}
	if len(costs) == 0 && len(shares) == 0 {
		return Chart{}, false
	}
	f := newFigure("bars")
	f.addSeries(p.A.Series, ca, swatch{ca})
	f.addSeries(p.B.Series, cb, swatch{cb})
	title := fmt.Sprintf("Costs and waits: %s vs %s, %s at %d threads", p.B.Series, p.A.Series, p.B.Workload, p.B.Threads)
	var panels []*plot.Plot
	if len(costs) > 0 {
		pl := newPlot(title, "", "per transaction, A = 1 (log)")
		pl.Y.Scale = plot.LogScale{}
		var bs logBars
		var ticks []plot.Tick
		lo, hi := 1.0, 1.0
		for k, r := range costs {
			bs = append(bs, bar{x: float64(k) - 0.2, w: 0.36, y: 1, color: ca})
			b := bar{x: float64(k) + 0.2, w: 0.36, y: r.Ratio, color: cb}
			lo, hi = math.Min(lo, r.Ratio), math.Max(hi, r.Ratio)
			if r.RatioCI.HasCI && r.RatioCI.Low > 0 {
				b.ci, b.lo, b.hi = true, r.RatioCI.Low, r.RatioCI.High
			}
			bs = append(bs, b)
			ticks = append(ticks, plot.Tick{Value: float64(k), Label: strings.TrimSuffix(r.Name, "/txn")})
		}
		// Whiskers reach at most a decade beyond the bars; the axis holds them.
		for k := range bs {
			if bs[k].ci {
				bs[k].lo, bs[k].hi = math.Max(bs[k].lo, lo/10), math.Min(bs[k].hi, hi*10)
				lo, hi = math.Min(lo, bs[k].lo), math.Max(hi, bs[k].hi)
			}
		}
		pl.Add(bs)
		f.lay.Whiskers += bars(bs).whiskers()
		pl.Y.Min, pl.Y.Max = lo/2, hi*2
		pl.Y.Tick.Marker = ratioTicks{}
		one := plotter.NewFunction(func(float64) float64 { return 1 })
		one.Dashes, one.Color = []vg.Length{vg.Points(4), vg.Points(3)}, color.Gray{Y: 80}
		pl.Add(one)
		pl.X.Tick.Marker = plot.ConstantTicks(ticks)
		pl.X.Min, pl.X.Max = -0.6, float64(len(costs))-0.4
		panels = append(panels, pl)
	}
	if len(shares) > 0 {
		pl := newPlot("", "", "% of session time")
		if len(panels) == 0 {
			pl.Title.Text = title
		}
		var bs bars
		var ticks []plot.Tick
		for k, r := range shares {
			bs = append(bs, bar{x: float64(k) - 0.2, w: 0.36, y: r.A, color: ca})
			b := bar{x: float64(k) + 0.2, w: 0.36, y: r.B, color: cb}
			if r.Points.HasCI {
				// The interval of the difference, around B.
				b.ci, b.lo, b.hi = true, r.A+r.Points.Low, math.Min(r.A+r.Points.High, 100)
			}
			bs = append(bs, b)
			ticks = append(ticks, plot.Tick{Value: float64(k), Label: strings.TrimSuffix(r.Name, " %")})
		}
		pl.Add(bs)
		f.lay.Whiskers += bs.whiskers()
		pl.Y.Min, pl.Y.Max = 0, 100
		pl.X.Tick.Marker = plot.ConstantTicks(ticks)
		pl.X.Min, pl.X.Max = -0.6, float64(len(shares))-0.4
		panels = append(panels, pl)
	}
	f.panels = panels
	rounds := fmt.Sprintf("%d and %d rounds; whiskers are 95%% confidence intervals over them", len(p.A.Runs), len(p.B.Runs))
	if len(p.A.Runs) < 2 || len(p.B.Runs) < 2 {
		rounds = "single rounds, so no confidence interval can be drawn"
	}
	return Chart{ID: fmt.Sprintf("why-%d", i+1), Section: SectionCosts, Title: title,
		Caption: fmt.Sprintf("Where the difference between %s (B) and the baseline %s (A) comes from, %s at %d threads: per-transaction costs as B / A on a logarithmic axis (A = 1, dashed), and the sessions' wait shares in percent, A's bar beside B's; %s. Reading: %s.",
			p.B.Series, p.A.Series, p.B.Workload, p.B.Threads, rounds, monitor.WhyReading(p.Rows)),
		W: chartW, H: chartH + panelH*vg.Length(len(panels)-1), draw: f.draw}, true
}

// whyCharts returns the cost charts of the comparisons, up to
// maxWhyCharts, noting how many were left out.
func (rep *Report) whyCharts() []Chart {
	var out []Chart
	pairs := rep.whyPairs()
	for i, p := range pairs {
		if len(out) == maxWhyCharts {
			break
		}
		if c, ok := rep.whyChart(i, p); ok {
			out = append(out, c)
		}
	}
	return out
}

// waitCharts returns the wait profile charts of a time group's runs, on
// the time axis of the group's over-time chart.
func (rep *Report) waitCharts(g timeGroup) []Chart {
	xmax := 0.0
	for _, r := range g.runs {
		if len(r.Intervals) > 0 {
			xmax = math.Max(xmax, runEnd(r))
		}
	}
	var out []Chart
	for _, r := range g.runs {
		if c, ok := rep.waitChart(r, xmax); ok {
			out = append(out, c)
		}
	}
	return out
}

// whyJSON is a comparison's "where the difference comes from" in the JSON
// report: the reading and each figure (monitor.WhyFigure).
type whyJSON struct {
	Reading string              `json:"reading"`
	Figures []monitor.WhyFigure `json:"figures"`
}

// jsonWhy returns where the difference of r comes from, nil without the
// monitor's figures.
func (rep *Report) jsonWhy(r Relative) *whyJSON {
	b := rep.findCell(r.Series, r.Workload, r.Threads)
	a := rep.findCell(rep.Baseline, r.Workload, r.Threads)
	if a == nil || b == nil {
		return nil
	}
	rows := monitor.Why(a.Runs, b.Runs)
	if len(rows) == 0 {
		return nil
	}
	w := &whyJSON{Reading: monitor.WhyReading(rows)}
	for _, row := range rows {
		w.Figures = append(w.Figures, row.Figure())
	}
	return w
}
