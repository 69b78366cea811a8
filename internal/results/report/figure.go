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
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// seriesPalette gives each series its colour, the same in every chart of a
// report: the Okabe–Ito colours (distinct for colour-blind readers), the
// pale yellow replaced by olive so that it shows on white.
var seriesPalette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x99, 0x99, 0x33, 0xFF}, // olive
	{0x44, 0x44, 0x44, 0xFF}, // dark grey
}

// SeriesColor is the colour of a series in every chart of the report.
// Series beyond the palette reuse its colours in order.
func (rep *Report) SeriesColor(series string) color.RGBA {
	i := slices.Index(rep.Series, series)
	if i < 0 {
		return color.RGBA{0x88, 0x88, 0x88, 0xFF}
	}
	return seriesPalette[i%len(seriesPalette)]
}

// seriesIndex is the series' position, for its marker shape.
func (rep *Report) seriesIndex(series string) int { return max(slices.Index(rep.Series, series), 0) }

// tint mixes c with white: f = 1 is c, f = 0 white.
func tint(c color.RGBA, f float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(math.Round(float64(v)*f + 255*(1-f))) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xFF}
}

// hexColor writes c as #RRGGBB, as the SVG does.
func hexColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// Layout is where a drawn chart put its parts, in points from its
// bottom-left corner (gonum/plot's coordinates). The HTML page carries it
// as data attributes, so that what a chart shows can be checked in a
// browser without reading pixels.
type Layout struct {
	// W and H are the chart's size.
	W, H float64
	// Kind is "lines", "bars" or "heat".
	Kind string
	// Plots are the data areas (one per panel).
	Plots []vg.Rectangle
	// Legend is the legend's extent; zero when the chart has none.
	Legend vg.Rectangle
	// Series are the series the chart draws, in legend order, and Colors
	// their colours (#RRGGBB).
	Series, Colors []string
	// Whiskers counts the confidence-interval whiskers drawn.
	Whiskers int
}

func rectString(r vg.Rectangle) string {
	return fmt.Sprintf("%.1f,%.1f,%.1f,%.1f", r.Min.X.Points(), r.Min.Y.Points(), r.Max.X.Points(), r.Max.Y.Points())
}

// PlotsAttr and LegendAttr are the layout's rectangles as "x0,y0,x1,y1"
// (panels separated by ";").
func (l Layout) PlotsAttr() string {
	var s []string
	for _, r := range l.Plots {
		s = append(s, rectString(r))
	}
	return strings.Join(s, ";")
}

// LegendAttr is the legend's rectangle, "" without a legend.
func (l Layout) LegendAttr() string {
	if l.Legend.Size().X == 0 {
		return ""
	}
	return rectString(l.Legend)
}

// figure is one chart: panels stacked on a shared X axis and one legend
// below them, outside every data area, so that it never covers a line or
// a bar.
type figure struct {
	panels  []*plot.Plot
	entries []legendEntry
	lay     Layout
	// cut is set when a whisker was cut at the top of the axis.
	cut bool
}

// cutNote is the caption's remark on whiskers cut at the axis' top.
func (f *figure) cutNote() string {
	if !f.cut {
		return ""
	}
	return " Whiskers reaching above 2.5 times the highest mean are cut there."
}

// legendEntry is one line of a legend: a thumbnail and its text.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

func newFigure(kind string) *figure { return &figure{lay: Layout{Kind: kind}} }

// addSeries adds a series' legend entry.
func (f *figure) addSeries(label string, c color.Color, thumbs ...plot.Thumbnailer) {
	f.entries = append(f.entries, legendEntry{label, thumbs})
	f.lay.Series = append(f.lay.Series, label)
	f.lay.Colors = append(f.lay.Colors, hexColor(c))
}

// addKey adds a legend entry that explains a line style or a part.
func (f *figure) addKey(label string, thumbs ...plot.Thumbnailer) {
	f.entries = append(f.entries, legendEntry{label, thumbs})
}

var (
	legendFont  = text.Style{Font: font.From(chartFont, 9), Handler: plot.DefaultTextHandler, YAlign: draw.YCenter}
	legendThumb = vg.Points(18)
	legendGap   = vg.Points(16)
	legendRow   = vg.Points(14)
)

