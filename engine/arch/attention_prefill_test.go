package arch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"tracer/engine"
	"tracer/engine/tensor"
)

// attnCase is one attention pass to compare: the model's attention shape,
// cached positions before the pass, new tokens, and what the mask and the
// values hold.
type attnCase struct {
	name                    string
	heads, kvHeads, headDim int
	rows, past, n, capacity int
	pads                    int  // leading slots of row 0 masked out (a left-padded row)
	hole                    int  // one more masked slot of row 0, or -1
	nanValue                int  // new token whose value is NaN, or -1
	inside                  bool // record every token's attention weights
	gpt2Mask                bool
}

var attnCases = []attnCase{
	{name: "smollm2 prompt", heads: 9, kvHeads: 3, headDim: 64, rows: 1, n: 64, capacity: 80, hole: -1, nanValue: -1},
	{name: "after a cached prefix", heads: 9, kvHeads: 3, headDim: 64, rows: 1, past: 37, n: 29, capacity: 70, hole: -1, nanValue: -1},
	{name: "long prompt, tiles of 32", heads: 4, kvHeads: 2, headDim: 64, rows: 1, n: 300, capacity: 300, hole: -1, nanValue: -1},
	{name: "scores bound the tile", heads: 2, kvHeads: 1, headDim: 16, rows: 1, past: 2000, n: 256, capacity: 2256, hole: -1, nanValue: -1},
	{name: "wide heads", heads: 2, kvHeads: 1, headDim: 256, rows: 1, n: 13, capacity: 13, hole: -1, nanValue: -1},
	{name: "odd head size, pure Go", heads: 3, kvHeads: 3, headDim: 6, rows: 1, n: 11, capacity: 16, hole: -1, nanValue: -1},
	{name: "left padding and a hole", heads: 4, kvHeads: 1, headDim: 32, rows: 2, n: 17, capacity: 20, pads: 3, hole: 9, nanValue: -1},
	{name: "gpt2 padding", heads: 2, kvHeads: 2, headDim: 8, rows: 1, n: 10, capacity: 10, pads: 2, hole: -1, nanValue: -1, gpt2Mask: true},
	{name: "NaN in a later value", heads: 6, kvHeads: 2, headDim: 64, rows: 1, past: 5, n: 40, capacity: 45, hole: -1, nanValue: 20},
	{name: "recording every token", heads: 9, kvHeads: 3, headDim: 64, rows: 1, past: 4, n: 21, capacity: 30, pads: 2, hole: -1, nanValue: -1, inside: true},
}

// attnSetup builds a pass of c's shape over a cache whose first past slots
// hold random keys and values, and the pass's new queries, keys and values.
func attnSetup(t testing.TB, c attnCase) (p *pass, q, k, v []float32) {
	t.Helper()
	d := dims{hidden: c.heads * c.headDim, layers: 1, heads: c.heads, kvHeads: c.kvHeads, headDim: c.headDim, gpt2Mask: c.gpt2Mask}
	cache, err := newCache(d, c.rows, c.capacity)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, uint64(c.n)))
	fill := func(v []float32) {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
	}
	for row := 0; row < c.rows; row++ {
		fill(cache.k[0][row])
		fill(cache.v[0][row])
	}
	b := &engine.Batch{}
	for row := 0; row < c.rows; row++ {
		mask := make([]bool, c.past+c.n)
		for j := range mask {
			mask[j] = row > 0 || (j >= c.pads && j != c.hole)
		}
		b.Tokens = append(b.Tokens, make([]int, c.n))
		b.Positions = append(b.Positions, make([]int, c.n))
		b.Mask = append(b.Mask, mask)
	}
	p = &pass{m: &Model{d: d}, c: cache, b: b, s: &cache.s, rows: c.rows, n: c.n, past: c.past}
	p.s.size(d, c.rows, c.n, c.capacity)
	T := c.rows * c.n
	q, k, v = make([]float32, T*d.qDim()), make([]float32, T*d.kvDim()), make([]float32, T*d.kvDim())
	fill(q)
	fill(k)
	fill(v)
	if c.nanValue >= 0 {
		v[c.nanValue*d.kvDim()] = float32(math.NaN())
	}
	return p, q, k, v
}

// newInside returns the Inside that records every new token of c.
func newInside(c attnCase) *engine.Inside {
	keys := c.past + c.n
	return &engine.Inside{AllAttention: true, Layers: 1, Heads: c.heads, Queries: c.n, Keys: keys,
		Attn: make([]float32, c.rows*c.heads*c.n*keys)}
}

