package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pickRef is the reference of picker.pick: every kept token sorted by
// descending probability (ties by id), walked until the draw.
func pickRef(probs []float32, u float64) (id int, lo, hi float64) {
	var ids []int
	var total float64
	for i, p := range probs {
		if p > 0 {
			ids = append(ids, i)
			total += float64(p)
		}
	}
	slices.SortFunc(ids, func(a, b int) int {
		switch {
		case probs[a] > probs[b]:
			return -1
		case probs[a] < probs[b]:
			return 1
		}
		return a - b
	})
	target := u * total
	for _, i := range ids {
		lo, hi = hi, hi+float64(probs[i])
		if target < hi {
			return i, lo / total, hi / total
		}
	}
	last := ids[len(ids)-1]
	return last, (hi - float64(probs[last])) / total, 1
}

// testDists are distributions pick meets: sharp and flat softmaxes, ties,
// top-k style removals, tiny tails and unnormalised weights.
func testDists(r *rand.Rand) map[string][]float32 {
	const vocab = 3000
	soft := func(temp float64, keep int, dup bool) []float32 {
		s := make([]float32, vocab)
		for i := range s {
			s[i] = float32(r.NormFloat64() * 3 / temp)
			if dup {
				s[i] = float32(math.Round(float64(s[i])))
			}
		}
		if keep > 0 {
			sorted := slices.Clone(s)
			slices.Sort(sorted)
			kth := sorted[len(sorted)-keep]
			for i := range s {
				if s[i] < kth {
					s[i] = float32(math.Inf(-1))
				}
			}
		}
		p := make([]float32, vocab)
		Softmax(p, s)
		return p
	}
	uniform := make([]float32, vocab)
	for i := range uniform {
		uniform[i] = 1.0 / vocab
	}
	weights := make([]float32, vocab)
	for i := range weights {
		weights[i] = float32(r.IntN(4))
	}
	return map[string][]float32{
		"sharp": soft(0.3, 0, false), "flat": soft(5, 0, false), "normal": soft(1, 0, false),
		"ties": soft(1, 0, true), "top50": soft(1, 50, false), "top5-ties": soft(0.5, 5, true),
		"uniform": uniform, "weights": weights, "one": soft(0.01, 1, false),
	}
}

func TestPickMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var pk picker
	for name, probs := range testDists(r) {
		us := []float64{0, 0.5, 1 - 1e-12, math.Nextafter(1, 0)}
		for range 300 {
			us = append(us, r.Float64())
		}
		for _, u := range us {
			id, lo, hi, _ := pk.pick(probs, u)
			wid, wlo, whi := pickRef(probs, u)
			if id != wid || lo != wlo || hi != whi {
				t.Errorf("%s, u=%v: pick = (%d, %v, %v), reference (%d, %v, %v)", name, u, id, lo, hi, wid, wlo, whi)
			}
		}
	}
}

// FuzzPick compares pick with its reference on softmaxes of scores divided
// by any temperature from 5e-324 to 1e30 (through the Temperature
// processor, so a tiny one tends to greedy rather than to NaN), with some
// tokens removed.
func FuzzPick(f *testing.F) {
	f.Add(uint64(1), 0.5, 1.0, uint16(100))
	f.Add(uint64(2), 0.999999, 8.0, uint16(3))
	f.Add(uint64(3), 0.25, 5e-324, uint16(40))
	f.Add(uint64(4), 0.75, 1e-45, uint16(500))
	f.Add(uint64(5), 0.1, 1e30, uint16(1999))
	f.Fuzz(func(t *testing.T, seed uint64, u, temp float64, n uint16) {
		if !(u >= 0 && u < 1) || !(temp > 0 && temp <= 1e30) {
			return
		}
		r := rand.New(rand.NewPCG(seed, 3))
		s := make([]float32, 1+int(n)%2000)
		for i := range s {
			s[i] = float32(math.Round(r.NormFloat64() * 4))
			if r.IntN(4) == 0 {
				s[i] = float32(math.Inf(-1))
			}
		}
		s[0] = 0 // at least one kept token
		(&Temperature{T: temp}).Apply(s, nil)
		probs := make([]float32, len(s))
		Softmax(probs, s)
		var sum float64
		for _, p := range probs {
			if !(p >= 0 && p <= 1) {
				t.Fatalf("temperature %v: probability %v", temp, p)
			}
			sum += float64(p)
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Fatalf("temperature %v: probabilities sum to %v, want 1", temp, sum)
		}
		var pk picker
		id, lo, hi, ok := pk.pick(probs, u)
		if !ok {
			t.Fatalf("temperature %v: pick found no mass in a distribution summing to %v", temp, sum)
		}
		wid, wlo, whi := pickRef(probs, u)
		if id != wid || lo != wlo || hi != whi {
			t.Errorf("pick = (%d, %v, %v), reference (%d, %v, %v)", id, lo, hi, wid, wlo, whi)
		}
	})
}

