package arch

import (
	"math"
	"slices"

	"tracer/engine/tensor"
)

// ropeCosSinGGML writes the rotary cosines and sines of position pos as
// ggml_rope_cache_init computes them: theta starts at pos and is
// multiplied by thetaScale (powf(base, -2/headDim)) pair after pair, in
// float32; cos and sin of each theta the C library's (sincosfGlibc).
func ropeCosSinGGML(cos, sin []float32, thetaScale float32, pos int) {
	theta := float32(pos)
	for i := range cos {
		sin[i], cos[i] = sincosfGlibc(theta)
		theta *= thetaScale
	}
}

// rotatePairsGGML is ggml's rope_f32 of one head in place, pairs (2i,
// 2i+1), as GCC compiles it with contraction on (-std=gnu11): the first
// product of each line fused with the rest,
//
//	x[2i]   = fma(a, cos, -(b·sin))
//	x[2i+1] = fma(a, sin, b·cos)
//
// (Contracting the other product instead gives the same reference
// results; both differ from the uncontracted form on k256's F32 file.)
// Four pairs at a time in assembly where it runs (rotatePairsZ).
func rotatePairsGGML(x, cos, sin []float32) {
	start := 0
	if useSiLUZ && len(cos) >= 4 {
		start = len(cos) / 4 * 4
		rotatePairsZ(&x[0], &cos[0], &sin[0], start)
	}
	for i := start; i < len(cos); i++ {
		a, b := x[2*i], x[2*i+1]
		x[2*i] = tensor.FMA32(a, cos[i], -(b * sin[i]))
		x[2*i+1] = tensor.FMA32(a, sin[i], b*cos[i])
	}
}

// dotGGML is ggml_vec_dot_f32 of llama.cpp's AVX2 build, which takes a
// decode step's and a prompt's scores q·k and a decode step's weighted
// values: four accumulators of eight lanes over runs of 32 terms, term
// 8a+l of each run fused into lane l of accumulator a (the first a plain
// product, as an FMA onto zero), the accumulators added (a0+a2)+(a1+a3),
// their eight lanes reduced as GGML_F32x8_REDUCE does,
// ((r0+r4)+(r1+r5)) + ((r2+r6)+(r3+r7)), and the len % 32 terms left
// added one by one in float64.
func dotGGML(x, y []float32) float32 {
	var acc [32]float32
	full := len(x) / 32 * 32
	for i := 0; i < full; i += 32 {
		for l := range acc {
			acc[l] = tensor.FMA32(x[i+l], y[i+l], acc[l])
		}
	}
	s := float64(reduce32(&acc))
	for i := full; i < len(x); i++ {
		s += float64(x[i] * y[i])
	}
	return float32(s)
}

// reduce32 adds ggml_vec_dot_f32's four accumulators of eight lanes
// (acc[8a+l]) as it does.
func reduce32(acc *[32]float32) float32 {
	var r [8]float32
	for l := range r {
		r[l] = (acc[l] + acc[16+l]) + (acc[8+l] + acc[24+l])
	}
	return ((r[0] + r[4]) + (r[1] + r[5])) + ((r[2] + r[6]) + (r[3] + r[7]))
}

// attendGGML is the attention of a pass in llama.cpp's float order for a
// GGUF file (its AVX2 build, the reference server's), each new token
// against its own keys (the cache's and the new ones up to itself): the
// scores q·k by ggml_vec_dot_f32's sums (dotGGML: llama.cpp's K·Q takes
// it for a decode step and, its Q not contiguous, for a prompt too),
// ggml_soft_max_f32 (softmaxGGML), and the weighted sum of the values by
// ggml_vec_dot_f32's lanes for a decode step and tinyBLAS's for a prompt
// of two tokens or more (kqvGGML; llamafile_sgemm declines one column).
// A prompt goes token by token: each output sums as its one-token
// products do. (The engine's tiled prefill attention sums otherwise; on
// quant-zoo's Q4_1 file its ulps moved eight of sixteen steps after a
// 12-token prompt by 0.08 to 0.32 in log-probability.) Token by token
// costs time: a Q8_0 prompt at SmolLM2-135M's shape took 15 % (64
// tokens) to 26 % (512) longer than with the tiled attention. It reports
// false, and does nothing, for a token with every key masked or a
// prefill that looks inside: p.attend does those.
func (p *pass) attendGGML(l int, q, k, v, out []float32) bool {
	if !p.ggmlAttends() {
		return false
	}
	p.storeKV(l, k, v)
	units, grain := p.attendGGMLJob(l, q, out)
	p.pool.Parallel(units, grain, &p.s.ggml)
	p.s.ggml = ggmlAttnJob{}
	return true
}

// ggmlAttends reports whether attendGGML takes the pass: every new token
// with a key to attend to, and no prefill that looks inside.
func (p *pass) ggmlAttends() bool {
	if p.n > 1 && p.inside != nil {
		return false
	}
	for r := 0; r < p.rows; r++ {
		for t := range p.n {
			if !slices.Contains(p.b.Mask[r][:p.past+t+1], true) {
				return false
			}
		}
	}
	return true
}

