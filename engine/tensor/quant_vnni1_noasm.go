//go:build !amd64 || purego

package tensor

// The Q5_1, Q4_1 and IQ4_NL VNNI kernels' signatures, never called here:
// quant_matmul.go tests useVNNI first.

func dotQuadsQ5_1VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xs *float32, xq *int8, n int, quads int) {
	panic("no asm")
}
func dotQuadsQ4_1VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xs *float32, xq *int8, n int, quads int) {
	panic("no asm")
}
func dotQuadsIQ4NLVNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuadsPackedQ5_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, quads int) {
	panic("no asm")
}
func dotQuadsPackedQ4_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, quads int) {
	panic("no asm")
}
func dotQuads2PackedQ5_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, pairs int) {
	panic("no asm")
}
func dotQuads2PackedQ4_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, pairs int) {
	panic("no asm")
}
func dotQuadsPackedIQ4NLVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int) {
	panic("no asm")
}
func dotQuads2PackedIQ4NLVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int) {
	panic("no asm")
}
func quantQ8_1Z(x *float32, qs *int8, d *float32, s *float32, blocks int) { panic("no asm") }