func TestPickAllocatesNothing(t *testing.T) {
	probs := testDists(rand.New(rand.NewPCG(3, 4)))["flat"]
	var pk picker
	pk.pick(probs, 0.5)
	if n := testing.AllocsPerRun(20, func() { pk.pick(probs, 0.7) }); n != 0 {
		t.Errorf("pick allocates %v times, want 0", n)
	}
}

func BenchmarkPick(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	s := make([]float32, 49152)
	for i := range s {
		s[i] = float32(r.NormFloat64() * 2)
	}
	probs := make([]float32, len(s))
	Softmax(probs, s)
	var pk picker
	for _, u := range []float64{0.1, 0.5, 0.9} {
		b.Run(fmt.Sprintf("u=%v", u), func(b *testing.B) {
			for b.Loop() {
				pk.pick(probs, u)
			}
		})
		b.Run(fmt.Sprintf("ref/u=%v", u), func(b *testing.B) {
			for b.Loop() {
				pickRef(probs, u)
			}
		})
	}
}

// softmaxAll is Softmax over every score, exponentials of the removed ones
// included: the definition softmaxKept must match bit for bit.
func softmaxAll(dst, s []float32) {
	m := negInf
	for _, v := range s {
		if v > m {
			m = v
		}
	}
	softmaxBlocks(dst, s, m)
}

// TestSoftmaxKeptMatchesAll checks Softmax on scores mostly removed (the
// kept ones alone, softmaxKept) against the exponentials of all, bit for
// bit: kept scores in the last ones that Softmax's last block leaves to
// Go, ties, both zeros, scores whose exponential underflows, vocabulary
// sizes around the block and SmolLM2's, and the fallbacks (a NaN, +Inf,
// all removed, too many kept).
func TestSoftmaxKeptMatchesAll(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	odd := []float32{0, float32(math.Copysign(0, -1)), -200, 60, 3}
	for trial := range 4000 {
		n := 1 + r.IntN(3*expBlock)
		switch trial % 10 {
		case 0:
			n = 49152 + r.IntN(4)
		case 1:
			n = expBlock*(1+r.IntN(3)) + r.IntN(4)
		}
		s := make([]float32, n)
		for i := range s {
			s[i] = negInf
		}
		kept := 1 + r.IntN(max(1, n/8))
		if trial%50 == 0 {
			kept = n // dense
		}
		for range kept {
			i := r.IntN(n)
			if r.IntN(4) == 0 {
				i = n - 1 - r.IntN(min(n, 4)) // the last ones
			}
			s[i] = float32(r.IntN(64))/8 - 4 // ties
			if r.IntN(6) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
		}
		switch trial % 97 {
		case 1:
			s[r.IntN(n)] = float32(math.NaN())
		case 2:
			s[r.IntN(n)] = float32(math.Inf(1))
		case 3:
			for i := range s {
				s[i] = negInf
			}
		}
		got, want := make([]float32, n), make([]float32, n)
		for i := range got {
			got[i] = 42 // Softmax writes every entry
		}
		Softmax(got, s)
		softmaxAll(want, s)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d, %d scores: probability %d is %v, want %v", trial, n, i, got[i], want[i])
			}
		}
	}
}

// TestScanScoresMatchesOneAtATime checks scanScores, whose usual case is
// one vector pass, against the loop over every score: the first NaN or
// +Inf, and whether every score is -Inf (none at all included).
func TestScanScoresMatchesOneAtATime(t *testing.T) {
	ref := func(s []float32) (int, bool) {
		empty := true
		for i, v := range s {
			if v != v || v > math.MaxFloat32 {
				return i, false
			}
			if v >= -math.MaxFloat32 {
				empty = false
			}
		}
		return -1, empty
	}
	r := rand.New(rand.NewPCG(15, 16))
	odd := []float32{float32(math.NaN()), float32(math.Inf(1)), negInf, math.MaxFloat32, -math.MaxFloat32, 0}
	for trial := range 20000 {
		n := r.IntN(200)
		s := make([]float32, n)
		removed := trial%3 == 0
		for i := range s {
			s[i] = float32(r.NormFloat64())
			if removed {
				s[i] = negInf
			}
			if r.IntN(60) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
		}
		gotBad, gotEmpty := scanScores(s)
		wantBad, wantEmpty := ref(s)
		if gotBad != wantBad || gotEmpty != wantEmpty {
			t.Fatalf("%v: scanScores = %d, %v; want %d, %v", s, gotBad, gotEmpty, wantBad, wantEmpty)
		}
	}
}
