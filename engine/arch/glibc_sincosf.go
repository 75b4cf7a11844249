package arch

import "math"

// sincosfGlibc returns sinf(y) and cosf(y) as the C library llama.cpp
// links computes them (glibc 2.28 and later, its x86-64 code for
// machines with FMA), bit for bit: ggml_rope_cache_init takes the rotary
// cosines and sines from them, and they are not always the float32
// nearest the true values (about one in fifty differs from a rounded
// float64 cos or sin by an ulp), which is enough to move a rounding of
// the quantized products downstream.
//
// The method, in float64: below |y| = 0.75 no reduction; below 120 one
// fused multiply-subtract of n·π/2, n taken from y·(2/π)·2^24; beyond,
// an exact fixed-point product with 192 bits of 4/π. Then the sine and
// cosine polynomials of the reduced x, each a + b·c term one fused
// multiply-add (as GCC contracts them), the quadrant choosing which
// polynomial gives which result and their signs.
func sincosfGlibc(y float32) (sin, cos float32) {
	top := math.Float32bits(y) >> 20 & 0x7ff
	x := float64(y)
	switch {
	case top < 0x3f4: // |y| < 0.75
		if top < 0x398 { // |y| < 2^-12
			return y, 1
		}
		return sincosPoly(x, 0, 0)
	case top < 0x42f: // |y| < 120
		n := (int32(x*0x1.45F306DC9C883p+23) + 0x800000) >> 24 // round(y·2/π), by the quadrant's bits
		x = math.FMA(-float64(n), 0x1.921FB54442D18p0, x)      // y - n·π/2
		return sincosPoly(x, int(n), int(n))
	case top < 0x7f8: // finite
		b := math.Float32bits(y)
		x, n := reduceLarge(b)
		return sincosPoly(x, n, n+int(b>>31))
	}
	nan := float32(math.NaN())
	return nan, nan
}

// sincosPoly is sin and cos of x + n·π/2 for |x| ≤ π/4, from the sine
// polynomial S of ±x and the cosine polynomial C: n odd swaps them (sin
// = C, cos = S). q sets the signs: x is negated in its quadrants 1 and 2,
// C in 2 and 3 (q is n, or n + 1 for a negative y reduced by its
// magnitude).
func sincosPoly(x float64, n, q int) (sin, cos float32) {
	x2 := x * x
	if q&3 == 1 || q&3 == 2 {
		x = -x
	}
	// S(x) = x + x³·s1 + x⁵·(s2 + x²·s3)
	x3 := x * x2
	s := math.FMA(x3*x2, math.FMA(x2, -0x1.994eb3774cf24p-13, 0x1.1107605230bc4p-7), math.FMA(x3, -0x1.555545995a603p-3, x))
	// C(x) = c0 + x²·c1 + x⁴·c2 + x⁶·(c3 + x²·c4), all negated in quadrants 2 and 3
	c0, c1, c2, c3, c4 := 1.0, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16
	if q&2 != 0 {
		c0, c1, c2, c3, c4 = -c0, -c1, -c2, -c3, -c4
	}
	x4 := x2 * x2
	c := math.FMA(x4*x2, math.FMA(x2, c4, c3), math.FMA(x4, c2, math.FMA(x2, c1, c0)))
	if n&1 != 0 {
		return float32(c), float32(s)
	}
	return float32(s), float32(c)
}

// invPio4 is 4/π in binary from its leading one (the bits of 2/π after
// the point), 8 bits a byte: 192 bits.
var invPio4 = [24]byte{
	0xa2, 0xf9, 0x83, 0x6e, 0x4e, 0x44, 0x15, 0x29, 0xfc, 0x27, 0x57, 0xd1,
	0xf5, 0x34, 0xdd, 0xc0, 0xdb, 0x62, 0x95, 0x99, 0x3c, 0x43, 0x90, 0x41,
}

// invPio4At is the 32 bits of invPio4 that end at byte k (zeros before
// the first).
func invPio4At(k int) uint32 {
	var v uint32
	for i := k - 3; i <= k; i++ {
		v <<= 8
		if i >= 0 {
			v |= uint32(invPio4[i])
		}
	}
	return v
}

// reduceLarge reduces a float32 of magnitude at least 120 (its bits b;
// the sign is ignored) modulo π/2: the mantissa times the 96 bits of 4/π
// that matter for its exponent, in 2.62 fixed point, gives the quadrant n
// (rounded) and the remainder, returned in radians (|x| ≤ π/4).
func reduceLarge(b uint32) (x float64, n int) {
	k := int(b >> 26 & 15)
	m := (b&0xffffff | 0x800000) << (b >> 23 & 7)
	lo := uint64(m * invPio4At(k)) // the low 32 bits only
	mid := uint64(m) * uint64(invPio4At(k+4))
	hi := uint64(m) * uint64(invPio4At(k+8))
	r := (hi >> 32) | lo<<32
	r += mid
	q := (r + 1<<61) >> 62
	r -= q << 62
	return float64(int64(r)) * 0x1.921FB54442D18p-62, int(q)
}
