package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"tracer/trace"
)

// point is one step's value of a series.
type point struct {
	x     float64 // 1-based step
	y     float64
	phase string
}

// collect returns the value of every step of t that has one.
func collect(t *trace.Trace, value func(*trace.Step) (float64, bool)) []point {
	var out []point
	for i := range t.Steps {
		st := &t.Steps[i]
		if v, ok := value(st); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, point{x: float64(i + 1), y: v, phase: st.Phase})
		}
	}
	return out
}

// Values of a step; ok is false when the step lacks them.
func topProb(st *trace.Step) (float64, bool) {
	if len(st.Rows) == 0 || len(st.Rows[0].Candidates) == 0 {
		return 0, false
	}
	return st.Rows[0].Candidates[0].Prob, true
}

func chosenProb(st *trace.Step) (float64, bool) {
	if len(st.Rows) == 0 || st.Rows[0].Chosen.By == trace.ByForced {
		return 0, false
	}
	return st.Rows[0].Chosen.Prob, true
}

func entropy(st *trace.Step) (float64, bool) {
	if len(st.Rows) == 0 || len(st.Rows[0].Candidates) == 0 {
		return 0, false
	}
	return st.Rows[0].Entropy, true
}

func kvBytes(st *trace.Step) (float64, bool) {
	if st.KV == nil {
		return 0, false
	}
	return float64(st.KV.Bytes), true
}

func movedBytes(st *trace.Step) (float64, bool) {
	if st.Traffic == nil {
		return 0, false
	}
	tr := st.Traffic
	return float64(tr.WeightBytes + tr.KVReadBytes + tr.KVWriteBytes), true
}

func flops(st *trace.Step) (float64, bool) {
	if st.Traffic == nil {
		return 0, false
	}
	return float64(st.Traffic.FLOPs), true
}

func millis(st *trace.Step) (float64, bool) {
	if st.Traffic == nil {
		return 0, false
	}
	return float64(st.ElapsedNS) / 1e6, true
}

// runStyle returns run i's line: solid for the main run, dashed for the
// overlays.
func runStyle(i int, pal palette) draw.LineStyle {
	s := draw.LineStyle{Color: pal.run(i), Width: 1.5}
	if i > 0 {
		s.Dashes = []vg.Length{5, 2.5}
	}
	return s
}

// phaseGlyphs tells step phases apart in the cost chart.
var phaseGlyphs = []struct {
	phase string
	shape draw.GlyphDrawer
}{
	{trace.PhasePrefill, draw.BoxGlyph{}},
	{trace.PhaseDecode, draw.CircleGlyph{}},
	{trace.PhaseFull, draw.PyramidGlyph{}},
	{"", draw.CircleGlyph{}},
}

// glyphFor returns the glyph of a phase.
func glyphFor(phase string) draw.GlyphDrawer {
	for _, g := range phaseGlyphs {
		if g.phase == phase {
			return g.shape
		}
	}
	return draw.CircleGlyph{}
}

// denseSteps is the most steps that get a dot each: beyond it the dots
// merge into a band (and each costs a rasterized stroke in the PNG).
const denseSteps = 60

// addLine adds pts to p as a line with a dot at each step, shaped by phase
// when byPhase, and returns the line for the key. Over denseSteps steps only
// prefill steps keep their dot.
func addLine(p *plot.Plot, pts []point, scale float64, line draw.LineStyle, byPhase bool) *plotter.Line {
	xy := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		xy[i] = plotter.XY{X: pt.x, Y: pt.y / scale}
	}
	l := &plotter.Line{XYs: envelope(xy, lineBuckets), LineStyle: line}
	p.Add(l)
	dots := &phaseDots{color: line.Color, radius: 2.2}
	for i, pt := range pts {
		if len(pts) > denseSteps && !(byPhase && pt.phase == trace.PhasePrefill) {
			continue
		}
		dots.xy = append(dots.xy, xy[i])
		if byPhase {
			dots.shapes = append(dots.shapes, glyphFor(pt.phase))
		}
	}
	p.Add(dots)
	return l
}

