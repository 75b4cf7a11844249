package runs

import (
	"context"
	"strings"
	"testing"
	"time"

	"tracer/engine/bench"
	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/view"
	"tracer/web/words"
)

func TestCompleteUTF8(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want int
	}{
		{"ascii", []byte("ab"), 2},
		{"whole character", []byte("é"), 2},
		{"first byte of two", []byte{'a', 0xc3}, 1},
		{"two bytes of three", []byte{0xe2, 0x80}, 0},
		{"three bytes of four", []byte{'x', 0xf0, 0x9f, 0x98}, 1},
		{"stray continuation", []byte{0x80}, 1},
		{"empty", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := completeUTF8(tc.in); got != tc.want {
				t.Errorf("completeUTF8(% x) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestTintBand(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{{0, "p0"}, {0.049, "p0"}, {0.05, "p1"}, {0.2, "p2"}, {0.5, "p3"}, {0.79, "p3"}, {0.8, "p4"}, {1, "p4"}} {
		if got := tintBand(tc.p); got != tc.want {
			t.Errorf("tintBand(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// TestRunOutputSoFar: the text grows with the steps, an imported trace reads
// its vocabulary strings, finished rows and EOS add nothing.
func TestRunOutputSoFar(t *testing.T) {
	step := func(id int, tok string, p float64, finished bool) trace.Step {
		return trace.Step{Rows: []trace.StepRow{{Finished: finished, Candidates: []trace.Candidate{{ID: id, Token: tok, Prob: p}, {ID: 99, Token: " x", Prob: 0.01}},
			Chosen: trace.Chosen{ID: id, Token: tok, Prob: p}}}}
	}
	tr := &trace.Trace{Model: trace.Model{Kind: "hf", EOS: []int{2}, BOS: 1, PAD: -1}, Prompt: trace.Prompt{Text: "Once"},
		Steps: []trace.Step{step(5, " upon", 0.9, false), step(6, " a", 0.3, false), step(2, "</s>", 0.7, false)}}
	r := &Run{Trace: tr}
	for _, tc := range []struct {
		name     string
		pos      int
		want     string
		wantTint []string
	}{
		{"first step", 0, " upon", []string{"p4"}},
		{"second step", 1, " upon a", []string{"p4", "p2"}},
		{"eos adds nothing", 2, " upon a", []string{"p4", "p2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := runOutput(r, tr.Steps, tc.pos, 0)
			var got strings.Builder
			var tints []string
			for _, k := range v.Tokens {
				got.WriteString(k.Text)
				tints = append(tints, k.Tint)
			}
			if got.String() != tc.want || strings.Join(tints, " ") != strings.Join(tc.wantTint, " ") || v.Prompt != "Once" {
				t.Errorf("got prompt %q text %q tints %v, want Once, %q, %v", v.Prompt, got.String(), tints, tc.want, tc.wantTint)
			}
			if last := v.Tokens[len(v.Tokens)-1]; len(last.Alts) != 2 || last.Alts[1].Token != "␣x" {
				t.Errorf("got alternatives %+v, want two with ␣x second", last.Alts)
			}
		})
	}
}

// FuzzBeamTree builds beam steps from arbitrary numbers, as an imported
// trace may hold them (sources out of range, lists of unequal lengths): no
// panic, and at each step the tree shows exactly the beams that went on
// plus at most beamPruned pruned nodes per live beam.
func FuzzBeamTree(f *testing.F) {
	f.Add([]byte{3, 0, 0, 1, 5, 6, 7, 2, 1, 0}, uint8(3), false)
	f.Add([]byte{2, 9, 200, 1, 1}, uint8(2), true)
	f.Add([]byte{}, uint8(1), false)
	f.Fuzz(func(t *testing.T, data []byte, nb uint8, ended bool) {
		beams := int(nb%5) + 2
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(int8(b))
		}
		tr := &trace.Trace{Model: trace.Model{EOS: []int{2}, BOS: -1, PAD: -1}, Options: trace.Options{NumBeams: beams, LengthPenalty: 1}}
		for i := 0; i < 6 && len(data) > 0; i++ {
			s := trace.Step{Index: i, Beams: &trace.BeamStep{}}
			for r := 0; r < beams+next()%2; r++ {
				s.Beams.ScoresIn = append(s.Beams.ScoresIn, float32(next())/4)
				row := trace.StepRow{}
				for k := 0; k < 3; k++ {
					row.Candidates = append(row.Candidates, trace.Candidate{ID: next(), Prob: float64(next()%100+1) / 101})
				}
				s.Rows = append(s.Rows, row)
			}
			for j := 0; j < beams+next()%2; j++ {
				s.Beams.Source = append(s.Beams.Source, next())
				s.Beams.Tokens = append(s.Beams.Tokens, next())
				s.Beams.Scores = append(s.Beams.Scores, float32(next())/4)
			}
			if next()%3 == 0 {
				s.Beams.Finished = append(s.Beams.Finished, trace.Hypothesis{Tokens: []int{next()}, SumLogprobs: float32(next()), GeneratedLen: next(), Score: float64(next()), Kept: next()%2 == 0})
			}
			tr.Steps = append(tr.Steps, s)
		}
		if len(tr.Steps) == 0 {
			return
		}
		if ended {
			tr.Output.StopReason = trace.StopMaxNewTokens
		}
		r := &Run{Trace: tr}
		for pos := range tr.Steps {
			v := beamTree(r, tr.Steps, pos, words.Words{})
			if v == nil {
				t.Fatalf("position %d: no tree for a beam search", pos)
			}
			for _, sv := range v.Steps {
				b := tr.Steps[sv.Number-1].Beams
				kept, pruned := 0, 0
				for _, n := range sv.Nodes {
					switch {
					case n.Pruned:
						pruned++
					case !n.EOS:
						kept++
					}
				}
				want := min(len(b.Source), len(b.Tokens), len(b.Scores))
				if kept != want || pruned > beamPruned*len(b.ScoresIn) {
					t.Errorf("step %d: %d kept and %d pruned nodes, want %d kept and at most %d pruned", sv.Number, kept, pruned, want, beamPruned*len(b.ScoresIn))
				}
			}
		}
	})
}

// TestTrafficShowsTheBatch checks the traffic panel of a step that shared
// its forward pass with other runs: it says how many tokens the weights
// were read once for, in both languages, and a step that ran alone says
// nothing of a batch.
func TestTrafficShowsTheBatch(t *testing.T) {
	step := trace.Step{ElapsedNS: 2e6, Traffic: &trace.Traffic{WeightBytes: 270 << 20, FLOPs: 1e9, BatchRuns: 12, BatchTokens: 12}}
	for _, lang := range []string{"en", "hi"} {
		w := testsupport.Words(t, lang)
		v := trafficView(step, w, bench.Machine{})
		if !strings.Contains(v.Batch, "12") || !strings.Contains(v.Batch, "11") {
			t.Errorf("%s: the batch note %q names neither the 12 tokens nor the 11 other runs", lang, v.Batch)
		}
		var html strings.Builder
		if err := view.TrafficPanel(v, w).Render(context.Background(), &html); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(html.String(), `data-testid="traffic-batch"`) {
			t.Errorf("%s: the panel does not show the batch", lang)
		}
	}
	alone := step
	tr := *step.Traffic
	tr.BatchRuns, tr.BatchTokens = 0, 0
	alone.Traffic = &tr
	if v := trafficView(alone, testsupport.Words(t, "en"), bench.Machine{}); v.Batch != "" {
		t.Errorf("a step that ran alone shows a batch: %q", v.Batch)
	}
	if want := "Weights read once for 12 tokens"; !strings.HasPrefix(trafficView(step, testsupport.Words(t, "en"), bench.Machine{}).Batch, want) {
		t.Errorf("the English note does not start %q", want)
	}
}

// TestTrafficSaysWhereTheBytesComeFrom (issue 37, point 1): a step whose
// bytes fit in the CPU cache is labelled cache-resident and set against
// the cache's bandwidth, a larger one against main memory's; both say
// when and how the bandwidth was measured, with its spread.
func TestTrafficSaysWhereTheBytesComeFrom(t *testing.T) {
	m := bench.Machine{
		Threads: 2, Passes: 10, CacheBytes: 32 << 20, At: time.Date(2026, 12, 6, 12, 3, 0, 0, time.UTC),
		DRAM:  bench.Bandwidth{MedianGBps: 26.1, BestGBps: 27.3, WorstGBps: 24.0},
		Cache: bench.Bandwidth{MedianGBps: 104.5, BestGBps: 110.0, WorstGBps: 98.2},
	}
	w := testsupport.Words(t, "en")
	small := trace.Step{ElapsedNS: 100e3, Traffic: &trace.Traffic{WeightBytes: 554 << 10, KVReadBytes: 10 << 10, KVWriteBytes: 1 << 10}}
	v := trafficView(small, w, m)
	if !v.Resident || v.Bandwidth != "104.5 GB/s (CPU cache)" || !strings.HasPrefix(v.Where, "Cache-resident") {
		t.Errorf("a 565 KiB step: resident %v, bandwidth %q, where %q; want cache-resident, against the cache's 104.5 GB/s", v.Resident, v.Bandwidth, v.Where)
	}
	if want := "(6%)"; !strings.HasSuffix(v.Achieved, want) { // 5.8 GB/s of 104.5
		t.Errorf("achieved %q, want it to end %s of the cache's bandwidth", v.Achieved, want)
	}
	if !strings.Contains(v.Probe, "12:03") || !strings.Contains(v.Probe, "98.2 to 110.0 GB/s") || !strings.Contains(v.Probe, "10 passes") {
		t.Errorf("probe note %q, want its time, passes and spread", v.Probe)
	}
	large := trace.Step{ElapsedNS: 10e6, Traffic: &trace.Traffic{WeightBytes: 270 << 20}}
	v = trafficView(large, w, m)
	if v.Resident || v.Bandwidth != "26.1 GB/s (main memory)" || !strings.Contains(v.Where, "main memory") || !strings.Contains(v.Probe, "24.0 to 27.3 GB/s") {
		t.Errorf("a 270 MiB step: resident %v, bandwidth %q, where %q, probe %q; want main memory's 26.1 GB/s and its spread", v.Resident, v.Bandwidth, v.Where, v.Probe)
	}
	if v := trafficView(large, w, bench.Machine{}); v.Bandwidth != "n/a" || v.Where != "" || v.Probe != "" {
		t.Errorf("not yet measured: %+v, want n/a and no notes", v)
	}
}
