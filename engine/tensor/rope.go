package tensor

import (
	"fmt"
	"math"
)

// RopeInvFreq writes the rotary inverse frequencies of a head of headDim
// dimensions, as transformers' rotary embedding computes them in float32:
//
//	for i := 0; i < headDim/2; i++ {
//		dst[i] = 1 / pow(theta, float32(2i)/float32(headDim))
//	}
//
// llama2.c's freq (1 / powf(10000, head_dim/head_size) for even head_dim) is
// the same formula.
func RopeInvFreq(dst []float32, headDim int, theta float64) {
	if len(dst) != headDim/2 || headDim%2 != 0 {
		panic(fmt.Sprintf("tensor: RopeInvFreq: %d frequencies for a head of %d", len(dst), headDim))
	}
	base := float64(float32(theta))
	for i := range dst {
		e := float32(2*i) / float32(headDim)
		dst[i] = 1 / float32(math.Pow(base, float64(e)))
	}
}

// RopeCosSin writes the cosines and sines of the angles of position pos:
// the angle of pair i is float32(pos)·invFreq[i], rounded to float32 before
// cos and sin are taken (in float64, then rounded).
func RopeCosSin(cos, sin, invFreq []float32, pos int) {
	checkLen("RopeCosSin", len(invFreq), cos, sin)
	p := float32(pos)
	for i, f := range invFreq {
		a := float64(p * f)
		cos[i] = float32(math.Cos(a))
		sin[i] = float32(math.Sin(a))
	}
}

// RotateHalf applies the rotary embedding in place to one head vector x
// (headDim) in transformers' rotate-half (GPT-NeoX) layout, where dims i and
// i+headDim/2 form a pair: x' = x·cos + rotate_half(x)·sin, that is
//
//	h := len(x) / 2
//	for i := 0; i < h; i++ {
//		a, b := x[i], x[i+h]
//		x[i] = a*cos[i] - b*sin[i]
//		x[i+h] = b*cos[i] + a*sin[i]
//	}
func RotateHalf(x, cos, sin []float32) {
	h := len(x) / 2
	checkLen("RotateHalf", h, cos, sin)
	lo, hi := x[:h], x[h:2*h]
	if useAsm && h%8 == 0 && h > 0 {
		rotateHalfF32(&x[0], &cos[0], &sin[0], h)
		return
	}
	for i := range lo {
		// Each product rounded on its own, as torch computes it (the
		// conversions keep Go from fusing a multiply-add).
		a, b := lo[i], hi[i]
		lo[i] = float32(a*cos[i]) - float32(b*sin[i])
		hi[i] = float32(b*cos[i]) + float32(a*sin[i])
	}
}

// RotatePairs applies the rotary embedding in place to one head vector x
// (headDim) in llama2.c's interleaved layout, where dims 2i and 2i+1 form a
// pair (a complex number rotated by the angle of pair i):
//
//	for i := 0; i < len(x)/2; i++ {
//		a, b := x[2i], x[2i+1]
//		x[2i] = a*cos[i] - b*sin[i]
//		x[2i+1] = a*sin[i] + b*cos[i]
//	}
func RotatePairs(x, cos, sin []float32) {
	checkLen("RotatePairs", len(x)/2, cos, sin)
	for i := range cos {
		a, b := x[2*i], x[2*i+1]
		x[2*i] = float32(a*cos[i]) - float32(b*sin[i]) // no fused multiply-add
		x[2*i+1] = float32(a*sin[i]) + float32(b*cos[i])
	}
}
