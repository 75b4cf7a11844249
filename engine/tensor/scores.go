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
