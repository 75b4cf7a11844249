package engine

import (
	"fmt"
	"math"

	"tracer/trace"
)

// Inside asks a forward pass to show what happens inside the model, and
// holds what it showed. The caller sets the questions; the model fills the
// answers in storage it grows as needed, so one Inside serves a whole run.
type Inside struct {
	// Questions.
	Attention    bool // the attention weights of each row's last new token, per layer and query head
	AllAttention bool // the attention weights of every new token (implies Attention)
	Lens         bool // the logit lens of every layer at each row's last new token

	// Answers.
	Layers, Heads int       // layers and query heads of the model
	Queries       int       // new tokens Attn holds per (row, layer, head): n with AllAttention, else 1 (the last)
	Keys          int       // cache slots each attention row covers: past + n
	Attn          []float32 // (rows, layers, heads, Queries, Keys): softmax weights; padding and later slots 0
	LensLogits    []float32 // (rows, layers, vocab): lm_head(final_norm(h_l)) at the last new token
}

// InsideModel is a Model that can show the inside of its forward pass:
// ForwardInside is Forward that also answers in's questions. Forward itself
// computes and copies none of it.
type InsideModel interface {
	Model
	ForwardInside(c Cache, b *Batch, logits [][]float32, in *Inside) error
}

// MaxPromptAttention is the most weights record_attention "all" records
// for the prompt matrices of step 0, all rows, layers and heads together:
// they grow with the square of the prompt, and past this a trace would
// outgrow what trace.Read accepts (about 10 bytes a weight in JSON).
const MaxPromptAttention = 4 << 20

// newInside returns the questions the options ask of every step, or nil
// when they ask none (or nothing is recorded). A model that cannot answer
// them, or prompt matrices too large to keep, is an option error.
func newInside(o trace.Options, m Model, record bool, rows, promptLen int) (*Inside, InsideModel, error) {
	if !record || o.RecordAttention == "" && o.RecordLens == 0 {
		return nil, nil, nil
	}
	info := m.Info()
	im, ok := m.(InsideModel)
	if !ok {
		return nil, nil, &OptionError{Msg: fmt.Sprintf("model %q (%s) has no attention or layers to look inside: record_attention and record_lens need a transformer (a Hugging Face folder or a llama2.c .bin)",
			info.Name, info.Architecture)}
	}
	if o.RecordAttention == trace.RecordAttentionAll {
		n := int64(rows) * int64(info.Layers) * int64(info.Heads) * int64(promptLen) * int64(promptLen)
		if n > MaxPromptAttention {
			return nil, nil, &OptionError{Msg: fmt.Sprintf("record_attention all would record %d prompt weights (%d rows × %d layers × %d heads × %d² prompt positions), over the limit of %d: record each step's attention only (record_attention step) or give a shorter prompt",
				n, rows, info.Layers, info.Heads, promptLen, MaxPromptAttention)}
		}
	}
	return &Inside{Attention: o.RecordAttention != "", Lens: o.RecordLens > 0}, im, nil
}

// inside builds row r's trace view of what a forward pass showed: the
// attention of its last new token, every new token's attention when asked
// (the prompt matrices of step 0), and the top k ids of every layer's lens
// with their softmax probabilities over the v entries of the vocabulary.
// It copies: the trace keeps nothing of
// in's storage.
func (rc *recorder) inside(in *Inside, r, k, v int) *trace.Inside {
	out := &trace.Inside{}
	L, H, Q, K := in.Layers, in.Heads, in.Queries, in.Keys
	if in.Attention || in.AllAttention {
		out.Attention = make([][]trace.Weights, L)
		if in.AllAttention {
			out.PromptAttention = make([][][]trace.Weights, L)
		}
		for l := range L {
			out.Attention[l] = make([]trace.Weights, H)
			if in.AllAttention {
				out.PromptAttention[l] = make([][]trace.Weights, H)
			}
			for h := range H {
				base := (((r*L+l)*H + h) * Q) * K
				out.Attention[l][h] = trace.Weights(append([]float32(nil), in.Attn[base+(Q-1)*K:base+Q*K]...))
				if in.AllAttention {
					qs := make([]trace.Weights, Q)
					for q := range qs {
						qs[q] = trace.Weights(append([]float32(nil), in.Attn[base+q*K:base+(q+1)*K]...))
					}
					out.PromptAttention[l][h] = qs
				}
			}
		}
	}
	if in.Lens && k > 0 {
		out.Lens = make([][]trace.Candidate, L)
		for l := range L {
			s := in.LensLogits[(r*L+l)*v : (r*L+l+1)*v]
			lse := logSumExp(s)
			ids := topIDs(s, min(k, v))
			cs := make([]trace.Candidate, len(ids))
			for i, id := range ids {
				cs[i] = trace.Candidate{ID: id, Token: rc.token(id), Logit: s[id], Prob: math.Exp(float64(s[id]) - lse)}
			}
			out.Lens[l] = cs
		}
	}
	return out
}
