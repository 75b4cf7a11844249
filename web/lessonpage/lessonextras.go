package lessonpage

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
)

// shownOptions are the options the table lists, besides those the step
// names.
var shownOptions = []string{"max_new_tokens", "max_length", "do_sample", "temperature", "top_k", "top_p", "repetition_penalty"}

// columnExtras fills in c.Extra with what the step highlights.
func columnExtras(c *view.RunColumnView, t *trace.Trace, st *lessons.Step, ui lessons.Strings, lang string) {
	e := &c.Extra
	g := func(k string) string { return ui.Get(k, lang) }
	if st.Highlights("output.ids") && len(t.Prompt.Rows) <= 1 {
		e.OutputIDs, e.OutputIDsLabel = idViews(t.Output.IDs, len(t.Prompt.IDs)), g(lessons.KeyOutputIDs)
	}
	var named []string
	for _, h := range st.Highlight {
		if n, ok := strings.CutPrefix(h, "option:"); ok {
			named = append(named, n)
		}
	}
	if st.Highlights("options.sources") || len(named) > 0 {
		e.OptionsTitle = g(lessons.KeyOptionsTitle)
		e.OptionLabels = [3]string{g(lessons.KeyOptionName), g(lessons.KeyOptionValue), g(lessons.KeyOptionSource)}
		var values map[string]json.RawMessage
		b, _ := json.Marshal(t.Options)
		_ = json.Unmarshal(b, &values) // trace.Options always marshals to an object
		names := slices.Clone(shownOptions)
		for _, n := range named {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		for _, n := range names {
			if v, ok := values[n]; ok {
				e.Options = append(e.Options, view.OptionRowView{Name: n, Value: string(v), Source: t.Options.Sources[n], Marked: slices.Contains(named, n)})
			}
		}
	}
	if st.Highlights("model") && t.Model.WeightBytes > 0 {
		e.ModelLine = lessons.Fill(g(lessons.KeyModelWeights), "params", siCount(float64(t.Model.Params)),
			"dtype", t.Model.DType, "bytes", siCount(float64(t.Model.WeightBytes))+"B")
	}
	if st.Highlights("kv") {
		e.ShowKV, e.KVLabel = true, g(lessons.KeyKVCache)
		for i, s := range t.Steps {
			if s.KV != nil && i < len(c.Steps) {
				c.Steps[i].KV = lessons.Fill(g(lessons.KeyKVText), "n", strconv.Itoa(s.KV.Positions), "bytes", siCount(float64(s.KV.Bytes))+"B")
			}
		}
	}
	if st.Highlights("prompt.attention_mask") {
		e.MaskLabel = g(lessons.KeyAttentionMask)
		for r := range c.Rows {
			if r < len(t.Prompt.Rows) {
				c.Rows[r].Mask = strconvInts(t.Prompt.Rows[r].AttentionMask)
			}
		}
	}
	if st.At.Kind == lessons.AtStep && len(t.Prompt.Rows) > 1 && st.At.Index < len(t.Steps) {
		for _, row := range t.Steps[st.At.Index].Rows {
			if row.Row >= len(t.Prompt.Rows) {
				continue
			}
			mask := t.Prompt.Rows[row.Row].AttentionMask
			key := lessons.KeyRowAtToken
			if st.At.Index == 0 && len(mask) > 0 && mask[len(mask)-1] == 0 {
				key = lessons.KeyRowAtPad
			}
			e.RowsAt = append(e.RowsAt, lessons.Fill(g(key), "r", strconv.Itoa(row.Row+1), "x", marks.TokenOrID(row.Chosen.Token, row.Chosen.ID)))
		}
	}
}

// strconvInts writes ints space-separated.
func strconvInts(xs []int) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Itoa(x)
	}
	return strings.Join(out, " ")
}
