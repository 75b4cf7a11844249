package arch

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"tracer/engine"
	"tracer/engine/tensor"
	"tracer/trace"
)

// batchShapes are the models the batching tests run: every architecture,
// rows long enough (256 and more) for the wide kernels, grouped-query
// attention, and every weight type a run can load.
func batchShapes() []struct {
	name  string
	build func() (*Model, error)
} {
	llama := Shape{Arch: "llama", VocabSize: 300, Hidden: 256, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 512, MaxPositions: 128, Tied: true}
	qwen := llama
	qwen.Arch, qwen.Tied = "qwen2", false
	gpt2 := Shape{Arch: "gpt2", VocabSize: 300, Hidden: 256, Layers: 2, Heads: 4, KVHeads: 4, Intermediate: 1024, MaxPositions: 128, Tied: true}
	var out []struct {
		name  string
		build func() (*Model, error)
	}
	add := func(name string, build func() (*Model, error)) {
		out = append(out, struct {
			name  string
			build func() (*Model, error)
		}{name, build})
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.BF16, tensor.F16} {
		for _, s := range []Shape{llama, qwen, gpt2} {
			add(fmt.Sprintf("hf-%s-%v", s.Arch, dt), func() (*Model, error) { return NewRandom("batch", s, dt, 7) })
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.Q8_0, tensor.Q4_0} {
		add(fmt.Sprintf("gguf-llama-%v", dt), func() (*Model, error) { return NewRandomGGUF("batch", llama, dt, 7) })
	}
	return out
}

// batchRun is one run of the batching tests: rows prompts of one length
// (the second row left-padded when there are two), then greedy decode
// steps.
type batchRun struct {
	prompt [][]int
	steps  int
	cache  engine.Cache
	seqs   [][]int
	masks  [][]bool
	logits [][]float32
}

func newBatchRuns(t *testing.T, m *Model) []*batchRun {
	t.Helper()
	vocab := m.Info().VocabSize
	var runs []*batchRun
	for i := range 9 {
		n := 1 + (i*5)%13 // prompts of 1 to 13 tokens
		r := &batchRun{steps: 3 + i%4}
		row := make([]int, n)
		for j := range row {
			row[j] = (17*i + 31*j + 3) % vocab
		}
		r.prompt = [][]int{row}
		if i%3 == 2 { // a second row, left-padded by two
			pad := append([]int{0, 0}, row[2:]...)
			r.prompt = append(r.prompt, pad)
		}
		runs = append(runs, r)
	}
	for _, r := range runs {
		c, err := m.NewCache(len(r.prompt), 64)
		if err != nil {
			t.Fatal(err)
		}
		r.cache = c
		r.seqs = make([][]int, len(r.prompt))
		r.masks = make([][]bool, len(r.prompt))
		for k, p := range r.prompt {
			r.seqs[k] = append([]int(nil), p...)
			for j := range p {
				r.masks[k] = append(r.masks[k], !(k == 1 && j < 2))
			}
		}
		r.logits = make([][]float32, len(r.prompt))
		for k := range r.logits {
			r.logits[k] = make([]float32, vocab)
		}
	}
	return runs
}

// batch returns the run's input for its next step: the whole prompt, then
// the newest token of each row.
func (r *batchRun) batch() *engine.Batch {
	past := r.cache.Len()
	b := &engine.Batch{}
	for k, seq := range r.seqs {
		mask := r.masks[k] // one slot per token of seq
		var pos []int
		for j := past; j < len(seq); j++ {
			if !mask[j] { // a pad: position 1, as transformers gives it
				pos = append(pos, 1)
				continue
			}
			real := 0
			for _, m := range mask[:j] {
				if m {
					real++
				}
			}
			pos = append(pos, real)
		}
		b.Tokens = append(b.Tokens, seq[past:])
		b.Positions = append(b.Positions, pos)
		b.Mask = append(b.Mask, append([]bool(nil), mask...))
	}
	return b
}

// advance appends each row's greedy token and returns the logits it came
// from, copied.
func (r *batchRun) advance() [][]float32 {
	out := make([][]float32, len(r.logits))
	for k, l := range r.logits {
		out[k] = append([]float32(nil), l...)
		best := 0
		for i, v := range l {
			if v > l[best] {
				best = i
			}
		}
		r.seqs[k] = append(r.seqs[k], best)
		r.masks[k] = append(r.masks[k], true)
	}
	return out
}

// done reports whether the run has taken all its steps.
func (r *batchRun) done(step int) bool { return step > r.steps }

// TestBatchedEqualsAlone runs nine runs of every model alone, then the
// same runs as batched passes that mix prefills and decode steps of one
// and two rows, and requires every logit to be the same bits.
func TestBatchedEqualsAlone(t *testing.T) {
	for _, sh := range batchShapes() {
		t.Run(sh.name, func(t *testing.T) {
			m, err := sh.build()
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			alone := newBatchRuns(t, m)
			want := make([][][][]float32, len(alone)) // [run][step][row][vocab]
			for i, r := range alone {
				for step := 0; !r.done(step); step++ {
					if err := m.Forward(r.cache, r.batch(), r.logits); err != nil {
						t.Fatal(err)
					}
					want[i] = append(want[i], r.advance())
				}
			}
			// Batched: each pass serves the runs that have steps left,
			// the later ones starting a step behind so that prefills meet
			// decode steps.
			runs := newBatchRuns(t, m)
			steps := make([]int, len(runs))
			for round := 0; ; round++ {
				var calls []*waiter
				var idx []int
				for i, r := range runs {
					if round < i/3 || r.done(steps[i]) {
						continue
					}
					p, err := m.begin(r.cache, r.batch())
					if err != nil {
						t.Fatal(err)
					}
					calls = append(calls, &waiter{p: p, logits: r.logits})
					idx = append(idx, i)
				}
				if len(calls) == 0 {
					break
				}
				m.batch.serve(m, calls)
				for k, w := range calls {
					i := idx[k]
					if w.err != nil {
						t.Fatal(w.err)
					}
					if calls, _ := runs[i].cache.(*Cache).LastBatch(); calls != len(idx) && len(idx) > 1 {
						t.Fatalf("run %d: LastBatch says %d calls, the pass served %d", i, calls, len(idx))
					}
					got := runs[i].advance()
					for row := range got {
						for v := range got[row] {
							if math.Float32bits(got[row][v]) != math.Float32bits(want[i][steps[i]][row][v]) {
								t.Fatalf("run %d step %d row %d logit %d: batched %v (pass of %d calls), alone %v",
									i, steps[i], row, v, got[row][v], len(calls), want[i][steps[i]][row][v])
							}
						}
					}
					steps[i]++
				}
			}
		})
	}
}

// TestConcurrentForwardsBatch runs the runs of a model from goroutines at
// once through Forward, as a server's runs do: the batcher gathers them
// (at least one pass serves several), and every logit is the same as
// alone.
func TestConcurrentForwardsBatch(t *testing.T) {
	m, err := NewRandom("batch", Shape{Arch: "llama", VocabSize: 300, Hidden: 256, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 512, MaxPositions: 128, Tied: true}, tensor.BF16, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	alone := newBatchRuns(t, m)
	want := make([][][][]float32, len(alone))
	for i, r := range alone {
		for step := 0; !r.done(step); step++ {
			if err := m.Forward(r.cache, r.batch(), r.logits); err != nil {
				t.Fatal(err)
			}
			want[i] = append(want[i], r.advance())
		}
	}
	for try := 0; ; try++ {
		runs := newBatchRuns(t, m)
		var wg sync.WaitGroup
		var mu sync.Mutex
		shared := 0
		errs := make(chan error, len(runs))
		for i, r := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for step := 0; !r.done(step); step++ {
					if err := m.Forward(r.cache, r.batch(), r.logits); err != nil {
						errs <- err
						return
					}
					if calls, _ := r.cache.(*Cache).LastBatch(); calls > 1 {
						mu.Lock()
						shared++
						mu.Unlock()
					}
					got := r.advance()
					for row := range got {
						for v := range got[row] {
							if math.Float32bits(got[row][v]) != math.Float32bits(want[i][step][row][v]) {
								errs <- fmt.Errorf("run %d step %d row %d logit %d: %v concurrently, %v alone", i, step, row, v, got[row][v], want[i][step][row][v])
								return
							}
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if shared > 0 {
			return
		}
		if try == 20 {
			t.Fatal("no forward pass served two runs in 20 tries of 9 concurrent runs")
		}
	}
}

// TestBatchedTracesEqualAlone generates runs through engine.Generate, as a
// server's students do, first one after another and then all at once:
// greedy and sampled, short and long prompts, recording every step. The
// runs at once share passes (a step's traffic says how many runs and
// tokens its pass served), and every run's trace equals its run alone:
// the chosen ids, and each step's candidates with their logits and
// probabilities.
func TestBatchedTracesEqualAlone(t *testing.T) {
	m, err := NewRandom("batch", Shape{Arch: "qwen2", VocabSize: 300, Hidden: 256, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 512, MaxPositions: 128}, tensor.BF16, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	requests := make([]engine.Request, 8)
	for i := range requests {
		n, seed, sample := 12, uint64(i), i%2 == 1
		user := &engine.Settings{MaxNewTokens: &n, EOSTokenID: []int{}, Seed: &seed, DoSample: &sample}
		o, notices, err := engine.Resolve(m.Info(), nil, user)
		if err != nil {
			t.Fatal(err)
		}
		prompt := make([]int, 1+i*3)
		for j := range prompt {
			prompt[j] = (7*i + 13*j + 1) % 300
		}
		requests[i] = engine.Request{Model: m, Prompts: [][]int{prompt}, Options: o, Notices: notices, Record: true}
	}
	alone := make([]*trace.Trace, len(requests))
	for i, req := range requests {
		if alone[i], err = engine.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	for try := 0; ; try++ {
		together := make([]*trace.Trace, len(requests))
		errs := make([]error, len(requests))
		var wg sync.WaitGroup
		for i, req := range requests {
			wg.Add(1)
			go func() {
				defer wg.Done()
				together[i], errs[i] = engine.Generate(context.Background(), req)
			}()
		}
		wg.Wait()
		shared := 0
		for i := range requests {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			a, b := alone[i], together[i]
			if !slices.Equal(a.Output.IDs, b.Output.IDs) || len(a.Steps) != len(b.Steps) {
				t.Fatalf("run %d: ids %v together, %v alone", i, b.Output.IDs, a.Output.IDs)
			}
			for s := range a.Steps {
				if tr := b.Steps[s].Traffic; tr != nil && tr.BatchRuns > 1 {
					shared++
					if tr.BatchTokens < tr.BatchRuns {
						t.Errorf("run %d step %d: a pass of %d runs fed %d tokens", i, s, tr.BatchRuns, tr.BatchTokens)
					}
				}
				ca, cb := a.Steps[s].Rows[0].Candidates, b.Steps[s].Rows[0].Candidates
				if !slices.EqualFunc(ca, cb, func(x, y trace.Candidate) bool {
					return x.ID == y.ID && math.Float32bits(x.Logit) == math.Float32bits(y.Logit) && math.Float64bits(x.Prob) == math.Float64bits(y.Prob)
				}) || a.Steps[s].Rows[0].Chosen.ID != b.Steps[s].Rows[0].Chosen.ID {
					t.Fatalf("run %d step %d: candidates %v together, %v alone", i, s, cb, ca)
				}
			}
		}
		if shared > 0 {
			return
		}
		if try == 20 {
			t.Fatal("no step of 8 runs at once shared a pass in 20 tries")
		}
	}
}
