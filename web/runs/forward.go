package runs

import (
	"fmt"
	"strconv"

	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
)

// Sizes of the forward-pass panel.
const (
	forwardHeads   = 3 // heads listed per layer, those that added most
	forwardNeurons = 4 // neurons listed per layer, the most active
	// ForwardRecorded is how many heads and neurons a page's run records
	// per layer (record_forward) when it records the forward pass.
	ForwardRecorded = forwardNeurons
)

// BuildForward shows a step's recorded forward pass (f) at a row's newest
// position as boxes with the shapes of t's model; nil when the step
// recorded none. tok is the token the step fed there.
func BuildForward(t *trace.Trace, f *trace.Forward, tok string) *view.ForwardView {
	if f == nil || len(f.Layers) == 0 {
		return nil
	}
	m := t.Model
	h, v := m.Hidden, m.VocabSize
	largest := max(f.Embedding, f.Final)
	for _, l := range f.Layers {
		largest = max(largest, l.In, l.Mid, l.Out, l.Attn, l.MLP)
	}
	bar := func(x float64) string {
		if largest <= 0 || x <= 0 {
			return "0%"
		}
		return strconv.FormatFloat(100*min(x/largest, 1), 'f', 1, 64) + "%"
	}
	norm := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	box := func(shape string, bytes int64, x float64) view.ForwardBoxView {
		return view.ForwardBoxView{Shape: shape, Bytes: bytesText(bytes), Norm: norm(x), Width: bar(x)}
	}
	attnShape, mlpShape := forwardShapes(m)
	out := &view.ForwardView{
		Token:     tok,
		Embedding: box(fmt.Sprintf("row of [%d, %d]", v, h), f.EmbedBytes, f.Embedding),
		Final:     box(fmt.Sprintf("[1, %d]", h), 0, f.Final),
		Unembed:   box(fmt.Sprintf("[1, %d] × [%d, %d]", h, h, v), f.UnembedBytes, 0),
	}
	out.Unembed.Norm, out.Unembed.Width = "", "0%"
	total := f.EmbedBytes + f.UnembedBytes
	for i, l := range f.Layers {
		lv := view.ForwardLayerView{
			Layer: i, In: norm(l.In), Mid: norm(l.Mid), Out: norm(l.Out),
			InW: bar(l.In), MidW: bar(l.Mid), OutW: bar(l.Out),
			Attn: box(attnShape, l.AttnBytes, l.Attn), MLP: box(mlpShape, l.MLPBytes, l.MLP),
		}
		for _, hd := range l.Heads[:min(len(l.Heads), forwardHeads)] {
			lv.Heads = append(lv.Heads, view.ForwardPartView{Label: "h" + strconv.Itoa(hd.Index+1), Value: norm(hd.Share)})
		}
		for _, n := range l.Neurons[:min(len(l.Neurons), forwardNeurons)] {
			lv.Neurons = append(lv.Neurons, view.ForwardPartView{Label: "#" + strconv.Itoa(n.Index), Value: strconv.FormatFloat(float64(n.Act), 'f', 2, 32)})
		}
		out.Layers = append(out.Layers, lv)
		total += l.AttnBytes + l.MLPBytes
	}
	out.Bytes = bytesText(total)
	return out
}

// forwardShapes writes the products of a layer's attention and MLP for a
// model: a row of the stream times each weight matrix, q, k and v side by
// side (GPT-2's c_attn is one matrix), then the output projection; the
// MLP's up (and gate) then down projection.
func forwardShapes(m trace.Model) (attn, mlp string) {
	h, f := m.Hidden, m.Intermediate
	q, kv := m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	if m.Architecture == "gpt2" {
		return fmt.Sprintf("[1, %d] × [%d, %d], [1, %d] × [%d, %d]", h, h, 3*h, h, h, h),
			fmt.Sprintf("[1, %d] × [%d, %d], [1, %d] × [%d, %d]", h, h, f, f, f, h)
	}
	return fmt.Sprintf("[1, %d] × [%d, %d+2·%d], [1, %d] × [%d, %d]", h, h, q, kv, q, q, h),
		fmt.Sprintf("[1, %d] × [%d, 2·%d], [1, %d] × [%d, %d]", h, h, f, f, f, h)
}

// forwardToken is the token a step fed at a row's newest position: the
// last prompt token at step 0, else the token chosen the step before.
func forwardToken(t *trace.Trace, steps []trace.Step, pos, row int) string {
	if pos > 0 && row < len(steps[pos-1].Rows) {
		c := steps[pos-1].Rows[row].Chosen
		return marks.TokenOrID(c.Token, c.ID)
	}
	ids := t.Prompt.IDs
	if row < len(t.Prompt.Rows) && len(t.Prompt.Rows) > 1 {
		ids = t.Prompt.Rows[row].IDs
	}
	if len(ids) == 0 {
		return ""
	}
	if len(t.Prompt.Tokens) == len(ids) {
		return marks.Token(t.Prompt.Tokens[len(ids)-1])
	}
	return "#" + strconv.Itoa(ids[len(ids)-1])
}
