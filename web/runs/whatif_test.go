package runs

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/words"
)

// The what-if at step 0 of a run with one setting must give what the
// engine gives when it runs with the other setting on the same seed: the
// same kept set and probabilities, the same draw interval and token.
func TestWhatIfMatchesTheEngine(t *testing.T) {
	m := testsupport.RandomModel(t, 300)
	base := WhatIfSettings{Temperature: 1, TopK: 0, TopP: 1, MinP: 0}
	cases := []struct {
		name string
		set  WhatIfSettings
	}{
		{"as run", base},
		{"cold", WhatIfSettings{Temperature: 0.3, TopP: 1}},
		{"hot", WhatIfSettings{Temperature: 2.5, TopP: 1}},
		{"top-k 5", WhatIfSettings{Temperature: 1, TopK: 5, TopP: 1}},
		{"top-p 0.5", WhatIfSettings{Temperature: 0.8, TopP: 0.5}},
		{"min-p 0.05", WhatIfSettings{Temperature: 1.2, TopP: 1, MinP: 0.05}},
		{"all four", WhatIfSettings{Temperature: 0.7, TopK: 40, TopP: 0.9, MinP: 0.01}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(8) {
				a := sampledRun(t, m, base, seed)
				b := sampledRun(t, m, tc.set, seed)
				w := WhatIfStep{T: *a, Steps: a.Steps, pos: 0}
				got, err := ReSample(w, tc.set)
				if err != nil {
					t.Fatal(err)
				}
				want := b.Steps[0].Rows[0]
				if got.Row.Chosen.ID != want.Chosen.ID || got.Row.Chosen.Rank != want.Chosen.Rank {
					t.Errorf("seed %d: chose %d (rank %d), want %d (rank %d)", seed, got.Row.Chosen.ID, got.Row.Chosen.Rank, want.Chosen.ID, want.Chosen.Rank)
				}
				if got.Row.Final.KeptCount != want.Final.KeptCount {
					t.Errorf("seed %d: kept %d, want %d", seed, got.Row.Final.KeptCount, want.Final.KeptCount)
				}
				for k, id := range got.Row.Final.IDs[:min(len(got.Row.Final.IDs), len(want.Final.IDs))] {
					if id != want.Final.IDs[k] || math.Abs(got.Row.Final.Probs[k]-want.Final.Probs[k]) > 1e-7 {
						t.Errorf("seed %d: final[%d] = %d %g, want %d %g", seed, k, id, got.Row.Final.Probs[k], want.Final.IDs[k], want.Final.Probs[k])
						break
					}
				}
				gd, wd := got.Row.Draw, want.Draw
				if gd == nil || wd == nil || gd.U != wd.U || math.Abs(gd.CumBefore-wd.CumBefore) > 1e-9 || math.Abs(gd.CumAfter-wd.CumAfter) > 1e-9 {
					t.Errorf("seed %d: draw %+v, want %+v", seed, gd, wd)
				}
				if len(got.Row.Stages) != len(want.Stages) {
					t.Fatalf("seed %d: %d stages, want %d", seed, len(got.Row.Stages), len(want.Stages))
				}
				for k, st := range got.Row.Stages {
					if st.Name != want.Stages[k].Name || st.Kept != want.Stages[k].Kept {
						t.Errorf("seed %d: stage %s kept %d, want %s kept %d", seed, st.Name, st.Kept, want.Stages[k].Name, want.Stages[k].Kept)
					}
				}
			}
		})
	}
}

// Without every raw logit the what-if works on the recorded candidates and
// says how many of the vocabulary those are.
func TestWhatIfPartialVocabulary(t *testing.T) {
	m := testsupport.RandomModel(t, 300)
	a := sampledRun(t, m, WhatIfSettings{Temperature: 1, TopP: 1}, 1)
	for i := range a.Steps {
		a.Steps[i].Rows[0].Logits = nil
	}
	w := WhatIfStep{T: *a, Steps: a.Steps, pos: 0}
	out, err := ReSample(w, WhatIfSettings{Temperature: 0.5, TopP: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(a.Steps[0].Rows[0].Candidates); out.partial != n {
		t.Errorf("partial: got %d, want the %d recorded candidates", out.partial, n)
	}
	if out.Row.Final.KeptCount != out.partial {
		t.Errorf("kept %d, want the %d known tokens", out.Row.Final.KeptCount, out.partial)
	}
	v := BuildWhatIf(w, out, words.Words{Lang: "en"})
	if len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "dbg-whatif-partial") {
		t.Errorf("notes: got %q, want the partial-vocabulary note", v.Notes)
	}
}

func TestWhatIfFormErrors(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	k := func(v int) *int { return &v }
	cases := []struct {
		name string
		form WhatIfForm
		says string
	}{
		{"zero temperature", WhatIfForm{Temperature: f(0)}, "temperature 0 is out of range"},
		{"NaN temperature", WhatIfForm{Temperature: f(math.NaN())}, "temperature NaN is out of range"},
		{"negative top-k", WhatIfForm{TopK: k(-1)}, "top_k -1 is out of range: give 0 (off) to 300"},
		{"top-k past the vocabulary", WhatIfForm{TopK: k(301)}, "top_k 301 is out of range"},
		{"top-p 0", WhatIfForm{TopP: f(0)}, "top_p 0 is out of range"},
		{"top-p above 1", WhatIfForm{TopP: f(1.5)}, "top_p 1.5 is out of range"},
		{"min-p above 1", WhatIfForm{MinP: f(2)}, "min_p 2 is out of range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.form.Apply(WhatIfSettings{Temperature: 1, TopP: 1}, 300)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want an error saying %q", err, tc.says)
			}
		})
	}
}