// legendPlaces lays the entries out in rows from left to right within
// width w, each given room for a font legendSlack times wider than the
// one measured; it returns each entry's offset from the legend's top-left
// corner and the legend's size.
func (f *figure) legendPlaces(w vg.Length) ([]vg.Point, vg.Point) {
	var at []vg.Point
	var x, y, wmax vg.Length
	for i, e := range f.entries {
		ew := legendThumb + vg.Points(4) + legendFont.Width(e.text)*legendSlack
		if i > 0 && x+ew > w {
			x, y = 0, y+legendRow
		}
		at = append(at, vg.Point{X: x, Y: y})
		wmax = max(wmax, x+ew)
		x += ew + legendGap
	}
	if len(at) == 0 {
		return nil, vg.Point{}
	}
	return at, vg.Point{X: wmax, Y: y + legendRow}
}

// draw draws the figure on dc and returns where its parts went.
func (f *figure) draw(dc draw.Canvas) Layout {
	lay := f.lay
	lay.Series, lay.Colors = slices.Clone(f.lay.Series), slices.Clone(f.lay.Colors)
	lay.W, lay.H = dc.Size().X.Points(), dc.Size().Y.Points()
	margin := vg.Points(8)
	at, lsize := f.legendPlaces(dc.Size().X - 2*margin - vg.Points(40))
	body := dc
	if len(at) > 0 {
		body.Min.Y += lsize.Y + 2*margin
	}
	canvases := []draw.Canvas{body}
	if len(f.panels) > 1 {
		tiles := draw.Tiles{Rows: len(f.panels), Cols: 1, PadTop: vg.Points(2), PadBottom: vg.Points(2),
			PadLeft: vg.Points(2), PadRight: vg.Points(10), PadY: vg.Points(6)}
		grid := make([][]*plot.Plot, len(f.panels))
		for i, p := range f.panels {
			grid[i] = []*plot.Plot{p}
		}
		canvases = nil
		for _, row := range plot.Align(grid, tiles, body) {
			canvases = append(canvases, row[0])
		}
	} else {
		canvases[0].Max.X -= vg.Points(10)
	}
	for i, p := range f.panels {
		p.Draw(canvases[i])
		lay.Plots = append(lay.Plots, p.DataCanvas(canvases[i]).Rectangle)
	}
	if len(at) == 0 || len(lay.Plots) == 0 {
		return lay
	}
	// Under the panels, starting at the data area's left edge.
	x0 := lay.Plots[0].Min.X
	top := body.Min.Y - margin
	for i, e := range f.entries {
		y := top - at[i].Y
		icon := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0 + at[i].X, Y: y - legendRow + vg.Points(3)},
			Max: vg.Point{X: x0 + at[i].X + legendThumb, Y: y - vg.Points(3)}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		dc.FillText(legendFont, vg.Point{X: icon.Max.X + vg.Points(4), Y: y - legendRow/2}, e.text)
	}
	lay.Legend = vg.Rectangle{Min: vg.Point{X: x0, Y: top - lsize.Y}, Max: vg.Point{X: x0 + lsize.X, Y: top}}
	return lay
}

// bar is one bar, in data units, with its confidence interval.
type bar struct {
	x, w, y float64
	lo, hi  float64
	ci      bool
	// open is set when hi was cut: the whisker has no cap there.
	open  bool
	color color.Color
}

// bars draws bars from 0 and, where a bar has an interval, a whisker.
type bars []bar

var whiskerStyle = draw.LineStyle{Color: color.RGBA{0x22, 0x22, 0x22, 0xFF}, Width: vg.Points(1.3)}

