package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
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
		if want := rank(probs, chosen); rk != want {
			t.Fatalf("trial %d: rank of %d (p %v) is %d, want %d", trial, chosen, probs[chosen], rk, want)
		}
	}
}
