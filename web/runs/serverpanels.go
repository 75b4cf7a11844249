package runs

import (
	"strconv"

	"tracer/trace"
	"tracer/web/view"
	"tracer/web/words"
)

// serverPanels fills the panels of a step a serving engine recorded with
// why each is empty: the server gives its top log-probabilities only, no
// logits, processor stages, KV cache, memory traffic or look inside (the
// trace's model.source lists what it cannot tell). Other traces' panels
// are left as they are.
func serverPanels(t *trace.Trace, sr trace.StepRow, v *view.PanelsView, w words.Words) {
	src := t.Model.Source
	if src == nil || t.Model.Kind != trace.SourceServer {
		return
	}
	eng := src.Engine
	if len(sr.Stages) == 0 {
		v.Funnel.Empty = w.F(words.KeyDbgServerFunnel, "engine", eng, "n", strconv.Itoa(src.TopLogprobs))
		if sv := sr.Server; sv != nil && sv.Missing != "" {
			v.Funnel.Empty = w.T(words.KeyDbgServerMissing) + " " + v.Funnel.Empty
		}
	}
	if !v.KV.Present {
		v.KV = view.KVView{Note: w.F(words.KeyDbgServerKv, "engine", eng)}
	}
	if !v.Traffic.Present {
		v.Traffic.Note = w.F(words.KeyDbgServerTraffic, "engine", eng)
	}
	if v.Inside == nil || (v.Inside.Attention == nil && v.Inside.Lens == nil) {
		v.Inside = &view.InsideView{Missing: []string{w.T(words.KeyDbgServerInside)}}
	}
}
