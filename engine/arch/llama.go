package arch

import (
	"fmt"
	"math"

	"tracer/engine/tensor"
)

// llama is the Llama block stack, shared by Llama, Qwen2 (biases on q, k
// and v) and llama2.c checkpoints (rotary pairs interleaved):
//
//	x = embed[token]
//	per layer: h = rmsnorm(x)·attn_norm
//	           q, k, v = Wq h (+bq), Wk h (+bk), Wv h (+bv); RoPE on q and k
//	           x += Wo attention(q, k, v)
//	           h = rmsnorm(x)·mlp_norm
//	           x += Wdown (silu(Wgate h) * Wup h)
//	logits = head · rmsnorm(x)·norm
type llama struct {
	d          dims
	eps        float32       // RMSNorm epsilon, inside the square root
	pairs      bool          // rotary pairs (2i, 2i+1) as llama2.c, not rotate-half (i, i+headDim/2)
	invFreq    []float32     // (headDim/2): rotary inverse frequencies
	embedW     tensor.Matrix // (vocab, hidden)
	layers     []llamaLayer
	normW      []float32     // (hidden): final RMSNorm weight
	lmHead     tensor.Matrix // (vocab, hidden); embedW when tied
	ggml       bool          // a GGUF file: norms and SiLU in llama.cpp's float order (gguf_ggml.go)
	thetaScale float32       // GGUF: powf(rope base, -2/headDim), ggml's rotary step
}

// llamaLayer is one block. Bias fields are nil when the model has none.
type llamaLayer struct {
	attnNorm   []float32     // (hidden): input_layernorm
	wq         tensor.Matrix // (heads·headDim, hidden)
	wk, wv     tensor.Matrix // (kvHeads·headDim, hidden)
	wo         tensor.Matrix // (hidden, heads·headDim)
	bq         []float32     // (heads·headDim)
	bk, bv     []float32     // (kvHeads·headDim)
	bo         []float32     // (hidden)
	mlpNorm    []float32     // (hidden): post_attention_layernorm
	gate, up   tensor.Matrix // (ffn, hidden)
	down       tensor.Matrix // (hidden, ffn)
	bGate, bUp []float32     // (ffn)
	bDown      []float32     // (hidden)
}

// llamaBiases says which projections of an HF Llama-family checkpoint carry
// biases.
type llamaBiases struct {
	qkv, o, mlp bool
}

// loadLlamaHF reads the blocks of a transformers Llama-family checkpoint
// (model.embed_tokens, model.layers.N.{self_attn,mlp}.*, model.norm,
// lm_head).
func loadLlamaHF(ld *loader, d dims, eps float32, theta float64, tied bool, bias llamaBiases) (*llama, error) {
	n := &llama{d: d, eps: eps}
	var err error
	if n.embedW, err = ld.matrix("model.embed_tokens.weight", d.vocab, d.hidden); err != nil {
		return nil, err
	}
	for l := 0; l < d.layers; l++ {
		L, err := loadLlamaLayer(ld, d, fmt.Sprintf("model.layers.%d.", l), bias)
		if err != nil {
			return nil, err
		}
		n.layers = append(n.layers, L)
	}
	if n.normW, err = ld.vector("model.norm.weight", d.hidden); err != nil {
		return nil, err
	}
	n.lmHead = n.embedW
	if !tied {
		if n.lmHead, err = ld.matrix("lm_head.weight", d.vocab, d.hidden); err != nil {
			return nil, fmt.Errorf("%w (tie_word_embeddings is false)", err)
		}
	}
	// Allocated from head_dim only now that q_proj's shape has vouched for it.
	n.invFreq = make([]float32, d.headDim/2)
	tensor.RopeInvFreq(n.invFreq, d.headDim, theta)
	return n, nil
}

