package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"tracer/engine/arch"
	"tracer/engine/tensor"
)

// smolLM2 returns a random model of SmolLM2-135M's shape at dtype, built
// once per test binary and dtype.
var smolLM2 = sync.OnceValues(func() (map[tensor.DType]*arch.Model, *sync.Mutex) {
	return map[tensor.DType]*arch.Model{}, &sync.Mutex{}
})

func smolModel(b testing.TB, dt tensor.DType) *arch.Model {
	models, mu := smolLM2()
	mu.Lock()
	defer mu.Unlock()
	if m := models[dt]; m != nil {
		return m
	}
	s, _ := arch.KnownShape("smollm2-135m")
	m, err := arch.NewRandom("smollm2-135m", s, dt, 1)
	if err != nil {
		b.Fatal(err)
	}
	models[dt] = m
	return m
}

// BenchmarkDecode generates 64 tokens after a 64-token prompt through
// engine.Generate at SmolLM2-135M's shape, and reports decode tokens/s and
// weight bandwidth.
func BenchmarkDecode(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.F32, tensor.BF16} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", dt, threads), func(b *testing.B) {
				m := smolModel(b, dt)
				m.SetThreads(threads)
				opts := Options{PromptLen: 64, NewTokens: 64, Seed: 1}
				req, err := newRequest(m, opts, false)
				if err != nil {
					b.Fatal(err)
				}
				var decode time.Duration
				steps := 0
				for b.Loop() {
					t, err := generate(context.Background(), req)
					if err != nil {
						b.Fatal(err)
					}
					decode += t.decode
					steps += t.steps
				}
				b.ReportMetric(float64(steps)/decode.Seconds(), "tokens/s")
				b.ReportMetric(float64(m.Info().WeightBytes)*float64(steps)/decode.Seconds()/1e9, "weightGB/s")
			})
		}
	}
}

// BenchmarkRecording decodes at SmolLM2-135M's shape (f32, every CPU) with
// recording off and on in turn (top 20 candidates, every stage, traffic),
// greedy and with the sampling pipeline of tracer bench --record, and
// reports the ratio of the decode times (goal ≤ 1.05).
func BenchmarkRecording(b *testing.B) {
	for _, sample := range []bool{false, true} {
		name := map[bool]string{false: "greedy", true: "sample"}[sample]
		b.Run(name, func(b *testing.B) {
			m := smolModel(b, tensor.F32)
			m.SetThreads(0)
			off, err := newRequest(m, Options{PromptLen: 64, NewTokens: 64, Seed: 1}, sample)
			if err != nil {
				b.Fatal(err)
			}
			on := off
			on.Record = true
			var tOff, tOn, loopOff, loopOn time.Duration
			steps := 0
			for b.Loop() {
				a, err := generate(context.Background(), off)
				if err != nil {
					b.Fatal(err)
				}
				c, err := generate(context.Background(), on)
				if err != nil {
					b.Fatal(err)
				}
				tOff, tOn, steps = tOff+a.decode, tOn+c.decode, steps+a.steps
				loopOff, loopOn = loopOff+a.decode-a.forward, loopOn+c.decode-c.forward
			}
			perStep := func(d time.Duration) float64 { return d.Seconds() / float64(steps) * 1e3 }
			b.ReportMetric(tOn.Seconds()/tOff.Seconds(), "ratio")
			b.ReportMetric(perStep(tOff), "ms/token-off")
			b.ReportMetric(perStep(tOn), "ms/token-on")
			// Outside Forward: processors, sampling and recording.
			b.ReportMetric(perStep(loopOff), "loop-ms/token-off")
			b.ReportMetric(perStep(loopOn), "loop-ms/token-on")
		})
	}
}

