package arch

import (
	"math"
	"slices"

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
	p.storeKV(l, k, v)
	units, grain := p.attendJob(l, q, out)
	p.pool.Parallel(units, grain, &p.s.attn)
	p.s.attn = attnJob{}
}

// attendJob prepares attend's job over the keys and values stored, in
// p.s.attn, and returns its units and the least worth a piece of the pool.
func (p *pass) attendJob(l int, q, out []float32) (units, grain int) {
	d := p.m.d
	blocks, blockLen := attnBlocks(p.n)
	p.s.attn = attnJob{p: p, l: l, q: q, out: out, blocks: blocks, blockLen: blockLen}
	rep := d.heads / d.kvHeads
	work := blockLen * (p.past + p.n) * d.headDim * 2 * rep // multiply-adds per unit, at most
	return p.rows * d.kvHeads * blocks, max(1, (16<<10)/max(work, 1))
}

// storeKV writes the pass's new keys and values k, v (T, kvHeads·headDim)
// into layer l's cache, on the pool (storeJob).
func (p *pass) storeKV(l int, k, v []float32) {
	p.s.store = storeJob{p: p, l: l, k: k, v: v}
	p.pool.Parallel(p.T(), 8, &p.s.store)
	p.s.store = storeJob{}
}

// storeJob writes the new keys and values of a range of the pass's tokens
// (t = row·n + i) into layer l's cache, each kv head's at its slot. On the
// pool: a prefill's stores touch fresh cache pages, which the kernel
// zeroes on first touch; done on one thread, SmolLM2-135M's prefill of 64
// tokens on two ran 2 % slower (239.5 against 244.7 GFLOP/s, alternated
// in one process).
type storeJob struct {
	p    *pass
	l    int
	k, v []float32 // (T, kvHeads·headDim)
}

func (j *storeJob) Run(lo, hi int) {
	p, d := j.p, j.p.m.d
	hd, kvd := d.headDim, d.kvDim()
	for t := lo; t < hi; t++ {
		r, i := t/p.n, t%p.n
		K, V := p.c.k[j.l][r], p.c.v[j.l][r]
		for g := 0; g < d.kvHeads; g++ {
			dst := (g*p.c.capacity + p.past + i) * hd
			src := t*kvd + g*hd
			copy(K[dst:dst+hd], j.k[src:src+hd])
			copy(V[dst:dst+hd], j.v[src:src+hd])
		}
	}
}

// warmKV returns, in a decode step of one row, the parts of layer l's cache
// that its attention will read: each kv head's keys and values at the
// slots before this step's. The k and v projections bring them into the
// caches as they stream their weights (tensor.Product.Warm), so that
// attention finds them there instead of waiting on memory for each line.
// Otherwise (a prefill, a batch, an empty cache) nil.
func (p *pass) warmKV(l int) (keys, values [][]float32) {
	if p.n != 1 || p.rows != 1 || p.past == 0 {
		return nil, nil
	}
	d := p.m.d
	hd, c := d.headDim, p.c.capacity
	p.s.warmK, p.s.warmV = p.s.warmK[:0], p.s.warmV[:0]
	for g := range d.kvHeads {
		lo, hi := g*c*hd, (g*c+p.past)*hd
		p.s.warmK = append(p.s.warmK, p.c.k[l][0][lo:hi])
		p.s.warmV = append(p.s.warmV, p.c.v[l][0][lo:hi])
	}
	return p.s.warmK, p.s.warmV
}

// maxAttnBlocks bounds how many blocks of new tokens attention splits a
// pass into for the pool (and so its scratch: scores hold a (rep, kvLen)
// block per unit).
const maxAttnBlocks = 8

// attnBlocks splits n new tokens into blocks of at least 8 for the pool:
// a decode step is one block, a long prefill up to maxAttnBlocks.
func attnBlocks(n int) (blocks, blockLen int) {
	blocks = min(max(n/8, 1), maxAttnBlocks)
	blockLen = (n + blocks - 1) / blocks
	return (n + blockLen - 1) / blockLen, blockLen
}

// attnJob runs attention for a range of units: (row, kv head, block of new
// tokens).
type attnJob struct {
	p                *pass
	l                int
	q, out           []float32 // (T, heads·headDim)
	blocks, blockLen int
}

func (j *attnJob) Run(lo, hi int) {
	for u := lo; u < hi; u++ {
		b := u % j.blocks
		t0, t1 := b*j.blockLen, min((b+1)*j.blockLen, j.p.n)
		if j.p.n > 1 { // prefill: blocked products (attention_prefill.go)
			j.p.attendBlocked(j.l, u/j.blocks, u, t0, t1, j.q, j.out)
			continue
		}
		j.p.attendGroup(j.l, u/j.blocks, u, t0, t1, j.q, j.out)
	}
}

