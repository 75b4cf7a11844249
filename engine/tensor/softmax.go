package tensor

// SoftmaxScaled sets w to the softmax of w/scale: the weights of one
// query's attention over its keys, from the raw scores q·k. The reference
// loop:
//
//	for j := range w {
//		w[j] /= scale
//	}
//	m := max(w)
//	var s float64
//	for j := range w {
//		w[j] = float32(exp(float64(w[j] - m)))
//		s += float64(w[j])
//	}
//	for j := range w {
//		w[j] /= float32(s)
//	}
//
// exp is Exp's (in chunks of 256 keys, so that the same keys take the same
// path as in a loop over Exp of 256 at a time), and s is summed over four
// interleaved partial sums, lane l taking the keys j ≡ l (mod 4) in order,
// added as (s0+s1)+(s2+s3): the assembly's order, which the pure-Go loops
// follow, so they differ only where Exp does. Rounded to float32 the sum
// practically always equals the sequential one; it differs from it by at
// most a few units in the last place of float64. A NaN or infinite score
// makes every weight NaN, as in the loop above. Divisions stay divisions
// (not products by a reciprocal), so every other step is the loop's, bit
// for bit.
func SoftmaxScaled(w []float32, scale float32) {
	if len(w) == 0 {
		return
	}
	best := divMax(w, scale)
	var s [4]float64
	var buf [256]float64
	for lo := 0; lo < len(w); lo += len(buf) {
		ws := w[lo:min(lo+len(buf), len(w))]
		e := buf[:len(ws)]
		for j, v := range ws {
			e[j] = float64(v - best)
		}
		Exp(e, e)
		roundSum(ws, e, &s) // lo is a multiple of 4: lanes stay j mod 4
	}
	Div(w, float32((s[0]+s[1])+(s[2]+s[3])))
}

// divMax divides w by d in place and returns the largest quotient (the
// first one that no later one exceeds; with the assembly, a NaN may be
// returned instead, which leaves SoftmaxScaled's result NaN either way).
func divMax(w []float32, d float32) float32 {
	n := 0
	var best float32
	if useAsm && len(w) >= 8 {
		n = len(w) &^ 7
		best = divMaxF32(&w[0], n, d)
	}
	for j := n; j < len(w); j++ {
		w[j] /= d
		if j == 0 || w[j] > best {
			best = w[j]
		}
	}
	return best
}

// roundSum sets w[j] = float32(e[j]) and adds float64(w[j]) to s[j%4].
func roundSum(w []float32, e []float64, s *[4]float64) {
	e = e[:len(w)]
	n := 0
	if useAsm && len(w) >= 4 {
		n = len(w) &^ 3
		roundSumF64(&w[0], &e[0], n, s)
	}
	for j := n; j < len(w); j++ {
		w[j] = float32(e[j])
		s[j&3] += float64(w[j])
	}
}

// Div divides w by d in place: w[j] /= d, eight at a time with the
// assembly (each quotient correctly rounded, so the loop's bits).
func Div(w []float32, d float32) {
	n := 0
	if useAsm && len(w) >= 8 {
		n = len(w) &^ 7
		divF32(&w[0], n, d)
	}
	for j := n; j < len(w); j++ {
		w[j] /= d
	}
}
