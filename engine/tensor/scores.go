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

// FiniteRange returns the smallest and largest finite scores of s (+Inf
// and -Inf when none is finite; of +0 and -0 either may be returned). One
// pass, in eight lanes with the assembly.
func FiniteRange(s []float32) (lo, hi float32) {
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	n := 0
	if useAsm && len(s) >= 8 {
		n = len(s) &^ 7
		lo, hi = finiteRangeF32(&s[0], n)
	}
	for _, v := range s[n:] {
		if v >= -math.MaxFloat32 && v <= math.MaxFloat32 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return lo, hi
}

// RemoveBelow sets every score of s below v to -Inf (removed); a NaN
// score stays. In eight lanes with the assembly.
func RemoveBelow(s []float32, v float32) {
	n := 0
	if useAsm && len(s) >= 8 {
		n = len(s) &^ 7
		removeBelowF32(&s[0], n, v)
	}
	for i, x := range s[n:] {
		if x < v {
			s[n+i] = float32(math.Inf(-1))
		}
	}
}

// Argmax returns the index of the largest element, the lowest on ties (as
// torch.argmax; +0 and -0 tie), or -1 when there is none (x empty or all
// NaN). NaN never wins. One vector pass for the maximum (MaxNaN), then a
// search for its first occurrence.
func Argmax(x []float32) int {
	m, _ := MaxNaN(x)
	for i := firstBlock(x, m, firstEqualF32, equal); i < len(x); i++ {
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

// SkipBelow returns how many leading scores of s can be passed over when
// looking for one ≥ v: every score before the index it returns is below v
// or NaN, and the index is the first score ≥ v or at most 31 before it
// (len(s) when there is none). In blocks of 32 with the assembly.
func SkipBelow(s []float32, v float32) int {
	return firstBlock(s, v, firstAtLeastF32, atLeast)
}

// SkipAbsAtMost returns how many leading values of s can be passed over
// when looking for one with |x| > v: every value before the index it
// returns has |x| ≤ v or is NaN, and the index is the first with |x| > v
// or at most 31 before it (len(s) when there is none). In blocks of 32
// with the assembly.
func SkipAbsAtMost(s []float32, v float32) int {
	return firstBlock(s, v, firstAbsAboveF32, absAbove)
}

// SkipRemoved returns how many leading scores of s can be passed over as
// removed (-Inf) when looking for a kept one (any other, NaN included):
// every score before the index it returns is -Inf, and the index is the
// first kept score or at most 31 before it (len(s) when there is none). In
// blocks of 32 with the assembly.
func SkipRemoved(s []float32) int {
	return firstBlock(s, float32(math.Inf(-1)), firstNotEqualF32, notEqual)
}

// CountAbove returns how many scores of s are > v (none when v is NaN; a
// NaN score never counts).
func CountAbove(s []float32, v float32) int {
	return count(s, v, countAboveF32, above)
}

// CountEqual returns how many scores of s are == v (+0 and -0 are equal;
// NaN equals nothing).
func CountEqual(s []float32, v float32) int {
	return count(s, v, countEqualF32, equal)
}

// The tests of one score x against v that the scans below take, each the
// Go form of its kernel's VCMPPS predicate.
func equal(x, v float32) bool    { return x == v }
func atLeast(x, v float32) bool  { return x >= v }
func above(x, v float32) bool    { return x > v }
func absAbove(x, v float32) bool { return float32(math.Abs(float64(x))) > v }
func notEqual(x, v float32) bool { return x != v || x != x }

// firstBlock returns where a search for the first score of s that matches
// v may start: with the assembly the start of the first block of 32 that
// holds one (block), else, and past the blocks, the first one itself
// (match); len(s) when there is none.
func firstBlock(s []float32, v float32, block func(s *float32, n int, v float32) int, match func(x, v float32) bool) int {
	n := 0
	if useAsm && len(s) >= 32 {
		n = len(s) &^ 31
		if i := block(&s[0], n, v); i < n {
			return i
		}
	}
	for i := n; i < len(s); i++ {
		if match(s[i], v) {
			return i
		}
	}
	return len(s)
}

// count returns how many scores of s match v: the blocks of 32 with the
// assembly kernel, the rest (all of s without it) one at a time.
func count(s []float32, v float32, kernel func(s *float32, n int, v float32) int, match func(x, v float32) bool) int {
	c, n := 0, 0
	if useAsm && len(s) >= 32 {
		n = len(s) &^ 31
		c = kernel(&s[0], n, v)
	}
	for _, x := range s[n:] {
		if match(x, v) {
			c++
		}
	}
	return c
}
