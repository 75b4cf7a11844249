package arch

import (
	"testing"

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