// BenchmarkHeadVsProbe reads a 226 MB f32 weight (twice SmolLM2-135M's
// head) with Pool.MatVec and with the bandwidth probe, alternately, and
// reports the best of each and their ratio: what the decode kernel gets of
// the machine's read bandwidth, without the rest of a decode step.
func BenchmarkHeadVsProbe(b *testing.B) {
	rows, cols := 2*49152, 576
	a, free, err := allocFloats(rows * cols)
	if err != nil {
		b.Fatal(err)
	}
	defer free()
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), len(a)*4)
	tensor.FillUniform(raw, tensor.F32, 0.1, 1)
	w, err := tensor.NewMatrix(raw, tensor.F32, rows, cols)
	if err != nil {
		b.Fatal(err)
	}
	x, dst := make([]float32, cols), make([]float32, rows)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			p := tensor.NewPool(threads)
			defer p.Close()
			kernel, probe := 0.0, 0.0
			for b.Loop() {
				start := time.Now()
				p.MatVec(dst, w, x)
				kernel = max(kernel, float64(len(raw))/time.Since(start).Seconds()/1e9)
				probe = max(probe, MeasureRead(a, threads, 1).BestGBps)
			}
			b.ReportMetric(kernel, "kernel-GB/s")
			b.ReportMetric(probe, "probe-GB/s")
			b.ReportMetric(kernel/probe, "ratio")
		})
	}
}

// TestPairedFraction: each repetition is set against the better of the
// two probes at the run's thread count that bracket it, the one-thread
// probes of a two-thread run left aside.
func TestPairedFraction(t *testing.T) {
	probes := []Bandwidth{
		{Threads: 1, BestGBps: 99}, {Threads: 2, BestGBps: 40}, // before
		{Threads: 1, BestGBps: 99}, {Threads: 2, BestGBps: 50}, // between 1 and 2
		{Threads: 1, BestGBps: 99}, {Threads: 2, BestGBps: 20}, // after
	}
	// 10 and 30 tokens/s of 2 GB: 20 GB/s against max(40, 50), 60 against max(50, 20).
	got := pairedFraction([]float64{10, 30}, 2, 2, probes)
	if want := (Stat{Min: 0.4, Median: 1.2, Max: 1.2}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := pairedFraction([]float64{10, 30}, 2, 2, probes[:4]); got != (Stat{Min: 0.4, Median: 0.4, Max: 0.4}) {
		t.Errorf("without the probe after: got %+v, want the first repetition alone", got)
	}
}

// BenchmarkRuns starts N greedy runs at once (4-token prompts, 64 new
// tokens, recording on, as a server's students run them) at SmolLM2-135M's
// shape in bf16, and reports the tokens all runs generate per second, the
// ratio to one run alone (measured in the same benchmark, the median of
// three), and when the
// last run's first step came. The model batches the runs' steps into one
// pass over the weights (arch's batcher).
func BenchmarkRuns(b *testing.B) {
	m := smolModel(b, tensor.BF16)
	m.SetThreads(0)
	rate := func(n int) (tokensPerSec float64, firstMax time.Duration) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		start := time.Now()
		tokens := 0
		var fail error
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := newRequest(m, Options{PromptLen: 4, NewTokens: 64, Seed: uint64(i + 1)}, false)
				if err == nil {
					req.Record = true
					var t timing
					t, err = generate(context.Background(), req)
					mu.Lock()
					tokens += t.steps + 1
					firstMax = max(firstMax, t.firstAt.Sub(start))
					mu.Unlock()
				}
				if err != nil {
					mu.Lock()
					fail = err
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if fail != nil {
			b.Fatal(fail)
		}
		return float64(tokens) / time.Since(start).Seconds(), firstMax
	}
	for _, n := range []int{10, 40} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			var alone, together float64
			var first time.Duration
			for b.Loop() {
				var ones []float64
				for range 3 { // one run alone: the median of three
					a, _ := rate(1)
					ones = append(ones, a)
				}
				slices.Sort(ones)
				t, f := rate(n)
				alone, together, first = alone+ones[1], together+t, max(first, f)
			}
			b.ReportMetric(together/float64(b.N), "tokens/s")
			b.ReportMetric(together/alone, "x-alone")
			b.ReportMetric(float64(first.Milliseconds()), "first-step-max-ms")
		})
	}
}