func loadLlamaLayer(ld *loader, d dims, pre string, bias llamaBiases) (llamaLayer, error) {
	var L llamaLayer
	q, kv, h, f := d.qDim(), d.kvDim(), d.hidden, d.ffn
	steps := []func() error{
		func() (err error) { L.attnNorm, err = ld.vector(pre+"input_layernorm.weight", h); return },
		func() (err error) { L.wq, err = ld.matrix(pre+"self_attn.q_proj.weight", q, h); return },
		func() (err error) { L.wk, err = ld.matrix(pre+"self_attn.k_proj.weight", kv, h); return },
		func() (err error) { L.wv, err = ld.matrix(pre+"self_attn.v_proj.weight", kv, h); return },
		func() (err error) { L.wo, err = ld.matrix(pre+"self_attn.o_proj.weight", h, q); return },
		func() (err error) { L.bq, err = ld.optVector(bias.qkv, pre+"self_attn.q_proj.bias", q); return },
		func() (err error) { L.bk, err = ld.optVector(bias.qkv, pre+"self_attn.k_proj.bias", kv); return },
		func() (err error) { L.bv, err = ld.optVector(bias.qkv, pre+"self_attn.v_proj.bias", kv); return },
		func() (err error) { L.bo, err = ld.optVector(bias.o, pre+"self_attn.o_proj.bias", h); return },
		func() (err error) { L.mlpNorm, err = ld.vector(pre+"post_attention_layernorm.weight", h); return },
		func() (err error) { L.gate, err = ld.matrix(pre+"mlp.gate_proj.weight", f, h); return },
		func() (err error) { L.up, err = ld.matrix(pre+"mlp.up_proj.weight", f, h); return },
		func() (err error) { L.down, err = ld.matrix(pre+"mlp.down_proj.weight", h, f); return },
		func() (err error) { L.bGate, err = ld.optVector(bias.mlp, pre+"mlp.gate_proj.bias", f); return },
		func() (err error) { L.bUp, err = ld.optVector(bias.mlp, pre+"mlp.up_proj.bias", f); return },
		func() (err error) { L.bDown, err = ld.optVector(bias.mlp, pre+"mlp.down_proj.bias", h); return },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return L, err
		}
	}
	return L, nil
}

// cost counts the traffic model's weights and multiply-adds, norms and
// biases at the embedding's dtype.
func (n *llama) cost() costModel { return n.costAt(int64(n.embedW.DType.Size())) }

// costAt is cost with vec bytes a norm or bias element.
func (n *llama) costAt(vec int64) costModel {
	var c costModel
	for _, L := range n.layers {
		c.addLayer(vec, []tensor.Matrix{L.wq, L.wk, L.wv, L.wo}, []tensor.Matrix{L.gate, L.up, L.down},
			[][]float32{L.attnNorm, L.bq, L.bk, L.bv, L.bo}, [][]float32{L.mlpNorm, L.bGate, L.bUp, L.bDown})
	}
	c.addHead(n.lmHead, int64(len(n.normW))*vec)
	c.tokenBytes = int64(n.d.hidden) * int64(n.embedW.DType.Size())
	c.pairFLOPs = 4 * int64(n.d.qDim()) * int64(n.d.layers)
	return c
}

func (n *llama) head() tensor.Matrix { return n.lmHead }

func (n *llama) outProj(l int) (tensor.Matrix, bool) { return n.layers[l].wo, false }

func (n *llama) norm(dst, x []float32) { n.rmsNorm(dst, x, n.normW) }

// rmsNorm is the RMSNorm of the model's kind: ggml's for a GGUF file.
func (n *llama) rmsNorm(dst, x, w []float32) {
	if n.ggml {
		rmsNormGGML(dst, x, w, n.eps)
		return
	}
	tensor.RMSNorm(dst, x, w, n.eps)
}

