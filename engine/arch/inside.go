package arch

import (
	"tracer/engine"
)

// Looking inside a forward pass (engine.Inside). Three hooks, all off
// unless ForwardInside asks:
//
//   - attention: attendGroup hands each query's softmax weights, (rep, keys)
//     for the query heads of one kv head, to keepAttention, which copies
//     those of the queries asked for into Inside.Attn;
//   - the residual stream: run hands it to keepStream after each layer,
//     which copies each row's last position into the cache's scratch
//     (lensX); lens then applies the final norm and the head to all of them
//     at once;
//   - the forward pass: the blocks hand their sublayers' results to
//     keepForward, and keepStream takes the stream's norms (forward.go).
//
// The logit lens of layer l is lm_head(final_norm(h_l)) for every l,
// the last included: transformers' output_hidden_states already holds the
// last layer's output normed, so its lens applies the norm to the other
// layers and lm_head alone to the last; either way each layer's output is
// normed exactly once, and the last layer's lens is the model's logits.

// beginInside prepares in's answers for the pass: the attention's storage,
// and the pass's record of the residual stream (keepStream) when the lens
// or the forward pass is asked.
func (m *Model) beginInside(p *pass, in *engine.Inside) {
	d := m.d
	in.Layers, in.Heads, in.Keys, in.Queries = d.layers, d.heads, p.past+p.n, 1
	if in.AllAttention {
		in.Queries = p.n
	}
	in.Attn = in.Attn[:0]
	if in.Attention || in.AllAttention {
		size := p.rows * d.layers * d.heads * in.Queries * in.Keys
		grow(&in.Attn, size)
		in.Attn = in.Attn[:size]
		clear(in.Attn) // masked and later keys stay 0
		p.inside = in
	}
	if in.Forward > 0 {
		m.beginForward(p, in)
	}
	if in.Lens {
		grow(&p.s.lensX, p.rows*d.layers*d.hidden)
		p.lens = true
	}
}

// keepStream records the residual stream x (T, hidden) that run hands
// over after the embedding (layer -1) and after each layer: each row's
// last position for the lens, its norms for the forward pass.
func (p *pass) keepStream(layer int, x []float32) {
	if p.fwd != nil {
		p.keepStreamNorms(layer, x)
	}
	if !p.lens || layer < 0 {
		return
	}
	d := p.m.d
	h := d.hidden
	for r := 0; r < p.rows; r++ {
		t := r*p.n + p.n - 1
		dst := (r*d.layers + layer) * h
		copy(p.s.lensX[dst:dst+h], x[t*h:(t+1)*h])
	}
}

// keepAttention copies the weights w (rep, keys) of query heads h0 …
// h0+rep-1 of row r's new token i at layer l into the pass's Inside, when
// that token is one it asks for (every new token, or the last).
func (p *pass) keepAttention(l, r, h0, i int, w []float32, keys int) {
	in := p.inside
	q := i - (p.n - in.Queries)
	if q < 0 {
		return
	}
	for hh := 0; hh < len(w)/keys; hh++ {
		off := (((r*in.Layers+l)*in.Heads+h0+hh)*in.Queries + q) * in.Keys
		copy(in.Attn[off:off+keys], w[hh*keys:(hh+1)*keys])
	}
}

// keepUniform records the attention of a new token that may attend to no
// key (a pad of a left-padded row): the even spread uniform computes, over
// all kvLen slots. w is scratch of rep·kvLen.
func (p *pass) keepUniform(l, r, h0, i int, w []float32, mask []bool) {
	kvLen := p.past + p.n
	s := p.past + i
	pj := 1 / float32(p.uniformCount(kvLen, mask, s))
	rep := len(w) / kvLen
	for j := 0; j < kvLen; j++ {
		v := float32(0)
		if p.uniformKeeps(j, mask, s) {
			v = pj
		}
		for hh := 0; hh < rep; hh++ {
			w[hh*kvLen+j] = v
		}
	}
	p.keepAttention(l, r, h0, i, w, kvLen)
}

// lens writes in.LensLogits (rows, layers, vocab): the final norm and the
// head applied to every layer's output at each row's last new token, as
// one matrix product.
func (m *Model) lens(p *pass, in *engine.Inside) {
	d := m.d
	h, n := d.hidden, p.rows*d.layers
	grow(&p.s.lensN, n*h)
	for i := 0; i < n; i++ {
		m.net.norm(p.s.lensN[i*h:(i+1)*h], p.s.lensX[i*h:(i+1)*h])
	}
	grow(&in.LensLogits, n*d.vocab)
	in.LensLogits = in.LensLogits[:n*d.vocab]
	m.pool.MatMul(in.LensLogits, m.net.head(), p.s.lensN[:n*h])
}
