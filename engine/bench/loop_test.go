package bench

import (
	"context"
	"testing"
	"time"

	"tracer/engine"
	"tracer/trace"
)

// fakeModel has SmolLM2-135M's vocabulary and computes nothing: its
// logits are a fixed random row, so a run through engine.Generate times
// the generation loop alone (processors, sampling, recording).
type fakeModel struct {
	logits []float32
}

func newFakeModel(vocab int) *fakeModel {
	m := &fakeModel{logits: make([]float32, vocab)}
	x := uint64(88172645463325252)
	for i := range m.logits {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		m.logits[i] = float32(int64(x>>40)%4000)/400 - 5
	}
	return m
}

func (m *fakeModel) Info() engine.Info {
	return engine.Info{Name: "fake", Kind: "hf", Architecture: "llama", VocabSize: len(m.logits), BOS: 1, EOS: []int{2}, PAD: -1}
}

func (m *fakeModel) NewCache(rows, capacity int) (engine.Cache, error) {
	return &fakeCache{rows: rows}, nil
}

func (m *fakeModel) Forward(c engine.Cache, b *engine.Batch, logits [][]float32) error {
	fc := c.(*fakeCache)
	fc.n += len(b.Tokens[0])
	for r := range logits {
		copy(logits[r], m.logits)
		logits[r][(fc.n*7919)%len(m.logits)] += 3 // vary the winner between steps
	}
	return nil
}

func (m *fakeModel) Cost(rows, past, n int) trace.Traffic {
	return trace.Traffic{WeightBytes: 1, FLOPs: 1}
}

type fakeCache struct{ rows, n int }

func (c *fakeCache) Len() int            { return c.n }
func (c *fakeCache) Rows() int           { return c.rows }
func (c *fakeCache) LayerBytes() []int64 { return []int64{int64(c.n)} }
func (c *fakeCache) Reorder(src []int)   {}
func (c *fakeCache) Truncate(n int)      { c.n = n }
func (c *fakeCache) Clone() engine.Cache { d := *c; return &d }

// BenchmarkLoop is the time per decode step of the generation loop alone
// at SmolLM2-135M's vocabulary (49152): greedy, and the sampling pipeline
// of tracer bench --record with recording off and on.
func BenchmarkLoop(b *testing.B) {
	m := newFakeModel(49152)
	for _, c := range []struct {
		name           string
		sample, record bool
	}{{"greedy", false, false}, {"greedy/record", false, true}, {"sample", true, false}, {"sample/record", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			req, err := newRequest(m, Options{PromptLen: 8, NewTokens: 32, Seed: 1}, c.sample)
			if err != nil {
				b.Fatal(err)
			}
			req.Record = c.record
			var d time.Duration
			steps := 0
			for b.Loop() {
				t, err := generate(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				d += t.decode
				steps += t.steps
			}
			b.ReportMetric(d.Seconds()/float64(steps)*1e6, "µs/step")
		})
	}
}
