package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Sizes. Lengths are in points (1/72 inch); a CSS pixel is 3/4 of a point,
// so a 640 px chart is a 480 pt canvas and a 10 pt font is 13.3 px.
//
// The smallest text is 13 px at the chart's own size, so that it still reads
// at 11 px or more when the page shrinks the chart to 85 % (a phone's panel
// is a little narrower than the width the page renders for).
const (
	pxToPt       = 0.75
	pngDPI       = 96 // one image pixel per CSS pixel
	defaultWidth = 640

	titleSize = 11.25 // pt: 15 px
	labelSize = 9.75  // axis labels and the key: 13 px
	tickSize  = 9.75

	margin       = 8 // pt around the chart
	gapY         = 5 // pt between title, key and panels
	headerPx     = 160
	panelPx      = 160 // a panel's height at the default width
	narrowPanel  = 120 // … and at the least width
	titleLines   = 2   // a longer title ends in an ellipsis
	minTextScale = 0.85
)

var (
	sans = font.Font{Typeface: "Liberation", Variant: "Sans"}
	mono = font.Font{Typeface: "Liberation", Variant: "Mono"}
)

// palette holds a chart's colours, taken from the page's stylesheet.
type palette struct {
	bg, ink, muted, axis, grid color.Color
	raw, final, chosen         color.Color   // candidate bars
	runs                       []color.Color // one per run, main run first
	marker                     color.Color   // the current step
	handler                    text.Handler  // measures and draws text; nil: plot.DefaultTextHandler
}

var (
	lightPalette = palette{
		bg: hex(0xffffff), ink: hex(0x1d1f21), muted: hex(0x6a6f76), axis: hex(0xb4b7bc), grid: hex(0xe9eaec),
		raw: hex(0x9db4ea), final: hex(0x2456c7), chosen: hex(0xb3541e),
		runs:   []color.Color{hex(0x2456c7), hex(0x7a4fb3), hex(0x2a8a5b), hex(0x6a6f76)},
		marker: hex(0xb3541e),
	}
	darkPalette = palette{
		bg: hex(0x1e2125), ink: hex(0xe6e6e3), muted: hex(0x9aa0a8), axis: hex(0x555a62), grid: hex(0x2e3238),
		raw: hex(0x3f5a99), final: hex(0x8fb0ff), chosen: hex(0xffb27a),
		runs:   []color.Color{hex(0x8fb0ff), hex(0xc9a4ff), hex(0x7fd1a5), hex(0x9aa0a8)},
		marker: hex(0xffb27a),
	}
)

func hex(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// textHandler returns the handler that measures and draws the chart's text.
func (p palette) textHandler() text.Handler {
	if p.handler == nil {
		return plot.DefaultTextHandler
	}
	return p.handler
}

// run returns the colour of run i.
func (p palette) run(i int) color.Color { return p.runs[i%len(p.runs)] }

// text returns a text style in f at size points.
func (p palette) text(f font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    font.From(f, size),
		XAlign:  draw.XLeft,
		YAlign:  draw.YTop,
		Handler: p.textHandler(),
	}
}

// frame is a laid-out chart: a title, a key of named swatches, and panels
// stacked top to bottom that share their x axis.
type frame struct {
	title    string
	key      []keyEntry
	panels   []*plot.Plot
	headroom vg.Length // above the panels, for labels over their data
}

// keyEntry is one swatch of the key.
type keyEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// defaultHeight is the frame's height in pixels, w wide, when none is asked
// for: a header for the title, key and axes, and each panel panelPx high at
// the default width, narrowing to narrowPanel at the least width, so a
// narrow chart is not a tall strip.
func (fr *frame) defaultHeight(w int) int {
	ph := panelPx
	if w < defaultWidth {
		ph = narrowPanel + (panelPx-narrowPanel)*max(0, w-minWidth)/(defaultWidth-minWidth)
	}
	return headerPx + ph*len(fr.panels)
}

