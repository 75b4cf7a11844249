//go:build !amd64 || purego

package tensor

// useVNNI is false: without the amd64 assembly there are no VNNI kernels.
const useVNNI = false

// The VNNI kernels' signatures, never called here: quant_matmul.go tests
// useVNNI first.

func dotQuadsQ8_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuadsQ4_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuadsPackedQ8_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuadsPackedQ4_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuads2PackedQ8_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int) {
	panic("no asm")
}
func dotQuads2PackedQ4_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int) {
	panic("no asm")
}
func dotQuadsPackedQ4_0BVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuads2PackedQ4_0BVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int) {
	panic("no asm")
}
func dotQuadsQ5_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuadsPackedQ5_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuads2PackedQ5_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int) {
	panic("no asm")
}

func quantQ8_0Z(x *float32, qs *int8, d *float32, xv *byte, shift int, blocks int) {
	panic("no asm")
}
func dotQ4KAVX512(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotQ6KAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotQ5KAVX512(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotIQ4XSAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotQ2KAVX512(dst *float32, w *byte, rb int, rows int, bsums *int32, xd *float32, xq *int8, n int) {
	panic("no asm")
}
func dotQ3KAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int) {
	panic("no asm")
}
