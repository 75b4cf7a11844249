package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tracer/engine/tensor"
)

// TestFinalFromKeptProbabilities checks the final distribution and the
// chosen token's rank that final takes from the gathered positive
// probabilities (few tokens kept) against the same taken over the whole
// vocabulary: ties, probabilities that underflowed to 0, and a chosen
// (forced) token of probability 0.
func TestFinalFromKeptProbabilities(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	rec := &recorder{top: 20}
	for trial := range 4000 {
		n := 64 + r.IntN(400)
		probs := make([]float32, n)
		kept := 1 + r.IntN(n/8) // few: the gathered path
		for _, id := range r.Perm(n)[:kept] {
			probs[id] = float32(1+r.IntN(6)) / 8 // ties
			if r.IntN(10) == 0 {
				probs[id] = 0 // kept, but its probability underflowed
			}
		}
		chosen := r.IntN(n)
		got, rk := rec.final(probs, kept, chosen)

		// The whole vocabulary: the top ids by probability, ties by id,
		// stopping at the first of probability 0.
		var ids []int
		for _, id := range topIDs(probs, rec.top) {
			if probs[id] <= 0 {
				break
			}
			ids = append(ids, id)
		}
		if !slices.Equal(got.IDs, ids) || got.KeptCount != kept || len(got.Probs) != len(ids) {
			t.Fatalf("trial %d: final ids %v (kept %d), want %v (kept %d)", trial, got.IDs, got.KeptCount, ids, kept)
		}
		for i, id := range ids {
			if got.Probs[i] != float64(probs[id]) {
				t.Fatalf("trial %d: probability of %d is %v, want %v", trial, id, got.Probs[i], probs[id])
			}
		}
		if want := rankRef(probs, chosen); rk != want || rank(probs, chosen) != want {
			t.Fatalf("trial %d: rank of %d (p %v) is %d (rank %d), want %d", trial, chosen, probs[chosen], rk, rank(probs, chosen), want)
		}
	}
}

// rankRef is rank one probability at a time.
func rankRef(probs []float32, id int) int {
	r := 1
	p := probs[id]
	for i, q := range probs {
		if q > p || q == p && i < id {
			r++
		}
	}
	return r
}

// TestStageTopGathers checks stageTop's gathered path (few scores kept)
// against the whole-vocabulary one: the same kept count, ids and logits,
// and probabilities within rounding (the log-sum-exp adds the same terms in
// other partial sums), on vectors of -Inf with kept scores (ties, a NaN,
// +Inf) at any offset around the blocks of 32.
func TestStageTopGathers(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	rec := &recorder{top: 20}
	var sc sparseScratch
	for trial := range 3000 {
		n := 64 + r.IntN(2000)
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(math.Inf(-1))
		}
		kept := 1 + r.IntN(n/8-1)
		for _, id := range r.Perm(n)[:kept] {
			s[id] = float32(r.IntN(12)) / 4 // ties
		}
		if trial%50 == 0 {
			s[r.IntN(n)] = float32(math.NaN())
		}
		if trial%70 == 0 {
			s[r.IntN(n)] = float32(math.Inf(1))
		}
		wantKept := tensor.CountKept(s)
		want := rec.candidates(s, logSumExp(s))
		gotKept, got := rec.stageTop(s, &sc)
		if gotKept != wantKept || len(got) != len(want) {
			t.Fatalf("trial %d: kept %d, %d candidates; want %d, %d", trial, gotKept, len(got), wantKept, len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			same := g.Prob == w.Prob || math.Abs(g.Prob-w.Prob) <= 1e-12*math.Abs(w.Prob) || math.IsNaN(g.Prob) && math.IsNaN(w.Prob)
			if g.ID != w.ID || math.Float32bits(g.Logit) != math.Float32bits(w.Logit) || !same {
				t.Fatalf("trial %d: candidate %d is %+v, want %+v", trial, i, g, w)
			}
		}
	}
}