// TestAttendBlocked checks prefill attention as blocked products against
// attendGroup, one new token at a time, on the same cache: every output
// and recorded weight within 1e-6 relative (the products agree to the bit,
// the weights of an unmasked tile within an ulp), NaN where it is NaN; and
// the same outputs when a pool of two goroutines shares the units.
func TestAttendBlocked(t *testing.T) {
	for _, c := range attnCases {
		t.Run(c.name, func(t *testing.T) {
			p, q, k, v := attnSetup(t, c)
			var in, inWant *engine.Inside
			if c.inside {
				in, inWant = newInside(c), newInside(c)
			}
			got := make([]float32, len(q))
			p.inside = in
			p.attend(0, q, k, v, got) // stores k, v in the cache, then attendBlocked

			want := make([]float32, len(q))
			p.inside = inWant
			blocks, blockLen := attnBlocks(c.n)
			for u := 0; u < c.rows*c.kvHeads*blocks; u++ {
				b := u % blocks
				p.attendGroup(0, u/blocks, u, b*blockLen, min((b+1)*blockLen, c.n), q, want)
			}
			checkRelative(t, "output", got, want)

			// Two goroutines: the units' scratch must not overlap.
			pool := tensor.NewPool(2)
			defer pool.Close()
			p.pool, p.inside = pool, nil
			pooled := make([]float32, len(q))
			p.attend(0, q, k, v, pooled)
			checkRelative(t, "output with two goroutines", pooled, got)
			if c.inside {
				checkRelative(t, "recorded weights", in.Attn, inWant.Attn)
			}
			if c.nanValue >= 0 {
				qd := c.heads * c.headDim
				if x := got[(c.nanValue-1)*qd]; x != x {
					t.Errorf("token %d before the NaN value: got NaN, want a number", c.nanValue-1)
				}
			}
		})
	}
}

// checkRelative fails unless got and want agree within 1e-6 relative at
// every index (1e-30 absolute near zero), or are the same infinity, or
// both NaN.
func checkRelative(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if g == w || math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		if !(math.Abs(g-w) <= 1e-6*math.Abs(w)+1e-30) {
			if bad++; bad <= 3 {
				t.Errorf("%s[%d]: got %v, want %v", what, i, got[i], want[i])
			}
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d values differ in all", what, bad)
	}
}

// BenchmarkPrefillAttention times one layer's attention over a prompt of
// 64 and of 512 tokens at SmolLM2-135M's shape (9 query heads, 3 kv heads
// of 64), one token at a time (attendGroup, the way before blocked
// products) and blocked (attendBlocked), and reports the prompt tokens
// per second one layer's attention takes.
func BenchmarkPrefillAttention(b *testing.B) {
	for _, n := range []int{64, 512} {
		c := attnCase{heads: 9, kvHeads: 3, headDim: 64, rows: 1, n: n, capacity: n + 64, hole: -1, nanValue: -1}
		p, q, k, v := attnSetup(b, c)
		out := make([]float32, len(q))
		p.attend(0, q, k, v, out)
		blocks, blockLen := attnBlocks(n)
		for _, blocked := range []bool{false, true} {
			name := map[bool]string{false: "per-token", true: "blocked"}[blocked]
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				for b.Loop() {
					for u := 0; u < c.kvHeads*blocks; u++ {
						t0, t1 := u%blocks*blockLen, min((u%blocks+1)*blockLen, n)
						if blocked {
							p.attendBlocked(0, u/blocks, u, t0, t1, q, out)
						} else {
							p.attendGroup(0, u/blocks, u, t0, t1, q, out)
						}
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// FuzzAttendBlocked runs prefill attention as blocked products on random
// shapes, cached prefixes and masks, with NaN and ±Inf values among the
// keys and values, and checks that it never panics and gives what
// attendGroup gives one token at a time (within 1e-6 relative, NaN where
// it has NaN). Shapes stay small: at most 8 kv heads of 4 query heads,
// 128 dims, 200 cached and 200 new tokens.
func FuzzAttendBlocked(f *testing.F) {
	f.Add(uint8(9), uint8(3), uint8(64), uint16(0), uint16(64), uint8(0), uint64(0), uint64(1))
	f.Add(uint8(4), uint8(1), uint8(32), uint16(37), uint16(29), uint8(3), uint64(0b1011), uint64(2))
	f.Add(uint8(2), uint8(2), uint8(6), uint16(5), uint16(40), uint8(1), uint64(1<<63), uint64(3))
	f.Add(uint8(1), uint8(1), uint8(128), uint16(190), uint16(130), uint8(255), uint64(0xffff), uint64(4))
	f.Fuzz(func(t *testing.T, heads, kvHeads, hd uint8, past, n uint16, pads uint8, holes, seed uint64) {
		kv := int(kvHeads%8) + 1
		c := attnCase{
			heads: kv * (int(heads%4) + 1), kvHeads: kv, headDim: int(hd%128) + 1,
			rows: 1, past: int(past % 201), n: int(n%200) + 1, hole: -1, nanValue: -1,
			gpt2Mask: seed&1 == 1,
		}
		c.capacity = c.past + c.n
		c.pads = int(pads) % (c.capacity + 1)
		p, q, k, v := attnSetup(t, c)
		mask := p.b.Mask[0]
		for j := range mask {
			if holes>>(j%64)&1 == 1 && j%3 == int(seed%3) {
				mask[j] = false
			}
		}
		r := rand.New(rand.NewPCG(seed, 7))
		for range seed % 4 { // a few non-finite keys and values, new or cached
			bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
			if r.IntN(2) == 0 {
				v[r.IntN(len(v))] = bad
			} else {
				p.c.k[0][0][r.IntN(c.past*c.headDim+1)] = bad
			}
		}
		got := make([]float32, len(q))
		p.attend(0, q, k, v, got)
		want := make([]float32, len(q))
		blocks, blockLen := attnBlocks(c.n)
		for u := 0; u < c.kvHeads*blocks; u++ {
			b := u % blocks
			p.attendGroup(0, u/blocks, u, b*blockLen, min((b+1)*blockLen, c.n), q, want)
		}
		checkRelative(t, "output", got, want)
	})
}
