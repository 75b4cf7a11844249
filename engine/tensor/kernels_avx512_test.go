package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// avx2Rows computes dst = x Wᵀ for long rows (Cols ≥ wideRow, a multiple
// of 16) with the AVX2 decode kernel, one row of x at a time: the twin the
// AVX-512 kernels must match bit for bit, since they keep the same lanes
// (sixteen for float32 weights, thirty-two for 16-bit ones) and add them
// in the same order.
func avx2Rows(dst []float32, w Matrix, x []float32, n int) {
	in, out := w.Cols, w.Rows
	for t := 0; t < n; t++ {
		d, xt := dst[t*out:(t+1)*out], x[t*in:(t+1)*in]
		switch w.DType {
		case F32:
			dotRowsF32(&d[0], &w.f32[0], in, &xt[0], in, out)
		case BF16:
			dotRowsBF16(&d[0], &w.u16[0], in, &xt[0], in, out)
		case F16:
			dotRowsF16(&d[0], &w.u16[0], in, &xt[0], in, out)
		}
	}
}

// testAVX512 checks the AVX-512 paths of one shape (long rows) against
// the AVX2 kernel, bit for bit, and against the exact sums within the
// lanes' rounding bound: the prefill tiles (matMulRowsZ over the whole
// output and over a split of the rows, as a pool cuts it) and the decode
// kernel (dotRowsZ through MatVec).
func testAVX512(t *testing.T, r *rand.Rand, dt DType, rows, cols, n int) {
	t.Helper()
	w, _ := randMatrix(r, dt, rows, cols)
	x := randVec(r, n*cols)
	want := make([]float32, n*rows)
	avx2Rows(want, w, x, n)

	got := make([]float32, n*rows)
	if n >= 6 {
		matMulRowsZ(got, w, x, n, 0, rows)
		checkEqual(t, "matMulRowsZ", got, want)
		clear(got)
		mid := rows / 3
		matMulRowsZ(got, w, x, n, mid, rows)
		matMulRowsZ(got, w, x, n, 0, mid)
		checkEqual(t, fmt.Sprintf("matMulRowsZ split at row %d", mid), got, want)
	}
	clear(got)
	MatMul(got, w, x)
	checkEqual(t, "MatMul", got, want)
	sum, abs := exact(w, x, false)
	checkClose(t, "MatMul", got, sum, abs, laneBound(cols))

	one := make([]float32, rows)
	for tok := 0; tok < n; tok++ {
		MatVec(one, w, x[tok*cols:(tok+1)*cols])
		checkEqual(t, fmt.Sprintf("MatVec of row %d", tok), one, want[tok*rows:(tok+1)*rows])
	}
}

// testAVX512T checks MatMulT's AVX-512 tiles for one shape (6 rows of x
// at a time, or one for fewer) against the AVX2 axpy kernel, bit for bit (both sum each output in
// the order of the weight rows, one FMA per term), and against the exact
// sums; and a split of the columns at a multiple of 16, as a pool cuts
// them, which leaves tiles of 16 beside those of 64.
func testAVX512T(t *testing.T, r *rand.Rand, dt DType, rows, cols, n int) {
	t.Helper()
	w, _ := randMatrix(r, dt, rows, cols)
	x := randVec(r, n*rows)
	want := make([]float32, n*cols)
	matMulTAxpyRows(want, w, x, 0, n, 0, cols)

	got := make([]float32, n*cols)
	MatMulT(got, w, x)
	checkEqual(t, "MatMulT", got, want)
	sum, abs := exact(w, x, true)
	checkClose(t, "MatMulT", got, sum, abs, seqBound(rows))
	clear(got)
	mid := cols / 3 / 16 * 16
	matMulTCols(got, w, x, n, mid, cols)
	matMulTCols(got, w, x, n, 0, mid)
	checkEqual(t, fmt.Sprintf("matMulTCols split at column %d", mid), got, want)
}

// TestAVX512MatMulTMatchesAVX2 covers MatMulT's AVX-512 tiles: columns in
// whole tiles of 64, with tiles of 16 and single columns left over, and
// rows of x on and off the tiles of six; and decode attention's value
// products, one to five rows of x against at most 128 columns.
func TestAVX512MatMulTMatchesAVX2(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(18, 64))
	tests := []struct{ rows, cols, n int }{
		{1, 64, 6}, {7, 64, 7}, {16, 128, 12}, {33, 80, 13}, {5, 200, 6},
		{64, 192, 64}, {3, 67, 11}, {96, 144, 6},
		{96, 64, 3}, {1, 64, 1}, {128, 128, 1}, {37, 100, 2}, {200, 128, 4}, {9, 72, 5}, {50, 130, 3},
	}
	for _, dt := range []DType{F32, BF16, F16} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", dt, tc.rows, tc.cols, tc.n), func(t *testing.T) {
				testAVX512T(t, r, dt, tc.rows, tc.cols, tc.n)
			})
		}
	}
}

