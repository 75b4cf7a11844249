//go:build !amd64 || purego

package tensor

// useAVX512 is false: without the amd64 assembly there are no AVX-512
// kernels.
const useAVX512 = false

// The AVX-512 kernels' signatures, never called here (see
// kernels_noasm.go).

func dotRowsZF32(*float32, *float32, int, *float32, int, int, *sideLines)  { panic("no asm") }
func dotRowsZBF16(*float32, *uint16, int, *float32, int, int, *sideLines)  { panic("no asm") }
func dotRowsZF16(*float32, *uint16, int, *float32, int, int, *sideLines)   { panic("no asm") }
func dotRowsZXF32(*float32, *float32, int, *float32, int, int, *sideLines) { panic("no asm") }
func dotRowsZXBF16(*float32, *uint16, int, *float32, int, int, *sideLines) { panic("no asm") }
func dotRowsZXF16(*float32, *uint16, int, *float32, int, int, *sideLines)  { panic("no asm") }
func dotRows2ZF32(*float32, *float32, int, *float32, int, int, *sideLines) { panic("no asm") }
func dotRows2ZBF16(*float32, *uint16, int, *float32, int, int, *sideLines) { panic("no asm") }
func dotRows2ZF16(*float32, *uint16, int, *float32, int, int, *sideLines)  { panic("no asm") }
func dot8x3ZF32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int, acc *float32, mode int) {
	panic("no asm")
}
func dot4x3ZBF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int) {
	panic("no asm")
}
func dot4x3ZF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int) {
	panic("no asm")
}
func panel3x64ZF32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int) {
	panic("no asm")
}
func panel3x64ZBF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int) {
	panic("no asm")
}
func panel3x64ZF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int) {
	panic("no asm")
}
func panel6x64ZF32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int) {
	panic("no asm")
}
func panel6x64ZBF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int) {
	panic("no asm")
}
func panel6x64ZF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int) {
	panic("no asm")
}
func panel1x64ZF32(dst *float32, x *float32, w *float32, ldw int, in int) { panic("no asm") }
func panel1x64ZBF16(dst *float32, x *float32, w *uint16, ldw int, in int) { panic("no asm") }
func panel1x64ZF16(dst *float32, x *float32, w *uint16, ldw int, in int)  { panic("no asm") }
func expF64Z(dst, src *float64, n int)                                    { panic("no asm") }
func siluF32Z(dst, src *float32, n int)                                   { panic("no asm") }
func expRoundSumF32Z(dst, src *float32, n int, m, sum float32) float32    { panic("no asm") }
func sumExpZ(s *float32, n int, m float64, a, b *[8]float64)              { panic("no asm") }
func sumExpDotZ(s *float32, n int, m float64, a, b *[8]float64)           { panic("no asm") }
func mulUpperZF32(*float32, *float32, *float32, int)                      { panic("no asm") }
