package arch

import (
	"math"
	"slices"
	"testing"
	"unsafe"

	"tracer/engine"
)

// TestAttentionMasking checks the three ways a query meets its keys: some
// allowed (masked ones get weight 0), and none allowed, where transformers'
// finfo.min mask spreads the weight evenly (over every slot for Llama; over
// the earlier slots and the later real ones for GPT-2).
func TestAttentionMasking(t *testing.T) {
	// One head of 2 dims; keys are zero so every allowed score is equal.
	V := [][]float32{{1, 0}, {0, 1}, {4, 4}}
	mask := []bool{false, false, true}
	tests := []struct {
		name     string
		gpt2Mask bool
		want     [][]float32 // output of each query
	}{
		{"llama", false, [][]float32{{5.0 / 3, 5.0 / 3}, {5.0 / 3, 5.0 / 3}, {4, 4}}},
		{"gpt2", true, [][]float32{{2.5, 2}, {5.0 / 3, 5.0 / 3}, {4, 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dims{hidden: 2, layers: 1, heads: 1, kvHeads: 1, headDim: 2, gpt2Mask: tt.gpt2Mask}
			m := &Model{d: d}
			c, err := newCache(d, 1, 4)
			if err != nil {
				t.Fatal(err)
			}
			b := &engine.Batch{Tokens: [][]int{{0, 0, 0}}, Positions: [][]int{{0, 1, 2}}, Mask: [][]bool{mask}}
			p := &pass{m: m, c: c, b: b, s: &c.s, rows: 1, n: 3}
			p.s.size(d, 1, 3, 4)
			k := make([]float32, 6)
			var v []float32
			for _, row := range V {
				v = append(v, row...)
			}
			q := []float32{1, 1, 1, 1, 1, 1}
			out := make([]float32, 6)
			p.attend(0, q, k, v, out)
			for i, want := range tt.want {
				if d := maxDiff(out[2*i:2*i+2], want); d > 1e-6 {
					t.Errorf("query %d: output %v, want %v", i, out[2*i:2*i+2], want)
				}
			}
		})
	}
}

// TestWarmKV: in a decode step the ranges warmKV hands the k and v
// projections to warm are what attention reads of the cache: with every
// other slot NaN (capacity past the step, other kv heads' tails) the
// output stays finite, and a NaN in any one range reaches it. Other
// passes warm nothing.
func TestWarmKV(t *testing.T) {
	const past, capacity = 5, 9
	c := attnCase{heads: 6, kvHeads: 3, headDim: 16, rows: 1, past: past, n: 1, capacity: capacity, hole: -1, nanValue: -1}
	p, q, k, v := attnSetup(t, c)
	keys, values := p.warmKV(0)
	if len(keys) != c.kvHeads || len(values) != c.kvHeads {
		t.Fatalf("warmKV: %d key and %d value ranges, want %d each", len(keys), len(values), c.kvHeads)
	}
	K, V := p.c.k[0][0], p.c.v[0][0]
	in := func(x []float32, i int, ranges [][]float32) bool { // x[i] lies in one of ranges
		at := uintptr(unsafe.Pointer(&x[i]))
		for _, r := range ranges {
			if len(r) > 0 && at >= uintptr(unsafe.Pointer(&r[0])) && at < uintptr(unsafe.Pointer(&r[0]))+uintptr(len(r))*4 {
				return true
			}
		}
		return false
	}
	for i := range K {
		if !in(K, i, keys) {
			K[i] = float32(math.NaN())
		}
		if !in(V, i, values) {
			V[i] = float32(math.NaN())
		}
	}
	out := make([]float32, c.heads*c.headDim)
	p.attend(0, q, k, v, out)
	for i, o := range out {
		if math.IsNaN(float64(o)) {
			t.Fatalf("output %d is NaN: attention read the cache outside the warmed ranges", i)
		}
	}
	for name, ranges := range map[string][][]float32{"keys": keys, "values": values} {
		for g, r := range ranges {
			if len(r) != past*c.headDim {
				t.Fatalf("%s of kv head %d: %d floats, want %d", name, g, len(r), past*c.headDim)
			}
			keep := r[len(r)-1]
			r[len(r)-1] = float32(math.NaN())
			p.attend(0, q, k, v, out)
			r[len(r)-1] = keep
			rep := c.heads / c.kvHeads
			if !slices.ContainsFunc(out[g*rep*c.headDim:(g+1)*rep*c.headDim], func(o float32) bool { return math.IsNaN(float64(o)) }) {
				t.Errorf("%s of kv head %d: a NaN at the range's end did not reach its heads' output: attention does not read it", name, g)
			}
		}
	}
	for _, tc := range []attnCase{
		{heads: 2, kvHeads: 1, headDim: 16, rows: 1, past: 3, n: 4, capacity: 8, hole: -1, nanValue: -1}, // a prefill
		{heads: 2, kvHeads: 1, headDim: 16, rows: 2, past: 3, n: 1, capacity: 8, hole: -1, nanValue: -1}, // a batch
		{heads: 2, kvHeads: 1, headDim: 16, rows: 1, past: 0, n: 1, capacity: 8, hole: -1, nanValue: -1}, // an empty cache
	} {
		p, _, _, _ := attnSetup(t, tc)
		if k, v := p.warmKV(0); k != nil || v != nil {
			t.Errorf("rows %d, n %d, past %d: warmKV gave %d and %d ranges, want none", tc.rows, tc.n, tc.past, len(k), len(v))
		}
	}
}
