package arch

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"tracer/engine"
	"tracer/engine/tensor"
)

var archs = []string{"gpt2", "llama", "qwen2"}

// run feeds ids to a fresh one-row cache and returns the last logits.
func run(t *testing.T, m *Model, ids []int) []float32 {
	t.Helper()
	c, err := m.NewCache(1, len(ids))
	if err != nil {
		t.Fatal(err)
	}
	out := [][]float32{make([]float32, m.Info().VocabSize)}
	if err := m.Forward(c, prompt(ids), out); err != nil {
		t.Fatal(err)
	}
	return out[0]
}

// decode feeds one token per row at position pos (all slots attended).
func decode(t *testing.T, m *Model, c engine.Cache, tokens []int, pos int) [][]float32 {
	t.Helper()
	b := &engine.Batch{}
	out := make([][]float32, len(tokens))
	for r, tok := range tokens {
		b.Tokens = append(b.Tokens, []int{tok})
		b.Positions = append(b.Positions, []int{pos})
		mask := make([]bool, c.Len()+1)
		for i := range mask {
			mask[i] = true
		}
		b.Mask = append(b.Mask, mask)
		out[r] = make([]float32, m.Info().VocabSize)
	}
	if err := m.Forward(c, b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCacheOffRecomputeMatches(t *testing.T) {
	for _, a := range archs {
		t.Run(a, func(t *testing.T) {
			m := openTestModel(t, tinyShape(a))
			ids := []int{3, 14, 15, 9, 2}
			c, _ := m.NewCache(1, 16)
			out := [][]float32{make([]float32, m.Info().VocabSize)}
			if err := m.Forward(c, prompt(ids), out); err != nil {
				t.Fatal(err)
			}
			for step := 0; step < 8; step++ {
				next := tensor.Argmax(out[0])
				want := run(t, m, append(ids, next))
				ids = append(ids, next)
				out = decode(t, m, c, []int{next}, len(ids)-1)
				if d := maxDiff(out[0], want); d > 1e-5 {
					t.Fatalf("step %d: cached logits differ from recomputed ones by %g", step, d)
				}
			}
		})
	}
}

func TestCacheTruncateAndClone(t *testing.T) {
	m := openTestModel(t, tinyShape("llama"))
	c, _ := m.NewCache(1, 8)
	out := [][]float32{make([]float32, m.Info().VocabSize)}
	if err := m.Forward(c, prompt([]int{5, 6, 7, 8}), out); err != nil {
		t.Fatal(err)
	}
	branch := c.Clone()
	c.Truncate(2)
	if c.Len() != 2 || branch.Len() != 4 {
		t.Fatalf("Len after Truncate(2) = %d, clone Len = %d", c.Len(), branch.Len())
	}
	got := decode(t, m, c, []int{30}, 2)[0]
	if d := maxDiff(got, run(t, m, []int{5, 6, 30})); d > 1e-5 {
		t.Errorf("after Truncate(2): logits differ from a fresh run of the prefix by %g", d)
	}
	// The clone is unaffected by what happened to its parent.
	got = decode(t, m, branch, []int{31}, 4)[0]
	if d := maxDiff(got, run(t, m, []int{5, 6, 7, 8, 31})); d > 1e-5 {
		t.Errorf("clone: logits differ from a fresh run by %g", d)
	}
	c.Truncate(0)
	got = decode(t, m, c, []int{9}, 0)[0]
	if d := maxDiff(got, run(t, m, []int{9})); d > 1e-5 {
		t.Errorf("after Truncate(0): logits differ by %g", d)
	}
}

func TestCacheReorder(t *testing.T) {
	m := openTestModel(t, tinyShape("qwen2"))
	prompts := [][]int{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
	b := &engine.Batch{}
	for _, p := range prompts {
		one := prompt(p)
		b.Tokens = append(b.Tokens, one.Tokens[0])
		b.Positions = append(b.Positions, one.Positions[0])
		b.Mask = append(b.Mask, one.Mask[0])
	}
	tests := []struct {
		name string
		src  []int
	}{
		{"identity", []int{0, 1, 2}},
		{"rotate", []int{2, 0, 1}},
		{"duplicate", []int{2, 0, 0}},
		{"all from one", []int{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := m.NewCache(3, 8)
			out := make([][]float32, 3)
			for r := range out {
				out[r] = make([]float32, m.Info().VocabSize)
			}
			if err := m.Forward(c, b, out); err != nil {
				t.Fatal(err)
			}
			c.Reorder(tt.src)
			got := decode(t, m, c, []int{20, 21, 22}, 3)
			for r, s := range tt.src {
				want := run(t, m, append(append([]int{}, prompts[s]...), 20+r))
				if d := maxDiff(got[r], want); d > 1e-5 {
					t.Errorf("row %d (from %d): logits differ from a fresh run by %g", r, s, d)
				}
			}
			// Rows that shared a source are independent afterwards.
			got = decode(t, m, c, []int{23, 24, 25}, 4)
			for r, s := range tt.src {
				want := run(t, m, append(append([]int{}, prompts[s]...), 20+r, 23+r))
				if d := maxDiff(got[r], want); d > 1e-5 {
					t.Errorf("row %d, second step: logits differ by %g", r, d)
				}
			}
		})
	}
}

func TestCacheAccounting(t *testing.T) {
	m := openTestModel(t, tinyShape("llama"))
	c, _ := m.NewCache(2, 5)
	if c.Rows() != 2 || c.Len() != 0 {
		t.Errorf("Rows, Len = %d, %d", c.Rows(), c.Len())
	}
	decode(t, m, c, []int{1, 2}, 0)
	decode(t, m, c, []int{3, 4}, 1)
	info := m.Info()
	want := 2 * 2 * int64(info.KVBytesPerToken) / int64(info.Layers)
	for l, got := range c.LayerBytes() {
		if got != want {
			t.Errorf("LayerBytes()[%d] = %d, want %d", l, got, want)
		}
	}
	if len(c.LayerBytes()) != info.Layers {
		t.Errorf("%d layers of bytes, want %d", len(c.LayerBytes()), info.Layers)
	}
	if _, err := m.NewCache(0, 5); err == nil {
		t.Error("NewCache(0, 5) succeeded")
	}
	if _, err := m.NewCache(1, 1<<40); err == nil {
		t.Error("NewCache with 2^40 positions succeeded")
	}
}

func TestForwardErrors(t *testing.T) {
	m := openTestModel(t, tinyShape("gpt2"))
	other := openTestModel(t, tinyShape("llama"))
	vocab := m.Info().VocabSize
	ok := func() *engine.Batch { return prompt([]int{1, 2}) }
	tests := []struct {
		name   string
		cache  func() engine.Cache
		batch  func() *engine.Batch
		logits [][]float32
		want   string
	}{
		{"nil batch", nil, func() *engine.Batch { return nil }, nil, "nil batch"},
		{"rows", nil, func() *engine.Batch { b := ok(); b.Tokens = append(b.Tokens, []int{1, 2}); return b }, nil, "2 token rows"},
		{"no tokens", nil, func() *engine.Batch { return prompt(nil) }, nil, "no new tokens"},
		{"positions", nil, func() *engine.Batch { b := ok(); b.Positions[0] = []int{0}; return b }, nil, "row 0 has 2 tokens and 1 positions"},
		{"mask", nil, func() *engine.Batch { b := ok(); b.Mask[0] = []bool{true}; return b }, nil, "mask has 1 slots, want 2"},
		{"token id", nil, func() *engine.Batch { return prompt([]int{1, vocab}) }, nil, "id 40, outside the vocabulary"},
		{"negative id", nil, func() *engine.Batch { return prompt([]int{-1}) }, nil, "id -1"},
		{"learned position", nil, func() *engine.Batch { b := ok(); b.Positions[0][1] = 32; return b }, nil, "position 32, outside [0, 32)"},
		{"cache full", func() engine.Cache { c, _ := m.NewCache(1, 1); return c }, ok, nil, "KV cache full"},
		{"logits rows", nil, ok, [][]float32{}, "0 logits rows"},
		{"logits size", nil, ok, [][]float32{make([]float32, 3)}, "holds 3 values"},
		{"foreign cache", func() engine.Cache { c, _ := other.NewCache(1, 8); return c }, ok, nil, "another model"},
		{"not our cache", func() engine.Cache { return fakeCache{} }, ok, nil, "not one made by this model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c engine.Cache
			if tt.cache != nil {
				c = tt.cache()
			} else {
				c, _ = m.NewCache(1, 8)
			}
			logits := tt.logits
			if logits == nil {
				logits = [][]float32{make([]float32, vocab)}
			}
			err := m.Forward(c, tt.batch(), logits)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Forward error = %v, want it to contain %q", err, tt.want)
			}
			if c.Len() != 0 {
				t.Errorf("a failed Forward left %d positions in the cache", c.Len())
			}
		})
	}
	c, _ := m.NewCache(1, 1)
	err := m.Forward(c, ok(), [][]float32{make([]float32, vocab)})
	if !errors.Is(err, ErrCacheFull) {
		t.Errorf("errors.Is(%v, ErrCacheFull) = false", err)
	}
}

type fakeCache struct{ engine.Cache }

func (fakeCache) Len() int { return 0 }

func TestForwardAllocatesNothingPerToken(t *testing.T) {
	for _, a := range archs {
		t.Run(a, func(t *testing.T) {
			m := openTestModel(t, tinyShape(a))
			c, _ := m.NewCache(2, 32)
			out := [][]float32{make([]float32, 40), make([]float32, 40)}
			b := &engine.Batch{
				Tokens:    [][]int{{1}, {2}},
				Positions: [][]int{{0}, {0}},
				Mask:      [][]bool{make([]bool, 0, 32), make([]bool, 0, 32)},
			}
			feed := func() {
				for r := range b.Mask {
					b.Mask[r] = append(b.Mask[r], true)
				}
				if err := m.Forward(c, b, out); err != nil {
					t.Fatal(err)
				}
				b.Positions[0][0]++
				b.Positions[1][0]++
			}
			feed() // the first call sizes the scratch buffers
			if n := testing.AllocsPerRun(20, feed); n != 0 {
				t.Errorf("a decode step allocates %v times, want 0", n)
			}
		})
	}
}

func TestConcurrentForward(t *testing.T) {
	m := openTestModel(t, tinyShape("llama"))
	want := run(t, m, []int{4, 5, 6, 7})
	var wg sync.WaitGroup
	got := make([][]float32, 4)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _ := m.NewCache(1, 4)
			out := [][]float32{make([]float32, 40)}
			if err := m.Forward(c, prompt([]int{4, 5, 6, 7}), out); err == nil {
				got[g] = out[0]
			}
		}()
	}
	wg.Wait()
	for g := range got {
		if d := maxDiff(got[g], want); d != 0 {
			t.Errorf("goroutine %d: logits differ by %g", g, d)
		}
	}
}

func TestForwardAllMatchesForward(t *testing.T) {
	for _, a := range archs {
		t.Run(a, func(t *testing.T) {
			m := openTestModel(t, tinyShape(a))
			ids := []int{9, 8, 7, 6}
			c, _ := m.NewCache(1, 4)
			all, err := m.ForwardAll(c, prompt(ids))
			if err != nil {
				t.Fatal(err)
			}
			if len(all.Hidden) != m.Info().Layers+1 || len(all.Logits[0]) != len(ids) || c.Len() != len(ids) {
				t.Fatalf("%d hidden states, %d logit rows, cache %d", len(all.Hidden), len(all.Logits[0]), c.Len())
			}
			for i := range ids {
				if d := maxDiff(all.Logits[0][i], run(t, m, ids[:i+1])); d > 1e-5 {
					t.Errorf("position %d: ForwardAll logits differ from Forward by %g", i, d)
				}
			}
		})
	}
}
