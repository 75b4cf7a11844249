//go:build amd64 && !purego

package tensor

// dotQuadsQ5_1VNNI writes, for p < quads and j < 4, dst[p+j·h]: the dot
// products (dotQ5_1's bits) of the Q5_1 rows at w+(p+j·h)·rb, rb bytes a
// row in ggml's layout, with n blocks of Q8_1 activations: xd their
// scales, xs their sums s, xq their values (quant_vnni1_amd64.s). h may
// be 0: one row, computed four times.
//
//go:noescape
func dotQuadsQ5_1VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xs *float32, xq *int8, n int, quads int)

// dotQuadsQ4_1VNNI is dotQuadsQ5_1VNNI for Q4_1 rows (dotQ4_1's bits).
//
//go:noescape
func dotQuadsQ4_1VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xs *float32, xq *int8, n int, quads int)

// dotQuadsIQ4NLVNNI is dotQuadsQ8_0VNNI for IQ4_NL rows (dotIQ4NL's
// bits), with the activations rounded as for Q8_0 weights (lane offsets
// of shift 7).
//
//go:noescape
func dotQuadsIQ4NLVNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)

// dotQuadsPackedQ5_1VNNI writes, for p < quads and j < 4, dst[4p+j]: the
// dot products (dotQ5_1's bits) of row j of the p-th quad of Q5_1 rows
// in the packed layout (quant_vnni1.go) from w, with n blocks of Q8_1
// activations as dotQuadsQ5_1VNNI takes them.
//
//go:noescape
func dotQuadsPackedQ5_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, quads int)

// dotQuadsPackedQ4_1VNNI is dotQuadsPackedQ5_1VNNI for Q4_1 rows
// (dotQ4_1's bits).
//
//go:noescape
func dotQuadsPackedQ4_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, quads int)

// dotQuads2PackedQ5_1VNNI is dotQuadsPackedQ5_1VNNI over 2·pairs quads
// in two streams: quads p and pairs+p together, for p < pairs (the same
// bits).
//
//go:noescape
func dotQuads2PackedQ5_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, pairs int)

// dotQuads2PackedQ4_1VNNI is dotQuads2PackedQ5_1VNNI for Q4_1 rows.
//
//go:noescape
func dotQuads2PackedQ4_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, pairs int)

// dotQuadsPackedIQ4NLVNNI is dotQuadsPackedQ4_0VNNI for IQ4_NL rows
// (dotIQ4NL's bits), in Q4_0's packed layout, with the activations rounded
// as for Q8_0 weights.
//
//go:noescape
func dotQuadsPackedIQ4NLVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)

// dotQuads2PackedIQ4NLVNNI is dotQuadsPackedIQ4NLVNNI over 2·pairs quads
// in two streams: quads p and pairs+p together, for p < pairs (the same
// bits).
//
//go:noescape
func dotQuads2PackedIQ4NLVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)

// quantQ8_1Z is quantizeQ8_1 for blocks of 32 values in AVX-512
// (quant_vnni1_amd64.s): the same values, scales and sums for finite x.
//
//go:noescape
func quantQ8_1Z(x *float32, qs *int8, d *float32, s *float32, blocks int)
