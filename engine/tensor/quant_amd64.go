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

// dotQ4KInts writes out[b] = Σ_sub sc[8b+sub]·Σ q·x for n Q4_K blocks at
// w (q the 4-bit values, x the Q8_K activations), in AVX2.
//
//go:noescape
func dotQ4KInts(w *byte, sc *int16, xq *int8, out *int32, n int)

// dotQ6KAVX2 is dotQ6K in AVX2 (ggml's own AVX2 order, the same bits):
// n Q6_K blocks at w with their scales unpacked to sc (16 a block), the
// Q8_K activations' scales xd and values xq.
//
//go:noescape
func dotQ6KAVX2(w *byte, sc *int16, xd *float32, xq *int8, n int) float32
