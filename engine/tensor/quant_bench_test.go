package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkQuantMatVec is a decode step's product (one row of x) with
// quantized weights on one thread, through a Pool as the engine calls it
// (the rounded activations are reused, nothing is allocated per call).
// SetBytes counts the weight blocks read, so the result reads as GB/s of
// weights. The shapes are SmolLM2-135M's: 1536×576 (gate, up), 576×1536
// (down), 8192×576 (a matrix of 5 MB, past L2, in L3) and 49152×576 (the
// vocabulary, 30 MB of Q8_0, from memory); the K-quants cut the columns
// to a multiple of 256. Q8_0, Q4_0, Q5_0, Q5_1, Q4_1 and IQ4_NL run in
// ggml's layout and, where the VNNI kernels run, in the packed one a GGUF
// file's copy uses (without them Q5_0, Q5_1, Q4_1 and IQ4_NL run their
// pure-Go kernels). Where the VNNI kernels run, Q5_1, Q4_1 and IQ4_NL
// also run their pure-Go kernels ("go": the rows one at a time as
// quantJob.Run takes them without the VNNI kernels), for the ratio. Q2_K,
// Q3_K and IQ4_XS run their AVX2 kernels, as Q4_K, Q5_K and Q6_K do.
func BenchmarkQuantMatVec(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	p := NewPool(1)
	defer p.Close()
	for _, dt := range []DType{Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, IQ4_XS} {
		for _, sh := range [][2]int{{1536, 576}, {576, 1536}, {8192, 576}, {49152, 576}} {
			rows, cols := sh[0], sh[1]
			if elems, _ := dt.Block(); cols%elems != 0 {
				cols = cols / elems * elems
			}
			layouts := []string{"ggml"}
			if PackedLayout(dt) {
				layouts = append(layouts, "packed") // as a GGUF file's copy holds them
			}
			if useVNNI && (dt == Q5_1 || dt == Q4_1 || dt == IQ4_NL) {
				layouts = append(layouts, "go")
			}
			for _, layout := range layouts {
				b.Run(fmt.Sprintf("%s/%s/%dx%d", dt, layout, rows, cols), func(b *testing.B) {
					data := randomBlocks(r, dt, rows, cols)
					m, err := NewQuantMatrix(data, dt, rows, cols)
					if layout == "packed" {
						if err := PackQuantRows(data, data, dt, cols); err != nil {
							b.Fatal(err)
						}
						m, err = NewPackedQuantMatrix(data, dt, rows, cols)
					}
					if err != nil {
						b.Fatal(err)
					}
					x := make([]float32, cols)
					for i := range x {
						x[i] = float32(r.NormFloat64())
					}
					dst := make([]float32, rows)
					p.MatMul(dst, m, x) // grows the pool's activation buffers
					b.SetBytes(m.Bytes())
					b.ReportAllocs()
					if layout == "go" {
						var a qActs
						for b.Loop() {
							goMatVec(dst, m, x, &a)
						}
						return
					}
					for b.Loop() {
						p.MatMul(dst, m, x)
					}
				})
			}
		}
	}
}

// goMatVec is the product of the weights m with one row of x by the
// pure-Go kernels (quantJob.dotMore), rounding x into a as MatMul does.
func goMatVec(dst []float32, m Matrix, x []float32, a *qActs) {
	a.quantize(m.DType, x, 1, m.Cols)
	j := quantJob{dst: dst, w: m, a: a, n: 1}
	for i := range m.Rows {
		dst[i] = j.dotMore(m.quantRow(i), 0, a.qs[:m.Cols])
	}
}

// BenchmarkKKernels times the Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS
// kernels alone, AVX2 and AVX-512 (the same bits), on one thread over
// Llama-3.2-1B's shapes: 2048×2048 (q, o: 2.4 MB of Q4_K, in L3) and
// 8192×2048 (gate, up: 9.4 MB). SetBytes counts the weight blocks, so the
// results read as GB/s of weights; avx512 over avx2 in one run is the
// kernels' ratio.
func BenchmarkKKernels(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dt := range []DType{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS} {
		for _, sh := range [][2]int{{2048, 2048}, {8192, 2048}} {
			rows, cols := sh[0], sh[1]
			w := randomBlocks(r, dt, rows, cols)
			x := make([]float32, cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			var a qActs
			a.quantize(dt, x, 1, cols)
			dst := make([]float32, rows)
			for i, name := range []string{"avx2", "avx512"} {
				b.Run(fmt.Sprintf("%s/%s/%dx%d", dt, name, rows, cols), func(b *testing.B) {
					if !useAsm || i == 1 && !useAVX512 {
						b.Skip("not on this machine or build")
					}
					b.SetBytes(int64(len(w)))
					for b.Loop() {
						kKernels[dt][i](&dst[0], &w[0], len(w)/rows, rows, &a, 0, cols)
					}
				})
			}
		}
	}
}
