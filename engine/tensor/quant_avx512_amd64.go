//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

// useVNNI reports whether the AVX-512 VNNI kernels of quant_avx512_amd64.s
// run on this machine: VPDPBUSD (AVX512_VNNI) on zmm registers, with the
// 16-bit shifts and masks of BW and the ymm forms of VL. They compute the
// bits of the AVX2 kernels.
var useVNNI = useAVX512 && cpu.X86.HasAVX512VNNI

// dotPairsQ8_0VNNI writes, for p < pairs, dst[p] and dst[p+h]: the dot
// products (dotQ8_0AVX2's bits) of the Q8_0 rows at w+p·rb and
// w+(p+h)·rb, rb bytes a row, with n blocks of Q8_0 activations: xd their
// scales, xv the values and lane offsets laid out by qActs.vnni.
// h may be 0: one row, computed twice.
//
//go:noescape
func dotPairsQ8_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, pairs int)

// dotPairsQ4_0VNNI is dotPairsQ8_0VNNI for Q4_0 rows (dotQ4_0AVX2's bits).
//
//go:noescape
func dotPairsQ4_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, pairs int)

// dotQuadsQ8_0VNNI writes, for p < quads and j < 4, dst[p+j·h]: the dot
// products (dotQ8_0AVX2's bits) of the Q8_0 rows at w+(p+j·h)·rb, as
// dotPairsQ8_0VNNI does for two rows.
//
//go:noescape
func dotQuadsQ8_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)

// dotQuadsQ4_0VNNI is dotQuadsQ8_0VNNI for Q4_0 rows (dotQ4_0AVX2's bits).
//
//go:noescape
func dotQuadsQ4_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)

// quantQ8_0Z is quantizeQ8_0 and qActs.vnni for blocks of 32 values in
// AVX-512 (quant_avx512_amd64.s), shift 7 for Q8_0 weights, 3 for Q4_0:
// the same bits for finite x.
//
//go:noescape
func quantQ8_0Z(x *float32, qs *int8, d *float32, xv *byte, shift int, blocks int)