// encode draws the frame on a w × h pixel canvas in format f.
func (fr *frame) encode(f Format, w, h int, pal palette) ([]byte, error) {
	wpt, hpt := vg.Length(w)*pxToPt, vg.Length(h)*pxToPt
	var buf bytes.Buffer
	switch f {
	case SVG:
		c := vgsvg.New(wpt, hpt)
		fr.draw(draw.New(c), pal)
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("plots: write svg: %w", err)
		}
		return inlineSVG(exactSize(buf.Bytes(), wpt, hpt)), nil
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(wpt, hpt), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(pal.bg))
		fr.draw(draw.New(c), pal)
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, c.Image()); err != nil {
			return nil, fmt.Errorf("plots: write png: %w", err)
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("plots: unknown format %d", int(f))
}

// svgSize matches the size vgsvg writes on its <svg> element, to five
// significant digits (a 4003 px chart, 3002.25 pt, would read 3002.2).
var svgSize = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*" viewBox="0 0 [^"]*"`)

// exactSize writes the SVG's size and viewBox exactly: w × h points.
func exactSize(doc []byte, w, h vg.Length) []byte {
	wv, hv := strconv.FormatFloat(float64(w), 'f', -1, 64), strconv.FormatFloat(float64(h), 'f', -1, 64)
	return svgSize.ReplaceAll(doc, []byte(`<svg width="`+wv+`pt" height="`+hv+`pt" viewBox="0 0 `+wv+` `+hv+`"`))
}

// draw lays the frame out on dc: title, key, then the panels, their plot
// areas aligned.
func (fr *frame) draw(dc draw.Canvas, pal palette) {
	dc.SetColor(pal.bg)
	dc.Fill(dc.Rectangle.Path())
	c := draw.Crop(dc, margin, -margin, margin/2, -margin)

	ts := pal.text(sans, titleSize, pal.ink)
	for _, line := range wrap(ts, fr.title, c.Size().X, titleLines) {
		c.FillText(ts, vg.Point{X: c.Min.X, Y: c.Max.Y}, line)
		c.Max.Y -= ts.Height(line)
	}
	c.Max.Y -= gapY

	c.Max.Y -= drawKey(c, fr.key, pal) + gapY + fr.headroom

	if len(fr.panels) == 0 {
		return
	}
	plots := make([][]*plot.Plot, len(fr.panels))
	for i, p := range fr.panels {
		plots[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(fr.panels), Cols: 1, PadY: gapY}
	for i, cs := range plot.Align(plots, tiles, c) {
		fr.panels[i].Draw(cs[0])
	}
}

// drawKey draws the key's entries left to right from the top of c, wrapping
// to new lines, and returns the height it took.
func drawKey(c draw.Canvas, key []keyEntry, pal palette) vg.Length {
	if len(key) == 0 {
		return 0
	}
	sty := pal.text(sans, labelSize, pal.muted)
	sty.YAlign = draw.YCenter
	const thumbW, thumbGap, entryGap = 14, 4, 12
	lineH := sty.Height("Ag") * 1.3
	x, y := c.Min.X, c.Max.Y-lineH/2
	for _, e := range key {
		w := thumbW + thumbGap + sty.Width(e.name)
		if x > c.Min.X && x+w > c.Max.X {
			x, y = c.Min.X, y-lineH
		}
		th := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y - lineH*0.3},
			Max: vg.Point{X: x + thumbW, Y: y + lineH*0.3},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(&th)
		}
		c.FillText(sty, vg.Point{X: x + thumbW + thumbGap, Y: y}, e.name)
		x += w + entryGap
	}
	return c.Max.Y - y + lineH/2
}

// wrap breaks s at spaces (not at no-break spaces) into at most n lines of at most w in sty; the
// last line ends in an ellipsis when s does not fit. A word wider than w
// is cut the same way.
func wrap(sty text.Style, s string, w vg.Length, n int) []string {
	words := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
	var lines []string
	for len(words) > 0 {
		if len(lines) == n-1 {
			return append(lines, fit(sty, strings.Join(words, " "), w))
		}
		k := 1
		for k < len(words) && sty.Width(strings.Join(words[:k+1], " ")) <= w {
			k++
		}
		lines = append(lines, fit(sty, strings.Join(words[:k], " "), w))
		words = words[k:]
	}
	return lines
}

// fit shortens s with an ellipsis until it is at most w wide in sty.
func fit(sty text.Style, s string, w vg.Length) string {
	if sty.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 1 && sty.Width(string(r)+"…") > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// newPanel returns an empty plot styled with pal: muted axes and ticks, a
// light horizontal grid, no title and no background (the frame fills it).
func newPanel(pal palette, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Label.TextStyle.Color = pal.muted
		a.Label.TextStyle.Handler = pal.textHandler()
		a.Tick.Label.Handler = pal.textHandler()
		a.Tick.Label.Font = font.From(sans, tickSize)
		a.Tick.Label.Color = pal.muted
		a.LineStyle.Color = pal.axis
		a.Tick.LineStyle.Color = pal.axis
		a.Tick.Length = 3
		a.Padding = 0
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.Y.Label.Padding = 3
	p.Y.Tick.Length = 0
	grid := &gridLines{style: draw.LineStyle{Color: pal.grid, Width: 0.6}}
	p.Add(grid)
	return p
}

// gridLines draws a horizontal line at each major tick of the y axis.
type gridLines struct{ style draw.LineStyle }

// Plot implements plot.Plotter.
func (g *gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.IsMinor() || t.Value < p.Y.Min || t.Value > p.Y.Max {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(g.style, c.Min.X, y, c.Max.X, y)
	}
}

// stepMarker is the vertical line at the current step.
type stepMarker struct {
	x     float64 // 1-based step
	style draw.LineStyle
}

// Plot implements plot.Plotter.
func (m *stepMarker) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(m.x)
	c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
}

// Thumbnail implements plot.Thumbnailer.
func (m *stepMarker) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
}

// addMarker adds the current-step marker to each panel (none for NoStep)
// and returns it for the key.
func addMarker(panels []*plot.Plot, step int, pal palette) *stepMarker {
	if step == NoStep {
		return nil
	}
	m := &stepMarker{x: float64(step + 1), style: draw.LineStyle{Color: pal.marker, Width: 1.25, Dashes: []vg.Length{3, 2}}}
	for _, p := range panels {
		p.Add(m)
	}
	return m
}

// stepTicks labels whole steps, 1-based, at most about ten of them.
type stepTicks struct{}

// Ticks implements plot.Ticker.
func (stepTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Max(1, math.Ceil(lo)), math.Floor(hi)
	every := 1.0
	for _, e := range []float64{1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000} {
		every = e
		if (last-first)/e <= 10 {
			break
		}
	}
	var ticks []plot.Tick
	if first == 1 && every > 1 {
		ticks = append(ticks, plot.Tick{Value: 1, Label: "1"})
	}
	for v := math.Ceil(first/every) * every; v <= last; v += every {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
	}
	return ticks
}

// useSteps gives p an x axis over steps 1…n.
func useSteps(p *plot.Plot, n int) {
	p.X.Min, p.X.Max = 0.5, float64(n)+0.5
	p.X.Tick.Marker = stepTicks{}
}

// valueTicks marks round values from lo to hi, about five of them,
// formatted by %g.
type valueTicks struct{}

// Ticks implements plot.Ticker.
func (valueTicks) Ticks(lo, hi float64) []plot.Tick {
	every := niceStep((hi - lo) / 4)
	var ticks []plot.Tick
	for i := math.Ceil(lo / every); i*every <= hi*(1+1e-9); i++ {
		v := i * every
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
	}
	return ticks
}

// niceStep returns the smallest of 1, 2, 2.5 and 5 times a power of ten
// that is at least x.
func niceStep(x float64) float64 {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// useValues gives p a y axis from 0 to a round value above max, labelled
// by valueTicks.
func useValues(p *plot.Plot, max float64) {
	if !(max > 0) || math.IsInf(max, 0) {
		max = 1
	}
	every := niceStep(max / 4)
	p.Y.Min, p.Y.Max = 0, math.Ceil(max*1.02/every)*every
	p.Y.Tick.Marker = valueTicks{}
}
