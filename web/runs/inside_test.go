package runs

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/lessons"
	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/view"
)

func TestLensView(t *testing.T) {
	w := testsupport.Words(t, lessons.English)
	chosen := trace.Chosen{ID: 2, Token: " b"}
	cases := []struct {
		name      string
		lens      [][]trace.Candidate
		first     int
		sentence  string
		highlight []int // 1-based layers whose chosen cell is highlighted
	}{
		{"settled", lensOf([]int{1, 2}, []int{1, 2}, []int{2, 1}, []int{2, 3}), 3, "the answer is settled from layer 3 of 4", []int{3, 4}},
		{"settled at once", lensOf([]int{2}, []int{2}), 1, "settled from layer 1 of 2", []int{1, 2}},
		{"wavers", lensOf([]int{2, 1}, []int{1, 2}, []int{2}), 1, "layer 2 still prefers another token", []int{1, 2, 3}},
		{"never", lensOf([]int{1, 2}, []int{3, 2}), 0, "is the top-1 of no layer", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := BuildLens(tc.lens, chosen, w)
			if v.First != tc.first {
				t.Errorf("got first layer %d, want %d", v.First, tc.first)
			}
			if !strings.Contains(v.Settled, tc.sentence) || !strings.Contains(v.Settled, "␣b") {
				t.Errorf("got sentence %q, want one with %q and the token ␣b", v.Settled, tc.sentence)
			}
			var got []int
			for _, r := range v.Rows {
				for _, c := range r.Cells {
					if c.Chosen {
						got = append(got, r.Layer)
					}
				}
			}
			if !slices.Equal(got, tc.highlight) {
				t.Errorf("got the chosen token highlighted at layers %v, want %v", got, tc.highlight)
			}
		})
	}
	t.Run("five shown", func(t *testing.T) {
		v := BuildLens(lensOf([]int{0, 1, 2, 3, 4, 5, 6}), chosen, w)
		if n := len(v.Rows[0].Cells); n != LensShown {
			t.Errorf("got %d tokens shown, want %d", n, LensShown)
		}
	})
}

