package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tracer/trace"
)

func isRemoved(v float32) bool { return math.IsInf(float64(v), -1) }

func kept(s []float32) []int {
	var ids []int
	for i, v := range s {
		if !isRemoved(v) {
			ids = append(ids, i)
		}
	}
	return ids
}

func TestRepetitionPenaltyOncePerDistinctID(t *testing.T) {
	s := []float32{2, -2, 3, 1}
	p := &RepetitionPenalty{Penalty: 2}
	p.Apply(s, []int{0, 1, 0, 0, 1})
	if want := []float32{1, -4, 3, 1}; !slices.Equal(s, want) {
		t.Errorf("got %v, want %v: positive scores divided, negative multiplied, once per id", s, want)
	}
	p.Apply(s, []int{3})
	if s[0] != 1 || s[3] != 0.5 {
		t.Errorf("second call: got %v; the scratch must not remember earlier ids", s)
	}
}

func TestTopKKeepsTies(t *testing.T) {
	s := []float32{1, 3, 2, 3, 2, 0}
	(&TopK{K: 3, MinKeep: 1}).Apply(s, nil)
	if got, want := kept(s), []int{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v: ties with the k-th score survive", got, want)
	}
}

func TestKthLargestMatchesSort(t *testing.T) {
	negInf := float32(math.Inf(-1))
	tests := []struct {
		name string
		v    []float32
	}{
		{"one", []float32{0.5}},
		{"distinct", []float32{3, -1, 4, 1, -5, 9, 2, 6}},
		{"ties", []float32{2, 7, 2, 7, 2, 7, 1}},
		{"all equal", []float32{4, 4, 4, 4}},
		{"removed scores", []float32{negInf, 1, negInf, 0, negInf}},
		{"sorted descending", []float32{9, 8, 7, 6, 5, 4, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sorted := slices.Clone(tt.v)
			slices.Sort(sorted)
			slices.Reverse(sorted)
			for k := 1; k <= len(tt.v); k++ {
				if got, want := kthLargest(slices.Clone(tt.v), k), sorted[k-1]; got != want {
					t.Errorf("kthLargest(%v, %d) = %v, want %v", tt.v, k, got, want)
				}
			}
		})
	}
}

