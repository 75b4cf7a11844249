package tensor

import (
	"fmt"
	"math"
)

func checkLen(op string, n int, vs ...[]float32) {
	for _, v := range vs {
		if len(v) != n {
			panic(fmt.Sprintf("tensor: %s: lengths %d and %d differ", op, n, len(v)))
		}
	}
}

// RMSNorm normalises x by its root mean square, as Llama's RMSNorm and
// llama2.c's rmsnorm do (eps inside the square root, the weight applied
// last):
//
//	var ss float32
//	for i := range x {
//		ss += x[i] * x[i]
//	}
//	r := 1 / sqrt(ss/len(x) + eps)
//	for i := range x {
//		dst[i] = w[i] * (x[i] * r)
//	}
//
// The sum of squares is accumulated in float64 (each square exact) in eight
// interleaved partial sums (four lanes each in two AVX registers with the
// assembly) and rounded once: it practically always equals the sequential
// float64 sum after the rounding, and differs from it by a few units in
// the last place of float64 at most. dst may be x.
func RMSNorm(dst, x, w []float32, eps float32) {
	checkLen("RMSNorm", len(x), dst, w)
	ms := float32(SumSquares(x) / float64(len(x)))
	r := float32(1 / math.Sqrt(float64(ms+eps)))
	n := 0
	if useAsm {
		n = len(x) &^ 7
	}
	if n > 0 {
		scaleMulF32(&dst[0], &x[0], &w[0], n, r)
	}
	for i := n; i < len(x); i++ {
		dst[i] = w[i] * (x[i] * r)
	}
}

// SumSquares returns Σ x[i]² accumulated in float64 (each square exact)
// in eight interleaved partial sums, x[i] to sum i mod 8, added pairwise at
// the end: RMSNorm's sum of squares, and the square of the norm the
// forward-pass recording reports.
func SumSquares(x []float32) float64 {
	var s [8]float64
	n := 0
	if useAsm && len(x) >= 8 {
		n = len(x) &^ 7
		sumSquaresF64(&x[0], n, &s)
	}
	for i := n; i < len(x); i++ {
		s[i&7] += float64(x[i]) * float64(x[i])
	}
	return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]))
}

// LayerNorm normalises x to zero mean and unit variance (the biased
// variance, as torch's layer_norm), then scales and shifts:
//
//	mean := Σ x[i] / len(x)
//	variance := Σ (x[i]-mean)² / len(x)
//	for i := range x {
//		dst[i] = (x[i]-mean) / sqrt(variance+eps) * w[i] + b[i]
//	}
//
// Mean and variance are accumulated in float64. dst may be x.
func LayerNorm(dst, x, w, b []float32, eps float32) {
	checkLen("LayerNorm", len(x), dst, w, b)
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := sum / float64(len(x))
	var ss float64
	for _, v := range x {
		d := float64(v) - mean
		ss += d * d
	}
	m := float32(mean)
	rstd := float32(1 / math.Sqrt(float64(float32(ss/float64(len(x)))+eps)))
	for i, v := range x {
		dst[i] = (v-m)*rstd*w[i] + b[i]
	}
}

// Softmax writes the probabilities of the scores x:
//
//	m := max(x)
//	for i := range x {
//		dst[i] = exp(x[i]-m) / Σ_j exp(x[j]-m)
//	}
//
// Scores of -Inf get probability 0; the result is NaN when every score is
// -Inf, as in torch. The exponentials are computed in float64 and rounded,
// the sum accumulated in float64. dst may be x.
func Softmax(dst, x []float32) {
	checkLen("Softmax", len(x), dst)
	if len(x) == 0 {
		return
	}
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	var sum float64
	for i, v := range x {
		e := float32(math.Exp(float64(v - m)))
		dst[i] = e
		sum += float64(e)
	}
	s := float32(sum)
	for i := range dst {
		dst[i] /= s
	}
}

// SiLU applies x·sigmoid(x) elementwise: dst[i] = x[i] / (1 + exp(-x[i])),
// computed in float64 and rounded (exp as in Exp). dst may be x.
func SiLU(dst, x []float32) {
	checkLen("SiLU", len(x), dst)
	siluInto(dst, x)
}

func silu(v float32) float32 {
	x := float64(v)
	return float32(x / (1 + math.Exp(-x)))
}

// SwiGLU computes the gated activation of Llama's MLP, the input of
// down_proj: dst[i] = silu(gate[i]) * up[i], the product taken in float32
// as torch does. dst may be gate or up.
func SwiGLU(dst, gate, up []float32) {
	checkLen("SwiGLU", len(dst), gate, up)
	// In blocks, so that the activations are still in cache for the
	// product and a block of silu values can live on the stack.
	var buf [256]float32
	for lo := 0; lo < len(dst); lo += len(buf) {
		n := min(len(buf), len(dst)-lo)
		s := buf[:n]
		siluInto(s, gate[lo:lo+n])
		u, d := up[lo:lo+n], dst[lo:lo+n]
		m := 0
		if useAsm && n >= 8 {
			m = n &^ 7
			mulF32(&d[0], &s[0], &u[0], m)
		}
		for i := m; i < n; i++ {
			d[i] = s[i] * u[i]
		}
	}
}

// GeluNew applies GPT-2's tanh approximation of GELU (transformers'
// NewGELUActivation) elementwise, in float64 and rounded:
//
//	dst[i] = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
//
// dst may be x.
func GeluNew(dst, x []float32) {
	checkLen("GeluNew", len(x), dst)
	c := math.Sqrt(2 / math.Pi)
	for i, v := range x {
		f := float64(v)
		dst[i] = float32(0.5 * f * (1 + math.Tanh(c*(f+0.044715*f*f*f))))
	}
}

// Add computes dst[i] = a[i] + b[i]. dst may be a or b.
func Add(dst, a, b []float32) {
	checkLen("Add", len(dst), a, b)
	n := 0
	if useAsm && len(dst) >= 8 {
		n = len(dst) &^ 7
		addF32(&dst[0], &a[0], &b[0], n)
	}
	for i := n; i < len(dst); i++ {
		dst[i] = a[i] + b[i]
	}
}

// AddRows adds the vector b to every row of x (n, len(b)), as a bias:
// x[t][i] += b[i].
func AddRows(x, b []float32) {
	if len(b) == 0 || len(x)%len(b) != 0 {
		panic(fmt.Sprintf("tensor: AddRows: %d is not a multiple of %d", len(x), len(b)))
	}
	for t := 0; t < len(x); t += len(b) {
		row := x[t : t+len(b)]
		Add(row, row, b)
	}
}

// Dot returns the dot product of x and y (same length):
//
//	var s float32
//	for i := range x {
//		s += x[i] * y[i]
//	}
//
// accumulated in float32 over eight interleaved partial sums.
func Dot(x, y []float32) float32 {
	checkLen("Dot", len(x), y)
	return dotF32(x, y)
}

// Axpy adds a times x to dst: dst[i] += a * x[i].
func Axpy(dst []float32, a float32, x []float32) {
	checkLen("Axpy", len(dst), x)
	axpyF32(dst, a, x)
}
