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
// CPU backend computes them (build b4748 for x86 with AVX2, FMA and F16C,
// the reference server's), operation by operation in float32: RMSNorm as
// ggml_compute_forward_rms_norm_f32 then ggml_mul; SiLU as
// ggml_vec_silu_f32 with the AVX2 ggml_v_silu (its own expf) then
// ggml_mul; RoPE from ggml_rope_cache_init's angles, the C library's
// sinf and cosf (sincosfGlibc); the attention, of a decode step and of a
// prompt, as ggml_vec_dot_f32, tinyBLAS and ggml_soft_max_f32 sum it
// (gguf_attention.go); Q4_0 products in the order of the kernels for
// the matrices llama.cpp repacks (tensor's SumBlocks). Checked op by op
// against llama-server's own tensors (read from the running server with
// gdb): every intermediate of k256's Q4_0 file, three prompts and sixteen
// steps each, bit for bit. F32 GGUF files, Hugging Face and llama2.c
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

// swiGLUGGML is dst[i] = silu(gate[i])·up[i] with ggml's SiLU
// (ggml_vec_silu_f32 of the AVX2 build): blocks of 8 as ggml_v_silu, x/(1
// + expGGML(0 - x)), and the rest (len % 8) as ggml_silu_f32 with the C
// library's expf (here float64 exp rounded). dst may be gate or up.
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
// swiGLUGGMLZ, and the tail.
func swiGLUGGMLGo(dst, gate, up []float32, start int) {
	full := len(dst) / 8 * 8
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

// expGGML is ggml_v_expf of llama.cpp's AVX2 build (the reference
// server's), the exp of its SiLU and softmax, for one lane: n =
// round(x·log2 e), b = x - n·ln 2 in two fused steps, j = a polynomial in
// b without its constant 1, and the result k + k·j with k = 2^n built in
// the exponent bits. Where |n| > 126 that k would not be a float32: the
// result is (s2 + s2·j)·s1 with 2^n split over s1 and s2, and where |n| >
// 192, s1·s1 (+Inf for n > 0, 0 below). (The AVX-512 build adds the 1
// inside the polynomial and scales by VSCALEFPS: other bits in about one
// value in eight.)
func expGGML(x float32) float32 {
	const r = 0x1.8p23
	z := tensor.FMA32(x, 0x1.715476p+0, r)
	n := z - r
	b := tensor.FMA32(-n, 0x1.7f7d1cp-20, tensor.FMA32(-n, 0x1.62e4p-1, x))
	e := math.Float32bits(z) << 23
	k := math.Float32frombits(e + 0x3f800000)
	u := b * b
	j := tensor.FMA32(
		tensor.FMA32(tensor.FMA32(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, tensor.FMA32(0x1.555e66p-3, b, 0x1.fffdb6p-2)),
		u,
		0x1.ffffecp-1*b)
	an := float32(math.Abs(float64(n)))
	if !(an > 126) { // NaN too
		return tensor.FMA32(k, j, k)
	}
	var g uint32
	if n <= 0 {
		g = 0x82000000
	}
	s1 := math.Float32frombits(g + 0x7f000000)
	if an > 192 {
		return s1 * s1
	}
	s2 := math.Float32frombits(e - g)
	return tensor.FMA32(s2, j, s2) * s1
}
