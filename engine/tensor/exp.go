package tensor

import "math"

// Exp sets dst[i] = exp(src[i]) (dst may be src). With the assembly it
// runs eight lanes at a time (AVX-512) or four, the same bits either way,
// within about an ulp of math.Exp (a degree-13 polynomial, see
// exp_amd64.s); without it, it is math.Exp. Rounded to float32, or added
// to sums of order 1, the two practically always agree.
func Exp(dst, src []float64) {
	checkLen64("Exp", len(src), dst)
	z, y := expLanes(len(src))
	if z > 0 {
		expF64Z(&dst[0], &src[0], z)
	}
	if y > 0 {
		expF64(&dst[z], &src[z], y)
	}
	for i := z + y; i < len(src); i++ {
		dst[i] = math.Exp(src[i])
	}
}

// siluInto sets dst[i] = silu(x[i]) = float32(x / (1 + exp(-x))) computed
// in float64, eight or four lanes at a time with the assembly.
func siluInto(dst, x []float32) {
	z, y := expLanes(len(x))
	if z > 0 {
		siluF32Z(&dst[0], &x[0], z)
	}
	if y > 0 {
		siluF32(&dst[z], &x[z], y)
	}
	for i := z + y; i < len(x); i++ {
		dst[i] = silu(x[i])
	}
}

// expLanes splits n values between the eight-lane kernel (the first z, a
// multiple of 8, with AVX-512), the four-lane one (the next y, 0 or a
// multiple of 4) and Go (the rest).
func expLanes(n int) (z, y int) {
	if useAVX512 {
		z = n &^ 7
	}
	if useAsm {
		y = (n - z) &^ 3
	}
	return z, y
}

func checkLen64(op string, n int, v []float64) {
	if len(v) != n {
		panic("tensor: " + op + ": lengths differ")
	}
}