// lineBuckets is how many stretches of steps a long line is drawn as: a
// chart is at most a couple of thousand pixels wide, so a line of 34,000
// steps would draw many segments per pixel (a 5.5 MB SVG).
const lineBuckets = 512

// envelope keeps the shape of a long line with at most 4·buckets points:
// per stretch of consecutive points, its first, lowest, highest and last,
// in step order, so every peak and dip a pixel could show stays. A line
// of at most 4·buckets points is returned as it is.
func envelope(xy plotter.XYs, buckets int) plotter.XYs {
	if len(xy) <= 4*buckets {
		return xy
	}
	out := make(plotter.XYs, 0, 4*buckets)
	for b := range buckets {
		lo, hi := b*len(xy)/buckets, (b+1)*len(xy)/buckets
		part := xy[lo:hi]
		keep := []int{0, len(part) - 1}
		minAt, maxAt := 0, 0
		for i, p := range part {
			if p.Y < part[minAt].Y {
				minAt = i
			}
			if p.Y > part[maxAt].Y {
				maxAt = i
			}
		}
		keep = append(keep, minAt, maxAt)
		slices.Sort(keep)
		for i, k := range keep {
			if i == 0 || k != keep[i-1] {
				out = append(out, part[k])
			}
		}
	}
	return out
}

// phaseDots draws a glyph at each point, its shape given per point (a
// circle when shapes is nil).
type phaseDots struct {
	xy     plotter.XYs
	shapes []draw.GlyphDrawer
	color  color.Color
	radius vg.Length
}

// Plot implements plot.Plotter.
func (d *phaseDots) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.GlyphStyle{Color: d.color, Radius: d.radius, Shape: draw.CircleGlyph{}}
	for i, xy := range d.xy {
		if d.shapes != nil {
			sty.Shape = d.shapes[i]
		}
		c.DrawGlyph(sty, vg.Point{X: trX(xy.X), Y: trY(xy.Y)})
	}
}

// glyphKey is a key entry's glyph.
type glyphKey struct{ style draw.GlyphStyle }

// Thumbnail implements plot.Thumbnailer.
func (g glyphKey) Thumbnail(c *draw.Canvas) { c.DrawGlyphNoClip(g.style, c.Center()) }

// maxY returns the largest y of every series (0 if none).
func maxY(series ...[]point) float64 {
	m := 0.0
	for _, s := range series {
		for _, pt := range s {
			m = math.Max(m, pt.y)
		}
	}
	return m
}

// stepsOf returns the most steps of any run.
func stepsOf(runs []*trace.Trace) int {
	n := 0
	for _, r := range runs {
		n = max(n, len(r.Steps))
	}
	return n
}

// confidenceChart plots the raw top-1 probability and the chosen token's
// final probability above the raw distribution's entropy.
func confidenceChart(runs []*trace.Trace, names []string, step int, pal palette, words Words) (*frame, error) {
	top := newPanel(pal, "", words.Top1)
	top.Y.Tick.Marker = valueTicks{}
	ent := newPanel(pal, words.Step, words.Entropy)
	fr := &frame{panels: []*plot.Plot{top, ent}}
	n := stepsOf(runs)
	useSteps(top, n)
	useSteps(ent, n)

	var ents [][]point
	for i, r := range runs {
		tp, en := collect(r, topProb), collect(r, entropy)
		if i == 0 && len(tp) == 0 {
			return nil, fmt.Errorf("plots: %s: %w: no step records candidates", Confidence, ErrNoData)
		}
		l := addLine(top, tp, 1, runStyle(i, pal), false)
		addLine(ent, en, 1, runStyle(i, pal), false)
		ents = append(ents, en)
		name := words.Top1Raw
		if len(runs) > 1 {
			name = names[i]
		}
		fr.key = append(fr.key, keyEntry{name, []plot.Thumbnailer{l}})
	}
	// After adding: the lines' data ranges would widen a range set before.
	top.Y.Min, top.Y.Max = 0, 1
	useValues(ent, maxY(ents...))

	chosen := draw.GlyphStyle{Color: pal.chosen, Radius: 3.2, Shape: draw.RingGlyph{}}
	var xy plotter.XYs
	for _, pt := range collect(runs[0], chosenProb) {
		xy = append(xy, plotter.XY{X: pt.x, Y: pt.y})
	}
	top.Add(&plotter.Scatter{XYs: envelope(xy, lineBuckets), GlyphStyle: chosen})
	fr.key = append(fr.key, keyEntry{words.ChosenFinal, []plot.Thumbnailer{glyphKey{chosen}}})

	total := strconv.Itoa(len(runs[0].Steps))
	fr.title = fill(words.ConfidenceOver, "n", total)
	if m := addMarker(fr.panels, step, pal); m != nil {
		fr.key = append(fr.key, keyEntry{fill(words.StepN, "n", strconv.Itoa(step+1)), []plot.Thumbnailer{m}})
		if p, ok := topProb(&runs[0].Steps[step]); ok {
			fr.title = fill(words.ConfidenceAt, "n", strconv.Itoa(step+1), "total", total,
				"p", probLabel(p), "h", fmt.Sprintf("%.3g", runs[0].Steps[step].Rows[0].Entropy))
		}
	}
	return fr, nil
}