// embed looks up each token's row and the rotary angles of its position.
func (n *llama) embed(p *pass) {
	h, half := n.d.hidden, n.d.headDim/2
	for _, c := range p.calls() {
		for r := 0; r < c.rows; r++ {
			for i := 0; i < c.n; i++ {
				t := c.t0 + r*c.n + i
				pos := c.b.Positions[r][i]
				n.embedW.Row(p.s.x[t*h:(t+1)*h], c.b.Tokens[r][i])
				if n.ggml {
					ropeCosSinGGML(p.s.cos[t*half:(t+1)*half], p.s.sin[t*half:(t+1)*half], n.thetaScale, pos)
				} else {
					tensor.RopeCosSin(p.s.cos[t*half:(t+1)*half], p.s.sin[t*half:(t+1)*half], n.invFreq, pos)
				}
			}
		}
	}
}

func (n *llama) block(p *pass, l int) {
	L := &n.layers[l]
	d, T := n.d, p.T()
	h := d.hidden
	x, proj := p.s.x[:T*h], p.s.proj[:T*h]
	q, k, v := p.s.q[:T*d.qDim()], p.s.k[:T*d.kvDim()], p.s.v[:T*d.kvDim()]
	att := p.s.att[:T*d.qDim()]
	gate, up := p.s.gate[:T*d.ffn], p.s.up[:T*d.ffn]
	xn := p.s.xn[:T*h]

	n.perToken(p, L, tokAttnNorm)
	warmK, warmV := p.warmKV(l)
	p.pool.MatMuls(xn, tensor.Product{Dst: q, W: L.wq}, tensor.Product{Dst: k, W: L.wk, Warm: warmK}, tensor.Product{Dst: v, W: L.wv, Warm: warmV})
	addBias(q, L.bq)
	addBias(k, L.bk)
	addBias(v, L.bv)
	n.perToken(p, L, tokRotate)
	p.attention(l, q, k, v, att, n.ggml)
	linear(p, proj, L.wo, L.bo, att)
	if p.fwd != nil {
		p.keepForward(fwdAttn, l, proj)
	}
	n.perToken(p, L, tokAddMLPNorm)
	if p.fwd != nil {
		p.keepForward(fwdMid, l, x)
	}
	p.pool.MatMuls(xn, tensor.Product{Dst: gate, W: L.gate}, tensor.Product{Dst: up, W: L.up})
	addBias(gate, L.bGate)
	addBias(up, L.bUp)
	n.perToken(p, L, tokSwiGLU)
	if p.fwd != nil {
		p.keepForward(fwdAct, l, gate)
	}
	linear(p, proj, L.down, L.bDown, gate)
	if p.fwd != nil {
		p.keepForward(fwdMLP, l, proj)
	}
	tensor.Add(x, x, proj)
}

// The per-token steps of a block, which the pool splits by token in a
// prefill.
const (
	tokAttnNorm   = iota // xn = rmsnorm(x)·attn_norm
	tokRotate            // RoPE on q and k
	tokAddMLPNorm        // x += proj; xn = rmsnorm(x)·mlp_norm
	tokSwiGLU            // gate = silu(gate) * up
)

// perToken runs one per-token step over the pass's tokens, on the pool
// when there are enough of them.
func (n *llama) perToken(p *pass, L *llamaLayer, op int) {
	p.s.tok = tokenJob{n: n, L: L, p: p, op: op}
	p.pool.Parallel(p.T(), 8, &p.s.tok)
	p.s.tok = tokenJob{}
}

// tokenJob is a per-token step of a llama block over a range of tokens.
type tokenJob struct {
	n  *llama
	L  *llamaLayer
	p  *pass
	op int
}

