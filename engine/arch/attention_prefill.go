package arch

import (
	"math"
	"slices"

	"tracer/engine/tensor"
)

// Attention over the prompt as blocked products. attendGroup handles one
// new token at a time: its rep query heads against the keys (a product of
// rep rows), then their weights against the values (rep rows again), so a
// prefill of n tokens reads the cache n times in products too thin for the
// blocked kernels. attendBlocked stacks a tile of tq new tokens instead:
//
//	S (tq·rep, ks)  = Q (tq·rep, headDim) · K[:ks]ᵀ   one tensor.MatMul
//	S[row]          = softmax of the row's own keys, 0 past them
//	O (tq·rep, hd)  = S · V[:ks]                      one tensor.MatMulT
//
// where ks = past+i+1 for the tile's last token i, so the causal mask cuts
// each product to a triangle's bounding box. The products are attendGroup's
// bit for bit: MatMul sums every q·k the same way whatever the number of
// rows of x (tensor's doc), and MatMulT sums each output over the keys in
// order, so the keys past a row's own, whose weights are exactly 0, add
// 0·V[j] = +0 to it and change nothing, provided those values are finite.
// A tile whose extra values are not (a NaN in a later token's value would
// turn 0·V into NaN) has its value products done one token at a time. The
// softmax of a tile with no masked key is tensor.SoftmaxScaled, vector
// code whose float64 sum runs in four lanes: its weights are
// softmaxMasked's within a unit in the last place of float32, and mostly
// equal; a tile with masked keys keeps softmaxMasked.

// attnTileQueries bounds the new tokens of one tile: 32 tokens of 3 query
// heads (SmolLM2) are 96 rows of x for the kernels, enough to reuse each
// key and value row from registers many times.
const attnTileQueries = 32

// attnTileScores bounds the floats of a tile's scores S when the cache is
// long, so that S (at most 256 KiB) stays in L2 beside K and V. A tile
// always holds at least one token's rep rows over the whole cache.
const attnTileScores = 64 << 10

// attnScoreLen is the length of the scores region of one attention unit
// (row, kv head, block of new tokens): a tile's S (tq·rep, ≤ capacity).
func attnScoreLen(d dims, capacity int) int {
	rep := d.heads / d.kvHeads
	return max(rep*capacity, min(attnTileScores, attnTileQueries*rep*capacity))
}

// attnUnitLen is the scratch of one attention unit: the scores region,
// then a tile of queries Q and one of outputs O (attnTileQueries·rep,
// headDim) each. It is at least the (rep, capacity) of attendGroup's
// per-token weights.
func attnUnitLen(d dims, capacity int) int {
	rep := d.heads / d.kvHeads
	return attnScoreLen(d, capacity) + 2*attnTileQueries*rep*d.headDim
}

// attendBlocked computes what attendGroup does for new tokens [t0, t1) of
// one (row, kv head) group, in tiles of up to attnTileQueries tokens, with
// the scratch of unit (attnUnitLen floats).
func (p *pass) attendBlocked(l, group, unit, t0, t1 int, q, out []float32) {
	d := p.m.d
	r, g := group/d.kvHeads, group%d.kvHeads
	rep := d.heads / d.kvHeads
	hd := d.headDim
	kvLen := p.past + p.n
	base := g * p.c.capacity * hd
	K := p.c.k[l][r][base : base+kvLen*hd] // (kvLen, headDim)
	V := p.c.v[l][r][base : base+kvLen*hd] // (kvLen, headDim)
	sLen := attnScoreLen(d, p.c.capacity)
	region := p.s.scores[unit*attnUnitLen(d, p.c.capacity):]
	scores := region[:sLen]                                                  // (tq·rep, ks)
	qt := region[sLen : sLen+attnTileQueries*rep*hd]                         // (tq·rep, headDim)
	ot := region[sLen+attnTileQueries*rep*hd : attnUnitLen(d, p.c.capacity)] // (tq·rep, headDim)
	tq := min(attnTileQueries, sLen/(rep*kvLen))
	for i0 := t0; i0 < t1; i0 += tq {
		i1 := min(i0+tq, t1)
		p.attendTile(l, r, g, i0, i1, K, V, q, out, scores, qt, ot)
	}
}

// attendTile is one tile of attendBlocked: new tokens [i0, i1) of row r,
// kv head g, over the cache's keys K and values V (kvLen, headDim).
func (p *pass) attendTile(l, r, g, i0, i1 int, K, V, q, out, scores, qt, ot []float32) {
	d := p.m.d
	rep := d.heads / d.kvHeads
	hd, qd := d.headDim, d.qDim()
	rows := (i1 - i0) * rep // rows of Q, S and O
	ks := p.past + i1       // keys of the tile's last token
	mask := p.b.Mask[r]
	scale := float32(math.Sqrt(float64(hd)))
	Q, S, O := qt[:rows*hd], scores[:rows*ks], ot[:rows*hd]
	for i := i0; i < i1; i++ {
		off := (r*p.n+i)*qd + g*rep*hd
		copy(Q[(i-i0)*rep*hd:], q[off:off+rep*hd])
	}
	tensor.MatMul(S, tensor.F32Matrix(K[:ks*hd], ks, hd), Q)
	open := !slices.Contains(mask[:ks], false) // every key allowed
	for i := i0; i < i1; i++ {
		keys := p.past + i + 1
		w := S[(i-i0)*rep*ks : (i-i0+1)*rep*ks] // (rep, ks)
		if !slices.Contains(mask[:keys], true) {
			clear(w) // its output is overwritten below
			continue
		}
		for h := 0; h < rep; h++ {
			row := w[h*ks : (h+1)*ks]
			if open {
				tensor.SoftmaxScaled(row[:keys], scale)
			} else {
				softmaxMasked(row[:keys], mask, scale)
			}
			clear(row[keys:])
			if p.inside != nil {
				p.keepAttention(l, r, g*rep+h, i, row[:keys], keys)
			}
		}
	}
	first := p.past + i0 + 1 // keys of the tile's first token: every row uses them
	if finite(V[first*hd : ks*hd]) {
		tensor.MatMulT(O, tensor.F32Matrix(V[:ks*hd], ks, hd), S)
	} else {
		for i := i0; i < i1; i++ {
			keys := p.past + i + 1
			for h := 0; h < rep; h++ {
				t := (i-i0)*rep + h
				tensor.MatMulT(O[t*hd:(t+1)*hd], tensor.F32Matrix(V[:keys*hd], keys, hd), S[t*ks:t*ks+keys])
			}
		}
	}
	for i := i0; i < i1; i++ {
		off := (r*p.n+i)*qd + g*rep*hd
		o := out[off : off+rep*hd]
		s := p.past + i
		if slices.Contains(mask[:s+1], true) {
			copy(o, O[(i-i0)*rep*hd:(i-i0+1)*rep*hd])
			continue
		}
		clear(o)
		for h := 0; h < rep; h++ {
			p.uniform(o[h*hd:(h+1)*hd], V, mask, s)
		}
		if p.inside != nil {
			kvLen := p.past + p.n
			p.keepUniform(l, r, g*rep, i, scores[:rep*kvLen], mask) // S is spent
		}
	}
}

// finite reports whether every element of v is finite (no NaN, no ±Inf).
func finite(v []float32) bool {
	for _, x := range v {
		if x-x != 0 {
			return false
		}
	}
	return true
}
