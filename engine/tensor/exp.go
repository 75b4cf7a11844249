package tensor

import "math"

// Exp sets dst[i] = exp(src[i]) (dst may be src). With the assembly it
// runs eight lanes at a time (AVX-512) or four, the same bits either way,
// within about an ulp of math.Exp (a degree-13 polynomial, see
// exp_amd64.s); without it, it is math.Exp. Rounded to float32, or added
// to sums of order 1, the two practically always agree.
func Exp(dst, src []float64) {
	checkLen64("Exp", len(src), dst)
	n := 0
	if useAVX512 && len(src) >= 8 {
		n = len(src) &^ 7
		expF64Z(&dst[0], &src[0], n)
	}
	if useAsm && len(src)-n >= 4 {
		expF64(&dst[n], &src[n], 4)
		n += 4
	}
	for i := n; i < len(src); i++ {
		dst[i] = math.Exp(src[i])
	}
}

// siluInto sets dst[i] = silu(x[i]) = float32(x / (1 + exp(-x))) computed
// in float64, eight or four lanes at a time with the assembly.
func siluInto(dst, x []float32) {
	n := 0
	if useAVX512 && len(x) >= 8 {
		n = len(x) &^ 7
		siluF32Z(&dst[0], &x[0], n)
	}
	if useAsm && len(x)-n >= 4 {
		siluF32(&dst[n], &x[n], 4)
		n += 4
	}
	for i := n; i < len(x); i++ {
		dst[i] = silu(x[i])
	}
}

func checkLen64(op string, n int, v []float64) {
	if len(v) != n {
		panic("tensor: " + op + ": lengths differ")
	}
}
