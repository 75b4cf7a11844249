package arch

import (
	"fmt"

	"tracer/engine/tensor"
)

// gpt2 is GPT-2's block stack:
//
//	x = wte[token] + wpe[position]
//	per layer: q|k|v = ln_1(x) · c_attn + b        (Conv1D: weights stored [in, out])
//	           x += attention(q, k, v) · c_proj + b
//	           x += gelu_new(ln_2(x) · c_fc + b) · mlp.c_proj + b
//	logits = wteᵀ · ln_f(x)                        (lm_head tied to wte)
type gpt2 struct {
	d      dims
	eps    float32       // LayerNorm epsilon
	wte    tensor.Matrix // (vocab, hidden)
	wpe    tensor.Matrix // (maxPos, hidden): learned positions
	layers []gpt2Layer
	lnfW   []float32     // (hidden)
	lnfB   []float32     // (hidden)
	lmHead tensor.Matrix // (vocab, hidden); wte when tied

	// outIn: the layer matrices hold [out, in] weights (llama.cpp's GGUF
	// converter transposes Conv1D's), multiplied by MatMul, not MatMulT.
	outIn bool
}

// gpt2Layer is one block. Conv1D weights are stored [in, out].
type gpt2Layer struct {
	ln1W, ln1B []float32     // (hidden)
	attnW      tensor.Matrix // (hidden, 3·hidden): c_attn, outputs q | k | v
	attnB      []float32     // (3·hidden)
	projW      tensor.Matrix // (hidden, hidden): attn.c_proj
	projB      []float32     // (hidden)
	ln2W, ln2B []float32     // (hidden)
	fcW        tensor.Matrix // (hidden, ffn): mlp.c_fc
	fcB        []float32     // (ffn)
	fcProjW    tensor.Matrix // (ffn, hidden): mlp.c_proj
	fcProjB    []float32     // (hidden)
}

// gpt2Config checks a GPT-2 config.json and returns its sizes.
func gpt2Config(c *hfConfig, path string) (dims, float32, error) {
	d := dims{
		vocab: c.VocabSize, hidden: c.NEmbd, layers: c.NLayer, heads: c.NHead, kvHeads: c.NHead,
		maxPos: c.NPositions, learnedPos: true, gpt2Mask: true,
	}
	if c.NHead > 0 {
		d.headDim = c.NEmbd / c.NHead
	}
	d.ffn = 4 * c.NEmbd
	if c.NInner != nil {
		d.ffn = *c.NInner
	}
	eps := 1e-5
	if c.LayerNormEpsilon != nil {
		eps = *c.LayerNormEpsilon
	}
	if err := checkLimits(path, limit{"vocab_size", d.vocab, maxWidth}, limit{"n_embd", d.hidden, maxWidth},
		limit{"n_layer", d.layers, maxLayers}, limit{"n_head", d.heads, maxHeads},
		limit{"n_positions", d.maxPos, maxPositions}, limit{"n_inner", d.ffn, maxWidth}); err != nil {
		return d, 0, err
	}
	switch {
	case d.vocab <= 0 || d.hidden <= 0 || d.layers <= 0 || d.heads <= 0 || d.maxPos <= 0 || d.ffn <= 0:
		return d, 0, fmt.Errorf("arch: %s: vocab_size %d, n_embd %d, n_layer %d, n_head %d, n_positions %d and n_inner %d must all be positive",
			path, d.vocab, d.hidden, d.layers, d.heads, d.maxPos, d.ffn)
	case d.hidden%d.heads != 0:
		return d, 0, fmt.Errorf("arch: %s: n_head %d does not divide n_embd %d", path, d.heads, d.hidden)
	case c.ActivationFunction != nil && *c.ActivationFunction != "gelu_new":
		return d, 0, fmt.Errorf("arch: %s: activation_function %q not supported (want gelu_new)", path, *c.ActivationFunction)
	case c.ScaleAttnWeights != nil && !*c.ScaleAttnWeights:
		return d, 0, fmt.Errorf("arch: %s: scale_attn_weights false not supported", path)
	case c.ScaleAttnByInverseLayerIdx:
		return d, 0, fmt.Errorf("arch: %s: scale_attn_by_inverse_layer_idx true not supported", path)
	case !(eps >= 0) || eps > 1:
		return d, 0, fmt.Errorf("arch: %s: layer_norm_epsilon %v must be in [0, 1] (it is added to the variance; typically 1e-5)", path, eps)
	}
	return d, float32(eps), nil
}

