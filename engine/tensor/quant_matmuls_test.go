package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMulsSharesRounding: MatMuls gives every product MatMul's bits
// and rounds x once for each run of weights that round it the same way
// (the review of issue 19: q, k and v each rounded the same input).
func TestMatMulsSharesRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 19))
	weight := func(dt DType, rows, cols int) Matrix {
		t.Helper()
		if dt.Quantized() {
			m, err := NewQuantMatrix(randomBlocks(r, dt, rows, cols), dt, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		b := make([]byte, rows*cols*dt.Size())
		for i := 0; i < rows*cols; i++ {
			v := float32(r.NormFloat64() * 0.05)
			if dt == F16 {
				binary.LittleEndian.PutUint16(b[2*i:], F32ToF16(v))
			} else {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
			}
		}
		m, err := NewMatrix(b, dt, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		if dt == F16 {
			m = m.RoundF16()
		}
		return m
	}
	for _, c := range []struct {
		name       string
		dtypes     []DType
		cols       int
		wantRounds int
	}{
		{"q8_0 q k v", []DType{Q8_0, Q8_0, Q8_0}, 64, 1},
		{"q4_0 gate up", []DType{Q4_0, Q4_0}, 64, 1},
		{"k-quants mixed", []DType{Q4_K, Q6_K, Q5_K}, 256, 1},
		{"f16", []DType{F16, F16, F16}, 64, 1},
		{"q8_0 then q4_0", []DType{Q8_0, Q4_0}, 64, 2},
		{"q8_0 q4_0 q8_0", []DType{Q8_0, Q4_0, Q8_0}, 64, 3},
		{"f32 between q8_0", []DType{Q8_0, F32, Q8_0}, 64, 1},
		{"f32 only", []DType{F32, F32}, 64, 0},
		{"q5_0 iq4_nl q8_0 (q8_0 blocks)", []DType{Q5_0, IQ4_NL, Q8_0}, 64, 1},
		{"q4_1 q5_1 (q8_1 blocks)", []DType{Q4_1, Q5_1, Q5_1}, 64, 1},
		{"q5_0 q5_0 q5_1 (kmix q4_k_s)", []DType{Q5_0, Q5_0, Q5_1}, 64, 2},
		{"q8_0 then q4_1", []DType{Q8_0, Q4_1}, 64, 2},
		{"q2_k q3_k iq4_xs q4_k (q8_k blocks)", []DType{Q2_K, Q3_K, IQ4_XS, Q4_K}, 256, 1},
	} {
		for _, n := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(t *testing.T) {
				prods := make([]Product, len(c.dtypes))
				want := make([][]float32, len(c.dtypes))
				x := make([]float32, n*c.cols)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				for i, dt := range c.dtypes {
					w := weight(dt, 32+16*i, c.cols)
					want[i] = make([]float32, n*w.Rows)
					MatMul(want[i], w, x)
					prods[i] = Product{Dst: make([]float32, n*w.Rows), W: w}
				}
				for _, workers := range []int{0, 1, 2} { // 0: a nil pool
					var p *Pool
					if workers > 0 {
						p = NewPool(workers)
						defer p.Close()
					}
					for i := range prods {
						clear(prods[i].Dst)
					}
					p.MatMuls(x, prods...)
					for i, pr := range prods {
						for j := range pr.Dst {
							if math.Float32bits(pr.Dst[j]) != math.Float32bits(want[i][j]) {
								t.Fatalf("%d workers, product %d (%s), output %d: got %v, want %v (MatMul)", workers, i, c.dtypes[i], j, pr.Dst[j], want[i][j])
							}
						}
					}
					if p != nil {
						if got := p.qa.rounds; got != c.wantRounds {
							t.Errorf("%d workers: got %d roundings of x, want %d", workers, got, c.wantRounds)
						}
					}
				}
			})
		}
	}
}

