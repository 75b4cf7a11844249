package tensor

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32 returns a·b + c rounded once to float32, as VFMADD231PS computes
// it: the product and the sum are exact at 1024 bits (the product has 48
// significant bits, and the exponents of finite float32 values span less
// than 600 bits).
func fma32(a, b, c float32) float32 {
	const prec = 1024
	var p, q big.Float
	p.SetPrec(prec).SetFloat64(float64(a))
	q.SetPrec(prec).SetFloat64(float64(b))
	p.Mul(&p, &q)
	q.SetFloat64(float64(c))
	p.Add(&p, &q)
	f, _ := p.Float32()
	return f
}

// dot32Ref is the reference of a long row of 16-bit weights w (widened)
// times x, written out on its own: lane l sums the terms j ≡ l (mod 32)
// in order, one fused multiply-add each (fused) or a product rounded to
// float32 and then added; then b[l] = s[l] + s[l+16], a[l] = b[l] +
// b[l+8], and ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)).
func dot32Ref(w, x []float32, fused bool) float32 {
	var s [32]float32
	for j := range w {
		if fused {
			s[j&31] = fma32(w[j], x[j], s[j&31])
		} else {
			p := float32(w[j] * x[j]) // the conversion forbids fusing
			s[j&31] += p
		}
	}
	var a [8]float32
	for l := range a {
		a[l] = (s[l] + s[l+16]) + (s[l+8] + s[l+24])
	}
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

// testLanes32 checks that every kernel computing x Wᵀ for one shape of
// long rows of 16-bit weights sums in the thirty-two lanes of dot32Ref:
// the assembly (MatMul, which takes the AVX-512 or AVX2 decode and
// prefill kernels by n, and the AVX2 decode kernel called directly) bit
// for bit with fused multiply-adds, the pure-Go twin bit for bit with or
// without them (the compiler may fuse on some platforms).
func testLanes32(t *testing.T, r *rand.Rand, dt DType, rows, cols, n int) {
	t.Helper()
	w, vals := randMatrix(r, dt, rows, cols)
	x := randVec(r, n*cols)
	fused, plain := make([]float32, n*rows), make([]float32, n*rows)
	for tok := 0; tok < n; tok++ {
		xt := x[tok*cols : (tok+1)*cols]
		for i := 0; i < rows; i++ {
			fused[tok*rows+i] = dot32Ref(vals[i*cols:(i+1)*cols], xt, true)
			plain[tok*rows+i] = dot32Ref(vals[i*cols:(i+1)*cols], xt, false)
		}
	}

	got := make([]float32, n*rows)
	matMulRowsGo(got, w, x, n, 0, rows)
	for i := range got {
		if got[i] != plain[i] && got[i] != fused[i] {
			t.Errorf("pure Go: out[%d] = %v, want %v (or fused %v) exactly", i, got[i], plain[i], fused[i])
			break
		}
	}
	if !useAsm || cols%16 != 0 {
		return
	}
	clear(got)
	MatMul(got, w, x)
	checkEqual(t, fmt.Sprintf("MatMul (%s)", KernelName()), got, fused)
	clear(got)
	avx2Rows(got, w, x, n)
	checkEqual(t, "AVX2 decode kernel", got, fused)
}

// TestLanes32 covers long rows of 16-bit weights of 0 and of 16 mod 32
// terms, with one to thirteen rows of x: decode (one or two), the AVX2
// prefill tiles of three rows of x (three to five, or more without
// AVX-512) and the AVX-512 tiles of three (six or more, with a partial
// last group), and weight rows on and off the AVX-512 blocks of four.
func TestLanes32(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 18))
	tests := []struct{ rows, cols, n int }{
		{1, 256, 1}, {3, 272, 1}, {2, 272, 2}, {5, 784, 2}, {4, 288, 3},
		{3, 272, 4}, {2, 528, 5}, {4, 272, 6}, {5, 304, 7}, {9, 576, 13},
		{6, 1552, 8}, {1, 256, 9},
		// Not a multiple of 16: the pure-Go twin only.
		{2, 263, 1}, {3, 283, 4},
	}
	for _, dt := range []DType{BF16, F16} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", dt, tc.rows, tc.cols, tc.n), func(t *testing.T) {
				testLanes32(t, r, dt, tc.rows, tc.cols, tc.n)
			})
		}
	}
}

// FuzzLanes32 checks random shapes of long rows of 16-bit weights
// against the thirty-two-lane reference (see testLanes32). Shapes stay
// small: at most 9 weight rows of at most 879 terms (of any length, half
// of them multiples of 16) and 16 rows of x.
func FuzzLanes32(f *testing.F) {
	f.Add(uint8(4), uint8(1), uint8(6), uint8(0), uint64(1))
	f.Add(uint8(3), uint8(2), uint8(1), uint8(1), uint64(2))
	f.Add(uint8(7), uint8(33), uint8(12), uint8(0), uint64(3))
	f.Add(uint8(1), uint8(7), uint8(3), uint8(1), uint64(4))
	f.Fuzz(func(t *testing.T, rows, cols, n, dtype uint8, seed uint64) {
		dt := []DType{BF16, F16}[int(dtype)%2]
		nr, nn := 1+int(rows)%9, 1+int(n)%16
		nc := wideRow + 16*(int(cols)%40)
		if cols&128 != 0 {
			nc += 1 + int(seed%15) // off the multiples of 16
		}
		testLanes32(t, rand.New(rand.NewPCG(seed, 32)), dt, nr, nc, nn)
	})
}
