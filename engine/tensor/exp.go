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
// u = float64(s[i]) - m and e = e^u by expNeg, for the recorder's
// log-sum-exp and entropy. m is meant to be the largest score (MaxNaN's):
// a score above it counts as m (u = 0). A score with u < -707 is left
// out: its e (below 1e-307, at the end of float64's normal range) cannot
// move a sum that holds the largest score's e = 1. So is a NaN. Score i
// goes to partial sum i mod 8, added in index order (the products first
// rounded); the eight are then added pairwise. With AVX-512 eight scores
// at a time, the same bits.
func SumExp(s []float32, m float64, dot bool) (sum, sumEU float64) {
	var a, b [8]float64
	n := 0
	if useAVX512 && len(s) >= 8 {
		n = len(s) &^ 7
		if dot {
			sumExpDotZ(&s[0], n, m, &a, &b)
		} else {
			sumExpZ(&s[0], n, m, &a, &b)
		}
	}
	sumExpGo(s, n, m, dot, &a, &b)
	return sum8(&a), sum8(&b)
}

// sumExpGo is SumExp's loop over s[from:], adding to its partial sums.
func sumExpGo(s []float32, from int, m float64, dot bool, a, b *[8]float64) {
	for i := from; i < len(s); i++ {
		u := float64(s[i]) - m
		if !(u >= expNegMin) {
			continue
		}
		if !(u < 0) {
			u = 0 // as VMINPD gives it: +0 for -0 too
		}
		e := expNeg(u)
		a[i&7] += e
		if dot {
			b[i&7] += float64(e * u) // rounded: no FMA
		}
	}
}

// sum8 adds eight partial sums pairwise.
func sum8(a *[8]float64) float64 {
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

// expNegMin is the smallest u whose expNeg is computed: e^-707 ≈ 1e-307
// is still a normal float64, so 2^k can go into the exponent bits.
const expNegMin = -707

// expNeg returns e^u for u in [expNegMin, 0], within about an ulp of
// math.Exp, in fewer steps than Exp: with n = round(u·16/ln2) = 16k + j
// (j in 0..15), r = u - n·ln2/16 (|r| ≤ ln2/32; ln2/16 split in a high
// part that n multiplies exactly and a low part) and q = e^r - 1 by its
// Taylor polynomial to degree 7 (truncation below 2e-18),
//
//	e^u = 2^k · (T[j] + T[j]·q),  T[j] = 2^(j/16) rounded (expNegTable),
//
// 2^k added to the exponent bits. n comes from the 1.5·2^52 shifter, whose
// low mantissa bits then hold n (j in the lowest four). Each step is one
// rounding, math.FMA where the assembly (EXPNEG8 in exp_amd64.s) fuses,
// so both give the same bits.
func expNeg(u float64) float64 {
	const (
		invL  = 0x1.71547652b82fep+04 // 16/ln2
		shift = 0x1.8p52
		l1    = 0x1.62e42feep-05      // ln2/16, high part: 32 significant bits
		l2    = 0x1.a39ef35793c76p-37 // ln2/16 - l1
	)
	t := math.FMA(u, invL, shift)
	n := t - shift
	r := math.FMA(-n, l1, u)
	r = math.FMA(-n, l2, r)
	w := math.FMA(1.0/5040, r, 1.0/720)
	w = math.FMA(w, r, 1.0/120)
	w = math.FMA(w, r, 1.0/24)
	w = math.FMA(w, r, 1.0/6)
	w = math.FMA(w, r, 0.5)
	q := math.FMA(w, r*r, r)
	bits := math.Float64bits(t)
	tj := expNegTable[bits&15]
	e := math.FMA(tj, q, tj)
	return math.Float64frombits(math.Float64bits(e) + bits>>4<<52)
}

// expNegTable holds 2^(j/16) for j = 0..15, each correctly rounded. The
// assembly reads it too.
var expNegTable = [16]float64{
	0x1p+00, 0x1.0b5586cf9890fp+00, 0x1.172b83c7d517bp+00, 0x1.2387a6e756238p+00,
	0x1.306fe0a31b715p+00, 0x1.3dea64c123422p+00, 0x1.4bfdad5362a27p+00, 0x1.5ab07dd485429p+00,
	0x1.6a09e667f3bcdp+00, 0x1.7a11473eb0187p+00, 0x1.8ace5422aa0dbp+00, 0x1.9c49182a3f090p+00,
	0x1.ae89f995ad3adp+00, 0x1.c199bdd85529cp+00, 0x1.d5818dcfba487p+00, 0x1.ea4afa2a490dap+00,
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
