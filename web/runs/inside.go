package runs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
	"tracer/web/words"
)

// The inside of a step's forward pass, as two panels: attention (the
// step's newest query over the context, per layer and head) and the logit
// lens (what every layer would predict). The engine records both
// (trace.Inside); these builders turn a recorded row into view models.

const (
	LensShown = 5 // top tokens per layer the lens panel shows

	// insideBudget decides whether a live run on the page records
	// attention and the lens at every step: when the model's parameters ×
	// the longest sequence the run may reach (prompt + new tokens) stay at
	// or under it. Both grow a step's cost with the model (the lens runs
	// lm_head once per layer) and its trace with the context (one weight per
	// layer, head and key); stories260K (0.26 M parameters, 512 positions:
	// 1.3e8) records, SmolLM2-135M at 200 tokens (2.7e10) does not.
	insideBudget = 1e9
)

// AttnData is what inside.js draws from: per layer, per head and then all
// heads, the weights over the keys and the strongest earlier keys.
type AttnData struct {
	Layers int          `json:"layers"`
	Heads  int          `json:"heads"`
	Query  int          `json:"query"`
	Cells  [][]attnCell `json:"cells"`
}

type attnCell struct {
	W   attnWeights `json:"w"`
	Top []int       `json:"top"`
}

// attnWeights are attention weights as the panel shows them: shades, line
// widths and each key's weight to four decimals (appendWeight). Every view
// of every step that a follower or an exported file holds carries them:
// four decimals take half the bytes of float32's shortest form.
type attnWeights []float32

func (w attnWeights) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 7*len(w)+2)
	b = append(b, '[')
	for i, x := range w {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendWeight(b, x)
	}
	return append(b, ']'), nil
}

// appendWeight appends an attention weight to four decimals, trailing
// zeros dropped (0.5000 → 0.5; under 0.00005 → 0); one that is not finite
// (a broken model's) as null, as the trace writes it.
func appendWeight(b []byte, x float32) []byte {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return append(b, "null"...)
	}
	n := len(b)
	b = strconv.AppendFloat(b, float64(x), 'f', 4, 32)
	b = bytes.TrimRight(b, "0")
	b = bytes.TrimSuffix(b, []byte("."))
	if s := string(b[n:]); s == "-0" || s == "" {
		b = append(b[:n], '0')
	}
	return b
}

// BuildInside builds the inside panels of step pos of steps for a row; nil
// for a model with no inside to show (the toy's table).
func BuildInside(t *trace.Trace, steps []trace.Step, pos, row int, w words.Words) *view.InsideView {
	if t.Model.Kind == "toy" || pos >= len(steps) || len(steps[pos].Rows) == 0 {
		return nil
	}
	sr := steps[pos].Rows[min(row, len(steps[pos].Rows)-1)]
	v := &view.InsideView{}
	in := sr.Inside
	if in != nil && len(in.Attention) > 0 {
		v.Attention = BuildAttention(t, steps, pos, row, in.Attention)
	}
	if in != nil && len(in.Lens) > 0 {
		v.Lens = BuildLens(in.Lens, sr.Chosen, w)
	}
	if in != nil {
		v.Forward = BuildForward(t, in.Forward, forwardToken(t, steps, pos, row))
	}
	why := insideMissing(t, w)
	if v.Attention == nil {
		v.Missing = append(v.Missing, w.F(words.KeyDbgInsideNoAttention, "why", why))
	}
	if v.Lens == nil {
		v.Missing = append(v.Missing, w.F(words.KeyDbgInsideNoLens, "why", why))
	}
	return v
}

// insideMissing says why a trace lacks the inside panels and what to do.
func insideMissing(t *trace.Trace, w words.Words) string {
	switch {
	case t.Model.Kind == "server":
		return w.T(words.KeyDbgInsideServer)
	case t.Options.RecordAttention != "" || t.Options.RecordLens > 0:
		return w.T(words.KeyDbgInsideStepNone) // recorded elsewhere, not at this step (a finished row)
	case t.Model.Params > 0 && float64(t.Model.Params)*float64(len(t.Prompt.IDs)+max(0, t.Options.MaxNewTokens)) > insideBudget:
		return w.T(words.KeyDbgInsideTooBig)
	}
	return w.T(words.KeyDbgInsideNotRecorded)
}

// BuildAttention shows a row's attention at step pos: att is [layer][head]
// → weights over the keys.
func BuildAttention(t *trace.Trace, steps []trace.Step, pos, row int, att [][]trace.Weights) *view.AttentionView {
	layers, heads := len(att), len(att[0])
	keys := 0
	for _, hs := range att {
		heads = min(heads, len(hs))
		for _, ws := range hs {
			keys = max(keys, len(ws))
		}
	}
	if heads == 0 || keys == 0 {
		return nil
	}
	d := AttnData{Layers: layers, Heads: heads, Query: keys - 1, Cells: make([][]attnCell, layers)}
	v := &view.AttentionView{Layers: layers, Heads: heads, Layer: layers - 1, Head: heads, Grid: make([][]view.AttnCellView, layers)}
	for l, hs := range att {
		sum := make([]float32, keys)
		for h := range heads {
			ws := padWeights(hs[h], keys)
			for k, x := range ws {
				sum[k] += x
			}
			d.Cells[l] = append(d.Cells[l], attnCell{W: attnWeights(ws), Top: strongest(ws, keys-1, view.AttnLinks)})
			v.Grid[l] = append(v.Grid[l], view.AttnCellView{Layer: l, Head: h, Label: "L" + strconv.Itoa(l+1) + " H" + strconv.Itoa(h+1)})
		}
		for k := range sum {
			sum[k] /= float32(heads)
		}
		d.Cells[l] = append(d.Cells[l], attnCell{W: sum, Top: strongest(sum, keys-1, view.AttnLinks)})
		v.Grid[l] = append(v.Grid[l], view.AttnCellView{Layer: l, Head: heads, All: true, Label: "L" + strconv.Itoa(l+1) + " all", Selected: l == v.Layer})
	}
	b, err := json.Marshal(d)
	if err != nil { // float32 weights and ints always marshal
		return nil
	}
	v.Data = string(b)
	texts, pads := contextKeys(t, steps, pos, row, keys)
	first := d.Cells[v.Layer][v.Head]
	most := float32(0)
	for _, x := range first.W {
		if x > most { // not max: a NaN weight (a broken model's) would win
			most = x
		}
	}
	for k := range keys {
		x := first.W[k]
		tint := 0.0
		if most > 0 {
			tint = float64(x / most)
		}
		v.Keys = append(v.Keys, view.AttnKeyView{
			Text: texts[k], Pad: pads[k], Query: k == keys-1,
			Weight: string(appendWeight(nil, x)),
			Tint:   strconv.FormatFloat(min(max(tint, 0), 1), 'f', 2, 64),
			Link:   slices.Contains(first.Top, k),
		})
	}
	return v
}

