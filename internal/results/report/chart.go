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
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
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
	// Caption says what the chart compares.
	Caption string
	W, H    vg.Length
	draw    func(draw.Canvas) Layout
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

// Layout returns where the chart puts its parts (as SVG and PNG draw it).
func (c *Chart) Layout() Layout {
	return c.draw(draw.NewCanvas(new(recorder.Canvas), c.W, c.H))
}

// Chart sections, in report order.
const (
	SectionThroughput = "Throughput"
	SectionLatency    = "Latency"
	SectionRelative   = "Relative to baseline"
	SectionHeat       = "Heat map"
	SectionTimeSeries = "Time series"
	SectionResources  = "Host resources"
)

// px converts pixels at 96 dpi (the PNG resolution) to a length.
func px(n float64) vg.Length { return vg.Length(n * 72 / 96) }

var (
	chartW = px(960)
	chartH = px(400)
	panelH = px(170)
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
	out = append(out, rep.whyCharts()...)
	if c, ok := rep.heatChart(); ok {
		out = append(out, c)
	}
	for i, g := range rep.timeGroups() {
		if c, ok := rep.overTimeChart(i, g); ok {
			out = append(out, c)
			out = append(out, rep.waitCharts(g)...) // under the throughput chart, on its time axis
		}
	}
	for _, r := range rep.TimeSeries {
		if c, ok := rep.resourceChart(r); ok {
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
	useFonts(p)
	p.X.Label.Text = x
	p.Y.Label.Text = y
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

// fromZero starts the Y axis at 0 with a little room above the data.
func fromZero(p *plot.Plot) {
	ymax := p.Y.Max
	p.Y.Min = 0
	if ymax > 0 && !math.IsInf(ymax, 0) {
		p.Y.Max = ymax * 1.06
	}
}

// errXYs are points with asymmetric Y errors (offsets from Y).
type errXYs struct {
	plotter.XYs
	plotter.YErrors
}

// seriesLine adds one series as a line with points in the series' colour
// and, when any point has an interval, whiskers; it returns the
// thumbnails for the legend and how many whiskers it drew.
func seriesLine(p *plot.Plot, c color.Color, shape int, pts plotter.XYs, errs plotter.YErrors, dashed bool) ([]plot.Thumbnailer, int, error) {
	line, sc, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, 0, err
	}
	line.Color, sc.Color = c, c
	line.Width = vg.Points(1.8)
	sc.Shape = plotutil.Shape(shape)
	sc.Radius = vg.Points(3.5)
	if dashed {
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(line, sc)
	n := 0
	for _, e := range errs {
		if e.Low != 0 || e.High != 0 {
			n++
		}
	}
	if n > 0 {
		eb, err := plotter.NewYErrorBars(errXYs{pts, errs})
		if err != nil {
			return nil, 0, err
		}
		eb.Color = c
		eb.LineStyle.Width = vg.Points(1.2)
		p.Add(eb)
	}
	return []plot.Thumbnailer{line, sc}, n, nil
}

// styleKey is a legend thumbnail for a line style in black.
func styleKey(dashed bool) plot.Thumbnailer {
	l := &plotter.Line{LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1.5)}}
	if dashed {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return l
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

// threadsOf returns the thread counts a workload's cells ran, ascending.
func (rep *Report) threadsOf(w string) []int {
	var ts []int
	for _, c := range rep.Cells {
		if c.Workload == w && !slices.Contains(ts, c.Threads) {
			ts = append(ts, c.Threads)
		}
	}
	slices.Sort(ts)
	return ts
}

// roundsNote says how many rounds the cells of a chart have.
func roundsNote(cells []*Cell) string {
	lo, hi := math.MaxInt, 0
	for _, c := range cells {
		lo, hi = min(lo, len(c.Runs)), max(hi, len(c.Runs))
	}
	switch {
	case len(cells) == 0:
		return ""
	case hi < 2:
		return "single rounds, so no confidence interval can be drawn"
	case lo == hi:
		return fmt.Sprintf("%d rounds each; whiskers are 95%% confidence intervals of the mean", lo)
	}
	return fmt.Sprintf("%d to %d rounds; whiskers are 95%% confidence intervals of the mean (none for single rounds)", lo, hi)
}

// cellFigure is one figure of a cell (its mean and interval).
type cellFigure struct {
	name string
	of   func(*Cell) (mean, lo, hi float64, ci bool)
}

var (
	figTPS = cellFigure{"throughput", func(c *Cell) (float64, float64, float64, bool) {
		return c.TPS.Mean, c.TPS.CILow, c.TPS.CIHigh, c.TPS.HasCI()
	}}
	figP95 = cellFigure{"p95", func(c *Cell) (float64, float64, float64, bool) {
		return c.P95MS.Mean, c.P95MS.CILow, c.P95MS.CIHigh, c.P95MS.HasCI()
	}}
	figP99 = cellFigure{"p99", func(c *Cell) (float64, float64, float64, bool) {
		return c.P99MS.Mean, c.P99MS.CILow, c.P99MS.CIHigh, c.P99MS.HasCI()
	}}
)

// barChart draws a workload run at a single thread count: for each
// figure a group of bars, one bar per series in its colour, with the
// confidence interval as a whisker.
func (rep *Report) barChart(f *figure, p *plot.Plot, w string, threads int, figs []cellFigure) ([]*Cell, bool) {
	var bs bars
	var cells []*Cell
	var series []string
	for _, s := range rep.Series {
		if c := rep.findCell(s, w, threads); c != nil {
			cells = append(cells, c)
			series = append(series, s)
		}
	}
	if len(cells) == 0 {
		return nil, false
	}
	slot := 0.8 / float64(len(cells))
	top := whiskerTop(cells, figs)
	var ticks []plot.Tick
	for gi, fg := range figs {
		for ci, c := range cells {
			mean, lo, hi, ci95 := fg.of(c)
			open := hi > top
			if open {
				hi, f.cut = top, true
			}
			x := float64(gi) - 0.4 + slot*(float64(ci)+0.5)
			bs = append(bs, bar{x: x, w: slot * 0.85, y: mean, lo: lo, hi: hi, ci: ci95, open: open, color: rep.SeriesColor(c.Series)})
		}
		label := fg.name
		if len(figs) == 1 {
			label = fmt.Sprintf("%d threads", threads)
		}
		ticks = append(ticks, plot.Tick{Value: float64(gi), Label: label})
	}
	p.Add(bs)
	f.lay.Whiskers += bs.whiskers()
	for _, s := range series {
		f.addSeries(s, rep.SeriesColor(s), swatch{rep.SeriesColor(s)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.55, float64(len(figs))-0.45
	fromZero(p)
	return cells, true
}

// whiskerTop is where whiskers are cut: at 2.5 times the highest mean,
// so that the intervals of few noisy rounds do not flatten the data.
func whiskerTop(cells []*Cell, figs []cellFigure) float64 {
	top := 0.0
	for _, c := range cells {
		for _, fg := range figs {
			mean, _, _, _ := fg.of(c)
			top = math.Max(top, mean)
		}
	}
	if top <= 0 {
		return math.Inf(1)
	}
	return 2.5 * top
}

// lineChart draws a workload across thread counts: one line per series
// and figure, in the series' colour (the second figure dashed).
func (rep *Report) lineChart(f *figure, p *plot.Plot, w string, figs []cellFigure) ([]*Cell, bool) {
	var threads []int
	var all, drawn []*Cell
	var series []string
	for _, s := range rep.Series {
		if cells := rep.cellsOf(s, w); len(cells) > 0 {
			series = append(series, s)
			drawn = append(drawn, cells...)
		}
	}
	top := whiskerTop(drawn, figs)
	for si, s := range series {
		cells := rep.cellsOf(s, w)
		// Series side by side around each thread count, so that their
		// whiskers do not hide one another (the axis is logarithmic).
		dodge := math.Pow(2, 0.06*(float64(si)-float64(len(series)-1)/2))
		var thumbs []plot.Thumbnailer
		for k, fg := range figs {
			var pts plotter.XYs
			var errs plotter.YErrors
			for _, c := range cells {
				mean, lo, hi, _ := fg.of(c)
				if hi > top {
					hi, f.cut = top, true
				}
				threads = append(threads, c.Threads)
				pts = append(pts, plotter.XY{X: float64(c.Threads) * dodge, Y: mean})
				// The axis starts at 0: an interval reaching below is cut there.
				errs = append(errs, struct{ Low, High float64 }{mean - math.Max(lo, 0), hi - mean})
			}
			th, n, err := seriesLine(p, rep.SeriesColor(s), rep.seriesIndex(s), pts, errs, k == 1)
			if err != nil {
				continue
			}
			f.lay.Whiskers += n
			if k == 0 {
				thumbs = th
			}
		}
		if thumbs != nil {
			f.addSeries(s, rep.SeriesColor(s), thumbs...)
			all = append(all, cells...)
		}
	}
	if len(all) == 0 {
		return nil, false
	}
	if len(figs) > 1 {
		f.addKey(figs[0].name+" (solid)", styleKey(false))
		f.addKey(figs[1].name+" (dashed)", styleKey(true))
	}
	threadAxis(p, threads)
	fromZero(p)
	return all, true
}

func seriesOfCells(cells []*Cell) []string {
	var ss []string
	for _, c := range cells {
		if !slices.Contains(ss, c.Series) {
			ss = append(ss, c.Series)
		}
	}
	return ss
}

// figureChart is what a throughput or latency chart shows: its figures,
// unit and the words of its titles and captions.
type figureChart struct {
	id, section, unit string
	figs              []cellFigure
	// what names the figures in a title ("Throughput"); barWhat and
	// lineWhat start the caption of bars and of lines, barsAre and
	// linesAre say what the bars and lines are.
	what, barWhat, lineWhat, barsAre, linesAre string
}

var (
	throughputFigure = figureChart{id: "throughput", section: SectionThroughput, unit: "transactions/s",
		figs: []cellFigure{figTPS}, what: "Throughput",
		barWhat: "Mean transactions per second", lineWhat: "Mean transactions per second",
		barsAre: "one bar per series", linesAre: "one line per series"}
	latencyFigure = figureChart{id: "latency", section: SectionLatency, unit: "ms",
		figs: []cellFigure{figP95, figP99}, what: "p95 and p99 latency",
		barWhat:  "Mean p95 and p99 latency (ms, lower is better)",
		lineWhat: "Mean p95 (solid) and p99 (dashed) latency (ms, lower is better)",
		barsAre:  "one bar per series in each group", linesAre: "one colour per series"}
)

func (rep *Report) throughputChart(i int, w string) (Chart, bool) {
	return rep.figureChart(i, w, throughputFigure)
}

func (rep *Report) latencyChart(i int, w string) (Chart, bool) {
	return rep.figureChart(i, w, latencyFigure)
}

// figureChart draws fc's figures of workload w: bars with whiskers at a
// single thread count, else a line per series over the thread counts.
func (rep *Report) figureChart(i int, w string, fc figureChart) (Chart, bool) {
	threads := rep.threadsOf(w)
	f := newFigure("lines")
	var p *plot.Plot
	var cells []*Cell
	var ok bool
	var caption string
	if len(threads) == 1 {
		f.lay.Kind = "bars"
		p = newPlot(fmt.Sprintf("%s at %d threads: %s", fc.what, threads[0], w), "", fc.unit)
		cells, ok = rep.barChart(f, p, w, threads[0], fc.figs)
		caption = fmt.Sprintf("%s of %s at %d threads, %s: %s; %s.",
			fc.barWhat, w, threads[0], fc.barsAre, seriesList(seriesOfCells(cells)), roundsNote(cells))
	} else {
		p = newPlot(fc.what+" vs threads: "+w, "threads", fc.unit)
		cells, ok = rep.lineChart(f, p, w, fc.figs)
		caption = fmt.Sprintf("%s of %s by thread count, %s: %s; %s.",
			fc.lineWhat, w, fc.linesAre,
			seriesList(seriesOfCells(cells)), roundsNote(cells))
	}
	if !ok {
		return Chart{}, false
	}
	caption += f.cutNote()
	f.panels = []*plot.Plot{p}
	return Chart{ID: fmt.Sprintf("%s-%d", fc.id, i+1), Section: fc.section, Title: p.Title.Text,
		Caption: caption, W: chartW, H: chartH, draw: f.draw}, true
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
	f := newFigure("bars")
	p := newPlot("Throughput relative to "+rep.Baseline+": "+w, "threads", "ratio to baseline")
	slot := 0.8 / float64(len(series))
	var labels plotter.XYLabels
	var bs bars
	hi, top := 1.0, 1.0
	for si, s := range series {
		offset := -0.4 + slot*(float64(si)+0.5)
		for ti, t := range threads {
			for _, r := range rels {
				if r.Series != s || r.Threads != t || math.IsNaN(r.TPS.Value) {
					continue
				}
				x := float64(ti) + offset
				bs = append(bs, bar{x: x, w: slot * 0.85, y: r.TPS.Value, lo: r.TPS.Low, hi: r.TPS.High, ci: r.TPS.HasCI, color: rep.SeriesColor(s)})
				hi, top = math.Max(hi, r.TPS.High), math.Max(top, r.TPS.Value)
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
		f.addSeries(s, rep.SeriesColor(s), swatch{rep.SeriesColor(s)})
	}
	p.Add(bs)
	f.lay.Whiskers = bs.whiskers()
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.Color = color.Gray{Y: 80}
	p.Add(one)
	f.addKey("baseline "+rep.Baseline+" = 1.0", one)
	// The axis ends above the highest interval, or at twice the highest
	// ratio when an interval (of few noisy rounds) reaches much further:
	// its whisker is cut there.
	p.Y.Min, p.Y.Max = 0, math.Max(math.Min(hi*1.12, top*2), 1.2)
	for k := range labels.XYs {
		labels.XYs[k].Y = math.Min(labels.XYs[k].Y, p.Y.Max/1.06)
	}
	cut := ""
	if hi > p.Y.Max {
		cut = " Whiskers reaching above the axis are cut there, without a cap."
	}
	if l, err := plotter.NewLabels(labels); err == nil {
		for k := range l.TextStyle {
			l.TextStyle[k].Font = font.From(chartFont, 7)
		}
		l.Offset = vg.Point{X: vg.Points(3), Y: vg.Points(3)} // beside the whisker
		p.Add(l)
	}
	var ticks []plot.Tick
	for ti, t := range threads {
		ticks = append(ticks, plot.Tick{Value: float64(ti), Label: strconv.Itoa(t)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.6, float64(len(threads))-0.4
	f.panels = []*plot.Plot{p}
	return Chart{ID: fmt.Sprintf("relative-%d", i+1), Section: SectionRelative, Title: p.Title.Text,
		Caption: fmt.Sprintf("Throughput of %s relative to the baseline %s at each thread count of %s: bars are the ratio, whiskers its 95%% confidence interval, the dashed line 1.0. "+
			"sig. = significant (interval excludes 1.0), n.s. = no significant difference, n=1 = single runs, cannot be judged.%s", seriesList(series), rep.Baseline, w, cut),
		W: chartW, H: chartH, draw: f.draw}, true
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
			l.TextStyle[k].Font = font.From(chartFont, 9)
		}
		p.Add(l)
	}
	var xt, yt []plot.Tick
	for c, w := range cols {
		xt = append(xt, plot.Tick{Value: float64(c), Label: w})
	}
	for r, s := range rows {
		yt = append(yt, plot.Tick{Value: float64(r), Label: padRight(p.Y.Tick.Label, s)})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	h := px(math.Max(220, float64(90+45*len(rows))))
	others := slices.DeleteFunc(slices.Clone(rows), func(s string) bool { return s == rep.Baseline })
	slices.Reverse(others)
	return Chart{ID: "heatmap", Section: SectionHeat, Title: p.Title.Text,
		Caption: fmt.Sprintf("Throughput of %s relative to the baseline %s for each workload: geometric mean over the thread counts both ran of throughput ÷ baseline; red is higher, blue lower, grey not measured.",
			seriesList(others), rep.Baseline),
		W: chartW, H: h, draw: func(dc draw.Canvas) Layout {
			p.Draw(dc)
			return Layout{W: dc.Size().X.Points(), H: dc.Size().Y.Points(), Kind: "heat", Plots: []vg.Rectangle{p.DataCanvas(dc).Rectangle}}
		}}, true
}

// timeGroup is the runs drawn over time on one set of axes: the runs of
// Report.TimeSeries of one workload and thread count, one per cell.
type timeGroup struct {
	workload string
	threads  int
	runs     []*summary.Run
}

// timeGroups groups the time-series runs by workload and thread count,
// in the order the runs were picked.
func (rep *Report) timeGroups() []timeGroup {
	var out []timeGroup
	for _, r := range rep.TimeSeries {
		i := slices.IndexFunc(out, func(g timeGroup) bool { return g.workload == r.Workload && g.threads == r.Threads })
		if i < 0 {
			out = append(out, timeGroup{workload: r.Workload, threads: r.Threads})
			i = len(out) - 1
		}
		out[i].runs = append(out[i].runs, r)
	}
	return out
}

// sampleKeys returns the monitor keys of r's samples that match, sorted.
func sampleKeys(r *summary.Run, match func(string) bool) []string {
	var keys []string
	if r.Monitor == nil {
		return nil
	}
	for _, s := range r.Monitor.Samples {
		for k := range s.Values {
			if match(k) && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// samplePoints returns the samples of key k, in time order; a sample
// without the key counts 0.
func samplePoints(r *summary.Run, k string) plotter.XYs {
	var pts plotter.XYs
	if r.Monitor == nil {
		return nil
	}
	for _, s := range r.Monitor.Samples {
		pts = append(pts, plotter.XY{X: s.TS, Y: s.Values[k]})
	}
	return pts
}

func runEnd(r *summary.Run) float64 {
	end := 0.0
	for _, iv := range r.Intervals {
		end = math.Max(end, iv.TS)
	}
	if r.Monitor != nil {
		for _, s := range r.Monitor.Samples {
			end = math.Max(end, s.TS)
		}
	}
	return end
}

// panelPlot is one panel of a figure whose panels share the time axis.
func panelPlot(y string, xmax float64) *plot.Plot {
	p := plot.New()
	useFonts(p)
	p.Y.Label.Text = y
	p.X.Min, p.X.Max = 0, xmax
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	return p
}

func addLine(p *plot.Plot, pts plotter.XYs, c color.Color, dashes []vg.Length) *plotter.Line {
	ln, err := plotter.NewLine(pts)
	if err != nil {
		return nil
	}
	ln.Color = c
	ln.Width = vg.Points(1.5)
	ln.Dashes = dashes
	p.Add(ln)
	return ln
}

// overTimeChart draws the runs of one workload and thread count on the
// same time axes: throughput, p95 latency and, when monitored, host CPU
// busy; one line per series in its colour.
func (rep *Report) overTimeChart(i int, g timeGroup) (Chart, bool) {
	xmax := 0.0
	cpu := false
	for _, r := range g.runs {
		if len(r.Intervals) > 0 {
			xmax = math.Max(xmax, runEnd(r))
		}
		cpu = cpu || len(sampleKeys(r, func(k string) bool { return k == "host.cpu.busy" })) > 0
	}
	if xmax == 0 {
		return Chart{}, false
	}
	tps, p95 := panelPlot("transactions/s", xmax), panelPlot("p95 ms", xmax)
	title := fmt.Sprintf("Over time: %s, %d threads", g.workload, g.threads)
	tps.Title.Text = title
	panels := []*plot.Plot{tps, p95}
	var busy *plot.Plot
	if cpu {
		busy = panelPlot("host CPU busy %", xmax)
		panels = append(panels, busy)
	}
	panels[len(panels)-1].X.Label.Text = "seconds since the measured period began"
	f := newFigure("lines")
	var named []string
	seen := map[string]int{}
	for _, r := range g.runs {
		if len(r.Intervals) == 0 {
			continue
		}
		s := rep.seriesOf(r)
		c := rep.SeriesColor(s)
		var dashes []vg.Length
		if seen[s] > 0 { // a second cell of the series (other parameters)
			dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		seen[s]++
		var tp, lp plotter.XYs
		for _, iv := range r.Intervals {
			tp = append(tp, plotter.XY{X: iv.TS, Y: iv.TPS})
			lp = append(lp, plotter.XY{X: iv.TS, Y: iv.P95MS})
		}
		ln := addLine(tps, tp, c, dashes)
		addLine(p95, lp, c, dashes)
		if busy != nil {
			if pts := samplePoints(r, "host.cpu.busy"); len(pts) > 0 {
				addLine(busy, pts, c, dashes)
			}
		}
		label := s
		if seen[s] > 1 {
			label = fmt.Sprintf("%s (run %s)", s, RunName(r))
		}
		if ln != nil {
			f.addSeries(label, c, ln)
		}
		named = append(named, fmt.Sprintf("%s (run %s)", s, RunName(r)))
	}
	f.panels = panels
	what := "Throughput and p95 latency"
	if cpu {
		what = "Throughput, p95 latency and host CPU busy"
	}
	caption := fmt.Sprintf("%s of %s at %d threads per report interval, on one time axis: %s, one colour per series; for each, the round with the median throughput.",
		what, g.workload, g.threads, seriesList(named))
	h := panelH*vg.Length(len(panels)) + vg.Points(30)
	return Chart{ID: fmt.Sprintf("over-time-%d", i+1), Section: SectionTimeSeries, Title: title,
		Caption: caption, W: chartW, H: h, draw: f.draw}, true
}

// cpuParts are the host CPU keys stacked in a run's resource chart, with
// the tint of the series' colour each is drawn in.
var cpuParts = []struct {
	key, name string
	tint      float64
}{
	{"host.cpu.user", "CPU user", 1},
	{"host.cpu.system", "CPU system", 0.6},
	{"host.cpu.iowait", "CPU iowait", 0.35},
	{"host.cpu.steal", "CPU steal", 0.18},
}

var dashSets = [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

// resourceChart draws what the host did during one run, in the run's
// series colour: the host CPU split stacked, the server's and the
// client's CPU, disk utilisation and load average.
func (rep *Report) resourceChart(r *summary.Run) (Chart, bool) {
	if r.Monitor == nil || len(r.Monitor.Samples) == 0 {
		return Chart{}, false
	}
	s := rep.seriesOf(r)
	c := rep.SeriesColor(s)
	xmax := runEnd(r)
	f := newFigure("lines")
	var panels []*plot.Plot
	var parts []string
	// Host CPU split, stacked: user at the bottom in the series' colour.
	st := stacked{}
	for _, part := range cpuParts {
		if len(sampleKeys(r, func(k string) bool { return k == part.key })) == 0 {
			continue
		}
		pts := samplePoints(r, part.key)
		if st.xs == nil {
			for _, pt := range pts {
				st.xs = append(st.xs, pt.X)
			}
		}
		ys := make([]float64, len(pts))
		for i, pt := range pts {
			ys[i] = pt.Y
		}
		st.layers = append(st.layers, ys)
		st.colors = append(st.colors, tint(c, part.tint))
		f.addKey(part.name, swatch{tint(c, part.tint)})
		parts = append(parts, strings.TrimPrefix(part.name, "CPU "))
	}
	if len(st.layers) > 0 {
		p := panelPlot("host CPU %", xmax)
		p.Add(st)
		p.Y.Max = 100
		panels = append(panels, p)
	}
	addLines := func(y string, keys []string, name func(string) string) {
		if len(keys) == 0 {
			return
		}
		p := panelPlot(y, xmax)
		for i, k := range keys {
			if ln := addLine(p, samplePoints(r, k), c, dashSets[i%len(dashSets)]); ln != nil {
				f.addKey(name(k), ln)
			}
		}
		panels = append(panels, p)
	}
	procs := sampleKeys(r, func(k string) bool { return k == "server.cpu" || k == "client.cpu" })
	slices.Reverse(procs) // the server's solid, the client's dashed
	addLines("CPU % of one core", procs,
		func(k string) string {
			if k == "server.cpu" {
				return "server process CPU"
			}
			return "client (dbarena) CPU"
		})
	addLines("disk %util", sampleKeys(r, func(k string) bool { return strings.HasPrefix(k, "disk.") && strings.HasSuffix(k, ".util") }),
		func(k string) string { return strings.TrimSuffix(strings.TrimPrefix(k, "disk."), ".util") + " %util" })
	addLines("load avg", sampleKeys(r, func(k string) bool { return strings.HasPrefix(k, "host.load") }),
		func(k string) string { return strings.TrimPrefix(k, "host.") })
	if len(panels) == 0 {
		return Chart{}, false
	}
	title := fmt.Sprintf("Host resources, run %s: %s on %s, %d threads", RunName(r), r.Workload, s, r.Threads)
	panels[0].Title.Text = title
	panels[len(panels)-1].X.Label.Text = "seconds since the measured period began"
	f.panels = panels
	f.lay.Series, f.lay.Colors = []string{s}, []string{hexColor(c)}
	what := "server and client CPU, disk utilisation and load average"
	if len(parts) > 0 {
		what = "host CPU split stacked (" + strings.Join(parts, ", ") + "; % of all cores), " + what
	}
	h := panelH*vg.Length(len(panels)) + vg.Points(30)
	return Chart{ID: "run-" + RunName(r), Section: SectionResources, Title: title,
		Caption: fmt.Sprintf("What the host did during run %s (%s, %s at %d threads), in the series' colour: %s.", RunName(r), s, r.Workload, r.Threads, what),
		W:       chartW, H: h, draw: f.draw}, true
}
