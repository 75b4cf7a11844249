package tensor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// scoresRef is MaxNaN and CountKept one score at a time.
func scoresRef(s []float32) (max float32, nan bool, kept int) {
	max = float32(math.Inf(-1))
	for _, v := range s {
		if v > max {
			max = v
		} else if v != v {
			nan = true
		}
		if v >= -math.MaxFloat32 || v != v {
			kept++
		}
	}
	return max, nan, kept
}

// argmaxRef is Argmax one score at a time.
func argmaxRef(x []float32) int {
	best := -1
	for i, v := range x {
		if best < 0 && !math.IsNaN(float64(v)) || best >= 0 && v > x[best] {
			best = i
		}
	}
	return best
}

// checkThreshold checks SkipBelow, SkipAbsAtMost, CountAbove and CountEqual of s at v,
// and RemoveBelow, SkipRemoved and FiniteRange,
// against one score at a time.
func checkThreshold(t *testing.T, trial int, s []float32, v float32) {
	t.Helper()
	first, above, equal := len(s), 0, 0
	for i, x := range s {
		if x >= v && first == len(s) {
			first = i
		}
		if x > v {
			above++
		}
		if x == v {
			equal++
		}
	}
	if got := SkipBelow(s, v); got > first || got < first-31 || got < 0 {
		t.Fatalf("trial %d (%d scores): SkipBelow(%v) = %d, first ≥ at %d", trial, len(s), v, got, first)
	}
	firstAbs := len(s)
	for i, x := range s {
		if math.Abs(float64(x)) > float64(v) {
			firstAbs = i
			break
		}
	}
	if got := SkipAbsAtMost(s, v); got > firstAbs || got < firstAbs-31 || got < 0 {
		t.Fatalf("trial %d (%d scores): SkipAbsAtMost(%v) = %d, first |x| > v at %d", trial, len(s), v, got, firstAbs)
	}
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, x := range s {
		if !math.IsInf(float64(x), 0) && x == x {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if gotLo, gotHi := FiniteRange(s); gotLo != lo || gotHi != hi {
		t.Fatalf("trial %d (%d scores): FiniteRange = %v, %v; want %v, %v", trial, len(s), gotLo, gotHi, lo, hi)
	}
	below := slices.Clone(s)
	RemoveBelow(below, v)
	for i, x := range s {
		want := x
		if x < v {
			want = float32(math.Inf(-1))
		}
		if math.Float32bits(below[i]) != math.Float32bits(want) {
			t.Fatalf("trial %d (%d scores): RemoveBelow(%v)[%d] = %v, want %v", trial, len(s), v, i, below[i], want)
		}
	}
	removed := 0
	for removed < len(s) && s[removed] < -math.MaxFloat32 {
		removed++
	}
	if got := SkipRemoved(s); got > removed || got < removed-31 || got < 0 {
		t.Fatalf("trial %d (%d scores): SkipRemoved = %d, first kept at %d", trial, len(s), got, removed)
	}
	if got := CountAbove(s, v); got != above {
		t.Fatalf("trial %d (%d scores): CountAbove(%v) = %d, want %d", trial, len(s), v, got, above)
	}
	if got := CountEqual(s, v); got != equal {
		t.Fatalf("trial %d (%d scores): CountEqual(%v) = %d, want %d", trial, len(s), v, got, equal)
	}
}

// TestScoresMatchOneAtATime checks MaxNaN, CountKept, Argmax, SkipBelow,
// CountAbove and CountEqual against the scalar
// loop on lengths around the 32-score blocks, unaligned starts, and scores
// with NaNs of either sign, ±Inf, ±0 and the float32 extremes, in any
// lane.
func TestScoresMatchOneAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	odd := []float32{
		float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001),
		float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
	}
	buf := make([]float32, 49152+8)
	for trial := range 20000 {
		n := r.IntN(300)
		if trial%500 == 0 {
			n = 49152
		}
		off := r.IntN(8)
		s := buf[off : off+n]
		density := r.IntN(4) // how often a score is an odd one
		allRemoved := trial%7 == 0
		for i := range s {
			s[i] = float32(r.NormFloat64() * 10)
			if allRemoved {
				s[i] = float32(math.Inf(-1))
			}
			if density > 0 && r.IntN(50/density) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
		}
		if n > 1 && r.IntN(4) == 0 { // ties
			s[r.IntN(n)] = s[r.IntN(n)]
		}
		wantMax, wantNaN, wantKept := scoresRef(s)
		if got, want := Argmax(s), argmaxRef(s); got != want {
			t.Fatalf("trial %d (%d scores): Argmax = %d, want %d", trial, n, got, want)
		}
		v := odd[r.IntN(len(odd))] // a threshold: odd, random or a score
		if r.IntN(3) > 0 {
			v = float32(r.NormFloat64() * 10)
		}
		if n > 0 && r.IntN(2) == 0 {
			v = s[r.IntN(n)]
		}
		checkThreshold(t, trial, s, v)
		gotMax, gotNaN := MaxNaN(s)
		if gotMax != wantMax || gotNaN != wantNaN || math.IsNaN(float64(gotMax)) {
			t.Fatalf("trial %d (%d scores): MaxNaN = %v, %v; want %v, %v", trial, n, gotMax, gotNaN, wantMax, wantNaN)
		}
		if got := CountKept(s); got != wantKept {
			t.Fatalf("trial %d (%d scores): CountKept = %d, want %d", trial, n, got, wantKept)
		}
	}
}

func BenchmarkScores(b *testing.B) {
	s := make([]float32, 49152)
	for i := range s {
		s[i] = float32(i%97) - 40
	}
	s[len(s)*3/4] = 100 // the maximum, for Argmax's search
	b.Run("MaxNaN", func(b *testing.B) {
		for b.Loop() {
			MaxNaN(s)
		}
	})
	b.Run("Argmax", func(b *testing.B) {
		for b.Loop() {
			Argmax(s)
		}
	})
	b.Run("CountAbove", func(b *testing.B) {
		for b.Loop() {
			CountAbove(s, 50)
		}
	})
	b.Run("CountKept", func(b *testing.B) {
		for b.Loop() {
			CountKept(s)
		}
	})
}
