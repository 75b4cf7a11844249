//go:build !amd64 || purego

package tensor

import "unsafe"

// useAsm is false: without the amd64 assembly every product runs the
// pure-Go loops of kernels.go.
const useAsm = false

// KernelName names the kernels in use: "avx512", "avx2+fma" or "go";
// here always "go".
func KernelName() string { return "go" }

// The assembly kernels' signatures, never called here: the dispatch in
// matmul.go is compiled on every platform and tests useAsm first.

func dotRowsF32(dst *float32, w *float32, ldw int, x *float32, k int, rows int) { panic("no asm") }
func dotRowsBF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int) { panic("no asm") }
func dotRowsF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)  { panic("no asm") }
func dot2x3F32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int) {
	panic("no asm")
}
func dot1x3BF16(dst *float32, ldd int, w *uint16, x *float32, ldx int, k int, groups int) {
	panic("no asm")
}
func dot1x3F16(dst *float32, ldd int, w *uint16, x *float32, ldx int, k int, groups int) {
	panic("no asm")
}
func axpyRowsF32(dst *float32, a *float32, w *float32, ldw int, rows int, m int) { panic("no asm") }
func axpyRowsBF16(dst *float32, a *float32, w *uint16, ldw int, rows int, m int) { panic("no asm") }
func axpyRowsF16(dst *float32, a *float32, w *uint16, ldw int, rows int, m int)  { panic("no asm") }
func panel6x16F32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int) {
	panic("no asm")
}
func panel6x16BF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int) {
	panic("no asm")
}
func panel6x16F16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int) {
	panic("no asm")
}
func expF64(dst, src *float64, n int)                                            { panic("no asm") }
func siluF32(dst, src *float32, n int)                                           { panic("no asm") }
func dotRows8F32(dst *float32, w *float32, ldw int, x *float32, k int, rows int) { panic("no asm") }
func dotRows8BF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int) { panic("no asm") }
func dotRows8F16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)  { panic("no asm") }
func dot4x3x8F32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int, blocks int) {
	panic("no asm")
}
func dot4x3x8BF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int, blocks int) {
	panic("no asm")
}
func dot4x3x8F16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int, blocks int) {
	panic("no asm")
}

func roundF16AVX(dst, src *float32, n int)                     { panic("no asm") }
func prefetchLines(p unsafe.Pointer, n int)                    { panic("no asm") }
func divMaxF32(w *float32, n int, d float32) float32           { panic("no asm") }
func roundSumF64(w *float32, e *float64, n int, s *[4]float64) { panic("no asm") }
func maxNaNF32(s *float32, n int) (float32, bool)              { panic("no asm") }
func countKeptF32(s *float32, n int) int                       { panic("no asm") }
func finiteRangeF32(s *float32, n int) (lo, hi float32)        { panic("no asm") }
func removeBelowF32(s *float32, n int, v float32)              { panic("no asm") }
func firstEqualF32(s *float32, n int, v float32) int           { panic("no asm") }
func firstAtLeastF32(s *float32, n int, v float32) int         { panic("no asm") }
func firstAbsAboveF32(s *float32, n int, v float32) int        { panic("no asm") }
func firstNotEqualF32(s *float32, n int, v float32) int        { panic("no asm") }
func countAboveF32(s *float32, n int, v float32) int           { panic("no asm") }
func countEqualF32(s *float32, n int, v float32) int           { panic("no asm") }
func sumSquaresF64(x *float32, n int, s *[8]float64)           { panic("no asm") }
func scaleMulF32(dst, x, w *float32, n int, r float32)         { panic("no asm") }
func divF32(w *float32, n int, d float32)                      { panic("no asm") }

func addF32(dst, a, b *float32, n int)             { panic("no asm") }
func mulF32(dst, a, b *float32, n int)             { panic("no asm") }
func rotateHalfF32(x, cos, sin *float32, half int) { panic("no asm") }
