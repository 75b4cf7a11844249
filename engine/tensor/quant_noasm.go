//go:build !amd64 || purego

package tensor

// The assembly kernels' signatures, never called here: quant_matmul.go
// tests useAsm first.

func dotQ8_0AVX2(w *byte, xd *float32, xq *int8, n int) float32 { panic("no asm") }
func dotQ4_0AVX2(w *byte, xd *float32, xq *int8, n int) float32 { panic("no asm") }
func dotQ4_0BlocksAVX2(w *byte, xd *float32, xq *int8, n int) float32 {
	panic("no asm")
}
func dotQ4KAVX2(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotQ5KAVX2(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotQ6KAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotQ2KAVX2(dst *float32, w *byte, rb int, rows int, bsums *int32, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotQ3KAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotIQ4XSAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int) {
	panic("no asm")
}
