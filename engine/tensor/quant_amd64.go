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
