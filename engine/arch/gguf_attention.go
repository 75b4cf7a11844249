package arch

import (
	"math"
	"slices"

	"tracer/engine/tensor"
)

// ropeCosSinGGML writes the rotary cosines and sines of position pos as
// ggml_rope_cache_init computes them: theta starts at pos and is
// multiplied by thetaScale (powf(base, -2/headDim)) pair after pair, in
// float32; cos and sin of each theta rounded to float32.
func ropeCosSinGGML(cos, sin []float32, thetaScale float32, pos int) {
	theta := float32(pos)
	for i := range cos {
		cos[i] = float32(math.Cos(float64(theta)))
		sin[i] = float32(math.Sin(float64(theta)))
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

// reduce16 adds sixteen lanes as GCC's _mm512_reduce_add_ps does.
func reduce16(x *[16]float32) float32 {
	var t [8]float32
	for l := range t {
		t[l] = x[l+8] + x[l]
	}
	u0, u1, u2, u3 := t[4]+t[0], t[5]+t[1], t[6]+t[2], t[7]+t[3]
	return (u0 + u2) + (u1 + u3)
}

// dotTiny is tinyBLAS's AVX-512 dot product (llamafile_sgemm): sixteen
// lanes, a fused multiply-add per 16 terms, the lanes reduced at the end.
func dotTiny(a, b []float32) float32 {
	var lanes [16]float32
	for l := range lanes {
		lanes[l] = a[l] * b[l]
	}
	for c := 16; c < len(a); c += 16 {
		for l := range lanes {
			lanes[l] = tensor.FMA32(a[c+l], b[c+l], lanes[l])
		}
	}
	return reduce16(&lanes)
}

// maxTinyHead is the largest head attendGGML takes: its lane sums live on
// the stack.
const maxTinyHead = 256

// attendGGML is the attention of a pass in llama.cpp's float order for a
// GGUF file, each new token against its own keys (the cache's and the new
// ones up to itself): the scores q·k by tinyBLAS's sums (dotTiny:
// llamafile_sgemm runs K·q), ggml_soft_max_f32 (softmaxGGML), and the
// weighted sum of the values by tinyBLAS's sums again (kqvTinyGo). A
// prompt goes token by token in the order a decode step does: llama.cpp's
// batched K·Q and KQ·V sum each output as its one-token products do. (The
// engine's tiled prefill attention sums otherwise; on quant-zoo's Q4_1
// file its ulps moved eight of sixteen steps after a 12-token prompt by
// 0.08 to 0.32 in log-probability, against one now.) Token by token costs
// time: a Q8_0 prompt at SmolLM2-135M's shape took 15 % (64 tokens) to
// 26 % (512) longer than with the tiled attention; a tiled kernel that
// keeps tinyBLAS's lanes per output would win it back. It reports false, and
// does nothing, for heads of other than a multiple of 16 up to
// maxTinyHead dims, a token with every key masked, or a prefill that looks
// inside: p.attend does those.
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

// ggmlAttends reports whether attendGGML takes the pass: heads of a
// multiple of 16 up to maxTinyHead dims, every new token with a key to
// attend to, and no prefill that looks inside.
func (p *pass) ggmlAttends() bool {
	hd := p.m.d.headDim
	if p.n > 1 && p.inside != nil || hd%16 != 0 || hd > maxTinyHead {
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
		if useSiLUZ {
			scoresTinyZ(&wh[0], &K[0], &qh[0], hd, keys)
		} else {
			for i := range wh {
				wh[i] = dotTiny(K[i*hd:(i+1)*hd], qh)
			}
		}
		softmaxGGML(wh, mask, scale)
		if useSiLUZ {
			kqvTinyZ(&o[0], &V[0], &wh[0], hd, keys)
		} else {
			kqvTinyGo(o, V, wh, hd, keys)
		}
	}
	if p.inside != nil { // a decode step (ggmlAttends)
		p.keepAttention(j.l, r, g*rep, 0, w, keys)
	}
}

// kqvTinyGo writes out[d] = Σ_j v[j·hd + d]·w[j] (j < keys) as tinyBLAS
// sums it: lane l takes j ≡ l (mod 16), its first term a product and the
// others fused multiply-adds, and the lanes are added by reduce16.
func kqvTinyGo(out, v, w []float32, hd, keys int) {
	for dd := range out {
		var lanes [16]float32
		for j := 0; j < keys; j++ {
			if j < 16 {
				lanes[j] = v[j*hd+dd] * w[j]
			} else {
				lanes[j%16] = tensor.FMA32(v[j*hd+dd], w[j], lanes[j%16])
			}
		}
		out[dd] = reduce16(&lanes)
	}
}

// softmaxGGML turns the raw scores w (keys) into attention weights as
// ggml_soft_max_f32 does: w·scale plus the mask (0, or -Inf where masked),
// the maximum, exp(w - max) by ggml_v_expf in groups of 16 whose sums
// (reduce16) are added in float64, and every weight times float32(1/sum).
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
	if useSiLUZ && len(w) >= 16 {
		full = len(w) / 16 * 16
		expSubZ(&w[0], &w[0], mx, full)
	}
	var sum float64
	for c := 0; c < len(w); c += 16 {
		var lanes [16]float32
		for ln := 0; ln < 16 && c+ln < len(w); ln++ {
			if c+ln >= full {
				w[c+ln] = expGGML(w[c+ln] - mx)
			}
			lanes[ln] = w[c+ln]
		}
		sum += float64(reduce16(&lanes))
	}
	s := float32(1 / sum)
	for j := range w {
		w[j] *= s
	}
}
