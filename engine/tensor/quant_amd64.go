//go:build amd64 && !purego

package tensor

// dotQ8_0AVX2 is dotQ8_0 over n blocks of the row at w against Q8_0
// activations (scales xd, values xq), in AVX2 (quant_amd64.s).
//
//go:noescape
func dotQ8_0AVX2(w *byte, xd *float32, xq *int8, n int) float32

// dotQ4_0AVX2 is dotQ4_0 in AVX2.
//
//go:noescape
func dotQ4_0AVX2(w *byte, xd *float32, xq *int8, n int) float32

// dotQ4_0BlocksAVX2 is dotQ4_0Blocks in AVX2.
//
//go:noescape
func dotQ4_0BlocksAVX2(w *byte, xd *float32, xq *int8, n int) float32

// dotQ4KAVX2 writes dst[r] for r < rows: dotQ4K in AVX2 (ggml's own AVX2
// order, the same bits) of the row of n Q4_K blocks at w+r·rb, with the
// Q8_K activations' sums over each 32 values s32 (8 a block), their
// scales xd and values xq.
//
//go:noescape
func dotQ4KAVX2(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)

// dotQ5KAVX2 is dotQ4KAVX2 for Q5_K rows (dotQ5K's bits).
//
//go:noescape
func dotQ5KAVX2(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)

// dotQ6KAVX2 writes dst[r] for r < rows: dotQ6K in AVX2 (ggml's own AVX2
// order, the same bits) of the row of n Q6_K blocks at w+r·rb, with the
// Q8_K activations' scales xd and values xq.
//
//go:noescape
func dotQ6KAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)

// dotQ2KAVX2 writes dst[r] for r < rows: dotQ2K in AVX2 (ggml's own AVX2
// order, the same bits) of the row of n Q2_K blocks at w+r·rb, with the
// Q8_K activations' sums over each 16 values bsums (16 a block), their
// scales xd and values xq (quant_k23_amd64.s).
//
//go:noescape
func dotQ2KAVX2(dst *float32, w *byte, rb int, rows int, bsums *int32, xd *float32, xq *int8, n int)

// dotQ3KAVX2 writes dst[r] for r < rows: dotQ3K in AVX2 (the same bits)
// of the row of n Q3_K blocks at w+r·rb, with the Q8_K activations'
// scales xd and values xq.
//
//go:noescape
func dotQ3KAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)

// dotIQ4XSAVX2 writes dst[r] for r < rows: dotIQ4XS in AVX2 (the same
// bits) of the row of n IQ4_XS blocks at w+r·rb, with the Q8_K
// activations' scales xd and values xq (quant_iq4xs_amd64.s).
//
//go:noescape
func dotIQ4XSAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