// BenchmarkWhatIf re-samples one step of a SmolLM2-sized vocabulary with
// the four settings on, as one slider move does on the server.
func BenchmarkWhatIf(b *testing.B) {
	for _, vocab := range []int{50257, 49152} {
		b.Run(strconv.Itoa(vocab), func(b *testing.B) {
			logits := make(trace.Logits, vocab)
			for i := range logits {
				logits[i] = float32(math.Sin(float64(i)*0.37)) * 6
			}
			st := trace.Step{Rows: []trace.StepRow{{Logits: logits, Draw: &trace.Draw{U: 0.4}}}}
			w := WhatIfStep{T: trace.Trace{Model: trace.Model{VocabSize: vocab}, Options: trace.Options{RepetitionPenalty: 1}}, Steps: []trace.Step{st}}
			set := WhatIfSettings{Temperature: 0.7, TopK: 50, TopP: 0.9, MinP: 0.02}
			b.SetBytes(int64(4 * vocab))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ReSample(w, set); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// drawFrom orders only the leading tokens unless the draw falls past
// them; both ways must agree with ordering every token.
func TestDrawFromAgreesWithAFullOrder(t *testing.T) {
	flat := make([]float32, 5000)
	for i := range flat {
		flat[i] = float32(1+i%7) / 20000
	}
	peaked := slices.Clone(flat)
	peaked[4321] = 0.9
	cases := []struct {
		name  string
		probs []float32
		u     float64
	}{
		{"flat, early", flat, 0.01},
		{"flat, past the lead", flat, 0.97},
		{"flat, the very end", flat, 0.999999},
		{"peaked, in the peak", peaked, 0.5},
		{"peaked, in the tail", peaked, 0.995},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, lo, hi := drawFrom(tc.probs, tc.u)
			all := byProb(tc.probs, len(tc.probs))
			var total, cum float64
			for _, p := range tc.probs {
				total += float64(p)
			}
			wid, wlo, whi := -1, 0.0, 0.0
			for _, k := range all {
				prev := cum
				cum += float64(tc.probs[k])
				if tc.u*total < cum {
					wid, wlo, whi = k, prev/total, cum/total
					break
				}
			}
			if id != wid || lo != wlo || hi != whi {
				t.Errorf("got %d [%g, %g), want %d [%g, %g)", id, lo, hi, wid, wlo, whi)
			}
		})
	}
}

// A run of several prompts keeps its raw logits for the what-if only while
// its memory estimate, counting them, stays within --max-run-mib; a single
// prompt never keeps them (the what-if recomputes them from its cache).
func TestKeepLogitsWithinTheRunLimit(t *testing.T) {
	m := testsupport.RandomModel(t, 49152)
	info := m.Model.Info()
	o := trace.Options{MaxNewTokens: 100, RecordTop: 20, UseCache: true}
	if s := (&Runner{cfg: Config{MaxRunBytes: 1 << 40}}); s.keepLogits(info, o, [][]int{{1, 2, 3}}) {
		t.Error("a single prompt keeps its logits; want them recomputed from the cache")
	}
	prompts := [][]int{{1, 2, 3}, {4, 5, 6}}
	without := estimateRun(info, o, prompts).total()
	o.FullLogits = true
	with := estimateRun(info, o, prompts).total()
	o.FullLogits = false
	cases := []struct {
		name  string
		limit float64
		want  bool
	}{
		{"room for them", with + 1, true},
		{"room for the run alone", (with + without) / 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Runner{cfg: Config{MaxRunBytes: int64(tc.limit)}}
			if got := s.keepLogits(info, o, prompts); got != tc.want {
				t.Errorf("limit %.0f (run %.0f, with logits %.0f): got %v, want %v", tc.limit, without, with, got, tc.want)
			}
		})
	}
}

// sampledRun generates a few sampled steps of m with settings and seed,
// keeping every raw logit.
func sampledRun(t *testing.T, m *models.Loaded, set WhatIfSettings, seed uint64) *trace.Trace {
	t.Helper()
	yes, n := true, 3
	req, err := m.Request(models.Input{IDs: [][]int{{5, 9, 11}}}, &engine.Settings{
		DoSample: &yes, Temperature: &set.Temperature, TopK: &set.TopK, TopP: &set.TopP, MinP: &set.MinP, Seed: &seed, MaxNewTokens: &n,
	})
	if err != nil {
		t.Fatal(err)
	}
	req.Record, req.Options.FullLogits = true, true
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
