package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkQuantMatVec is a decode step's product (one row of x) with
// quantized weights of SmolLM2-135M's shapes; SetBytes counts the blocks
// read, so the result reads as GB/s of weights.
func BenchmarkQuantMatVec(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, dt := range []DType{Q8_0, Q4_0, Q4_K, Q6_K} {
		for _, sh := range [][2]int{{1536, 576}, {576, 1536}, {49152, 576}} {
			rows, cols := sh[0], sh[1]
			if dt.Block(); cols%256 != 0 && dt != Q8_0 && dt != Q4_0 {
				cols = cols / 256 * 256
			}
			b.Run(fmt.Sprintf("%s/%dx%d", dt, rows, cols), func(b *testing.B) {
				m, err := NewQuantMatrix(randomBlocks(r, dt, rows, cols), dt, rows, cols)
				if err != nil {
					b.Fatal(err)
				}
				x := make([]float32, cols)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				dst := make([]float32, rows)
				b.SetBytes(m.Bytes())
				b.ReportAllocs()
				for b.Loop() {
					MatMul(dst, m, x)
				}
			})
		}
	}
}
