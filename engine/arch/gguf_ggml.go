package arch

import (
	"math"

	"tracer/engine/tensor"
)

// A GGUF file's products round their inputs to 8-bit blocks, so one input
// an ulp from a rounding boundary can round the other way and move a
// probability by a few 1e-2 (shared/models/SOURCE.md, k256 "Sensitivity").
// The llama architecture of a GGUF file whose products round their inputs
// (quantized or F16 weights) therefore computes those inputs as llama.cpp's
// CPU backend (build b4748, the reference's) computes them, operation by
// operation in float32: RMSNorm as ggml_compute_forward_rms_norm_f32 then
// ggml_mul; SiLU as ggml_vec_silu_f32 with the AVX-512 ggml_v_silu (its
// own expf) then ggml_mul; RoPE from ggml_rope_cache_init's angles; the
// attention, of a decode step and of a prompt, as tinyBLAS and
// ggml_soft_max_f32 sum it (gguf_attention.go). F32 GGUF files, Hugging Face and llama2.c
// checkpoints keep tensor.RMSNorm, tensor.SwiGLU and the engine's
// attention, which their golden files were made with.

// rmsNormGGML is ggml's RMSNorm times the weight:
//
//	sum := Σ float64(x[i]·x[i])      (each square rounded to float32)
//	mean := float32(sum / len(x))
//	scale := 1 / sqrtf(mean + eps)   (float32 operations)
//	dst[i] = (x[i]·scale)·w[i]
//
// dst may be x.
func rmsNormGGML(dst, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sq := v * v
		sum += float64(sq)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps))) // sqrt rounded once to float32, as sqrtf
	for i, v := range x {
		y := v * scale
		dst[i] = y * w[i]
	}
}

// swiGLUGGML is dst[i] = silu(gate[i])·up[i] with ggml's SiLU: blocks of
// 16 as ggml_v_silu, x/(1 + expGGML(-x)), and the rest (len % 16) as
// ggml_silu_f32 with the C library's expf (here float64 exp rounded).
// dst may be gate or up.
func swiGLUGGML(dst, gate, up []float32) {
	full := len(dst) / 16 * 16
	start := 0
	if useSiLUZ && full > 0 {
		swiGLUGGMLZ(&dst[0], &gate[0], &up[0], full)
		start = full
	}
	swiGLUGGMLGo(dst, gate, up, start)
}

// swiGLUGGMLGo is swiGLUGGML from index start on, in Go: the twin of
// swiGLUGGMLZ, and the tail of fewer than 16.
func swiGLUGGMLGo(dst, gate, up []float32, start int) {
	full := len(dst) / 16 * 16
	for i := start; i < len(dst); i++ {
		g := gate[i]
		var e float32
		if i < full {
			e = expGGML(0 - g)
		} else {
			e = float32(math.Exp(float64(-g)))
		}
		s := g / (1 + e)
		dst[i] = s * up[i]
	}
}

// expGGML is ggml_v_expf, the AVX-512 exp of ggml's SiLU and softmax,
// for one lane: n = round(x·log2 e), b = x - n·ln 2 in two fused steps, a
// degree-5 polynomial in b by fused multiply-adds, scaled by 2^n; |n| >
// 192 gives +Inf (n > 0) or 0.
func expGGML(x float32) float32 {
	const r = 0x1.8p23
	z := tensor.FMA32(x, 0x1.715476p+0, r)
	n := z - r
	b := tensor.FMA32(-n, 0x1.7f7d1cp-20, tensor.FMA32(-n, 0x1.62e4p-1, x))
	u := b * b
	j := tensor.FMA32(
		tensor.FMA32(tensor.FMA32(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, tensor.FMA32(0x1.555e66p-3, b, 0x1.fffdb6p-2)),
		u,
		tensor.FMA32(0x1.ffffecp-1, b, 1))
	if n > 192 || n < -192 || n != n {
		if n > 0 {
			return float32(math.Inf(1))
		}
		if n != n {
			return n
		}
		return 0
	}
	if n >= -125 && n <= 126 { // j·2^n is a normal float32: the scaling is exact
		return j * math.Float32frombits(uint32(int32(n)+127)<<23)
	}
	return float32(math.Ldexp(float64(j), int(n))) // VSCALEFPS: j·2^n rounded once
}