func (j *tokenJob) Run(lo, hi int) {
	n, L, p, d := j.n, j.L, j.p, j.n.d
	h, f := d.hidden, d.ffn
	for t := lo; t < hi; t++ {
		x, xn := p.s.x[t*h:(t+1)*h], p.s.xn[t*h:(t+1)*h]
		switch j.op {
		case tokAttnNorm:
			n.rmsNorm(xn, x, L.attnNorm)
		case tokRotate:
			n.rotate(p, t, p.s.q[t*d.qDim():(t+1)*d.qDim()], d.heads)
			n.rotate(p, t, p.s.k[t*d.kvDim():(t+1)*d.kvDim()], d.kvHeads)
		case tokAddMLPNorm:
			tensor.Add(x, x, p.s.proj[t*h:(t+1)*h])
			n.rmsNorm(xn, x, L.mlpNorm)
		case tokSwiGLU:
			g := p.s.gate[t*f : (t+1)*f]
			if n.ggml {
				swiGLUGGML(g, g, p.s.up[t*f:(t+1)*f])
			} else {
				tensor.SwiGLU(g, g, p.s.up[t*f:(t+1)*f])
			}
		}
	}
}

// rotate applies the rotary embedding to every head of token t's x
// (heads·headDim).
func (n *llama) rotate(p *pass, t int, x []float32, heads int) {
	hd, half := n.d.headDim, n.d.headDim/2
	cos, sin := p.s.cos[t*half:(t+1)*half], p.s.sin[t*half:(t+1)*half]
	for hh := 0; hh < heads; hh++ {
		v := x[hh*hd : (hh+1)*hd]
		if n.ggml && n.pairs {
			rotatePairsGGML(v, cos, sin)
		} else if n.pairs {
			tensor.RotatePairs(v, cos, sin)
		} else {
			tensor.RotateHalf(v, cos, sin)
		}
	}
}

// linear computes dst = x Wᵀ + b for an [out, in] weight; b may be nil.
// Weights that share x (q, k and v; gate and up) go to the pool's MatMuls
// together, which rounds x once for all of them where the products round
// their input (GGUF files), then addBias.
func linear(p *pass, dst []float32, w tensor.Matrix, b []float32, x []float32) {
	p.pool.MatMul(dst, w, x)
	addBias(dst, b)
}

// addBias adds b to every row of dst; b may be nil.
func addBias(dst, b []float32) {
	if b != nil {
		tensor.AddRows(dst, b)
	}
}

// llamaHFOptions are the Llama-family settings beyond dims and epsilon.
type llamaHFOptions struct {
	theta      float64 // rope_theta
	bias       llamaBiases
	headDimSet bool // config.json gives head_dim
}

// llamaConfig checks a Llama config.json and returns its sizes. Defaults
// follow LlamaConfig: rms_norm_eps 1e-6, rope_theta 10000, as many kv heads
// as heads, head_dim hidden/heads.
func llamaConfig(c *hfConfig, path string) (dims, float32, llamaHFOptions, error) {
	d, eps, opts, err := llamaFamilyConfig(c, path)
	opts.bias = llamaBiases{qkv: c.AttentionBias, o: c.AttentionBias, mlp: c.MLPBias}
	return d, eps, opts, err
}

