package arch

import (
	"math"

	"tracer/engine/tensor"
)

// attend appends the pass's new keys k and values v (T, kvHeads·headDim),
// RoPE already applied, to layer l of the cache at slots past..past+n-1,
// then writes to out (T, heads·headDim) each query's attention over the
// cache: for query head h of row r, new token i at slot s = past+i,
//
//	score[j] = q·K[j] / sqrt(headDim)          for keys j ≤ s with Mask[r][j]
//	out      = Σ_j softmax(score)[j] · V[j]
//
// GQA: kv head g serves query heads g·rep … g·rep+rep-1, rep = heads/kvHeads
// (transformers' repeat_kv). Masked keys get weight exactly 0, as with
// transformers' additive finfo(float32).min mask whenever one key is
// allowed. A query with no allowed key (a pad position of a left-padded row)
// gets what transformers computes for it; see uniform.
func (p *pass) attend(l int, q, k, v, out []float32) {
	d := p.m.d
	hd, kvd := d.headDim, d.kvDim()
	for r := 0; r < p.rows; r++ {
		K, V := p.c.k[l][r], p.c.v[l][r]
		for i := 0; i < p.n; i++ {
			t, slot := r*p.n+i, p.past+i
			for g := 0; g < d.kvHeads; g++ {
				dst := (g*p.c.capacity + slot) * hd
				src := t*kvd + g*hd
				copy(K[dst:dst+hd], k[src:src+hd])
				copy(V[dst:dst+hd], v[src:src+hd])
			}
		}
	}
	p.s.attn = attnJob{p: p, l: l, q: q, out: out}
	work := p.n * (p.past + p.n) * hd * 2 // multiply-adds per (row, head) pair
	p.pool.Parallel(p.rows*d.heads, max(1, (16<<10)/max(work, 1)), &p.s.attn)
	p.s.attn = attnJob{}
}

// attnJob runs attention for a range of (row, head) pairs.
type attnJob struct {
	p      *pass
	l      int
	q, out []float32 // (T, heads·headDim)
}

func (j *attnJob) Run(lo, hi int) {
	for pair := lo; pair < hi; pair++ {
		j.p.attendPair(j.l, pair, j.q, j.out)
	}
}

// attendPair computes the attention of query head pair%heads of row
// pair/heads for every new token.
func (p *pass) attendPair(l, pair int, q, out []float32) {
	d := p.m.d
	r, h := pair/d.heads, pair%d.heads
	g := h / (d.heads / d.kvHeads)
	hd, qd := d.headDim, d.qDim()
	kvLen := p.past + p.n
	base := g * p.c.capacity * hd
	K := p.c.k[l][r][base : base+kvLen*hd] // (kvLen, headDim)
	V := p.c.v[l][r][base : base+kvLen*hd] // (kvLen, headDim)
	mask := p.b.Mask[r]
	w := p.s.scores[pair*kvLen : (pair+1)*kvLen] // (kvLen)
	scale := float32(math.Sqrt(float64(hd)))
	for i := 0; i < p.n; i++ {
		s := p.past + i
		off := (r*p.n+i)*qd + h*hd
		qv, o := q[off:off+hd], out[off:off+hd]
		clear(o)
		best, found := float32(0), false
		for j := 0; j <= s; j++ {
			if !mask[j] {
				continue
			}
			w[j] = tensor.Dot(qv, K[j*hd:(j+1)*hd]) / scale
			if !found || w[j] > best {
				best = w[j]
			}
			found = true
		}
		if !found {
			p.uniform(o, V, mask, s)
			continue
		}
		var sum float64
		for j := 0; j <= s; j++ {
			if mask[j] {
				w[j] = float32(math.Exp(float64(w[j] - best)))
				sum += float64(w[j])
			}
		}
		total := float32(sum)
		for j := 0; j <= s; j++ {
			if mask[j] {
				tensor.Axpy(o, w[j]/total, V[j*hd:(j+1)*hd])
			}
		}
	}
}

// uniform writes the output of a query at slot s that may attend to no key.
// transformers then scores every masked key finfo(float32).min (a score
// plus min rounds to min), so softmax spreads evenly over all kvLen slots,
// later ones included. GPT-2 builds its mask differently: a later slot that
// is also padding gets min+min = -Inf, weight 0. Only pad positions take
// this path and no real token attends to them, but their hidden states and
// cache entries match transformers'.
func (p *pass) uniform(o, V []float32, mask []bool, s int) {
	hd := p.m.d.headDim
	kvLen := len(V) / hd
	keep := func(j int) bool { return !p.m.d.gpt2Mask || j <= s || mask[j] }
	count := 0
	for j := 0; j < kvLen; j++ {
		if keep(j) {
			count++
		}
	}
	pj := 1 / float32(count)
	for j := 0; j < kvLen; j++ {
		if keep(j) {
			tensor.Axpy(o, pj, V[j*hd:(j+1)*hd])
		}
	}
}
