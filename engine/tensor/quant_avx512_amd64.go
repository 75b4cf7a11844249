//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

// useVNNI reports whether the AVX-512 VNNI kernels of quant_avx512_amd64.s
// run on this machine: VPDPBUSD (AVX512_VNNI) on ymm registers (VL), with
// the sixteen extra registers of AVX-512 and the 16-bit shifts, byte
// masks and 64-bit mask registers of BW. They compute the bits of the
// AVX2 kernels (of dotQ5_0 for Q5_0 rows).
var useVNNI = useAVX512 && cpu.X86.HasAVX512VNNI

// dotQuadsQ8_0VNNI writes, for p < quads and j < 4, dst[p+j·h]: the dot
// products (dotQ8_0AVX2's bits) of the Q8_0 rows at w+(p+j·h)·rb, rb
// bytes a row in ggml's layout, with n blocks of Q8_0 activations: xd
// their scales, xv their values and lane offsets laid out by qActs.vnni.
// h may be 0: one row, computed four times.
//
//go:noescape
func dotQuadsQ8_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)

// dotQuadsQ4_0VNNI is dotQuadsQ8_0VNNI for Q4_0 rows (dotQ4_0AVX2's bits).
//
//go:noescape
func dotQuadsQ4_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)

// dotQuadsPackedQ8_0VNNI writes, for p < quads and j < 4, dst[4p+j]: the
// dot products (dotQ8_0AVX2's bits) of row j of the p-th quad of rows in
// the packed layout (quant.go) from w, with n blocks of Q8_0 activations
// as dotQuadsQ8_0VNNI takes them.
//
//go:noescape
func dotQuadsPackedQ8_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)

// dotQuadsPackedQ4_0VNNI is dotQuadsPackedQ8_0VNNI for Q4_0 rows
// (dotQ4_0AVX2's bits).
//
//go:noescape
func dotQuadsPackedQ4_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)

// dotQuadsPackedQ4_0BVNNI is dotQuadsPackedQ4_0VNNI for Q4_0 rows marked
// SumBlocks (dotQ4_0Blocks's bits).
//
//go:noescape
func dotQuadsPackedQ4_0BVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)

// quantQ8_0Z is quantizeQ8_0 and qActs.vnni for blocks of 32 values in
// AVX-512 (quant_avx512_amd64.s), shift 7 for Q8_0 weights, 3 for Q4_0:
// the same bits for finite x.
//
//go:noescape
func quantQ8_0Z(x *float32, qs *int8, d *float32, xv *byte, shift int, blocks int)

// dotQuads2PackedQ8_0VNNI is dotQuadsPackedQ8_0VNNI over 2·pairs quads in
// two streams: quads p and pairs+p together, for p < pairs (the same
// bits).
//
//go:noescape
func dotQuads2PackedQ8_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)

// dotQuads2PackedQ4_0VNNI is dotQuads2PackedQ8_0VNNI for Q4_0 rows.
//
//go:noescape
func dotQuads2PackedQ4_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)

// dotQuads2PackedQ4_0BVNNI is dotQuads2PackedQ4_0VNNI for Q4_0 rows
// marked SumBlocks (dotQ4_0Blocks's bits).
//
//go:noescape
func dotQuads2PackedQ4_0BVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)

// dotQuadsQ5_0VNNI is dotQuadsQ8_0VNNI for Q5_0 rows (dotQ5_0's bits),
// with the activations rounded as for Q8_0 weights (lane offsets of
// shift 7).
//
//go:noescape
func dotQuadsQ5_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)

// dotQuadsPackedQ5_0VNNI is dotQuadsPackedQ8_0VNNI for Q5_0 rows in their
// packed layout (quant.go; dotQ5_0's bits).
//
//go:noescape
func dotQuadsPackedQ5_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)

// dotQuads2PackedQ5_0VNNI is dotQuads2PackedQ8_0VNNI for Q5_0 rows.
//
//go:noescape
func dotQuads2PackedQ5_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)

// dotQ4KAVX512 is dotQ4KAVX2 in AVX-512 (quant_k512_amd64.s): the same
// integers and float sequence, the same bits, in half the vector
// instructions.
//
//go:noescape
func dotQ4KAVX512(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)

// dotQ6KAVX512 is dotQ6KAVX2 in AVX-512 (quant_k512_amd64.s): the same
// integers and float sequence, the same bits, in half the vector
// instructions.
//
//go:noescape
func dotQ6KAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)

// dotQ5KAVX512 is dotQ5KAVX2 in AVX-512 (quant_k512_amd64.s): the same
// integers and float sequence, the same bits.
//
//go:noescape
func dotQ5KAVX512(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)

// dotIQ4XSAVX512 is dotIQ4XSAVX2 in AVX-512 (quant_iq4xs_amd64.s): the
// same integers and float sequence, the same bits.
//
//go:noescape
func dotIQ4XSAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)

// dotQ2KAVX512 is dotQ2KAVX2 in AVX-512 (quant_k23z_amd64.s): two runs of
// 32 values a register against 64 contiguous activations, their sixteen
// int32 lanes added exactly into dotQ2KAVX2's eight at the block's end,
// and the same float sequence: the same bits.
//
//go:noescape
func dotQ2KAVX512(dst *float32, w *byte, rb int, rows int, bsums *int32, xd *float32, xq *int8, n int)

// dotQ3KAVX512 is dotQ3KAVX2 in AVX-512 (quant_k23z_amd64.s), two runs a
// register as dotQ2KAVX512: the same integers and float sequence, the
// same bits.
//
//go:noescape
func dotQ3KAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