// attendGGMLJob prepares attendGGML's job over the keys and values
// stored, in p.s.ggml, and returns its units and the least worth a piece
// of the pool.
func (p *pass) attendGGMLJob(l int, q, out []float32) (units, grain int) {
	d := p.m.d
	blocks, blockLen := attnBlocks(p.n)
	p.s.ggml = ggmlAttnJob{p: p, l: l, q: q, out: out, blocks: blocks, blockLen: blockLen}
	work := blockLen * (p.past + p.n) * d.headDim * 2 * (d.heads / d.kvHeads) // multiply-adds per unit, at most
	return p.rows * d.kvHeads * blocks, max(1, (16<<10)/max(work, 1))
}

// ggmlAttnJob is attendGGML's work for a range of units (row, kv head,
// block of new tokens), split over the pool as attnJob's.
type ggmlAttnJob struct {
	p                *pass
	l                int
	q, out           []float32 // (T, heads·headDim)
	blocks, blockLen int
}

func (j *ggmlAttnJob) Run(lo, hi int) {
	d := j.p.m.d
	for u := lo; u < hi; u++ {
		group, b := u/j.blocks, u%j.blocks
		for t := b * j.blockLen; t < min((b+1)*j.blockLen, j.p.n); t++ {
			j.attend(u, group/d.kvHeads, group%d.kvHeads, t)
		}
	}
}

// attend computes the attention of new token t of row r for the query
// heads of kv head g, with the scratch of unit u.
func (j *ggmlAttnJob) attend(u, r, g, t int) {
	p, d := j.p, j.p.m.d
	hd, qd, rep := d.headDim, d.qDim(), d.heads/d.kvHeads
	scale := 1 / float32(math.Sqrt(float64(hd)))
	keys, mask := p.past+t+1, p.b.Mask[r]
	base := g * p.c.capacity * hd
	K, V := p.c.k[j.l][r][base:base+keys*hd], p.c.v[j.l][r][base:base+keys*hd]
	at := u * attnUnitLen(d, p.c.capacity)
	w := p.s.scores[at : at+rep*keys] // (rep, keys)
	for h := 0; h < rep; h++ {
		off := (r*p.n+t)*qd + (g*rep+h)*hd
		wh, qh, o := w[h*keys:(h+1)*keys], j.q[off:off+hd], j.out[off:off+hd]
		if useSiLUZ && hd%32 == 0 {
			scoresGGMLZ(&wh[0], &K[0], &qh[0], hd, keys)
		} else {
			for i := range wh {
				wh[i] = dotGGML(K[i*hd:(i+1)*hd], qh)
			}
		}
		softmaxGGML(wh, mask, scale)
		if useSiLUZ && hd%16 == 0 {
			lanes := 32
			if p.n > 1 {
				lanes = 8
			}
			kqvLanesZ(&o[0], &V[0], &wh[0], hd, keys, lanes)
		} else {
			kqvGGML(o, V, wh, hd, keys, p.n > 1)
		}
	}
	if p.inside != nil { // a decode step (ggmlAttends)
		p.keepAttention(j.l, r, g*rep, 0, w, keys)
	}
}

// kqvGGML writes out[d] = Σ_j v[j·hd + d]·w[j] (j < keys) as llama.cpp
// sums KQ·V over its cache, whose length it pads to a multiple of 32 with
// keys of weight 0 (terms that change no sum): for a decode step
// (prompt false) ggml_vec_dot_f32's lanes (dotGGML: term j in lane j mod
// 32), for a prompt of two tokens or more tinyBLAS's (llamafile_sgemm:
// term j in lane j mod 8 of one accumulator, reduced by tensor.HSum8).
func kqvGGML(out, v, w []float32, hd, keys int, prompt bool) {
	for dd := range out {
		var r float32
		if prompt {
			var lanes [8]float32
			for j := 0; j < keys; j++ {
				lanes[j%8] = tensor.FMA32(v[j*hd+dd], w[j], lanes[j%8])
			}
			r = tensor.HSum8(&lanes)
		} else {
			var acc [32]float32
			for j := 0; j < keys; j++ {
				acc[j%32] = tensor.FMA32(v[j*hd+dd], w[j], acc[j%32])
			}
			r = reduce32(&acc)
		}
		out[dd] = r
	}
}

// softmaxGGML turns the raw scores w (keys) into attention weights as
// ggml_soft_max_f32 of the AVX2 build does: w·scale plus the mask (0, or
// -Inf where masked), the maximum, exp(w - max) by ggml_v_expf
// (expGGML) in groups of eight whose sums (tensor.HSum8) are added in float64,
// and every weight times float32(1/sum). llama.cpp's row is padded to a
// multiple of 32 keys, masked: whole groups, whose padding adds 0.
func softmaxGGML(w []float32, mask []bool, scale float32) {
	mx := float32(math.Inf(-1))
	for j := range w {
		if !mask[j] {
			w[j] = float32(math.Inf(-1))
			continue
		}
		w[j] = w[j]*scale + 0
		if !(mx > w[j]) {
			mx = w[j]
		}
	}
	full := 0
	var sum float64
	if useSiLUZ && len(w) >= 16 {
		full = len(w) / 16 * 16
		sum = expSumZ(&w[0], &w[0], mx, full)
	}
	for c := full; c < len(w); c += 8 {
		var lanes [8]float32
		for ln := 0; ln < 8 && c+ln < len(w); ln++ {
			w[c+ln] = expGGML(w[c+ln] - mx)
			lanes[ln] = w[c+ln]
		}
		sum += float64(tensor.HSum8(&lanes))
	}
	s := float32(1 / sum)
	for j := range w {
		w[j] *= s
	}
}