// padWeights returns ws as n weights: a shorter list (a damaged trace) is
// filled with zeros, a longer one cut.
func padWeights(ws trace.Weights, n int) trace.Weights {
	out := make(trace.Weights, n)
	copy(out, ws)
	return out
}

// strongest returns the keys before query with the n largest weights, by
// descending weight, ties by the earlier key; keys of weight 0 are left
// out (pads, nothing to link to).
func strongest(ws []float32, query, n int) []int {
	var ks []int
	for k := range min(query, len(ws)) {
		if ws[k] > 0 {
			ks = append(ks, k)
		}
	}
	slices.SortStableFunc(ks, func(a, b int) int { return cmp.Compare(ws[b], ws[a]) })
	return ks[:min(n, len(ks))]
}

// contextKeys names the n key positions of a row at step pos: the prompt
// (pads included) and the tokens chosen before, or for a beam the tokens
// of its own path. When they do not add up to n (a damaged trace, beams
// over a batch of prompts) the keys are numbered instead.
func contextKeys(t *trace.Trace, steps []trace.Step, pos, row, n int) ([]string, []bool) {
	ids := t.Prompt.IDs
	var mask []int
	if row < len(t.Prompt.Rows) && len(t.Prompt.Rows) > 1 {
		ids, mask = t.Prompt.Rows[row].IDs, t.Prompt.Rows[row].AttentionMask
	}
	named := len(t.Prompt.Tokens) == len(ids) && len(t.Prompt.Rows) <= 1
	var texts []string
	var pads []bool
	for k, id := range ids {
		text := "#" + strconv.Itoa(id)
		if named {
			text = marks.Token(t.Prompt.Tokens[k])
		}
		pad := k < len(mask) && mask[k] == 0
		if pad {
			text = "pad"
		}
		texts, pads = append(texts, text), append(pads, pad)
	}
	if t.Options.NumBeams > 1 {
		// A beam holds the tokens of its own path back through the beams it
		// extended, not the row's choices.
		for _, tok := range beamPath(steps, pos-1, row) {
			texts, pads = append(texts, tok), append(pads, false)
		}
	} else {
		for _, s := range steps[:min(pos, len(steps))] {
			if row < len(s.Rows) {
				c := s.Rows[row].Chosen
				texts, pads = append(texts, marks.TokenOrID(c.Token, c.ID)), append(pads, false)
			}
		}
	}
	if len(texts) != n || t.Options.NumBeams > 1 && len(t.Prompt.Rows) > 1 {
		texts, pads = make([]string, n), make([]bool, n)
		for k := range texts {
			texts[k] = "#" + strconv.Itoa(k)
		}
	}
	return texts, pads
}

// BuildLens shows a row's lens: lens is [layer] → top entries by
// descending logit.
func BuildLens(lens [][]trace.Candidate, chosen trace.Chosen, w words.Words) *view.LensView {
	v := &view.LensView{}
	n := len(lens)
	last := -1 // the last layer whose top-1 is not the chosen token
	for l, cs := range lens {
		top1 := len(cs) > 0 && cs[0].ID == chosen.ID
		if top1 && v.First == 0 {
			v.First = l + 1
		}
		if !top1 {
			last = l
		}
	}
	for l, cs := range lens {
		r := view.LensRowView{Layer: l + 1}
		for _, c := range cs[:min(LensShown, len(cs))] {
			r.Cells = append(r.Cells, view.LensCellView{
				ID: c.ID, Token: marks.TokenOrID(c.Token, c.ID), Prob: probText(c.Prob),
				Tint:   strconv.FormatFloat(min(max(c.Prob, 0), 1), 'f', 2, 64),
				Chosen: c.ID == chosen.ID && v.First > 0 && l+1 >= v.First,
			})
		}
		v.Rows = append(v.Rows, r)
	}
	token := marks.TokenOrID(chosen.Token, chosen.ID)
	total := strconv.Itoa(n)
	switch {
	case v.First == 0:
		v.Settled = w.F(words.KeyDbgLensNever, "token", token)
	case last < v.First-1: // top-1 from First to the last layer
		v.Settled = w.F(words.KeyDbgLensSettled, "token", token, "n", strconv.Itoa(v.First), "total", total)
	default:
		v.Settled = w.F(words.KeyDbgLensWavers, "token", token, "n", strconv.Itoa(v.First), "total", total, "later", strconv.Itoa(last+1))
	}
	return v
}
