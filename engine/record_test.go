package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tracer/engine/tensor"
	"tracer/trace"
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

// TestLocalStageMatchesFull checks the stages of processors that change a
// few scores (repetition penalty, min_new_tokens), whose log-sum-exp is
// updated from the previous one (localLSE), against the same stage taken
// over the whole vocabulary: the same kept count and ids, probabilities
// within 1e-12. Contexts repeat ids and hold the top token, removed ones
// and scores of 0; penalties above and below 1 (a score can rise far above
// the others); NaN and +Inf logits; and contexts holding most of the mass,
// where the update must decline. It also checks that the update is taken
// where it should be.
func TestLocalStageMatchesFull(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	var taken, declined int
	for trial := range 3000 {
		n := 256 + r.IntN(3000)
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * 3)
		}
		switch trial % 40 {
		case 1:
			logits[r.IntN(n)] = float32(math.NaN())
		case 2:
			logits[r.IntN(n)] = float32(math.Inf(1))
		case 3:
			logits[r.IntN(n)] = float32(math.Inf(-1))
		case 4:
			logits[r.IntN(n)] = 0
		}
		top := topIDs(logits, 1)
		ctx := make([]int, r.IntN(n/maxTouched+4))
		for i := range ctx {
			ctx[i] = r.IntN(n)
			if r.IntN(8) == 0 && len(top) > 0 {
				ctx[i] = top[0] // the most probable, repeated
			}
		}
		if trial%5 == 0 && len(top) > 0 {
			logits[top[0]] += 30 // most of the mass, in the context
			ctx = append(ctx, top[0])
		}
		var p Processor = &RepetitionPenalty{Penalty: []float64{1.1, 1.5, 0.5, 0.01}[r.IntN(4)]}
		if trial%7 == 0 {
			p = &MinNewTokens{PromptLen: len(ctx), Min: 3, EOS: []int{r.IntN(n), r.IntN(n)}}
		}

		local := &recorder{top: 20}
		var row trace.StepRow
		local.raw(&row, logits)
		s := slices.Clone(logits)
		local.before(p, s, ctx)
		p.Apply(s, ctx)
		lse, ok := local.localLSE(s)
		got := local.stage(p, s)
		if ok {
			taken++
		} else {
			declined++
		}
		if ok && !(lse == local.lse) {
			t.Fatalf("trial %d: localLSE gave %v, the stage kept %v", trial, lse, local.lse)
		}

		full := &recorder{top: 20}
		want := full.stage(p, s)
		if got.Kept != want.Kept || len(got.Top) != len(want.Top) {
			t.Fatalf("trial %d: kept %d, %d candidates; want %d, %d", trial, got.Kept, len(got.Top), want.Kept, len(want.Top))
		}
		for i := range want.Top {
			g, w := got.Top[i], want.Top[i]
			same := g.Prob == w.Prob || math.Abs(g.Prob-w.Prob) <= 1e-12*math.Abs(w.Prob) || math.IsNaN(g.Prob) && math.IsNaN(w.Prob)
			if g.ID != w.ID || !same {
				t.Fatalf("trial %d (%s, taken %v): candidate %d is %+v, want %+v", trial, p.Name(), ok, i, g, w)
			}
		}
		if math.Abs(local.lse-full.lse) > 1e-12*math.Abs(full.lse) && !(math.IsNaN(local.lse) && math.IsNaN(full.lse)) && local.lse != full.lse {
			t.Fatalf("trial %d: log-sum-exp %v, over every score %v", trial, local.lse, full.lse)
		}
	}
	// A fifth of the trials put most of the mass in the context, one in
	// twenty holds a NaN or +Inf, and some contexts run past
	// len(s)/maxTouched ids: most of the rest should take the update.
	if taken < 1500 || declined < 600 {
		t.Errorf("the update was taken %d times and declined %d times", taken, declined)
	}
}
