package bench

import (
	"context"
	"testing"

	"tracer/engine/tensor"
)

func TestLocalAB(t *testing.T) {
	m := smolModel(t, tensor.F32)
	for _, threads := range []int{2, 1} {
		m.SetThreads(threads)
		req, err := newRequest(m, Options{PromptLen: 64, NewTokens: 1, Seed: 1}, false)
		if err != nil {
			t.Fatal(err)
		}
		flops := float64(m.Cost(1, 0, 64).FLOPs)
		modes := []int{0, 1}
		best := map[int]float64{}
		sum := map[int]float64{}
		const reps = 15
		for rep := 0; rep < reps; rep++ {
			for _, md := range modes {
				tensor.LocalMode = md
				tm, err := generate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				g := flops / tm.prefill.Seconds() / 1e9
				best[md] = max(best[md], g)
				sum[md] += g
			}
		}
		for _, md := range modes {
			t.Logf("threads %d mode %d best %.1f mean %.1f", threads, md, best[md], sum[md]/reps)
		}
	}
}
