package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// exact returns, for every output of dst = x Wᵀ (transposed: x W), the sum
// in float64 and the sum of the absolute values of its terms, the scale of
// any float32 rounding error.
func exact(w Matrix, x []float32, transposed bool) (sum, abs []float64) {
	in, out := w.Cols, w.Rows
	if transposed {
		in, out = w.Rows, w.Cols
	}
	n := len(x) / in
	sum, abs = make([]float64, n*out), make([]float64, n*out)
	for t := 0; t < n; t++ {
		for o := 0; o < out; o++ {
			var s, a float64
			for j := 0; j < in; j++ {
				var wv float32
				if transposed {
					wv = w.At(j, o)
				} else {
					wv = w.At(o, j)
				}
				term := float64(wv) * float64(x[t*in+j])
				s += term
				a += math.Abs(term)
			}
			sum[t*out+o], abs[t*out+o] = s, a
		}
	}
	return sum, abs
}

// laneBound is the relative error bound (to the sum of |terms|) of a
// float32 sum of k terms in eight lanes plus three levels of lane adds.
func laneBound(k int) float64 { return float64((k+7)/8+4) * 0x1p-24 }

// seqBound is the bound of a float32 sum of k terms one after another.
func seqBound(k int) float64 { return float64(k+1) * 0x1p-24 }

// checkClose reports outputs farther from the exact sums than bound·abs.
func checkClose(t *testing.T, name string, got []float32, sum, abs []float64, bound float64) {
	t.Helper()
	bad := 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - sum[i]); d > bound*abs[i]+1e-30 || math.IsNaN(float64(got[i])) {
			if bad++; bad <= 3 {
				t.Errorf("%s: out[%d] = %v, exact %v (off by %.3g, bound %.3g)", name, i, got[i], sum[i], d, bound*abs[i])
			}
		}
	}
}

// checkEqual reports outputs that differ at all.
func checkEqual(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: out[%d] = %v, want %v exactly", name, i, got[i], want[i])
			return
		}
	}
}

// testMatMul checks every MatMul path for one shape against the exact sums,
// and the properties the model relies on: the pool computes exactly what
// the serial kernel does, and a row of x gets the same result alone (a
// decode step) as within a batch (prefill).
func testMatMul(t *testing.T, r *rand.Rand, dt DType, rows, cols, n int, pools []*Pool) {
	w, _ := randMatrix(r, dt, rows, cols)
	x := randVec(r, n*cols)
	sum, abs := exact(w, x, false)
	got := make([]float32, n*rows)

	matMulRef(got, w, x)
	checkClose(t, "matMulRef", got, sum, abs, seqBound(cols))
	clear(got)
	matMulRowsGo(got, w, x, n, 0, rows)
	checkClose(t, "pure Go", got, sum, abs, laneBound(cols))
	clear(got)
	MatMul(got, w, x)
	checkClose(t, "MatMul", got, sum, abs, laneBound(cols))

	for _, p := range pools {
		pgot := make([]float32, n*rows)
		p.MatMul(pgot, w, x)
		checkEqual(t, fmt.Sprintf("pool of %d", p.Workers()), pgot, got)
	}
	one := make([]float32, rows)
	for tok := 0; tok < n; tok++ {
		MatVec(one, w, x[tok*cols:(tok+1)*cols])
		checkEqual(t, fmt.Sprintf("row %d alone", tok), one, got[tok*rows:(tok+1)*rows])
	}
}

// testMatMulT is testMatMul for MatMulT.
func testMatMulT(t *testing.T, r *rand.Rand, dt DType, rows, cols, n int, pools []*Pool) {
	w, _ := randMatrix(r, dt, rows, cols)
	x := randVec(r, n*rows)
	sum, abs := exact(w, x, true)
	got := make([]float32, n*cols)

	matMulTRef(got, w, x)
	checkClose(t, "matMulTRef", got, sum, abs, seqBound(rows))
	clear(got)
	matMulTColsGo(got, w, x, n, 0, cols)
	checkClose(t, "pure Go", got, sum, abs, seqBound(rows))
	clear(got)
	MatMulT(got, w, x)
	checkClose(t, "MatMulT", got, sum, abs, seqBound(rows))

	for _, p := range pools {
		pgot := make([]float32, n*cols)
		p.MatMulT(pgot, w, x)
		checkEqual(t, fmt.Sprintf("pool of %d", p.Workers()), pgot, got)
	}
	one := make([]float32, cols)
	for tok := 0; tok < n; tok++ {
		MatMulT(one, w, x[tok*rows:(tok+1)*rows])
		checkEqual(t, fmt.Sprintf("row %d alone", tok), one, got[tok*cols:(tok+1)*cols])
	}
}