// llamaFamilyConfig reads what Llama and Qwen2 configs share. Every size is
// checked to be positive and within the limits (limits.go) before anything
// is allocated from it; checkWeights then holds it to the tensors.
// max_position_embeddings defaults as in LlamaConfig (2048) and Qwen2Config
// (32768) when absent, and must be positive when given.
func llamaFamilyConfig(c *hfConfig, path string) (dims, float32, llamaHFOptions, error) {
	d := dims{
		vocab: c.VocabSize, hidden: c.HiddenSize, layers: c.NumHiddenLayers, heads: c.NumAttentionHeads,
		kvHeads: c.NumAttentionHeads, ffn: c.IntermediateSize, maxPos: 2048,
	}
	if c.ModelType == "qwen2" {
		d.maxPos = 32768
	}
	eps, opts := 1e-6, llamaHFOptions{theta: 10000}
	if c.MaxPositionEmbeddings != nil {
		d.maxPos = *c.MaxPositionEmbeddings
		if d.maxPos <= 0 {
			return d, 0, opts, fmt.Errorf("arch: %s: max_position_embeddings %d must be positive: it is how many positions the model was trained for (leave it out for the default %d)", path, d.maxPos, map[bool]int{true: 32768, false: 2048}[c.ModelType == "qwen2"])
		}
	}
	if c.NumKeyValueHeads != nil {
		d.kvHeads = *c.NumKeyValueHeads
	}
	if err := checkLimits(path, limit{"vocab_size", d.vocab, maxWidth}, limit{"hidden_size", d.hidden, maxWidth},
		limit{"num_hidden_layers", d.layers, maxLayers}, limit{"num_attention_heads", d.heads, maxHeads},
		limit{"num_key_value_heads", d.kvHeads, maxHeads}, limit{"intermediate_size", d.ffn, maxWidth},
		limit{"max_position_embeddings", d.maxPos, maxPositions}); err != nil {
		return d, 0, opts, err
	}
	if d.heads > 0 && d.hidden > 0 {
		d.headDim = d.hidden / d.heads
	}
	if c.HeadDim != nil {
		opts.headDimSet = true
		if *c.HeadDim > maxHeadDim || *c.HeadDim > 0 && *c.HeadDim*d.heads > maxWidth {
			return d, 0, opts, fmt.Errorf("arch: %s: head_dim %d is not hidden_size/num_attention_heads (%d), and num_attention_heads·head_dim exceeds tracer's limit of %d: fix head_dim or leave it out",
				path, *c.HeadDim, d.headDim, maxWidth)
		}
		d.headDim = *c.HeadDim
	} else if d.heads > 0 && d.hidden%d.heads != 0 {
		return d, 0, opts, fmt.Errorf("arch: %s: num_attention_heads %d does not divide hidden_size %d", path, d.heads, d.hidden)
	}
	if c.RMSNormEps != nil {
		eps = *c.RMSNormEps
	}
	if c.RopeTheta != nil {
		opts.theta = *c.RopeTheta
	}
	switch {
	case d.vocab <= 0 || d.hidden <= 0 || d.layers <= 0 || d.heads <= 0 || d.kvHeads <= 0 || d.headDim <= 0 || d.ffn <= 0:
		return d, 0, opts, fmt.Errorf("arch: %s: vocab_size %d, hidden_size %d, num_hidden_layers %d, num_attention_heads %d, num_key_value_heads %d, head_dim %d and intermediate_size %d must all be positive",
			path, d.vocab, d.hidden, d.layers, d.heads, d.kvHeads, d.headDim, d.ffn)
	case d.heads%d.kvHeads != 0:
		return d, 0, opts, fmt.Errorf("arch: %s: num_key_value_heads %d does not divide num_attention_heads %d", path, d.kvHeads, d.heads)
	case d.headDim%2 != 0:
		return d, 0, opts, fmt.Errorf("arch: %s: head_dim %d is odd: rotary embeddings need pairs", path, d.headDim)
	case c.HiddenAct != nil && *c.HiddenAct != "silu":
		return d, 0, opts, fmt.Errorf("arch: %s: hidden_act %q not supported (want silu)", path, *c.HiddenAct)
	case len(c.RopeScaling) > 0 && string(c.RopeScaling) != "null":
		return d, 0, opts, fmt.Errorf("arch: %s: rope_scaling %s not supported (tracer implements plain rotary embeddings only)", path, c.RopeScaling)
	case !(opts.theta > 0) || math.IsInf(opts.theta, 0):
		return d, 0, opts, fmt.Errorf("arch: %s: rope_theta %v must be a positive number", path, opts.theta)
	case !(eps >= 0) || eps > 1:
		return d, 0, opts, fmt.Errorf("arch: %s: rms_norm_eps %v must be in [0, 1] (it is added to the variance; typically 1e-5 or 1e-6)", path, eps)
	}
	return d, float32(eps), opts, nil
}