func TestTopPBoundary(t *testing.T) {
	// probs 0.5, 0.3, 0.2: top_p 0.8 keeps the first two (cumsum of the
	// ascending order 0.2 <= 0.2 is removed); top_p 0.81 keeps all three.
	logits := func() []float32 {
		return []float32{float32(math.Log(0.5)), float32(math.Log(0.3)), float32(math.Log(0.2))}
	}
	for _, tc := range []struct {
		p    float64
		want []int
	}{{0.8, []int{0, 1}}, {0.81, []int{0, 1, 2}}, {0.3, []int{0}}, {1e-9, []int{0}}} {
		s := logits()
		(&TopP{P: tc.p, MinKeep: 1}).Apply(s, nil)
		if got := kept(s); !slices.Equal(got, tc.want) {
			t.Errorf("top_p %v: kept %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestMinP(t *testing.T) {
	// Threshold 0.1 × 0.6 = 0.06: 0.07 stays, 0.03 goes.
	s := []float32{float32(math.Log(0.6)), float32(math.Log(0.3)), float32(math.Log(0.07)), float32(math.Log(0.03))}
	(&MinP{P: 0.1, MinKeep: 1}).Apply(s, nil)
	if got, want := kept(s), []int{0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	// min_p 1 keeps only the most probable token.
	s = []float32{1, 3, 2}
	(&MinP{P: 1, MinKeep: 1}).Apply(s, nil)
	if got, want := kept(s), []int{1}; !slices.Equal(got, want) {
		t.Errorf("min_p 1: kept %v, want %v", got, want)
	}
}

func TestPipelineOrderAndNoOps(t *testing.T) {
	o := trace.Options{DoSample: true, Temperature: 0.7, TopK: 5, TopP: 0.9, MinP: 0.05, RepetitionPenalty: 1.3, NumBeams: 1, EOSTokenID: []int{1}, MinNewTokens: 2}
	var names []string
	for _, p := range Pipeline(o, 3) {
		names = append(names, p.Name())
	}
	if want := []string{"repetition_penalty", "min_new_tokens", "temperature", "top_k", "top_p", "min_p"}; !slices.Equal(names, want) {
		t.Errorf("pipeline %v, want transformers' order %v", names, want)
	}
	off := trace.Options{DoSample: true, Temperature: 1, TopK: 0, TopP: 1, RepetitionPenalty: 1, NumBeams: 1}
	if ps := Pipeline(off, 3); len(ps) != 0 {
		t.Errorf("settings that change nothing built %d stages, want none", len(ps))
	}
	o.DoSample = false
	if ps := Pipeline(o, 3); len(ps) != 2 {
		t.Errorf("greedy built %d stages, want the 2 processors and no warpers", len(ps))
	}
}

func TestSeededRandIsAddressedByStepAndRow(t *testing.T) {
	r := SeededRand{Seed: 7}
	if r.Uniform(3, 1) != (SeededRand{Seed: 7}).Uniform(3, 1) {
		t.Error("same seed, step and row gave different draws")
	}
	seen := map[float64]bool{}
	var sum float64
	for step := range 1000 {
		u := r.Uniform(step, 0)
		if u < 0 || u >= 1 || seen[u] {
			t.Fatalf("draw %v at step %d: want distinct values in [0, 1)", u, step)
		}
		seen[u] = true
		sum += u
	}
	if mean := sum / 1000; mean < 0.45 || mean > 0.55 {
		t.Errorf("mean of 1000 draws %v, want about 0.5", mean)
	}
	if r.Uniform(3, 0) == r.Uniform(3, 1) || r.Uniform(3, 0) == (SeededRand{Seed: 8}).Uniform(3, 0) {
		t.Error("rows or seeds share draws")
	}
}

func TestTopIDs(t *testing.T) {
	s := []float32{1, float32(math.Inf(-1)), 5, 3, 5, 2}
	if got, want := topIDs(s, 3), []int{2, 4, 3}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v (descending, ties by lower id)", got, want)
	}
	if got := topIDs(s, 10); len(got) != 5 {
		t.Errorf("got %v: removed tokens must not be listed", got)
	}
}

// TestTopIDsMatchesSort checks topIDs, which passes over blocks of scores
// below its heap's root in eight lanes, against sorting every finite score
// (descending, ties by lower id), on vectors with ties, NaNs and ±Inf, of
// lengths around the blocks of 32 and of a vocabulary.
func TestTopIDsMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	odd := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))}
	for trial := range 3000 {
		n := r.IntN(200)
		if trial%300 == 0 {
			n = 49152
		}
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.IntN(40) - 20) // many ties
			if trial%2 == 0 {
				s[i] = float32(r.NormFloat64())
			}
			if r.IntN(20) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
		}
		k := 1 + r.IntN(50)
		var want []int
		for id, v := range s {
			if v == v && v >= -math.MaxFloat32 {
				want = append(want, id)
			}
		}
		slices.SortStableFunc(want, func(a, b int) int {
			switch {
			case s[a] > s[b]:
				return -1
			case s[a] < s[b]:
				return 1
			}
			return 0
		})
		want = want[:min(k, len(want))]
		if got := topIDs(s, k); !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d scores, top %d): got %v, want %v", trial, n, k, got, want)
		}
	}
}

// topPRef is TopP over every score, the -Inf ones sorted with the rest.
func topPRef(s []float32, P float64, minKeep int) {
	n := len(s)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, ascendingScore(s))
	probs := make([]float32, n)
	softmaxInto(probs, s, order)
	var cum float64
	for r, id := range order {
		cum += float64(probs[r])
		if float32(cum) <= float32(1-P) && r < n-minKeep {
			s[id] = negInf
		}
	}
}

