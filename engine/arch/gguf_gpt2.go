package arch

import (
	"fmt"

	"tracer/engine/gguf"
	"tracer/engine/tensor"
)

// ggufGPT2 is GPT-2 from a GGUF file. llama.cpp's converter stores every
// weight [out, in] (Conv1D's [in, out] transposed), so its gpt2 has outIn
// set and multiplies by MatMul instead of MatMulT. Tensors:
//
//	token_embd (vocab, hidden)   position_embd (context, hidden)   output_norm.{weight,bias}   output.weight (absent: tied)
//	blk.N.attn_norm.{weight,bias}   attn_qkv (3·hidden, hidden) + bias   attn_output (hidden, hidden) + bias
//	blk.N.ffn_norm.{weight,bias}    ffn_up (ffn, hidden) + bias          ffn_down (hidden, ffn) + bias
type ggufGPT2 struct {
	*gpt2 // its layer matrices hold [out, in] weights here
}

// loadGGUFGPT2 reads a GPT-2 GGUF's weights.
func loadGGUFGPT2(f *gguf.File, ld *ggufLoader) (*ggufGPT2, error) {
	d, err := ggufSizes(f, "gpt2")
	if err != nil {
		return nil, err
	}
	if d.maxPos <= 0 {
		return nil, fmt.Errorf("arch: %s: gpt2.context_length must be positive: GPT-2 learns one position embedding per position", f.Name)
	}
	if d.kvHeads != d.heads {
		return nil, fmt.Errorf("arch: %s: gpt2.attention.head_count_kv %d differs from head_count %d: GPT-2 has no grouped attention", f.Name, d.kvHeads, d.heads)
	}
	d.learnedPos, d.gpt2Mask = true, true
	eps := 1e-5
	if v, ok, err := f.Float("gpt2.attention.layer_norm_epsilon"); err != nil {
		return nil, fmt.Errorf("arch: %w", err)
	} else if ok {
		eps = v
	}
	if !(eps >= 0 && eps <= 1) {
		return nil, fmt.Errorf("arch: %s: gpt2.attention.layer_norm_epsilon %v must be in [0, 1]", f.Name, eps)
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 || emb.Dims[0] != uint64(d.hidden) || emb.Dims[1] > maxWidth {
		return nil, fmt.Errorf("arch: %s: tensor \"token_embd.weight\" is missing or not (%d, vocab) with vocab ≤ %d", f.Name, d.hidden, maxWidth)
	}
	d.vocab = int(emb.Dims[1])
	n := &gpt2{d: d, eps: float32(eps), layers: make([]gpt2Layer, d.layers), outIn: true}
	h, ff := d.hidden, d.ffn
	if n.wte, err = ld.matrix("token_embd.weight", d.vocab, h); err != nil {
		return nil, err
	}
	if n.wpe, err = ld.matrix("position_embd.weight", d.maxPos, h); err != nil {
		return nil, err
	}
	for l := range n.layers {
		L, pre := &n.layers[l], fmt.Sprintf("blk.%d.", l)
		mats := []struct {
			dst        *tensor.Matrix
			name       string
			rows, cols int
		}{{&L.attnW, "attn_qkv", 3 * h, h}, {&L.projW, "attn_output", h, h}, {&L.fcW, "ffn_up", ff, h}, {&L.fcProjW, "ffn_down", h, ff}}
		for _, m := range mats {
			if *m.dst, err = ld.matrix(pre+m.name+".weight", m.rows, m.cols); err != nil {
				return nil, err
			}
		}
		vecs := []struct {
			dst  *[]float32
			name string
			n    int
		}{
			{&L.ln1W, "attn_norm.weight", h}, {&L.ln1B, "attn_norm.bias", h}, {&L.attnB, "attn_qkv.bias", 3 * h},
			{&L.projB, "attn_output.bias", h}, {&L.ln2W, "ffn_norm.weight", h}, {&L.ln2B, "ffn_norm.bias", h},
			{&L.fcB, "ffn_up.bias", ff}, {&L.fcProjB, "ffn_down.bias", h},
		}
		for _, v := range vecs {
			if *v.dst, err = ld.vector(pre+v.name, v.n); err != nil {
				return nil, err
			}
		}
	}
	if n.lnfW, err = ld.vector("output_norm.weight", h); err != nil {
		return nil, err
	}
	if n.lnfB, err = ld.vector("output_norm.bias", h); err != nil {
		return nil, err
	}
	n.lmHead = n.wte
	if _, ok := f.Tensor("output.weight"); ok {
		if n.lmHead, err = ld.matrix("output.weight", d.vocab, h); err != nil {
			return nil, err
		}
	}
	return &ggufGPT2{n}, nil
}

// cost is the GPT-2 cost model at the real bytes of every weight: norms
// and biases as the F32 they are stored in, one row of each embedding per
// token.
func (n *ggufGPT2) cost() costModel {
	c := n.gpt2.costAt(4)
	c.tokenBytes = n.wte.Bytes()/int64(n.wte.Rows) + n.wpe.Bytes()/int64(n.wpe.Rows)
	return c
}

// ggufRounding lists how the GPT-2 products round their inputs.
func (n *ggufGPT2) rounding() []string {
	mats := []tensor.Matrix{n.lmHead}
	for _, L := range n.layers {
		mats = append(mats, L.attnW, L.projW, L.fcW, L.fcProjW)
	}
	return roundingOf(mats)
}
