package tensor

import "math"

// MaxNaN returns the largest score of s that is not NaN (-Inf when none
// is, s empty included) and whether s holds a NaN: one pass, in eight
// lanes with the assembly. Of equal scores (+0 and -0) either may be the
// one returned.
func MaxNaN(s []float32) (max float32, nan bool) {
	max = float32(math.Inf(-1))
	n := 0
	if useAsm && len(s) >= 32 {
		n = len(s) &^ 31
		max, nan = maxNaNF32(&s[0], n)
	}
	for _, v := range s[n:] {
		if v > max {
			max = v
		} else if v != v {
			nan = true
		}
	}
	return max, nan
}

// Argmax returns the index of the largest element, the lowest on ties (as
// torch.argmax; +0 and -0 tie), or -1 when there is none (x empty or all
// NaN). NaN never wins. One vector pass for the maximum (MaxNaN), then a
// search for its first occurrence.
func Argmax(x []float32) int {
	m, _ := MaxNaN(x)
	i := 0
	if useAsm && len(x) >= 32 {
		i = firstEqualF32(&x[0], len(x)&^31, m)
	}
	for ; i < len(x); i++ {
		if x[i] == m {
			return i
		}
	}
	return -1
}

// CountKept returns how many scores of s are not -Inf (a removed token's
// score): NaN and +Inf count. One pass, in eight lanes with the assembly.
func CountKept(s []float32) int {
	kept, n := 0, 0
	if useAsm && len(s) >= 32 {
		n = len(s) &^ 31
		kept = countKeptF32(&s[0], n)
	}
	for _, v := range s[n:] {
		if v >= -math.MaxFloat32 || v != v {
			kept++
		}
	}
	return kept
}