// loadGPT2 reads GPT-2's tensors, named with or without the "transformer."
// prefix (transformers' GPT2LMHeadModel and OpenAI's GPT2Model checkpoints).
// The attn.bias / attn.masked_bias buffers of older checkpoints are unused.
func loadGPT2(ld *loader, d dims, eps float32, tied bool) (*gpt2, error) {
	pre := "transformer."
	if !ld.has(pre+"wte.weight") && ld.has("wte.weight") {
		pre = ""
	}
	n := &gpt2{d: d, eps: eps}
	h, f := d.hidden, d.ffn
	var err error
	if n.wte, err = ld.matrix(pre+"wte.weight", d.vocab, h); err != nil {
		return nil, err
	}
	if n.wpe, err = ld.matrix(pre+"wpe.weight", d.maxPos, h); err != nil {
		return nil, err
	}
	for l := 0; l < d.layers; l++ {
		var L gpt2Layer
		p := fmt.Sprintf("%sh.%d.", pre, l)
		steps := []func() error{
			func() (err error) { L.ln1W, err = ld.vector(p+"ln_1.weight", h); return },
			func() (err error) { L.ln1B, err = ld.vector(p+"ln_1.bias", h); return },
			func() (err error) { L.attnW, err = ld.matrix(p+"attn.c_attn.weight", h, 3*h); return },
			func() (err error) { L.attnB, err = ld.vector(p+"attn.c_attn.bias", 3*h); return },
			func() (err error) { L.projW, err = ld.matrix(p+"attn.c_proj.weight", h, h); return },
			func() (err error) { L.projB, err = ld.vector(p+"attn.c_proj.bias", h); return },
			func() (err error) { L.ln2W, err = ld.vector(p+"ln_2.weight", h); return },
			func() (err error) { L.ln2B, err = ld.vector(p+"ln_2.bias", h); return },
			func() (err error) { L.fcW, err = ld.matrix(p+"mlp.c_fc.weight", h, f); return },
			func() (err error) { L.fcB, err = ld.vector(p+"mlp.c_fc.bias", f); return },
			func() (err error) { L.fcProjW, err = ld.matrix(p+"mlp.c_proj.weight", f, h); return },
			func() (err error) { L.fcProjB, err = ld.vector(p+"mlp.c_proj.bias", h); return },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, err
			}
		}
		n.layers = append(n.layers, L)
	}
	if n.lnfW, err = ld.vector(pre+"ln_f.weight", h); err != nil {
		return nil, err
	}
	if n.lnfB, err = ld.vector(pre+"ln_f.bias", h); err != nil {
		return nil, err
	}
	n.lmHead = n.wte
	if !tied {
		if n.lmHead, err = ld.matrix("lm_head.weight", d.vocab, h); err != nil {
			return nil, fmt.Errorf("%w (tie_word_embeddings is false)", err)
		}
	}
	return n, nil
}

// cost counts the traffic model's weights and multiply-adds, norms and
// biases at the token embedding's dtype.
func (n *gpt2) cost() costModel { return n.costAt(int64(n.wte.DType.Size())) }

// costAt is cost with vec bytes a norm or bias element.
func (n *gpt2) costAt(vec int64) costModel {
	var c costModel
	for _, L := range n.layers {
		c.addLayer(vec, []tensor.Matrix{L.attnW, L.projW}, []tensor.Matrix{L.fcW, L.fcProjW},
			[][]float32{L.ln1W, L.ln1B, L.attnB, L.projB}, [][]float32{L.ln2W, L.ln2B, L.fcB, L.fcProjB})
	}
	c.addHead(n.lmHead, int64(len(n.lnfW)+len(n.lnfB))*vec)
	c.tokenBytes = int64(n.d.hidden)*int64(n.wte.DType.Size()) + int64(n.d.hidden)*int64(n.wpe.DType.Size())
	c.pairFLOPs = 4 * int64(n.d.qDim()) * int64(n.d.layers)
	return c
}

