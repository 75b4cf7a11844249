package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"tracer/trace"
	"tracer/web/marks"
)

// candidate is one token of the candidates chart.
type candidate struct {
	id         int
	token      string
	raw, final float64 // probabilities; raw < 0: not among the recorded raw candidates
	removed    bool    // a processor removed it: final is 0 for certain
}

// stepCandidates returns row's tokens for the chart: the recorded raw
// candidates, then any token of the final distribution they lack (a
// repetition penalty can lift one), by descending max(raw, final), at most
// limit of them.
func stepCandidates(row *trace.StepRow, limit int) []candidate {
	var out []candidate
	at := map[int]int{} // id -> index in out
	for _, c := range row.Candidates {
		at[c.ID] = len(out)
		out = append(out, candidate{id: c.ID, token: c.Token, raw: clampProb(c.Prob)})
	}
	if f := row.Final; f != nil {
		for i, id := range f.IDs {
			if i >= len(f.Probs) {
				break
			}
			p := clampProb(f.Probs[i])
			if j, ok := at[id]; ok {
				out[j].final = p
				continue
			}
			at[id] = len(out)
			out = append(out, candidate{id: id, token: stageToken(row, id), raw: -1, final: p})
		}
		// Every kept token is listed: a candidate missing was removed.
		if f.KeptCount == len(f.IDs) {
			for i := range out {
				out[i].removed = !slices.Contains(f.IDs, out[i].id)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		return cmp.Compare(math.Max(b.raw, b.final), math.Max(a.raw, a.final))
	})
	return out[:min(len(out), limit)]
}

// clampProb keeps a recorded probability within [0, 1]; NaN becomes 0.
func clampProb(p float64) float64 {
	if !(p > 0) {
		return 0
	}
	return math.Min(p, 1)
}

// stageToken finds id's token string in the row's stages ("" if none).
func stageToken(row *trace.StepRow, id int) string {
	for _, s := range row.Stages {
		for _, c := range s.Top {
			if c.ID == id {
				return c.Token
			}
		}
	}
	if row.Chosen.ID == id {
		return row.Chosen.Token
	}
	return ""
}

// candidatesChart draws step's candidates: each token's raw probability
// beside its final one, the chosen token's final bar in the pick colour.
func candidatesChart(t *trace.Trace, step, widthPx int, pal palette, words Words, tt marks.Style) (*frame, error) {
	st := &t.Steps[step]
	if len(st.Rows) == 0 || len(st.Rows[0].Candidates) == 0 {
		return nil, fmt.Errorf("plots: %s: %w: step %d records no candidates", Candidates, ErrNoData, step)
	}
	row := &st.Rows[0]
	// Room for a bar pair about every 44 px beside the y axis.
	cands := stepCandidates(row, max(3, min(16, (widthPx-80)/44)))
	l := newCandidateLayers(cands, row, pal, tt)

	p := newPanel(pal, "", words.Probability)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = valueTicks{}
	// Fewer candidates than minSlots (the toy has two) stay bar-sized, centred.
	const minSlots = 6
	pad := math.Max(0, float64(minSlots-len(cands))/2)
	p.X.Min, p.X.Max = -0.5-pad, float64(len(cands))-0.5+pad
	p.X.Tick.Length = 0
	p.X.Tick.Label.Font = font.From(mono, tickSize)
	p.X.Tick.Label.Color = pal.ink
	p.X.Tick.Marker = plot.ConstantTicks(l.ticks)
	rotateIfCrowded(&p.X.Tick.Label, l.ticks, vg.Length(widthPx)*pxToPt/vg.Length(len(cands)+1))

	fr := &frame{
		title:    candidatesTitle(t, row, step, words, tt),
		panels:   []*plot.Plot{p},
		headroom: tickSize + 3, // for the value over a bar near 1
	}
	p.Add(l.raw)
	fr.key = append(fr.key, keyEntry{words.RawP, []plot.Thumbnailer{l.raw}})
	if row.Final != nil {
		p.Add(l.final)
		fr.key = append(fr.key,
			keyEntry{words.FinalP, []plot.Thumbnailer{l.final}},
			keyEntry{words.Chosen, []plot.Thumbnailer{&bars{swatch: pal.chosen}}})
		if len(l.removed.at) > 0 {
			p.Add(l.removed)
			fr.key = append(fr.key, keyEntry{words.Removed, []plot.Thumbnailer{l.removed}})
		}
	}
	p.Add(l.values)
	return fr, nil
}

// candidateLayers are what the candidates chart draws over its axes.
type candidateLayers struct {
	ticks      []plot.Tick  // token labels
	raw, final *bars        // side by side; raw alone, wider, without a final distribution
	values     *valueLabels // the final probability (raw without one) over each pair
	removed    *axisMarks   // × where a processor removed the token
}

func newCandidateLayers(cands []candidate, row *trace.StepRow, pal palette, tt marks.Style) *candidateLayers {
	hasFinal := row.Final != nil
	l := &candidateLayers{
		raw:     &bars{offset: -0.4, width: 0.4, swatch: pal.raw},
		final:   &bars{offset: 0, width: 0.4, swatch: pal.final},
		values:  &valueLabels{style: pal.text(sans, tickSize, pal.ink)},
		removed: &axisMarks{mark: "×", style: pal.text(sans, labelSize, pal.muted)},
	}
	if !hasFinal {
		l.raw.offset, l.raw.width = -0.3, 0.6
	}
	for i, c := range cands {
		l.ticks = append(l.ticks, plot.Tick{Value: float64(i), Label: tokenLabel(c.token, c.id, tt)})
		l.raw.values = append(l.raw.values, max(c.raw, 0))
		l.raw.colors = append(l.raw.colors, pal.raw)
		clr := pal.final
		if c.id == row.Chosen.ID {
			clr = pal.chosen
		}
		l.final.values = append(l.final.values, c.final)
		l.final.colors = append(l.final.colors, clr)
		l.values.y = append(l.values.y, math.Max(c.raw, c.final))
		label := ""
		switch {
		case !hasFinal:
			label = probLabel(c.raw)
		case c.final > 0:
			label = probLabel(c.final)
		}
		// Otherwise removed (marked ×), or kept but not recorded: unknown.
		l.values.labels = append(l.values.labels, label)
		if c.removed {
			l.removed.at = append(l.removed.at, float64(i)+0.2)
		}
	}
	return l
}

// candidatesTitle names the step and its choice.
func candidatesTitle(t *trace.Trace, row *trace.StepRow, step int, words Words, tt marks.Style) string {
	c := row.Chosen
	p, rank := probLabel(c.Prob), strconv.Itoa(c.Rank)
	var how string
	switch c.By {
	case trace.ByForced:
		how = words.Forced
	case "":
		how = fill(words.HowPlain, "p", p, "rank", rank)
	default:
		how = fill(words.HowPicked, "by", byName(c.By, words), "p", p, "rank", rank)
	}
	return fill(words.StepChose, "n", strconv.Itoa(step+1), "total", strconv.Itoa(len(t.Steps)),
		"token", tokenLabel(c.Token, c.ID, tt), "how", how)
}

// byName names how a token was chosen; a way the words do not know reads
// as the trace spells it.
func byName(by string, words Words) string {
	switch by {
	case trace.ByGreedy:
		return words.Greedy
	case trace.BySample:
		return words.Sampled
	case trace.ByBeam:
		return words.Beam
	}
	return cleanText(by)
}

// probLabel formats a probability with two significant digits: 0.7, 0.25,
// 0.031.
func probLabel(p float64) string {
	if p <= 0 {
		return "0"
	}
	if p >= 0.995 {
		return "1"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// rotateIfCrowded tilts tick labels when the widest is wider than a slot.
func rotateIfCrowded(sty *text.Style, ticks []plot.Tick, slot vg.Length) {
	var widest vg.Length
	for _, t := range ticks {
		widest = max(widest, sty.Width(t.Label))
	}
	if widest > slot*0.9 {
		sty.Rotation = math.Pi / 5
		sty.XAlign = draw.XRight
		sty.YAlign = draw.YTop
	}
}

// bars draws one bar per value at x = i + offset … i + offset + width, in
// data units, so the bars fit whatever the plot's size.
type bars struct {
	offset, width float64
	values        []float64
	colors        []color.Color
	swatch        color.Color // the key's colour
}

// Plot implements plot.Plotter.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.values {
		if !(v > 0) {
			continue
		}
		x0, x1 := trX(float64(i)+b.offset), trX(float64(i)+b.offset+b.width)
		y0, y1 := trY(0), trY(math.Min(v, p.Y.Max))
		c.FillPolygon(b.colors[i], []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
}

// Thumbnail implements plot.Thumbnailer.
func (b *bars) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	r.Min.X += 2
	r.Max.X -= 2
	c.FillPolygon(b.swatch, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

// axisMarks draws a short text just above the x axis at each of its x values.
type axisMarks struct {
	at    []float64
	mark  string
	style text.Style
}

// Plot implements plot.Plotter.
func (m *axisMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := m.style
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	for _, x := range m.at {
		c.FillText(sty, vg.Point{X: trX(x), Y: trY(0) + 1}, m.mark)
	}
}

// Thumbnail implements plot.Thumbnailer.
func (m *axisMarks) Thumbnail(c *draw.Canvas) {
	sty := m.style
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, c.Center(), m.mark)
}

// valueLabels writes label i centred above y[i] at x = i, when it fits
// within the slot of one x unit. The frame leaves headroom above the plot
// for labels of values near the top.
type valueLabels struct {
	y      []float64
	labels []string
	style  text.Style
}

// Plot implements plot.Plotter.
func (l *valueLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	slot := trX(1) - trX(0)
	sty := l.style
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	for i, s := range l.labels {
		if sty.Width(s) > slot*0.95 {
			continue
		}
		c.FillText(sty, vg.Point{X: trX(float64(i)), Y: trY(math.Min(l.y[i], p.Y.Max)) + 1.5}, s)
	}
}