// FuzzMatMuls runs MatMuls over a fuzzed list of up to five weights of
// any type (quantized, F16 rounding its input, F32), each with random
// blocks, against activations from fuzzed bytes (NaN and infinities
// included), on one or two rows of x. Property: no panic, and every
// product has MatMul's bits, however the roundings are shared.
func FuzzMatMuls(f *testing.F) {
	f.Add([]byte{0, 0, 0}, uint64(1), []byte{1, 2, 3}, false)
	f.Add([]byte{0, 1, 0, 7}, uint64(2), []byte{0x00, 0x00, 0x80, 0x7f}, true)
	f.Add([]byte{2, 4, 3, 5, 5}, uint64(3), []byte{0xff, 0xff, 0xff, 0x7f}, false)
	dtypes := []DType{Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, F16, F32, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, IQ4_XS}
	f.Fuzz(func(t *testing.T, kinds []byte, seed uint64, raw []byte, two bool) {
		const cols = 256
		if len(kinds) > 5 {
			kinds = kinds[:5]
		}
		r := rand.New(rand.NewPCG(seed, 19))
		n := 1
		if two {
			n = 2
		}
		x := make([]float32, n*cols)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for i := 0; i+4 <= len(raw) && i/4 < len(x); i += 4 {
			x[(i/4*37)%len(x)] = math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))
		}
		var prods []Product
		var want [][]float32
		for i, k := range kinds {
			dt, rows := dtypes[int(k)%len(dtypes)], 3+i
			var w Matrix
			var err error
			switch dt {
			case F16, F32:
				b := make([]byte, rows*cols*dt.Size())
				for j := range b {
					b[j] = byte(r.Uint32())
				}
				if w, err = NewMatrix(b, dt, rows, cols); dt == F16 {
					w = w.RoundF16()
				}
			default:
				w, err = NewQuantMatrix(randomBlocks(r, dt, rows, cols), dt, rows, cols)
			}
			if err != nil {
				t.Fatal(err)
			}
			wd := make([]float32, n*rows)
			MatMul(wd, w, x)
			want = append(want, wd)
			prods = append(prods, Product{Dst: make([]float32, n*rows), W: w})
		}
		p := NewPool(2)
		defer p.Close()
		p.MatMuls(x, prods...)
		for i, pr := range prods {
			for j, v := range pr.Dst {
				if math.Float32bits(v) != math.Float32bits(want[i][j]) && !(v != v && want[i][j] != want[i][j]) {
					t.Errorf("product %d (%s), output %d: got %v, want %v (MatMul)", i, pr.W.DType, j, v, want[i][j])
				}
			}
		}
	})
}

// TestMatMulsPanics: a product whose shapes do not fit x is a programmer
// bug, as for MatMul.
func TestMatMulsPanics(t *testing.T) {
	w := F32Matrix(make([]float32, 8*16), 8, 16)
	for _, c := range []struct {
		name string
		dst  []float32
		x    []float32
	}{
		{"x not whole rows", make([]float32, 8), make([]float32, 15)},
		{"dst of the wrong size", make([]float32, 7), make([]float32, 16)},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("MatMuls with x of %d and dst of %d for a (8, 16) weight: got no panic, want one", len(c.x), len(c.dst))
				}
			}()
			(*Pool)(nil).MatMuls(c.x, Product{Dst: c.dst, W: w})
		})
	}
}

// BenchmarkMatMulsQKV is a decode step's q, k and v products of
// SmolLM2-135M in Q8_0, as three MatMul calls and as one MatMuls: SetBytes
// counts the weights read.
func BenchmarkMatMulsQKV(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	var prods []Product
	var bytes int64
	for _, rows := range []int{576, 192, 192} {
		w, err := NewQuantMatrix(randomBlocks(r, Q8_0, rows, 576), Q8_0, rows, 576)
		if err != nil {
			b.Fatal(err)
		}
		prods = append(prods, Product{Dst: make([]float32, rows), W: w})
		bytes += w.Bytes()
	}
	x := make([]float32, 576)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	p := NewPool(1)
	defer p.Close()
	b.Run("MatMul", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		for b.Loop() {
			for _, pr := range prods {
				p.MatMul(pr.Dst, pr.W, x)
			}
		}
	})
	b.Run("MatMuls", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		for b.Loop() {
			p.MatMuls(x, prods...)
		}
	})
}
