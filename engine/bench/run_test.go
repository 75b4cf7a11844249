package bench

import (
	"context"
	"slices"
	"testing"

	"tracer/engine/arch"
	"tracer/engine/tensor"
)

// tinyModel is a small random Llama.
func tinyModel(t testing.TB) *arch.Model {
	t.Helper()
	s := arch.Shape{Arch: "llama", VocabSize: 300, Hidden: 64, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 96, MaxPositions: 256, Tied: true}
	m, err := arch.NewRandom("tiny", s, tensor.BF16, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestRun(t *testing.T) {
	m := tinyModel(t)
	for _, record := range []bool{false, true} {
		r, err := Run(context.Background(), m, Options{
			Threads: 2, PromptLen: 8, NewTokens: 12, Reps: 2, Record: record,
			ProbeBytes: 8 << 20, ProbeReps: 2, FMARounds: 10000,
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.Model != "random-tiny" || r.DType != "bf16" || r.Threads != 2 || r.Reps != 2 {
			t.Errorf("report header %+v", r)
		}
		if r.DecodeTokensPerSec.Min <= 0 || r.DecodeTokensPerSec.Min > r.DecodeTokensPerSec.Median || r.PrefillTokensPerSec.Max <= 0 {
			t.Errorf("speeds: decode %+v, prefill %+v", r.DecodeTokensPerSec, r.PrefillTokensPerSec)
		}
		if c := m.Cost(1, 8, 1); r.BytesPerToken < c.WeightBytes {
			t.Errorf("bytes per token %d, less than the weights %d", r.BytesPerToken, c.WeightBytes)
		}
		if len(r.BandwidthBefore) != 2 || len(r.BandwidthBetween) != 2 || len(r.BandwidthAfter) != 2 || r.BandwidthLimitGBps <= 0 || r.BandwidthFraction <= 0 || len(r.FMA) != 2 || len(r.FMAAfter) != 2 {
			t.Errorf("bandwidth %+v / %+v / %+v, limit %v, fraction %v, fma %+v / %+v", r.BandwidthBefore, r.BandwidthBetween, r.BandwidthAfter, r.BandwidthLimitGBps, r.BandwidthFraction, r.FMA, r.FMAAfter)
		}
		// The limit is the best probe at 2 threads: before, between the
		// two repetitions or after.
		limit := 0.0
		for _, b := range slices.Concat(r.BandwidthBefore, r.BandwidthBetween, r.BandwidthAfter) {
			if b.Threads == 2 {
				limit = max(limit, b.BestGBps)
			}
		}
		if r.BandwidthLimitGBps != limit {
			t.Errorf("limit %v GB/s, want the best probe at 2 threads, %v", r.BandwidthLimitGBps, limit)
		}
		// The prefill fraction is over the best FMA peak at 2 threads,
		// before or after.
		peak := max(r.FMA[1].BestGFLOPS, r.FMAAfter[1].BestGFLOPS)
		if r.FMA[1].Threads != 2 || r.FMAAfter[1].Threads != 2 || peak != r.fmaPeak(2) || r.PrefillFMAFraction != r.PrefillGFLOPS.Max/peak {
			t.Errorf("prefill fraction %v of %v GFLOP/s, FMA peaks %+v / %+v", r.PrefillFMAFraction, r.PrefillGFLOPS.Max, r.FMA, r.FMAAfter)
		}
		if r.AllocsPerToken != 0 && !raceEnabled {
			t.Errorf("%v allocations per decoded token, want 0", r.AllocsPerToken)
		}
		if record != (r.Record != nil) || record && (r.Record.Ratio <= 0 || r.Record.Top != 20 || r.Record.OutsideOffUS <= 0 || r.Record.OutsideOnUS <= 0) {
			t.Errorf("record %v: %+v", record, r.Record)
		}
	}
}

// TestDecodeAllocatesNothing proves that a decode step through the whole
// generation loop (engine.Generate, recording off) allocates nothing:
// generating 24 tokens allocates exactly as much as generating 4, greedy
// and sampling with repetition penalty, temperature, top-k and top-p.
func TestDecodeAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m := tinyModel(t)
	for _, sample := range []bool{false, true} {
		opts := Options{PromptLen: 6, NewTokens: 4}
		short, err := newRequest(m, opts, sample)
		if err != nil {
			t.Fatal(err)
		}
		long := short
		long.Options.MaxNewTokens = 24
		generate(context.Background(), long) // sizes the pool's and caches' first buffers
		// The count is the whole process's: a stray allocation elsewhere
		// (the runtime, another test's goroutine) lands in one run now and
		// then, so each side keeps its leanest of three. An allocating
		// decode step would still add at least 20 to every long run.
		var a, b timing
		for i := range 3 {
			sa, err := generate(context.Background(), short)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := generate(context.Background(), long)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 || sa.mallocs < a.mallocs {
				a = sa
			}
			if i == 0 || sb.mallocs < b.mallocs {
				b = sb
			}
		}
		if b.steps != 23 || a.steps != 3 {
			t.Fatalf("%d and %d decode steps, want 23 and 3", b.steps, a.steps)
		}
		if extra := float64(b.mallocs) - float64(a.mallocs); extra != 0 {
			t.Errorf("sample=%v: 20 more decode steps allocated %v more times (%.2f per step), want 0", sample, extra, extra/20)
		}
	}
}
