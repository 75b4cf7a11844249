package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"

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
	// Forward, when more than 0, asks for the forward pass at each row's
	// last new token: the residual stream's norms layer by layer and
	// every head's share of attention (HeadNorms), and the Forward most
	// active MLP neurons of every layer; the trace keeps the Forward heads
	// with the largest shares.
	Forward int

	// Answers.
	Layers, Heads int       // layers and query heads of the model
	Queries       int       // new tokens Attn holds per (row, layer, head): n with AllAttention, else 1 (the last)
	Keys          int       // cache slots each attention row covers: past + n
	Attn          []float32 // (rows, layers, heads, Queries, Keys): softmax weights; padding and later slots 0
	LensLogits    []float32 // (rows, layers, vocab): lm_head(final_norm(h_l)) at the last new token

	// Forward's answers, at each row's last new token. Norms are L2
	// norms of the float32 vectors, at float32's precision (see
	// trace.Forward for each quantity).
	Neurons    int       // neurons NeuronIDs holds per (row, layer): min(Forward, MLP width)
	Norms      []float64 // (rows, ForwardNorms(layers)): ‖embedding‖, per layer ‖in‖ ‖attn‖ ‖mid‖ ‖mlp‖ ‖out‖, ‖final‖
	HeadNorms  []float64 // (rows, layers, heads): ‖W_o[:, cols of h] · head h's output‖
	NeuronIDs  []int     // (rows, layers, Neurons): by descending |activation|, ties by lower index
	NeuronActs []float32 // (rows, layers, Neurons): their activations (the down projection's input)
	// Bytes the pass read for each row at the weights' stored dtype, the
	// same for every row (a batch reads its weights once for all): the
	// embedding rows of the tokens fed, the final norm and the whole head,
	// and each layer's attention (with the cached keys and values it read)
	// and MLP. Together they are Cost(1, past, n)'s WeightBytes +
	// KVReadBytes.
	EmbedBytes, UnembedBytes int64
	AttnBytes, MLPBytes      []int64 // (layers)
}

// ForwardNorms is how many norms Inside.Norms holds per row for a model of
// the given layers: the embedding's, five per layer and the final one.
func ForwardNorms(layers int) int { return 2 + 5*layers }

// MaxRecordForward is the most heads and MLP neurons record_forward keeps
// per layer.
const MaxRecordForward = 64

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
	if !record || o.RecordAttention == "" && o.RecordLens == 0 && o.RecordForward == 0 {
		return nil, nil, nil
	}
	info := m.Info()
	im, ok := m.(InsideModel)
	if !ok {
		return nil, nil, &OptionError{Msg: fmt.Sprintf("model %q (%s) has no attention or layers to look inside: record_attention, record_lens and record_forward need a transformer (a Hugging Face folder, a GGUF file or a llama2.c .bin)",
			info.Name, info.Architecture)}
	}
	if o.RecordAttention == trace.RecordAttentionAll {
		n := int64(rows) * int64(info.Layers) * int64(info.Heads) * int64(promptLen) * int64(promptLen)
		if n > MaxPromptAttention {
			return nil, nil, &OptionError{Msg: fmt.Sprintf("record_attention all would record %d prompt weights (%d rows × %d layers × %d heads × %d² prompt positions), over the limit of %d: record each step's attention only (record_attention step) or give a shorter prompt",
				n, rows, info.Layers, info.Heads, promptLen, MaxPromptAttention)}
		}
	}
	return &Inside{Attention: o.RecordAttention != "", Lens: o.RecordLens > 0, Forward: max(o.RecordForward, 0)}, im, nil
}

// inside builds row r's trace view of what a forward pass showed: the
// attention of its last new token, every new token's attention when asked
// (the prompt matrices of step 0), the top k ids of every layer's lens
// with their softmax probabilities over the v entries of the vocabulary,
// and the forward pass when asked. It copies: the trace keeps nothing of
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
	if in.Forward > 0 {
		out.Forward = forward(in, r)
	}
	return out
}

// forward builds row r's trace view of the forward pass in answered.
func forward(in *Inside, r int) *trace.Forward {
	L, H, K := in.Layers, in.Heads, in.Neurons
	norms := in.Norms[r*ForwardNorms(L) : (r+1)*ForwardNorms(L)]
	f := &trace.Forward{
		Embedding: norms[0], Final: norms[1+5*L], Layers: make([]trace.ForwardLayer, L),
		EmbedBytes: in.EmbedBytes, UnembedBytes: in.UnembedBytes,
	}
	for l := range f.Layers {
		n := norms[1+5*l : 6+5*l]
		fl := trace.ForwardLayer{
			In: n[0], Attn: n[1], Mid: n[2], MLP: n[3], Out: n[4],
			Heads:   topHeads(in.HeadNorms[(r*L+l)*H:(r*L+l+1)*H], in.Forward),
			Neurons: make([]trace.Neuron, K),
		}
		if l < len(in.AttnBytes) && l < len(in.MLPBytes) {
			fl.AttnBytes, fl.MLPBytes = in.AttnBytes[l], in.MLPBytes[l]
		}
		for k := range fl.Neurons {
			i := (r*L+l)*K + k
			fl.Neurons[k] = trace.Neuron{Index: in.NeuronIDs[i], Act: in.NeuronActs[i]}
		}
		f.Layers[l] = fl
	}
	return f
}

// topHeads returns the k heads with the largest shares, by descending
// share, ties by lower index.
func topHeads(shares []float64, k int) []trace.Head {
	hs := make([]trace.Head, len(shares))
	for i, v := range shares {
		hs[i] = trace.Head{Index: i, Share: v}
	}
	slices.SortStableFunc(hs, func(a, b trace.Head) int { return cmp.Compare(b.Share, a.Share) })
	return hs[:min(k, len(hs))]
}