// TestAVX512MatchesAVX2 covers the AVX-512 kernels' edges: one to
// seventeen weight rows (in prefill, blocks of eight for float32 weights
// and four for 16-bit ones, and a remainder), rows of x on and off the
// groups of three, and row
// lengths from the shortest long row to SmolLM2's MLP, of 0 and of 16
// mod 32 terms (a last block of sixteen in the thirty-two lanes of 16-bit
// weights), on both sides of xRegTerms.
func TestAVX512MatchesAVX2(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(18, 512))
	tests := []struct{ rows, cols, n int }{
		{1, 256, 1}, {2, 256, 2}, {3, 272, 1}, {4, 256, 6}, {5, 288, 7},
		{7, 576, 12}, {8, 256, 13}, {9, 320, 64}, {13, 1536, 8}, {64, 576, 11},
		{1, 256, 6}, {2, 512, 17}, {6, 768, 5},
		{12, 256, 9}, {16, 576, 7}, {17, 320, 6}, {15, 1536, 20},
		// Tiles of x: 84 rows of 1536 (xTileBytes), so a whole tile and
		// one of 44 rows, 47 or 83; or of 2 rows, done as the last 3.
		{5, 1536, 128}, {4, 1536, 131}, {9, 1536, 167}, {10, 1536, 86},
		// 16 mod 32 terms: 272, 784, 1552 (tiles of x of 84 rows, so one
		// of 46 rows: groups of three and one done as the last three).
		{4, 272, 7}, {5, 784, 8}, {6, 272, 3}, {3, 784, 64}, {5, 1552, 130},
		// Float32 rows of more than longRow (768) terms, in chunks of
		// about kChunk: 784 as 400+384, 1552 as 3·400+352; more than
		// accGroups (32) groups of x in a tile (120 rows of 784: 40).
		{16, 784, 50}, {8, 1552, 40}, {9, 1536, 100}, {9, 784, 120},
		// Around xRegTerms (416), where decode holds x in registers:
		// 400 below it; 416 all in registers; 432 one block of sixteen
		// after them, 448 one of thirty-two, 464 both.
		{3, 400, 1}, {2, 416, 2}, {4, 432, 1}, {3, 448, 3}, {5, 464, 1},
	}
	for _, dt := range []DType{F32, BF16, F16} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", dt, tc.rows, tc.cols, tc.n), func(t *testing.T) {
				testAVX512(t, r, dt, tc.rows, tc.cols, tc.n)
			})
		}
	}
}

// FuzzAVX512 checks random long-row shapes: the AVX-512 kernels equal the
// AVX2 kernels bit for bit and stay within the rounding bound of the exact
// sums (see testAVX512 and, with six or more rows of x, testAVX512T).
// Shapes stay small: at most 40 rows, 784 columns (of 0 or 16 mod 32)
// and 256 rows of x (several tiles of x for the longer rows).
func FuzzAVX512(f *testing.F) {
	f.Add(uint8(4), uint8(20), uint8(64), uint8(0), uint64(1))
	f.Add(uint8(9), uint8(0), uint8(7), uint8(1), uint64(2))
	f.Add(uint8(1), uint8(3), uint8(1), uint8(2), uint64(3))
	f.Add(uint8(5), uint8(33), uint8(10), uint8(2), uint64(4))
	f.Add(uint8(7), uint8(1), uint8(2), uint8(1), uint64(5))
	f.Fuzz(func(t *testing.T, rows, cols, n, dtype uint8, seed uint64) {
		if !useAVX512 {
			t.Skip("no AVX-512 kernels on this machine or build")
		}
		dt := []DType{F32, BF16, F16}[int(dtype)%3]
		nr, nc, nn := 1+int(rows)%40, wideRow+16*(int(cols)%34), 1+int(n)
		testAVX512(t, rand.New(rand.NewPCG(seed, 18)), dt, nr, nc, nn)
		if nn >= 6 {
			// The same sizes for MatMulT: nr inputs, nc outputs.
			testAVX512T(t, rand.New(rand.NewPCG(seed, 19)), dt, nr, nc, nn)
		}
	})
}

// TestAVX512ExpMatchesAVX2 checks the eight-lane exp and SiLU against the
// four-lane ones bit for bit, over the whole range, its edges (overflow,
// the subnormals, underflow to 0) and the special values.
func TestAVX512ExpMatchesAVX2(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(21, 8))
	src := []float64{0, math.Copysign(0, -1), 1, -1, 709.78, 709.7827128933839, 709.79, 710, -708.39, -708.4,
		-745.1, -745.13, -745.2, -1e-300, 1e-300, math.Inf(1), math.Inf(-1), math.NaN(), math.Ln2 / 2, -math.Ln2 / 2}
	for range 40000 {
		src = append(src, (r.Float64()*2-1)*760, r.NormFloat64()*5)
	}
	src = src[:len(src)/16*16]
	// A multiple of 16 runs the kernels' two vectors at a time only; 8
	// fewer, their last block of one vector too.
	for _, n := range []int{len(src), len(src) - 8} {
		src := src[:n]
		want, got := make([]float64, n), make([]float64, n)
		expF64(&want[0], &src[0], n)
		expF64Z(&got[0], &src[0], n)
		for i := range src {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("exp(%v): eight lanes %v, four lanes %v", src[i], got[i], want[i])
			}
		}
		x := make([]float32, n)
		for i, v := range src {
			x[i] = float32(v / 8)
		}
		x[1], x[2] = float32(math.NaN()), float32(math.Inf(-1))
		want32, got32 := make([]float32, n), make([]float32, n)
		siluF32(&want32[0], &x[0], n)
		siluF32Z(&got32[0], &x[0], n)
		for i := range x {
			if math.Float32bits(got32[i]) != math.Float32bits(want32[i]) {
				t.Fatalf("silu(%v): eight lanes %v, four lanes %v", x[i], got32[i], want32[i])
			}
		}
	}
}