func (n *gpt2) head() tensor.Matrix { return n.lmHead }

// outProj is attn.c_proj: Conv1D's [in, out] unless the file stores it
// [out, in] (GGUF).
func (n *gpt2) outProj(l int) (tensor.Matrix, bool) { return n.layers[l].projW, !n.outIn }

func (n *gpt2) norm(dst, x []float32) { tensor.LayerNorm(dst, x, n.lnfW, n.lnfB, n.eps) }

// embed adds each token's row of wte and its position's row of wpe.
func (n *gpt2) embed(p *pass) {
	h := n.d.hidden
	pos := p.s.xn[:h]
	for _, c := range p.calls() {
		for r := 0; r < c.rows; r++ {
			for i := 0; i < c.n; i++ {
				t := c.t0 + r*c.n + i
				x := p.s.x[t*h : (t+1)*h]
				n.wte.Row(x, c.b.Tokens[r][i])
				n.wpe.Row(pos, c.b.Positions[r][i])
				tensor.Add(x, x, pos)
			}
		}
	}
}

func (n *gpt2) block(p *pass, l int) {
	L := &n.layers[l]
	d, T := n.d, p.T()
	h := d.hidden
	x, xn, proj := p.s.x[:T*h], p.s.xn[:T*h], p.s.proj[:T*h]
	q, k, v, att := p.s.q[:T*h], p.s.k[:T*h], p.s.v[:T*h], p.s.att[:T*h]
	grow(&p.s.qkv, T*3*h)
	qkv := p.s.qkv[:T*3*h]

	for t := 0; t < T; t++ {
		tensor.LayerNorm(xn[t*h:(t+1)*h], x[t*h:(t+1)*h], L.ln1W, L.ln1B, n.eps)
	}
	n.project(p, qkv, L.attnW, L.attnB, xn)
	for t := 0; t < T; t++ {
		row := qkv[t*3*h : (t+1)*3*h]
		copy(q[t*h:(t+1)*h], row[:h])
		copy(k[t*h:(t+1)*h], row[h:2*h])
		copy(v[t*h:(t+1)*h], row[2*h:])
	}
	p.attention(l, q, k, v, att, false)
	n.project(p, proj, L.projW, L.projB, att)
	if p.fwd != nil {
		p.keepForward(fwdAttn, l, proj)
	}
	tensor.Add(x, x, proj)
	if p.fwd != nil {
		p.keepForward(fwdMid, l, x)
	}

	for t := 0; t < T; t++ {
		tensor.LayerNorm(xn[t*h:(t+1)*h], x[t*h:(t+1)*h], L.ln2W, L.ln2B, n.eps)
	}
	fc := p.s.gate[:T*d.ffn]
	n.project(p, fc, L.fcW, L.fcB, xn)
	tensor.GeluNew(fc, fc)
	if p.fwd != nil {
		p.keepForward(fwdAct, l, fc)
	}
	n.project(p, proj, L.fcProjW, L.fcProjB, fc)
	if p.fwd != nil {
		p.keepForward(fwdMLP, l, proj)
	}
	tensor.Add(x, x, proj)
}

// project is dst = x·W + b for a layer matrix as this model stores it.
func (n *gpt2) project(p *pass, dst []float32, w tensor.Matrix, b []float32, x []float32) {
	if n.outIn {
		linear(p, dst, w, b, x)
		return
	}
	conv1D(p, dst, w, b, x)
}

// conv1D computes dst = x W + b for GPT-2's [in, out] weight.
func conv1D(p *pass, dst []float32, w tensor.Matrix, b []float32, x []float32) {
	p.pool.MatMulT(dst, w, x)
	tensor.AddRows(dst, b)
}