// shapes cover every kernel path: rows and columns on and off the
// kernels' multiples of 2, 8 and 16, and 1 to 13 rows of x (tiles of 3 and
// 6 with leftovers).
var shapes = []struct{ rows, cols, n int }{
	{1, 1, 1}, {7, 13, 1}, {3, 8, 2}, {4, 8, 1}, {8, 16, 3}, {64, 64, 3},
	{33, 200, 5}, {300, 97, 2}, {37, 72, 7}, {20, 40, 6}, {19, 48, 13},
	{48, 96, 12}, {5, 24, 4}, {96, 35, 9}, {33, 32, 7}, {7, 160, 2},
	{3, 16, 1}, {17, 64, 8}, {70, 48, 3}, {65, 80, 1},
}

func TestMatMulMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pools := []*Pool{NewPool(2), NewPool(3)}
	defer pools[0].Close()
	defer pools[1].Close()
	for _, dt := range []DType{F32, BF16, F16} {
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", dt, sh.rows, sh.cols, sh.n), func(t *testing.T) {
				testMatMul(t, r, dt, sh.rows, sh.cols, sh.n, pools)
				testMatMulT(t, r, dt, sh.rows, sh.cols, sh.n, pools)
			})
		}
	}
}

// fuzzShape turns fuzzer input into a small shape and a dtype.
func fuzzShape(rows, cols uint16, n, dtype uint8) (DType, int, int, int) {
	dt := []DType{F32, BF16, F16}[int(dtype)%3]
	return dt, 1 + int(rows)%160, 1 + int(cols)%300, 1 + int(n)%14
}

func FuzzMatVec(f *testing.F) {
	f.Add(uint16(576), uint16(575), uint8(0), uint8(0), uint64(1))
	f.Add(uint16(13), uint16(63), uint8(0), uint8(1), uint64(2))
	f.Add(uint16(99), uint16(7), uint8(0), uint8(2), uint64(3))
	f.Fuzz(func(t *testing.T, rows, cols uint16, _, dtype uint8, seed uint64) {
		dt, nr, nc, _ := fuzzShape(rows, cols, 0, dtype)
		testMatMul(t, rand.New(rand.NewPCG(seed, 9)), dt, nr, nc, 1, nil)
	})
}

func FuzzMatMul(f *testing.F) {
	f.Add(uint16(64), uint16(64), uint8(12), uint8(0), uint64(1))
	f.Add(uint16(17), uint16(128), uint8(7), uint8(1), uint64(2))
	f.Add(uint16(6), uint16(40), uint8(4), uint8(2), uint64(3))
	f.Fuzz(func(t *testing.T, rows, cols uint16, n, dtype uint8, seed uint64) {
		dt, nr, nc, nn := fuzzShape(rows, cols, n, dtype)
		testMatMul(t, rand.New(rand.NewPCG(seed, 9)), dt, nr, nc, nn, nil)
	})
}

func FuzzMatMulT(f *testing.F) {
	f.Add(uint16(64), uint16(96), uint8(12), uint8(0), uint64(1))
	f.Add(uint16(13), uint16(40), uint8(6), uint8(1), uint64(2))
	f.Add(uint16(7), uint16(33), uint8(1), uint8(2), uint64(3))
	f.Fuzz(func(t *testing.T, rows, cols uint16, n, dtype uint8, seed uint64) {
		dt, nr, nc, nn := fuzzShape(rows, cols, n, dtype)
		testMatMulT(t, rand.New(rand.NewPCG(seed, 9)), dt, nr, nc, nn, nil)
	})
}

// TestAsmMatchesGo checks, at the sizes of real models, that the assembly
// kernels and the pure-Go loops agree to rounding: the same lanes, summed
// in the same order, differing only by fused multiply-adds.
func TestAsmMatchesGo(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, dt := range []DType{F32, BF16, F16} {
		for _, sh := range [][2]int{{576, 576}, {192, 1536}, {768, 768}} {
			w, _ := randMatrix(r, dt, sh[0], sh[1])
			x := randVec(r, 4*sh[1])
			asm, pure := make([]float32, 4*sh[0]), make([]float32, 4*sh[0])
			MatMul(asm, w, x)
			matMulRowsGo(pure, w, x, 4, 0, sh[0])
			_, abs := exact(w, x, false)
			for i := range asm {
				if d := math.Abs(float64(asm[i] - pure[i])); d > 2*laneBound(sh[1])*abs[i] {
					t.Errorf("%s %v: out[%d]: asm %v, Go %v", dt, sh, i, asm[i], pure[i])
					break
				}
			}
		}
	}
}
