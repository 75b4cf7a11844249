package engine

import (
	"fmt"
	"math"
	"slices"

	"tracer/engine/tensor"
	"tracer/trace"
)

// NaNFinder is implemented by models that can say where a NaN in their
// logits began. The loop calls it only after a Forward's logits held a NaN
// or +Inf, so a run without one pays nothing: FindNaN feeds b again on c
// truncated to its first past positions, checks the output of every stage
// (embedding, each layer, the head), and reports the first row that held a
// NaN or an infinity and the stage (trace.NaNEmbedding, trace.NaNLayer with
// its 0-based layer, or trace.NaNHead). ok is false when it cannot tell.
type NaNFinder interface {
	FindNaN(c Cache, b *Batch, past int) (row int, where string, layer int, ok bool)
}

// nanStop ends a run at a step whose logits or scores hold a NaN or +Inf,
// or leave no token with positive probability.
type nanStop struct {
	nan    trace.NaN
	layers int // of the model, for the message
}

func newNaNStop(n trace.NaN, layers int) *nanStop { return &nanStop{nan: n, layers: layers} }

// Error says where the NaN was found and that the run stopped.
func (e *nanStop) Error() string {
	n := e.nan
	var what string
	switch n.Where {
	case trace.NaNLayer:
		what = fmt.Sprintf("the logits of row %d hold a NaN or an infinity; it first appears in the output of layer %d (0-based, of %d): that layer's weights hold a NaN or Inf, or its activations overflow float32", n.Row, n.Layer, e.layers)
	case trace.NaNEmbedding:
		what = fmt.Sprintf("the logits of row %d hold a NaN or an infinity; it is already in the input embeddings: the embedding weights hold a NaN or Inf", n.Row)
	case trace.NaNHead:
		what = fmt.Sprintf("the logits of row %d hold a NaN or an infinity; every layer's output is finite, so it comes from the final norm or the output head (their weights hold a NaN or Inf, or the logits overflow float32)", n.Row)
	case trace.NaNStage:
		what = fmt.Sprintf("the %s processor turned the scores of row %d into NaN or +Inf", n.Stage, n.Row)
	case trace.NaNNoMass:
		what = fmt.Sprintf("row %d has no token with positive probability left (every score is -inf), so nothing can be chosen", n.Row)
	default:
		what = fmt.Sprintf("the logits of row %d hold a NaN or +Inf: no distribution can be drawn from them", n.Row)
	}
	return fmt.Sprintf("step %d: %s; generation stopped (stop reason nan)", n.Step, what)
}

// scanScores returns the index of the first NaN or +Inf of s (-1 when
// none) and whether every score is -Inf (no token left). It runs on every
// row's scores at every step.
func scanScores(s []float32) (bad int, empty bool) {
	// The usual case in one vector pass: no NaN, no +Inf.
	if m, nan := tensor.MaxNaN(s); !nan && m <= math.MaxFloat32 {
		return -1, m < -math.MaxFloat32
	}
	empty = true
	for i, v := range s {
		switch {
		case v != v || v > math.MaxFloat32:
			return i, false
		case v >= -math.MaxFloat32:
			empty = false
		}
	}
	return -1, empty
}

// checkLogits stops the run when a row's raw logits hold a NaN or +Inf (or
// are all -Inf), asking the model where the NaN began.
func (g *loop) checkLogits(step, past int) error {
	for r, l := range g.logits {
		bad, empty := scanScores(l)
		if bad < 0 && !empty {
			continue
		}
		n := trace.NaN{Step: step, Row: r, Where: trace.NaNLogits, Layer: -1}
		if bad < 0 {
			n.Where = trace.NaNNoMass // every logit -Inf
		}
		if f, ok := g.req.Model.(NaNFinder); ok && bad >= 0 {
			if row, where, layer, ok := f.FindNaN(g.cache, &g.batch, past); ok {
				n.Row, n.Where, n.Layer = row, where, layer
				if where != trace.NaNLayer {
					n.Layer = -1
				}
			}
		}
		return newNaNStop(n, g.info.Layers)
	}
	return nil
}

// processorNaN finds the first processor that left row r's scores with a
// NaN or +Inf (or no token), running the pipeline again on a copy: the
// normal path checks the scores only once, after the last processor.
func (g *loop) processorNaN(step, r int) error {
	n := trace.NaN{Step: step, Row: r, Where: trace.NaNNoMass, Layer: -1}
	if name := firstBadStage(g.procs, slices.Clone(g.logits[r]), g.rows[r]); name != "" {
		n.Where, n.Stage = trace.NaNStage, name
	}
	return newNaNStop(n, g.info.Layers)
}

// firstBadStage applies procs to s in turn and names the first that leaves
// a NaN or +Inf; "" when none does (or every score is -Inf first).
func firstBadStage(procs []Processor, s []float32, ids []int) string {
	for _, p := range procs {
		p.Apply(s, ids)
		bad, empty := scanScores(s)
		if bad >= 0 {
			return p.Name()
		}
		if empty {
			return ""
		}
	}
	return ""
}