// kvChart plots the KV cache's size after each step.
func kvChart(runs []*trace.Trace, names []string, step int, pal palette, words Words) (*frame, error) {
	series := make([][]point, len(runs))
	for i, r := range runs {
		series[i] = collect(r, kvBytes)
	}
	if len(series[0]) == 0 {
		return nil, fmt.Errorf("plots: %s: %w: the trace records no KV cache%s", KV, ErrNoData, why(runs[0], "keeps none"))
	}
	scale, unit := byteUnit(maxY(series...))
	p := newPanel(pal, words.Step, fill(words.KVAxis, "unit", unit))
	useSteps(p, stepsOf(runs))
	useValues(p, maxY(series...)/scale)
	total := strconv.Itoa(len(runs[0].Steps))
	fr := &frame{panels: []*plot.Plot{p}, title: fill(words.KVOver, "n", total)}
	for i, s := range series {
		if len(s) == 0 {
			continue
		}
		l := addLine(p, s, scale, runStyle(i, pal), false)
		name := words.KVHeld
		if len(runs) > 1 {
			name = names[i]
		}
		fr.key = append(fr.key, keyEntry{name, []plot.Thumbnailer{l}})
	}
	if m := addMarker(fr.panels, step, pal); m != nil {
		fr.key = append(fr.key, keyEntry{fill(words.StepN, "n", strconv.Itoa(step+1)), []plot.Thumbnailer{m}})
		if kv := runs[0].Steps[step].KV; kv != nil {
			fr.title = fill(words.KVAt, "n", strconv.Itoa(step+1), "total", total,
				"bytes", formatBytes(kv.Bytes), "positions", strconv.Itoa(kv.Positions))
		}
	}
	return fr, nil
}

