//go:build amd64 && !purego

package tensor

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAsm reports whether the AVX2 + FMA + F16C kernels of kernels_amd64.s
// run on this machine; without them the pure-Go loops of kernels.go do
// the same sums in the same order (without fused multiply-adds).
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpuidECX1()&(1<<29) != 0

// KernelName names the kernels in use: "avx512" (with the AVX2 kernels
// for short rows), "avx2+fma" or "go".
func KernelName() string {
	if useAVX512 {
		return "avx512"
	}
	if useAsm {
		return "avx2+fma"
	}
	return "go"
}

func cpuidECX1() uint32

// dotRows*: dst[r] = Σ_{j<k} w[r·ldw + j]·x[j] for r < rows, sixteen
// lanes (F32) or thirty-two (BF16, F16); k a positive multiple of 16.
//
//go:noescape
func dotRowsF32(dst *float32, w *float32, ldw int, x *float32, k int, rows int)

//go:noescape
func dotRowsBF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)

//go:noescape
func dotRowsF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)

// dotRows8*: dotRows* with eight lanes; k a positive multiple of 8.
//
//go:noescape
func dotRows8F32(dst *float32, w *float32, ldw int, x *float32, k int, rows int)

//go:noescape
func dotRows8BF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)

//go:noescape
func dotRows8F16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)

// dot4x3x8*: dst[(3g+t)·ldd + 4b + r] = Σ_{j<k} w[(4b+r)·ldw + j]·x[(3g+t)·ldx + j]
// for b < blocks, g < groups, t < 3, r < 4, eight lanes; k a positive
// multiple of 8, blocks ≥ 1.
//
//go:noescape
func dot4x3x8F32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int, blocks int)

//go:noescape
func dot4x3x8BF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int, blocks int)

//go:noescape
func dot4x3x8F16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int, blocks int)

// dot2x3F32: dst[(3g+t)·ldd + r] = Σ_{j<k} w[r·ldw + j]·x[(3g+t)·ldx + j]
// for g < groups, t < 3, r < 2, sixteen lanes; k a positive multiple of
// 16.
//
//go:noescape
func dot2x3F32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int)

// dot1x3*: dst[(3g+t)·ldd] = Σ_{j<k} w[j]·x[(3g+t)·ldx + j] for g <
// groups, t < 3, thirty-two lanes; k a positive multiple of 16.
//
//go:noescape
func dot1x3BF16(dst *float32, ldd int, w *uint16, x *float32, ldx int, k int, groups int)

//go:noescape
func dot1x3F16(dst *float32, ldd int, w *uint16, x *float32, ldx int, k int, groups int)

// axpyRows*: for i < rows in order, dst[o] += a[i]·w[i·ldw + o] for o < m, m
// a positive multiple of 8.
//
//go:noescape
func axpyRowsF32(dst *float32, a *float32, w *float32, ldw int, rows int, m int)

//go:noescape
func axpyRowsBF16(dst *float32, a *float32, w *uint16, ldw int, rows int, m int)

//go:noescape
func axpyRowsF16(dst *float32, a *float32, w *uint16, ldw int, rows int, m int)

// panel6x16*: dst[t·ldd + c] = Σ_{i<in} x[t·ldx + i]·w[i·ldw + c] for
// t < 6, c < 16; in ≥ 1.
//
//go:noescape
func panel6x16F32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int)

//go:noescape
func panel6x16BF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)

//go:noescape
func panel6x16F16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)

// expF64: dst[i] = exp(src[i]) for i < n, n a positive multiple of 4.
//
//go:noescape
func expF64(dst, src *float64, n int)

// siluF32: dst[i] = float32(x/(1+exp(-x))), x = float64(src[i]), for i < n,
// n a positive multiple of 4.
//
//go:noescape
func siluF32(dst, src *float32, n int)

// roundF16AVX: dst[i] = src[i] rounded to binary16 (to nearest even) and
// widened back, for i < n, n a positive multiple of 8: F16ToF32(F32ToF16)
// for every value but NaNs, whose payload it keeps.
//
//go:noescape
func roundF16AVX(dst, src *float32, n int)

// prefetchLines asks the caches for every 64-byte line of the n bytes at
// p (PREFETCHT0) without waiting for them; n ≥ 1.
//
//go:noescape
func prefetchLines(p unsafe.Pointer, n int)

// divMaxF32: w[j] /= d for j < n, n a positive multiple of 8; returns the
// largest quotient (VMAXPS: a NaN may win).
//
//go:noescape
func divMaxF32(w *float32, n int, d float32) float32

// maxNaNF32 is MaxNaN of s[:n], n a positive multiple of 32.
//
//go:noescape
func maxNaNF32(s *float32, n int) (max float32, nan bool)

// sumSquaresF64: s[j] += float64(x[i])² for i < n, i%8 == j; n a positive
// multiple of 8 (norm_amd64.s).
//
//go:noescape
func sumSquaresF64(x *float32, n int, s *[8]float64)

// scaleMulF32: dst[i] = w[i] * (x[i] * r) for i < n, n a positive multiple
// of 8.
//
//go:noescape
func scaleMulF32(dst, x, w *float32, n int, r float32)

// firstEqualF32, firstAtLeastF32 and firstNotEqualF32 return the start of
// the first block of 32 of s[:n] that holds a score == v, ≥ v, or != v
// (NaN included), or n; countAboveF32 and
// countEqualF32 count the scores of s[:n] > v, or == v (scores_amd64.s);
// n a positive multiple of 32.
//
//go:noescape
func firstEqualF32(s *float32, n int, v float32) int

//go:noescape
func firstAtLeastF32(s *float32, n int, v float32) int

// firstAbsAboveF32 returns the start of the first block of 32 of s[:n]
// that holds an |s[i]| > v (a NaN never is), or n; n a positive multiple of
// 32.
//
//go:noescape
func firstAbsAboveF32(s *float32, n int, v float32) int

//go:noescape
func firstNotEqualF32(s *float32, n int, v float32) int

//go:noescape
func countAboveF32(s *float32, n int, v float32) int

//go:noescape
func countEqualF32(s *float32, n int, v float32) int

// finiteRangeF32 is FiniteRange of s[:n], n a positive multiple of 8.
//
//go:noescape
func finiteRangeF32(s *float32, n int) (lo, hi float32)

// removeBelowF32 is RemoveBelow of s[:n], n a positive multiple of 8.
//
//go:noescape
func removeBelowF32(s *float32, n int, v float32)

// countKeptF32 is CountKept of s[:n], n a positive multiple of 32.
//
//go:noescape
func countKeptF32(s *float32, n int) int

// roundSumF64: w[j] = float32(e[j]), s[j%4] += float64(w[j]) for j < n, n
// a positive multiple of 4.
//
//go:noescape
func roundSumF64(w *float32, e *float64, n int, s *[4]float64)

// divF32: w[j] /= d for j < n, n a positive multiple of 8.
//
//go:noescape
func divF32(w *float32, n int, d float32)

// addF32 and mulF32: dst[i] = a[i] + b[i] (a[i]·b[i]) for i < n, n a
// positive multiple of 8. dst may be a or b.
//
//go:noescape
func addF32(dst, a, b *float32, n int)

//go:noescape
func mulF32(dst, a, b *float32, n int)

// rotateHalfF32 is RotateHalf of the 2·half floats at x, half a positive
// multiple of 8.
//
//go:noescape
func rotateHalfF32(x, cos, sin *float32, half int)