// TestTopPSkipsRemoved checks that TopP, which sorts only the scores not
// already at -Inf, removes exactly what the sort of every score removes:
// after a top-k, with ties, with min_tokens_to_keep beyond the survivors,
// and with every score at -Inf.
func TestTopPSkipsRemoved(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	p := &TopP{}
	for trial := range 3000 {
		n := 1 + r.IntN(300)
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.IntN(40)) / 8 // ties
			if r.IntN(3) > 0 {
				s[i] = negInf
			}
		}
		if trial%50 == 0 {
			for i := range s {
				s[i] = negInf
			}
		}
		p.P, p.MinKeep = []float64{0.1, 0.5, 0.9, 0.95, 0.999, 1e-9}[r.IntN(6)], 1+r.IntN(8)
		want := slices.Clone(s)
		topPRef(want, p.P, p.MinKeep)
		p.Apply(s, nil)
		if !slices.Equal(kept(s), kept(want)) {
			t.Fatalf("trial %d (n %d, top_p %v, min keep %d): kept %v, want %v", trial, n, p.P, p.MinKeep, kept(s), kept(want))
		}
	}
}

// temperatureRef is Temperature.Apply one score at a time.
func temperatureRef(s []float32, T float64) {
	m, big := negInf, float32(0)
	for _, v := range s {
		if !isInf32(v) && v == v {
			m = max(m, v)
			big = max(big, v, -v)
		}
	}
	t := float32(T)
	if t > 0 && !isInf32(t) && float64(big)/T <= math.MaxFloat32 {
		for i := range s {
			s[i] /= t
		}
		return
	}
	for i, v := range s {
		if isInf32(v) || v != v {
			continue
		}
		s[i] = float32(float64(v-m) / T)
	}
}

// TestTemperatureMatchesLoop checks Temperature (its range scan and
// division in eight lanes) against one score at a time, bit for bit:
// scores with ±Inf, NaN, zeros and extremes, temperatures from 1e-45 to
// 1e30, so that both the plain division and the shifted one run.
func TestTemperatureMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	odd := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0,
		float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32, 1e-30}
	temps := []float64{1e-45, 1e-30, 1e-5, 0.3, 0.7, 1, 1.5, 1e10, 1e30}
	for trial := range 4000 {
		s := make([]float32, r.IntN(300))
		for i := range s {
			s[i] = float32(r.NormFloat64() * 10)
			if r.IntN(10) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
		}
		T := temps[r.IntN(len(temps))]
		got, want := slices.Clone(s), slices.Clone(s)
		(&Temperature{T: T}).Apply(got, nil)
		temperatureRef(want, T)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("trial %d (%d scores, T %v): [%d] = %v, want %v", trial, len(s), T, i, got[i], want[i])
			}
		}
	}
}

// TestTopKMatchesSort checks TopK (the k-th largest from a heap, blocks
// below its root passed over in eight lanes, then the removal in lanes)
// against sorting: every score below the k-th largest removed, ties with
// it kept, on vectors with ties, ±Inf, zeros of both signs and removed
// scores, k from 1 to past the vocabulary and past the heap's bound.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	odd := []float32{float32(math.Inf(1)), negInf, 0, float32(math.Copysign(0, -1))}
	for trial := range 3000 {
		n := 1 + r.IntN(400)
		if trial%300 == 0 {
			n = 49152
		}
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.IntN(60) - 30) // ties
			if trial%2 == 0 {
				s[i] = float32(r.NormFloat64())
			}
			if r.IntN(15) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
		}
		k := 1 + r.IntN(60)
		if trial%10 == 0 {
			k = 1 + r.IntN(2*n)
		}
		sorted := slices.Clone(s)
		slices.Sort(sorted)
		kth := sorted[n-min(k, n)]
		want := slices.Clone(s)
		for i, v := range want {
			if v < kth {
				want[i] = negInf
			}
		}
		got := slices.Clone(s)
		(&TopK{K: k}).Apply(got, nil)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d (%d scores, k %d): [%d] = %v, want %v", trial, n, k, i, got[i], want[i])
			}
		}
	}
}