func (bs bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, b := range bs {
		x0, x1, y0, y1 := trX(b.x-b.w/2), trX(b.x+b.w/2), trY(0), trY(b.y)
		c.FillPolygon(b.color, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
		if b.ci {
			// An interval reaching below the axis (few noisy rounds) is
			// cut at it.
			xm, lo, hi, cap := trX(b.x), trY(math.Max(b.lo, p.Y.Min)), trY(math.Min(b.hi, p.Y.Max)), (x1-x0)/5
			c.StrokeLine2(whiskerStyle, xm, lo, xm, hi)
			c.StrokeLine2(whiskerStyle, xm-cap, lo, xm+cap, lo)
			if !b.open && b.hi <= p.Y.Max { // a whisker cut has no cap
				c.StrokeLine2(whiskerStyle, xm-cap, hi, xm+cap, hi)
			}
		}
	}
}

func (bs bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 0, 0
	for _, b := range bs {
		xmin, xmax = math.Min(xmin, b.x-b.w/2), math.Max(xmax, b.x+b.w/2)
		ymax = math.Max(ymax, math.Max(b.y, b.hi))
	}
	return
}

func (bs bars) whiskers() int {
	n := 0
	for _, b := range bs {
		if b.ci {
			n++
		}
	}
	return n
}

// swatch is a legend thumbnail: a filled square.
type swatch struct{ color color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	h := r.Size().Y
	pts := []vg.Point{{X: r.Min.X + 2, Y: r.Min.Y}, {X: r.Min.X + 2 + h, Y: r.Min.Y}, {X: r.Min.X + 2 + h, Y: r.Max.Y}, {X: r.Min.X + 2, Y: r.Max.Y}}
	c.FillPolygon(s.color, pts)
}

// stacked draws layers sharing X as areas stacked from 0, first at the
// bottom.
type stacked struct {
	xs     []float64
	layers [][]float64
	colors []color.Color
}

func (s stacked) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	base := make([]float64, len(s.xs))
	for li, ys := range s.layers {
		var pts []vg.Point
		for i, x := range s.xs {
			pts = append(pts, vg.Point{X: trX(x), Y: trY(base[i] + ys[i])})
		}
		for i := len(s.xs) - 1; i >= 0; i-- {
			pts = append(pts, vg.Point{X: trX(s.xs[i]), Y: trY(base[i])})
		}
		c.FillPolygon(s.colors[li], c.ClipPolygonXY(pts))
		for i := range base {
			base[i] += ys[i]
		}
	}
}

func (s stacked) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for i, x := range s.xs {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		sum := 0.0
		for _, ys := range s.layers {
			sum += ys[i]
		}
		ymax = math.Max(ymax, sum)
	}
	return
}

// seriesList names the series of a caption: "a and b", "a, b and c", or
// how many when there are many.
func seriesList(ss []string) string {
	switch {
	case len(ss) == 0:
		return "no series"
	case len(ss) == 1:
		return ss[0]
	case len(ss) > 6:
		return fmt.Sprintf("%d series (%s, %s, ...)", len(ss), ss[0], ss[1])
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// chartFont is the charts' font: Liberation Sans, metrically Arial, so
// that a browser without it lays text out in the room measured for it.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// legendSlack widens the room for text for fonts wider than the one
// measured (DejaVu Sans, the usual Linux fallback, is about 15% wider).
const legendSlack = 1.25

// svgFonts gives the SVG's font the fallbacks a browser without
// Liberation Sans should use.
func svgFonts(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
}

// useFonts sets every text style of p to the charts' font.
func useFonts(p *plot.Plot) {
	set := func(st *text.Style, size vg.Length) { st.Font = font.From(chartFont, size) }
	set(&p.Title.TextStyle, 11)
	set(&p.X.Label.TextStyle, 10)
	set(&p.Y.Label.TextStyle, 10)
	set(&p.X.Tick.Label, 9)
	set(&p.Y.Tick.Label, 9)
	p.Y.Tick.Marker = niceTicks{}
}

// niceTicks labels an axis at 1, 2 or 5 times a power of ten, four to
// eight labels over the range, without trailing zeros.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		minor := v + step/2
		if minor < hi {
			ticks = append(ticks, plot.Tick{Value: minor})
		}
	}
	return ticks
}

// padRight pads a right-aligned label with spaces, which a browser does
// not draw: gonum/plot places SVG text by its start, so text in a wider
// fallback font grows to the right, into the room the spaces kept.
func padRight(st text.Style, s string) string {
	sp := st.Width(" ")
	if sp <= 0 {
		return s
	}
	n := int(math.Ceil(float64(st.Width(s) * (legendSlack - 1) / sp)))
	return s + strings.Repeat(" ", n)
}
