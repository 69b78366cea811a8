package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// Chart is one figure, drawn on demand as SVG (HTML) or PNG (Markdown).
type Chart struct {
	// ID is unique in the report and safe as a file name.
	ID      string
	Section string
	Title   string
	Caption string
	W, H    vg.Length
	draw    func(draw.Canvas)
}

// SVG renders the chart as an SVG document (fonts not embedded).
func (c *Chart) SVG() ([]byte, error) {
	cv := vgsvg.New(c.W, c.H)
	c.draw(draw.New(cv))
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("chart %s: svg: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// PNG renders the chart as a PNG image at 96 dpi on white.
func (c *Chart) PNG() ([]byte, error) {
	cv := vgimg.NewWith(vgimg.UseWH(c.W, c.H), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))
	c.draw(draw.New(cv))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("chart %s: png: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// Chart sections, in report order.
const (
	SectionThroughput = "Throughput"
	SectionLatency    = "Latency"
	SectionRelative   = "Relative to baseline"
	SectionHeat       = "Heat map"
	SectionTimeSeries = "Time series"
)

// px converts pixels at 96 dpi (the PNG resolution) to a length.
func px(n float64) vg.Length { return vg.Length(n * 72 / 96) }

var (
	chartW = px(760)
	chartH = px(380)
	panelH = px(150)
)

// Charts returns every chart of the report, in section order.
func (rep *Report) Charts() []Chart {
	var out []Chart
	for i, w := range rep.Workloads {
		if c, ok := rep.throughputChart(i, w); ok {
			out = append(out, c)
		}
	}
	for i, w := range rep.Workloads {
		if c, ok := rep.latencyChart(i, w); ok {
			out = append(out, c)
		}
	}
	for i, w := range rep.Workloads {
		if c, ok := rep.relativeChart(i, w); ok {
			out = append(out, c)
		}
	}
	if c, ok := rep.heatChart(); ok {
		out = append(out, c)
	}
	for _, r := range rep.TimeSeries {
		if c, ok := timeSeriesChart(r, rep.seriesOf(r)); ok {
			out = append(out, c)
		}
	}
	return out
}

func (rep *Report) seriesOf(r *summary.Run) string {
	for _, c := range rep.Cells {
		if slices.Contains(c.Runs, r) {
			return c.Series
		}
	}
	return ""
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p
}

// threadAxis puts thread counts on a log2 axis with a tick at each count.
func threadAxis(p *plot.Plot, threads []int) {
	slices.Sort(threads)
	threads = slices.Compact(threads)
	var ticks []plot.Tick
	for _, t := range threads {
		ticks = append(ticks, plot.Tick{Value: float64(t), Label: strconv.Itoa(t)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if len(threads) > 1 && threads[0] > 0 {
		p.X.Scale = plot.LogScale{}
		p.X.Min, p.X.Max = float64(threads[0])/1.25, float64(threads[len(threads)-1])*1.25
	} else if len(threads) > 0 {
		p.X.Min, p.X.Max = float64(threads[0])-1, float64(threads[len(threads)-1])+1
	}
}

// headroom starts the Y axis at 0 and leaves room above the data for a
// legend of n entries.
func headroom(p *plot.Plot, n int) {
	// Add has widened the axes to the data already.
	ymax := p.Y.Max
	p.Y.Min = 0
	if ymax > 0 && !math.IsInf(ymax, 0) {
		p.Y.Max = ymax * (1.08 + 0.045*float64(n))
	}
}

// errXYs are points with asymmetric Y errors (offsets from Y).
type errXYs struct {
	plotter.XYs
	plotter.YErrors
}

// seriesLine adds one series as a line with points and, when any point has
// an interval, whiskers; it returns the line for the legend.
func seriesLine(p *plot.Plot, i int, pts plotter.XYs, errs plotter.YErrors, dashed bool) (*plotter.Line, *plotter.Scatter, error) {
	line, sc, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, nil, err
	}
	line.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
	line.Width = vg.Points(1.5)
	sc.Shape = plotutil.Shape(i)
	sc.Radius = vg.Points(3.5)
	if dashed {
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(line, sc)
	hasErr := false
	for _, e := range errs {
		if e.Low != 0 || e.High != 0 {
			hasErr = true
		}
	}
	if hasErr {
		eb, err := plotter.NewYErrorBars(errXYs{pts, errs})
		if err != nil {
			return nil, nil, err
		}
		eb.Color = plotutil.Color(i)
		p.Add(eb)
	}
	return line, sc, nil
}

func (rep *Report) cellsOf(series, workload string) []*Cell {
	var out []*Cell
	for _, c := range rep.Cells {
		if c.Series == series && c.Workload == workload {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b *Cell) int { return a.Threads - b.Threads })
	return out
}

func (rep *Report) throughputChart(i int, w string) (Chart, bool) {
	p := newPlot("Throughput vs threads: "+w, "threads", "transactions/s")
	var threads []int
	drawn := false
	for si, s := range rep.Series {
		cells := rep.cellsOf(s, w)
		if len(cells) == 0 {
			continue
		}
		var pts plotter.XYs
		var errs plotter.YErrors
		for _, c := range cells {
			threads = append(threads, c.Threads)
			pts = append(pts, plotter.XY{X: float64(c.Threads), Y: c.TPS.Mean})
			errs = append(errs, struct{ Low, High float64 }{c.TPS.Mean - c.TPS.CILow, c.TPS.CIHigh - c.TPS.Mean})
		}
		line, sc, err := seriesLine(p, si, pts, errs, false)
		if err != nil {
			continue
		}
		p.Legend.Add(s, line, sc)
		drawn = true
	}
	if !drawn {
		return Chart{}, false
	}
	threadAxis(p, threads)
	headroom(p, len(rep.Series))
	return Chart{ID: fmt.Sprintf("throughput-%d", i+1), Section: SectionThroughput, Title: p.Title.Text,
		Caption: "Mean transactions per second over rounds; whiskers are 95% confidence intervals (2 or more rounds).",
		W:       chartW, H: chartH, draw: p.Draw}, true
}

func (rep *Report) latencyChart(i int, w string) (Chart, bool) {
	p := newPlot("p95 and p99 latency vs threads: "+w, "threads", "ms")
	var threads []int
	drawn := false
	for si, s := range rep.Series {
		cells := rep.cellsOf(s, w)
		if len(cells) == 0 {
			continue
		}
		for k, fig := range []string{"p95", "p99"} {
			var pts plotter.XYs
			var errs plotter.YErrors
			for _, c := range cells {
				st := c.P95MS
				if fig == "p99" {
					st = c.P99MS
				}
				threads = append(threads, c.Threads)
				pts = append(pts, plotter.XY{X: float64(c.Threads), Y: st.Mean})
				errs = append(errs, struct{ Low, High float64 }{st.Mean - st.CILow, st.CIHigh - st.Mean})
			}
			line, sc, err := seriesLine(p, si, pts, errs, k == 1)
			if err != nil {
				continue
			}
			p.Legend.Add(s+" "+fig, line, sc)
			drawn = true
		}
	}
	if !drawn {
		return Chart{}, false
	}
	threadAxis(p, threads)
	headroom(p, 2*len(rep.Series))
	return Chart{ID: fmt.Sprintf("latency-%d", i+1), Section: SectionLatency, Title: p.Title.Text,
		Caption: "Solid: p95; dashed: p99 (means over rounds, whiskers are 95% confidence intervals).",
		W:       chartW, H: chartH, draw: p.Draw}, true
}

func (rep *Report) relativeChart(i int, w string) (Chart, bool) {
	var rels []Relative
	var threads []int
	var series []string
	for _, r := range rep.Relatives {
		if r.Workload != w {
			continue
		}
		rels = append(rels, r)
		if !slices.Contains(threads, r.Threads) {
			threads = append(threads, r.Threads)
		}
		if !slices.Contains(series, r.Series) {
			series = append(series, r.Series)
		}
	}
	if len(rels) == 0 {
		return Chart{}, false
	}
	slices.Sort(threads)
	p := newPlot("Throughput relative to "+rep.Baseline+": "+w, "threads", "ratio to baseline")
	n := len(series)
	slot := 0.8 / float64(n)
	barW := vg.Length(float64(chartW-vg.Points(90)) / float64(len(threads)) * slot * 0.9)
	var labels plotter.XYLabels
	hi := 1.0
	lo := 1.0
	for si, s := range series {
		vals := make(plotter.Values, len(threads))
		var pts plotter.XYs
		var errs plotter.YErrors
		offset := -0.4 + slot*(float64(si)+0.5)
		for ti, t := range threads {
			for _, r := range rels {
				if r.Series != s || r.Threads != t || math.IsNaN(r.TPS.Value) {
					continue
				}
				vals[ti] = r.TPS.Value
				x := float64(ti) + offset
				pts = append(pts, plotter.XY{X: x, Y: r.TPS.Value})
				errs = append(errs, struct{ Low, High float64 }{r.TPS.Value - r.TPS.Low, r.TPS.High - r.TPS.Value})
				hi, lo = math.Max(hi, r.TPS.High), math.Min(lo, r.TPS.Low)
				mark := "n=1"
				switch {
				case r.TPS.Significant:
					mark = "sig."
				case r.TPS.HasCI:
					mark = "n.s."
				}
				labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: r.TPS.High})
				labels.Labels = append(labels.Labels, mark)
			}
		}
		bars, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			continue
		}
		bars.XMin = offset
		bars.Color = plotutil.Color(si)
		bars.LineStyle.Width = 0
		p.Add(bars)
		p.Legend.Add(s, bars)
		if len(pts) > 0 {
			eb, err := plotter.NewYErrorBars(errXYs{pts, errs})
			if err == nil {
				p.Add(eb)
			}
		}
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.Color = color.Gray{Y: 80}
	p.Add(one)
	if l, err := plotter.NewLabels(labels); err == nil {
		for k := range l.TextStyle {
			l.TextStyle[k].Font.Size = vg.Points(7)
			l.TextStyle[k].XAlign = draw.XCenter
		}
		l.Offset = vg.Point{Y: vg.Points(3)}
		p.Add(l)
	}
	var ticks []plot.Tick
	for ti, t := range threads {
		ticks = append(ticks, plot.Tick{Value: float64(ti), Label: strconv.Itoa(t)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.6, float64(len(threads))-0.4
	p.Y.Min, p.Y.Max = 0, math.Max(hi*1.12, 1.2)
	_ = lo
	return Chart{ID: fmt.Sprintf("relative-%d", i+1), Section: SectionRelative, Title: p.Title.Text,
		Caption: "Bars: throughput ÷ baseline; whiskers: 95% confidence interval of the ratio; dashed line: 1.0. " +
			"sig. = significant (interval excludes 1.0), n.s. = no significant difference, n=1 = single runs, cannot be judged.",
		W: chartW, H: chartH, draw: p.Draw}, true
}

// heatGrid is the heat map's grid: columns are workloads, rows series.
type heatGrid struct {
	z          [][]float64 // [row][col]
	cols, rows int
}

func (g heatGrid) Dims() (int, int)   { return g.cols, g.rows }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

func (rep *Report) heatChart() (Chart, bool) {
	if len(rep.Heat) == 0 || len(rep.Series) < 2 {
		return Chart{}, false
	}
	// Rows: series with heat data, baseline on top; columns: workloads.
	var rows, cols []string
	for _, h := range rep.Heat {
		if !slices.Contains(cols, h.Workload) {
			cols = append(cols, h.Workload)
		}
	}
	for _, sr := range rep.Series {
		for _, h := range rep.Heat {
			if h.Series == sr && !slices.Contains(rows, sr) {
				rows = append(rows, sr)
			}
		}
	}
	slices.Reverse(rows)
	g := heatGrid{cols: len(cols), rows: len(rows)}
	g.z = make([][]float64, g.rows)
	for r := range g.z {
		g.z[r] = make([]float64, g.cols)
		for c := range g.z[r] {
			g.z[r][c] = math.NaN()
		}
	}
	var labels plotter.XYLabels
	d := 0.05
	for _, h := range rep.Heat {
		r, c := slices.Index(rows, h.Series), slices.Index(cols, h.Workload)
		g.z[r][c] = h.Ratio
		d = math.Max(d, math.Abs(h.Ratio-1))
		labels.XYs = append(labels.XYs, plotter.XY{X: float64(c), Y: float64(r)})
		text := pct(h.Ratio)
		if h.Series == rep.Baseline {
			text = "baseline"
		}
		labels.Labels = append(labels.Labels, text)
	}
	cm := moreland.SmoothBlueRed()
	cm.SetMin(1 - d)
	cm.SetMax(1 + d)
	hm := plotter.NewHeatMap(g, cm.Palette(64))
	hm.NaN = color.Gray{Y: 235}
	hm.Min, hm.Max = 1-d, 1+d
	p := newPlot("Relative throughput: series × workloads (vs "+rep.Baseline+")", "", "")
	p.Add(hm)
	if l, err := plotter.NewLabels(labels); err == nil {
		for k := range l.TextStyle {
			l.TextStyle[k].XAlign, l.TextStyle[k].YAlign = draw.XCenter, draw.YCenter
			l.TextStyle[k].Font.Size = vg.Points(9)
		}
		p.Add(l)
	}
	var xt, yt []plot.Tick
	for c, w := range cols {
		xt = append(xt, plot.Tick{Value: float64(c), Label: w})
	}
	for r, s := range rows {
		yt = append(yt, plot.Tick{Value: float64(r), Label: s})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	h := px(math.Max(220, float64(90+45*len(rows))))
	return Chart{ID: "heatmap", Section: SectionHeat, Title: p.Title.Text,
		Caption: "Geometric mean over the thread counts both series ran of throughput ÷ baseline; red is higher, blue lower, grey not measured.",
		W:       chartW, H: h, draw: p.Draw}, true
}

// timeSeriesChart draws one run's intervals and monitor samples as panels
// sharing one time axis: tps, p95 latency, CPU, disk %util, load average.
func timeSeriesChart(r *summary.Run, series string) (Chart, bool) {
	if len(r.Intervals) == 0 {
		return Chart{}, false
	}
	xmax := 0.0
	for _, iv := range r.Intervals {
		xmax = math.Max(xmax, iv.TS)
	}
	var samples []summary.Sample
	if r.Monitor != nil {
		samples = r.Monitor.Samples
		for _, s := range samples {
			xmax = math.Max(xmax, s.TS)
		}
	}
	type line struct {
		name string
		pts  plotter.XYs
	}
	type panel struct {
		y     string
		lines []line
	}
	fromIntervals := func(f func(summary.Interval) float64) plotter.XYs {
		var pts plotter.XYs
		for _, iv := range r.Intervals {
			pts = append(pts, plotter.XY{X: iv.TS, Y: f(iv)})
		}
		return pts
	}
	fromSamples := func(match func(string) bool) []line {
		byKey := map[string]plotter.XYs{}
		var keys []string
		for _, s := range samples {
			for k, v := range s.Values {
				if !match(k) {
					continue
				}
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], plotter.XY{X: s.TS, Y: v})
			}
		}
		slices.Sort(keys)
		var out []line
		for _, k := range keys {
			out = append(out, line{k, byKey[k]})
		}
		return out
	}
	panels := []panel{
		{"tps", []line{{"tps", fromIntervals(func(iv summary.Interval) float64 { return iv.TPS })}}},
		{"p95 ms", []line{{"p95 ms", fromIntervals(func(iv summary.Interval) float64 { return iv.P95MS })}}},
	}
	if ls := fromSamples(func(k string) bool {
		return strings.HasPrefix(k, "host.cpu.") || k == "server.cpu"
	}); len(ls) > 0 {
		panels = append(panels, panel{"CPU %", ls})
	}
	if ls := fromSamples(func(k string) bool {
		return strings.HasPrefix(k, "disk.") && strings.HasSuffix(k, ".util")
	}); len(ls) > 0 {
		panels = append(panels, panel{"disk %util", ls})
	}
	if ls := fromSamples(func(k string) bool { return strings.HasPrefix(k, "host.load") }); len(ls) > 0 {
		panels = append(panels, panel{"load avg", ls})
	}
	title := fmt.Sprintf("Run %s: %s on %s, %d threads", RunName(r), r.Workload, series, r.Threads)
	plots := make([][]*plot.Plot, len(panels))
	for pi, pn := range panels {
		p := plot.New()
		if pi == 0 {
			p.Title.Text = title
		}
		p.Y.Label.Text = pn.y
		if pi == len(panels)-1 {
			p.X.Label.Text = "seconds since the measured period began"
		}
		p.X.Min, p.X.Max = 0, xmax
		p.Y.Min = 0
		p.Legend.Top = true
		p.Legend.TextStyle.Font.Size = vg.Points(7)
		p.Add(plotter.NewGrid())
		ymax := 0.0
		for _, l := range pn.lines {
			for _, pt := range l.pts {
				ymax = math.Max(ymax, pt.Y)
			}
		}
		if len(pn.lines) > 1 && ymax > 0 {
			p.Y.Max = ymax * 1.45 // room for the legend
		}
		for li, l := range pn.lines {
			ln, err := plotter.NewLine(l.pts)
			if err != nil {
				continue
			}
			ln.Color = plotutil.Color(li)
			ln.Width = vg.Points(1.2)
			p.Add(ln)
			if len(pn.lines) > 1 {
				p.Legend.Add(l.name, ln)
			}
		}
		plots[pi] = []*plot.Plot{p}
	}
	h := panelH*vg.Length(len(panels)) + vg.Points(20)
	return Chart{ID: "run-" + RunName(r), Section: SectionTimeSeries, Title: title,
		Caption: "Report intervals and host samples on one time axis (interval ends).",
		W:       chartW, H: h, draw: func(dc draw.Canvas) {
			tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(2), PadBottom: vg.Points(2),
				PadLeft: vg.Points(2), PadRight: vg.Points(6), PadY: vg.Points(4)}
			canvases := plot.Align(plots, tiles, dc)
			for i := range plots {
				plots[i][0].Draw(canvases[i][0])
			}
		}}, true
}