func TestStrongest(t *testing.T) {
	cases := []struct {
		name  string
		w     []float32
		query int
		want  []int
	}{
		{"by weight", []float32{0.1, 0.5, 0.2, 0.05, 0.15}, 4, []int{1, 2, 0}},
		{"ties by the earlier key", []float32{0.25, 0.25, 0.25, 0.25}, 3, []int{0, 1, 2}},
		{"not the query itself", []float32{0.1, 0.1, 0.8}, 2, []int{0, 1}},
		{"no pads", []float32{0, 0, 0.6, 0.4}, 3, []int{2}},
		{"nothing before", []float32{1}, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := strongest(tc.w, tc.query, view.AttnLinks); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAttentionView(t *testing.T) {
	w := testsupport.Words(t, lessons.English)
	tr := insideTrace()
	v := BuildInside(tr, tr.Steps, 1, 1, w)
	if v == nil || v.Attention == nil || v.Lens == nil || len(v.Missing) != 0 {
		t.Fatalf("got %+v, want both panels and nothing missing", v)
	}
	a := v.Attention
	var texts []string
	for _, k := range a.Keys {
		texts = append(texts, k.Text)
	}
	if want := []string{"pad", "#6", "#7", "␣x"}; !slices.Equal(texts, want) {
		t.Errorf("got keys %q, want %q", texts, want)
	}
	if !a.Keys[0].Pad || !a.Keys[3].Query {
		t.Errorf("got keys %+v, want the first a pad and the last the query", a.Keys)
	}
	if a.Layer != 1 || a.Head != 2 || !a.Grid[1][2].Selected || !a.Grid[1][2].All {
		t.Errorf("got layer %d head %d shown first, want the last layer's all heads (1, 2)", a.Layer, a.Head)
	}
	var d AttnData
	if err := json.Unmarshal([]byte(a.Data), &d); err != nil {
		t.Fatalf("data: %v", err)
	}
	cases := []struct {
		name        string
		layer, head int
		w           []float32
		top         []int
	}{
		{"a head", 0, 1, []float32{0, 0.1, 0.1, 0.8}, []int{1, 2}},
		{"all heads averaged", 1, 2, []float32{0, 0.3, 0.5, 0.2}, []int{2, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := d.Cells[tc.layer][tc.head]
			for k, x := range tc.w {
				if diff := c.W[k] - x; diff > 1e-6 || diff < -1e-6 {
					t.Errorf("key %d: got %v, want %v", k, c.W[k], x)
				}
			}
			if !slices.Equal(c.Top, tc.top) {
				t.Errorf("got strongest %v, want %v", c.Top, tc.top)
			}
		})
	}
	if a.Keys[2].Weight != "0.5" || !a.Keys[2].Link || a.Keys[2].Tint != "1.00" {
		t.Errorf("got key 2 %+v shown first, want weight 0.5, the darkest tint and a link", a.Keys[2])
	}
}

func TestInsideMissing(t *testing.T) {
	w := testsupport.Words(t, lessons.English)
	bare := func(o trace.Options, params int64) *trace.Trace {
		return &trace.Trace{
			Model:   trace.Model{Kind: "hf", Params: params},
			Options: o,
			Prompt:  trace.Prompt{IDs: []int{1, 2}},
			Steps:   []trace.Step{{Rows: []trace.StepRow{{Chosen: trace.Chosen{ID: 1}}}}},
		}
	}
	cases := []struct {
		name string
		t    *trace.Trace
		want []string // in the sentences, in order
	}{
		{"imported without inside", bare(trace.Options{MaxNewTokens: 5}, 1000), []string{"No attention recorded", "--record-attention", "No logit lens recorded"}},
		{"too big for the page", bare(trace.Options{MaxNewTokens: 100}, 135e6), []string{"too large", "10⁹"}},
		{"recorded, not at this step", bare(trace.Options{RecordLens: 5}, 1000), []string{"not for this step"}},
		{"a server's run", func() *trace.Trace { t := bare(trace.Options{}, 0); t.Model.Kind = "server"; return t }(), []string{"top log-probabilities"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := BuildInside(tc.t, tc.t.Steps, 0, 0, w)
			if v == nil || v.Attention != nil || v.Lens != nil {
				t.Fatalf("got %+v, want no panels", v)
			}
			got := strings.Join(v.Missing, " | ")
			at := 0
			for _, s := range tc.want {
				i := strings.Index(got[at:], s)
				if i < 0 {
					t.Fatalf("got %q, want %q (after byte %d)", got, s, at)
				}
				at += i
			}
		})
	}
	t.Run("the toy has no inside", func(t *testing.T) {
		tr := bare(trace.Options{}, 0)
		tr.Model.Kind = "toy"
		if v := BuildInside(tr, tr.Steps, 0, 0, w); v != nil {
			t.Errorf("got %+v, want nil", v)
		}
	})
}

func TestLiveInside(t *testing.T) {
	small := insideModel{info: engine.Info{Params: 260032, Layers: 5, Heads: 8, VocabSize: 512}}
	big := insideModel{info: engine.Info{Params: 134515008, Layers: 30, Heads: 9, VocabSize: 49152}}
	cases := []struct {
		name    string
		m       engine.Model
		o       trace.Options
		prompts [][]int
		want    bool
	}{
		{"stories260K records", small, trace.Options{MaxNewTokens: 500}, [][]int{make([]int, 12)}, true},
		{"SmolLM2-135M does not", big, trace.Options{MaxNewTokens: 20}, [][]int{make([]int, 12)}, false},
		{"max_length counts", small, trace.Options{MaxNewTokens: -1, MaxLength: 5000}, [][]int{make([]int, 12)}, false},
		{"a model without inside", engine.Model(nil), trace.Options{MaxNewTokens: 5}, [][]int{{1}}, false},
		{"the user's own choice stays", small, trace.Options{MaxNewTokens: 5, RecordLens: 9}, [][]int{{1}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			got := liveInside(tc.m, &o, tc.prompts)
			if got != tc.want || got && (o.RecordAttention != trace.RecordAttentionStep || o.RecordLens != LensShown) {
				t.Errorf("got %v (%q, %d), want %v", got, o.RecordAttention, o.RecordLens, tc.want)
			}
		})
	}
}

func TestEstimateCountsInside(t *testing.T) {
	info := engine.Info{Layers: 5, Heads: 8, VocabSize: 512, KVBytesPerToken: 2560}
	off := trace.Options{MaxNewTokens: 100, RecordTop: 10, UseCache: true}
	on := off
	on.RecordAttention, on.RecordLens = trace.RecordAttentionStep, 5
	prompts := [][]int{make([]int, 10)}
	a, b := estimateRun(info, off, prompts), estimateRun(info, on, prompts)
	// 100 steps × (5 layers × 8 heads × 110 keys × 4 bytes + 5 layers × 5 entries × 48 bytes)
	perStep := 5.0*8*110*4 + 5*5*48 // 5 layers × 8 heads × 110 keys × 4 bytes + 5 layers × 5 entries × 48 bytes
	if want := 100*perStep - InsideKeep*perStep; b.record-a.record != want {
		t.Errorf("got %v more bytes recorded with the inside at every step, want %v (100 steps, less the %d a run without kept on demand)", b.record-a.record, want, InsideKeep)
	}
	toy := estimateRun(engine.Info{VocabSize: 10}, off, prompts)
	if toy.record != 100*(8*10*48+512) {
		t.Errorf("got %v bytes recorded for a model without layers, want no inside counted", toy.record)
	}
}

// FuzzInsideView builds the inside panels of arbitrary recorded rows
// (ragged lists, NaN, negative and huge weights, a lens in any order):
// no panic, and the panels stay consistent with what they show: one grid
// cell and one data cell per layer and head plus the average, one weight
// per key, links only to earlier keys by descending weight, and the lens
// highlight only from its first top-1 layer.
func FuzzInsideView(f *testing.F) {
	f.Add(uint8(2), uint8(2), uint8(4), []byte{0, 128, 64, 32, 255, 1, 2, 3}, uint16(3))
	f.Add(uint8(1), uint8(1), uint8(1), []byte{255}, uint16(0))
	f.Add(uint8(5), uint8(8), uint8(7), []byte("attention over the context"), uint16(286))
	f.Add(uint8(3), uint8(0), uint8(0), []byte{}, uint16(1))
	w := testsupport.Words(f, lessons.English)
	f.Fuzz(func(t *testing.T, layers, heads, keys uint8, data []byte, chosen uint16) {
		L, H, K := int(layers%8), int(heads%8), int(keys%16)
		next := func(i int) float32 {
			if len(data) == 0 {
				return 0
			}
			b := data[i%len(data)]
			switch b {
			case 255:
				return float32(math.NaN())
			case 254:
				return -1
			}
			return float32(b) / 128
		}
		i := 0
		att := make([][]trace.Weights, L)
		lens := make([][]trace.Candidate, L)
		for l := range L {
			for h := range H {
				ws := make(trace.Weights, (K+h)%16) // ragged: heads of different lengths
				for k := range ws {
					ws[k] = next(i)
					i++
				}
				att[l] = append(att[l], ws)
			}
			for k := range int(next(i) * 4) {
				lens[l] = append(lens[l], trace.Candidate{ID: int(next(i+k)*100) % 7, Logit: next(i + k + 1), Prob: float64(next(i + k + 2))})
			}
			i += 3
		}
		tr := &trace.Trace{
			Model:   trace.Model{Kind: "hf"},
			Prompt:  trace.Prompt{IDs: []int{1, 2, 3}, Tokens: []string{" a", "\\n", "b"}},
			Options: trace.Options{RecordAttention: trace.RecordAttentionStep, RecordLens: 5},
			Steps:   []trace.Step{{Rows: []trace.StepRow{{Chosen: trace.Chosen{ID: int(chosen) % 7}, Inside: &trace.Inside{Attention: att, Lens: lens}}}}},
		}
		v := BuildInside(tr, tr.Steps, 0, 0, w)
		if v == nil {
			t.Fatal("got no view for a real model")
		}
		if a := v.Attention; a != nil {
			var d AttnData
			if err := json.Unmarshal([]byte(a.Data), &d); err != nil {
				t.Fatalf("the panel's data does not read back: %v", err)
			}
			if len(d.Cells) != a.Layers || len(a.Grid) != a.Layers {
				t.Fatalf("got %d data rows and %d grid rows, want %d", len(d.Cells), len(a.Grid), a.Layers)
			}
			for l := range d.Cells {
				if len(d.Cells[l]) != a.Heads+1 || len(a.Grid[l]) != a.Heads+1 {
					t.Fatalf("layer %d: got %d cells, want %d heads and the average", l, len(d.Cells[l]), a.Heads)
				}
				for _, c := range d.Cells[l] {
					if len(c.W) != len(a.Keys) {
						t.Fatalf("got %d weights, want one per key (%d)", len(c.W), len(a.Keys))
					}
					for j, k := range c.Top {
						if k < 0 || k >= d.Query || !(c.W[k] > 0) || j > 0 && c.W[k] > c.W[c.Top[j-1]] {
							t.Fatalf("links %v over %v: want earlier keys of positive weight, strongest first", c.Top, c.W)
						}
					}
				}
			}
		}
		if ln := v.Lens; ln != nil {
			for _, r := range ln.Rows {
				if len(r.Cells) > LensShown {
					t.Fatalf("got %d tokens in a layer, want at most %d", len(r.Cells), LensShown)
				}
				for _, c := range r.Cells {
					if c.Chosen && (ln.First == 0 || r.Layer < ln.First) {
						t.Fatalf("layer %d highlighted before the first top-1 layer %d", r.Layer, ln.First)
					}
				}
			}
			if ln.Settled == "" {
				t.Fatal("no sentence")
			}
		}
	})
}

// TestAttentionTint tints each key by its weight over the cell's largest;
// a NaN weight (a broken model's) once made every tint NaN.
func TestAttentionTint(t *testing.T) {
	cases := []struct {
		name string
		w    trace.Weights
		want []string
	}{
		{"by the largest", trace.Weights{0.2, 0.8, 0}, []string{"0.25", "1.00", "0.00"}},
		{"a NaN weight", trace.Weights{float32(math.NaN()), 0.2, 0.8}, []string{"0", "0.25", "1.00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace.Trace{Model: trace.Model{Kind: "hf"}, Prompt: trace.Prompt{IDs: []int{1, 2, 3}}}
			steps := []trace.Step{{Rows: []trace.StepRow{{}}}}
			a := BuildAttention(tr, steps, 0, 0, [][]trace.Weights{{tc.w}})
			var got []string
			for _, k := range a.Keys {
				got = append(got, string(view.TintStyle(k.Tint)))
			}
			for i, w := range tc.want {
				if want := "--tint: " + w + ";"; got[i] != want {
					t.Errorf("key %d: got %q, want %q", i, got[i], want)
				}
			}
		})
	}
}

// TestAttnWeightsJSON checks the panel's weights on the wire: four
// decimals, trailing zeros dropped, what is not finite as null.
func TestAttnWeightsJSON(t *testing.T) {
	nan := float32(math.NaN())
	got, err := json.Marshal(attnWeights{0.5, 1, 0, 0.031654995, 0.00004, -0.00001, 0.99996, nan, float32(math.Inf(1)), 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[0.5,1,0,0.0317,0,0,1,null,null,0.1]`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// lensOf builds a lens whose layer l has tops[l] as its top tokens.
func lensOf(tops ...[]int) [][]trace.Candidate {
	out := make([][]trace.Candidate, len(tops))
	for l, ids := range tops {
		for k, id := range ids {
			out[l] = append(out[l], trace.Candidate{ID: id, Token: "t" + string(rune('a'+id)), Logit: float32(10 - k), Prob: 0.5 / float64(k+1)})
		}
	}
	return out
}

// insideTrace is a two-layer, two-head trace of a left-padded batch whose
// row 1 recorded attention over four keys (one pad) and a lens.
func insideTrace() *trace.Trace {
	att := [][]trace.Weights{
		{{0, 0.5, 0.3, 0.2}, {0, 0.1, 0.1, 0.8}},
		{{0, 0.2, 0.6, 0.2}, {0, 0.4, 0.4, 0.2}},
	}
	return &trace.Trace{
		Model:   trace.Model{Name: "m", Kind: "hf", Layers: 2, Heads: 2, VocabSize: 10},
		Options: trace.Options{RecordAttention: trace.RecordAttentionStep, RecordLens: 5},
		Prompt: trace.Prompt{Rows: []trace.Row{
			{IDs: []int{5, 6, 7}, AttentionMask: []int{1, 1, 1}},
			{IDs: []int{0, 6, 7}, AttentionMask: []int{0, 1, 1}},
		}},
		Steps: []trace.Step{
			{Rows: []trace.StepRow{{Chosen: trace.Chosen{ID: 3}}, {Chosen: trace.Chosen{ID: 4, Token: " x"}}}},
			{Rows: []trace.StepRow{{}, {Context: 4, Chosen: trace.Chosen{ID: 3, Token: "c"}, Inside: &trace.Inside{Attention: att, Lens: lensOf([]int{1, 3}, []int{3})}}}},
		},
	}
}

// insideModel stands in for a model that can show its inside.
type insideModel struct {
	engine.Model
	info engine.Info
}

func (m insideModel) Info() engine.Info { return m.info }

func (m insideModel) ForwardInside(engine.Cache, *engine.Batch, [][]float32, *engine.Inside) error {
	return nil
}