// attendGroup computes, for new tokens [t0, t1), the attention of the
// query heads that share kv head group%kvHeads of row group/kvHeads, with
// the scratch of unit. The rep heads of a group are consecutive in q, so
// their scores over the keys are one matrix product, K (keys, headDim)
// against q (rep, headDim), and their outputs another, weights (rep, keys)
// times V (keys, headDim): the cache is read once per group, not once per
// head.
func (p *pass) attendGroup(l, group, unit, t0, t1 int, q, out []float32) {
	d := p.m.d
	r, g := group/d.kvHeads, group%d.kvHeads
	rep := d.heads / d.kvHeads
	hd, qd := d.headDim, d.qDim()
	kvLen := p.past + p.n
	base := g * p.c.capacity * hd
	K := p.c.k[l][r][base : base+kvLen*hd] // (kvLen, headDim)
	V := p.c.v[l][r][base : base+kvLen*hd] // (kvLen, headDim)
	mask := p.b.Mask[r]
	scores := p.s.scores[unit*rep*kvLen : (unit+1)*rep*kvLen] // (rep, ≤ kvLen)
	scale := float32(math.Sqrt(float64(hd)))
	for i := t0; i < t1; i++ {
		s := p.past + i
		keys := s + 1
		off := (r*p.n+i)*qd + g*rep*hd
		qv, o := q[off:off+rep*hd], out[off:off+rep*hd] // (rep, headDim)
		w := scores[:rep*keys]                          // (rep, keys)
		if !slices.Contains(mask[:keys], true) {
			clear(o)
			for h := 0; h < rep; h++ {
				p.uniform(o[h*hd:(h+1)*hd], V, mask, s)
			}
			if p.inside != nil {
				p.keepUniform(l, r, g*rep, i, scores[:rep*kvLen], mask)
			}
			continue
		}
		tensor.MatMul(w, tensor.F32Matrix(K[:keys*hd], keys, hd), qv)
		open := !slices.Contains(mask[:keys], false) // every key allowed
		for h := 0; h < rep; h++ {
			if open { // vector code, as attendTile's: the same weights
				tensor.SoftmaxScaled(w[h*keys:(h+1)*keys], scale)
			} else {
				softmaxMasked(w[h*keys:(h+1)*keys], mask, scale)
			}
		}
		if p.inside != nil {
			p.keepAttention(l, r, g*rep, i, w, keys)
		}
		tensor.MatMulT(o, tensor.F32Matrix(V[:keys*hd], keys, hd), w)
	}
}

// softmaxMasked turns the raw scores q·K[j] of one query into attention
// weights: score/scale, then softmax over the allowed keys (exponentials
// in float64 by tensor.Exp, rounded, the sum in float64), exactly 0 for
// masked ones. At least one key must be allowed.
func softmaxMasked(w []float32, mask []bool, scale float32) {
	best, found := float32(0), false
	for j := range w {
		if !mask[j] {
			continue
		}
		w[j] /= scale
		if !found || w[j] > best {
			best = w[j]
		}
		found = true
	}
	var sum float64
	var buf [256]float64
	for lo := 0; lo < len(w); lo += len(buf) {
		ws := w[lo:min(lo+len(buf), len(w))]
		e := buf[:len(ws)]
		for j, v := range ws {
			e[j] = float64(v - best)
		}
		tensor.Exp(e, e)
		for j := range ws {
			if mask[lo+j] {
				ws[j] = float32(e[j])
				sum += float64(ws[j])
			}
		}
	}
	total := float32(sum)
	for j := range w {
		if mask[j] {
			w[j] /= total
		} else {
			w[j] = 0
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
	pj := 1 / float32(p.uniformCount(kvLen, mask, s))
	for j := 0; j < kvLen; j++ {
		if p.uniformKeeps(j, mask, s) {
			tensor.Axpy(o, pj, V[j*hd:(j+1)*hd])
		}
	}
}

// uniformKeeps reports whether slot j gets a share of the attention of a
// query at slot s that may attend to no key (see uniform).
func (p *pass) uniformKeeps(j int, mask []bool, s int) bool {
	return !p.m.d.gpt2Mask || j <= s || mask[j]
}

// uniformCount is how many of kvLen slots share such a query's attention.
func (p *pass) uniformCount(kvLen int, mask []bool, s int) int {
	count := 0
	for j := 0; j < kvLen; j++ {
		if p.uniformKeeps(j, mask, s) {
			count++
		}
	}
	return count
}