// costChart plots bytes moved, arithmetic and time per step, one glyph per
// phase.
func costChart(runs []*trace.Trace, names []string, step int, pal palette, words Words) (*frame, error) {
	moved := make([][]point, len(runs))
	ops := make([][]point, len(runs))
	ms := make([][]point, len(runs))
	for i, r := range runs {
		moved[i], ops[i], ms[i] = collect(r, movedBytes), collect(r, flops), collect(r, millis)
	}
	if len(moved[0]) == 0 {
		return nil, fmt.Errorf("plots: %s: %w: the trace records no traffic%s", Cost, ErrNoData, why(runs[0], "moves no weights"))
	}
	bScale, bUnit := byteUnit(maxY(moved...))
	fScale, fUnit := flopUnit(maxY(ops...))
	panels := []*plot.Plot{
		newPanel(pal, "", fill(words.Moved, "unit", bUnit)),
		newPanel(pal, "", fill(words.Compute, "unit", fUnit)),
		newPanel(pal, words.Step, words.Time),
	}
	data := [][][]point{moved, ops, ms}
	scales := []float64{bScale, fScale, 1}
	total := strconv.Itoa(len(runs[0].Steps))
	fr := &frame{panels: panels, title: fill(words.CostOver, "n", total)}
	for k, p := range panels {
		useSteps(p, stepsOf(runs))
		useValues(p, maxY(data[k]...)/scales[k])
		for i := range runs {
			l := addLine(p, data[k][i], scales[k], runStyle(i, pal), true)
			if k == 0 && len(runs) > 1 && len(data[k][i]) > 0 {
				fr.key = append(fr.key, keyEntry{names[i], []plot.Thumbnailer{l}})
			}
		}
	}
	for _, g := range phaseGlyphs {
		if hasPhase(runs, g.phase) {
			fr.key = append(fr.key, keyEntry{phaseName(g.phase, words), []plot.Thumbnailer{
				glyphKey{draw.GlyphStyle{Color: pal.muted, Radius: 2.5, Shape: g.shape}}}})
		}
	}
	if m := addMarker(fr.panels, step, pal); m != nil {
		fr.key = append(fr.key, keyEntry{fill(words.StepN, "n", strconv.Itoa(step+1)), []plot.Thumbnailer{m}})
		st := &runs[0].Steps[step]
		if tr := st.Traffic; tr != nil {
			fr.title = fill(words.CostAt, "n", strconv.Itoa(step+1), "total", total, "phase", phaseName(st.Phase, words),
				"bytes", formatBytes(tr.WeightBytes+tr.KVReadBytes+tr.KVWriteBytes), "flops", formatFLOPs(tr.FLOPs),
				"ms", fmt.Sprintf("%.3g", float64(st.ElapsedNS)/1e6))
		}
	}
	return fr, nil
}

// why explains a missing record for the toy model (" (the toy model keeps
// none)"); other models give no reason.
func why(t *trace.Trace, toy string) string {
	if t.Model.Kind == "toy" {
		return " (the toy model " + toy + ")"
	}
	return ""
}

// hasPhase reports whether the cost chart draws a glyph for phase: a step
// of a run that records traffic has it, and the run is not too dense for
// glyphs (prefill keeps its glyph).
func hasPhase(runs []*trace.Trace, phase string) bool {
	for _, r := range runs {
		n := len(collect(r, movedBytes))
		for i := range r.Steps {
			st := &r.Steps[i]
			if st.Traffic != nil && st.Phase == phase && (n <= denseSteps || phase == trace.PhasePrefill) {
				return true
			}
		}
	}
	return false
}

// phaseName names a step's phase in words; a phase they do not know reads
// as the trace spells it.
func phaseName(phase string, words Words) string {
	switch phase {
	case trace.PhasePrefill:
		return words.Prefill
	case trace.PhaseDecode:
		return words.Decode
	case trace.PhaseFull:
		return words.Full
	case "":
		return words.Step
	}
	return cleanText(phase)
}

// byteUnit returns the binary unit (KiB = 1024 B, as the page's panels
// write bytes) that shows max as 1 to 1023.
func byteUnit(max float64) (scale float64, unit string) {
	return unitFor(max, 1024, "B", "KiB", "MiB", "GiB", "TiB")
}

// flopUnit is the decimal unit that shows max as 1 to 999, as the panels
// write arithmetic (kFLOP = 1000 FLOP).
func flopUnit(max float64) (scale float64, unit string) {
	return unitFor(max, 1000, "FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP")
}

func unitFor(max, base float64, units ...string) (float64, string) {
	scale := 1.0
	for _, u := range units[:len(units)-1] {
		if max < scale*base {
			return scale, u
		}
		scale *= base
	}
	return scale, units[len(units)-1]
}

// formatBytes writes n as the page's panels do: 512 B, 1.5 KiB, 12.0 MiB,
// with a no-break space, so that a wrapped title keeps the unit by its
// number.
func formatBytes(n int64) string {
	s, u := byteUnit(float64(n))
	if s == 1 {
		return fmt.Sprintf("%d\u00a0B", n)
	}
	return fmt.Sprintf("%.1f\u00a0%s", float64(n)/s, u)
}

// formatFLOPs writes n as the page's panels do: 269.0 MFLOP (with a
// no-break space).
func formatFLOPs(n int64) string {
	s, u := flopUnit(float64(n))
	return fmt.Sprintf("%.1f\u00a0%s", float64(n)/s, u)
}
