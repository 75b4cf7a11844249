//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

// useAVX512 reports whether the AVX-512 kernels of kernels_avx512_amd64.s
// run on this machine (with the OS saving zmm registers, which x/sys/cpu
// checks): F for the arithmetic, BW for widening 16-bit weights, VL for
// the ymm halves of registers 16 to 31. They take long rows (Cols ≥
// wideRow); the AVX2 kernels, computing the same bits, do the rest.
var useAVX512 = useAsm && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL

// dotRowsZ*: dotRows* in AVX-512 (the same lanes, the same bits), one row
// per pass; k a positive multiple of 16. At the start of each row they ask
// the caches for side.per lines of side's memory (side may be nil; see
// sideLines).
//
//go:noescape
func dotRowsZF32(dst *float32, w *float32, ldw int, x *float32, k int, rows int, side *sideLines)

//go:noescape
func dotRowsZBF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)

//go:noescape
func dotRowsZF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)

// dotRowsZX*: dotRowsZ* with the first xRegTerms terms of x held in
// registers for the whole call (the same lanes, the same bits); k ≥
// xRegTerms, a multiple of 16.
//
//go:noescape
func dotRowsZXF32(dst *float32, w *float32, ldw int, x *float32, k int, rows int, side *sideLines)

//go:noescape
func dotRowsZXBF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)

//go:noescape
func dotRowsZXF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)

// dotRows2Z*: dotRowsZ* for rows r and pairs+r together, r < pairs, in two
// streams (the same lanes, the same bits); dst holds 2·pairs outputs. At
// the start of each pass they ask for side.per lines of side's memory
// (side may be nil).
//
//go:noescape
func dotRows2ZF32(dst *float32, w *float32, ldw int, x *float32, k int, pairs int, side *sideLines)

//go:noescape
func dotRows2ZBF16(dst *float32, w *uint16, ldw int, x *float32, k int, pairs int, side *sideLines)

//go:noescape
func dotRows2ZF16(dst *float32, w *uint16, ldw int, x *float32, k int, pairs int, side *sideLines)

// dot8x3ZF32: dst[(3g+t)·ldd + r] = Σ_{j<k} w[r·ldw + j]·x[(3g+t)·ldx + j]
// for g < groups, t < 3, r < 8, sixteen lanes; k a positive multiple of
// 16. A long row may be done in chunks of its terms, the lanes carried
// from one to the next in acc (1536 bytes a group): mode bit 0 starts
// each group's lanes from acc (else from zero), bit 1 leaves them there
// (else the sums go to dst).
//
//go:noescape
func dot8x3ZF32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int, acc *float32, mode int)

// dot4x3Z*: dst[(3g+t)·ldd + r] = Σ_{j<k} w[r·ldw + j]·x[(3g+t)·ldx + j]
// for g < groups, t < 3, r < 4, thirty-two lanes; k a positive multiple
// of 16.
//
//go:noescape
func dot4x3ZBF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int)

//go:noescape
func dot4x3ZF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int)

// panel6x64Z*: dst[t·ldd + c] = Σ_{i<in} x[t·ldx + i]·w[i·ldw + c] for
// t < 6, c < 64; in ≥ 1.
//
//go:noescape
func panel6x64ZF32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int)

//go:noescape
func panel6x64ZBF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)

//go:noescape
func panel6x64ZF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)

// panel3x64Z*: panel6x64Z* for three rows of x.
//
//go:noescape
func panel3x64ZF32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int)

//go:noescape
func panel3x64ZBF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)

//go:noescape
func panel3x64ZF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)

// panel1x64Z*: dst[c] = Σ_{i<in} x[i]·w[i·ldw + c] for c < 64, i in order
// from +0 (panel6x64Z* for one row of x); in ≥ 1.
//
//go:noescape
func panel1x64ZF32(dst *float32, x *float32, w *float32, ldw int, in int)

//go:noescape
func panel1x64ZBF16(dst *float32, x *float32, w *uint16, ldw int, in int)

//go:noescape
func panel1x64ZF16(dst *float32, x *float32, w *uint16, ldw int, in int)

// expF64Z and siluF32Z: expF64 and siluF32 (exp_amd64.s) in eight lanes,
// the same bits; n a positive multiple of 8.
//
//go:noescape
func expF64Z(dst, src *float64, n int)

//go:noescape
func siluF32Z(dst, src *float32, n int)

// expRoundSumF32Z: dst[i] = float32(exp(float64(src[i] - m))) for i < n,
// n a positive multiple of 8, and sum + Σ dst[i] added in order in float32
// (exp_amd64.s).
//
//go:noescape
func expRoundSumF32Z(dst, src *float32, n int, m, sum float32) float32

// sumExpZ and sumExpDotZ: SumExp's loop (sumExpGo) over s[:n], n a
// positive multiple of 8, eight scores at a time, adding to the partial
// sums a and (Dot) b (exp_amd64.s).
//
//go:noescape
func sumExpZ(s *float32, n int, m float64, a, b *[8]float64)

//go:noescape
func sumExpDotZ(s *float32, n int, m float64, a, b *[8]float64)

// mulUpperZF32: MulUpper's product for n = 16·bands, bands ≤ 8: dst[i] =
// Σ_j a[j]·r[col(j) + i], j in order, for i < 16·bands, the outputs in
// bands registers.
//
//go:noescape
func mulUpperZF32(dst *float32, a *float32, r *float32, bands int)
