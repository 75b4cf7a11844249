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

// ExpRoundSum sets dst[i] = float32(exp(float64(s[i] - m))), the
// difference taken in float32 and the exponential Exp's, and returns sum
// plus every dst[i], added one after another in float32: the numerators of
// a softmax and their sum in torch's float32, in a fixed order. With
// AVX-512 the exponentials of eight scores are computed while the previous
// eight are added; the bits are those of Exp over blocks.
func ExpRoundSum(dst, s []float32, m, sum float32) float32 {
	checkLen("ExpRoundSum", len(s), dst)
	n := 0
	if useAVX512 && len(s) >= 8 {
		n = len(s) &^ 7
		sum = expRoundSumF32Z(&dst[0], &s[0], n, m, sum)
	}
	var buf [expRoundBlock]float64
	for lo := n; lo < len(s); lo += expRoundBlock {
		ss := s[lo:min(lo+expRoundBlock, len(s))]
		e := buf[:len(ss)]
		for i, v := range ss {
			e[i] = float64(v - m)
		}
		Exp(e, e)
		d := dst[lo : lo+len(ss)]
		for i, x := range e {
			d[i] = float32(x)
			sum += d[i]
		}
	}
	return sum
}

// expRoundBlock is how many exponentials ExpRoundSum's Go loop takes at a
// time, on the stack (a multiple of 8, so that only the last block's last
// len(s) mod 4 go to math.Exp, as with the assembly).
const expRoundBlock = 512

// SumExp returns Σ e and (with dot) Σ e·u over the scores of s, where
// u = float64(s[i]) - m and e = exp(u) (Exp's bits), leaving out every e
// that is not > 0 (an exp that underflowed, or a NaN). Score i goes to
// partial sum i mod 4, added in index order (the products first rounded),
// so that the additions do not wait on one another; the four are then
// added (s0 + s1) + (s2 + s3). With AVX-512 eight scores at a time.
func SumExp(s []float32, m float64, dot bool) (sum, sumEU float64) {
	var a, b [4]float64
	n := 0
	if useAVX512 && len(s) >= 8 {
		n = len(s) &^ 7
		if dot {
			sumExpDotF64Z(&s[0], n, m, &a, &b)
		} else {
			sumExpF64Z(&s[0], n, m, &a, &b)
		}
	}
	var buf [expRoundBlock]float64
	for lo := n; lo < len(s); lo += expRoundBlock { // lo is a multiple of 4
		ss := s[lo:min(lo+expRoundBlock, len(s))]
		e := buf[:len(ss)]
		for i, v := range ss {
			e[i] = float64(v) - m
		}
		Exp(e, e)
		for i, x := range e {
			if x > 0 {
				a[i&3] += x
				if dot {
					b[i&3] += float64(x * (float64(ss[i]) - m)) // rounded: no FMA
				}
			}
		}
	}
	return (a[0] + a[1]) + (a[2] + a[3]), (b[0] + b[1]) + (b[2] + b[3])
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
