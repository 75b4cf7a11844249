package engine

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"tracer/trace"
)

// insideModel is fixedModel with layers × heads inside: the weight of
// (row, layer, head, query, key) is a number that names all five, and the
// lens logits of layer l are the fixed logits plus l on id l (when the
// vocabulary has one).
type insideModel struct {
	fixedModel
	layers, heads int
	calls         int
}

func (m *insideModel) Info() Info {
	info := m.fixedModel.Info()
	info.Layers, info.Heads, info.Intermediate = m.layers, m.heads, insideFFN
	return info
}

// insideFFN is insideModel's MLP width.
const insideFFN = 8

// forwardCode names a forward answer's place: row r, slot i (a norm's
// index, or layer·heads + head), kind (0 norms, 1 heads).
func forwardCode(r, i, kind int) float64 { return float64(r*1000+kind*100+i) + 0.5 }

// code names a weight's place: rrllhhqqkk in decimal digits.
func code(r, l, h, q, k int) float32 {
	return float32((((r*100+l)*100+h)*100+q)*100 + k)
}

func (m *insideModel) ForwardInside(c Cache, b *Batch, logits [][]float32, in *Inside) error {
	m.calls++
	past := c.Len()
	if err := m.Forward(c, b, logits); err != nil {
		return err
	}
	rows, n, v := len(b.Tokens), len(b.Tokens[0]), len(m.logits)
	in.Layers, in.Heads, in.Keys, in.Queries = m.layers, m.heads, past+n, 1
	if in.AllAttention {
		in.Queries = n
	}
	in.Attn = in.Attn[:0]
	for r := range rows {
		for l := range m.layers {
			for h := range m.heads {
				for q := range in.Queries {
					for k := range in.Keys {
						in.Attn = append(in.Attn, code(r, l, h, q, k))
					}
				}
			}
		}
	}
	if in.Forward > 0 {
		L, H := m.layers, m.heads
		in.Neurons = min(in.Forward, insideFFN)
		in.Norms, in.HeadNorms, in.NeuronIDs, in.NeuronActs = in.Norms[:0], in.HeadNorms[:0], in.NeuronIDs[:0], in.NeuronActs[:0]
		in.AttnBytes, in.MLPBytes = in.AttnBytes[:0], in.MLPBytes[:0]
		for r := range rows {
			for i := range ForwardNorms(L) {
				in.Norms = append(in.Norms, forwardCode(r, i, 0))
			}
			for i := range L * H {
				in.HeadNorms = append(in.HeadNorms, forwardCode(r, i, 1))
			}
			for l := range L {
				for k := range in.Neurons {
					// Row r's layer l: ids r+l+k, activations ±(9-k).
					in.NeuronIDs = append(in.NeuronIDs, (r+l+k)%insideFFN)
					in.NeuronActs = append(in.NeuronActs, float32((9-k)*(1-2*(k%2))))
				}
			}
		}
		for l := range L {
			in.AttnBytes, in.MLPBytes = append(in.AttnBytes, int64(100*l+past)), append(in.MLPBytes, int64(100*l+7))
		}
		in.EmbedBytes, in.UnembedBytes = int64(3*n), 11
	}
	in.LensLogits = in.LensLogits[:0]
	for range rows {
		for l := range m.layers {
			in.LensLogits = append(in.LensLogits, m.logits...)
			if l < v {
				in.LensLogits[len(in.LensLogits)-v+l] += float32(l)
			}
		}
	}
	return nil
}

// TestInsideRecordsEveryRow runs a left-padded batch of two through
// Generate on insideModel and checks that every row of every step holds
// its own weights in [layer][head][key] order, the last query's at every
// step and every query's at step 0 only, and each layer's lens top ids
// with their softmax probabilities.
func TestInsideRecordsEveryRow(t *testing.T) {
	m := &insideModel{fixedModel: fixedModel{logits: []float32{0.5, 1, 0.25, 2, -1}}, layers: 3, heads: 2}
	o, notices, err := Resolve(m.Info(), nil, &Settings{MaxNewTokens: ptr(3), PadTokenID: ptr(4)})
	if err != nil {
		t.Fatal(err)
	}
	o.RecordAttention, o.RecordLens = trace.RecordAttentionAll, 2
	tr, err := Generate(context.Background(), Request{Model: m, Prompts: [][]int{{0}, {1, 2}}, Options: o, Notices: notices, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != 3 || m.calls != 3 {
		t.Fatalf("%d steps, %d ForwardInside calls; want 3 and 3", len(tr.Steps), m.calls)
	}
	for s, st := range tr.Steps {
		queries := 1
		if s == 0 {
			queries = 2 // the padded prompt
		}
		for r, row := range st.Rows {
			in := row.Inside
			if in == nil || len(in.Attention) != 3 || len(in.Lens) != 3 {
				t.Fatalf("step %d row %d: inside %+v, want attention and lens of 3 layers", s, r, in)
			}
			keys := 2 + s
			for l := range 3 {
				for h := range 2 {
					w := in.Attention[l][h]
					for k := range keys {
						if want := code(r, l, h, queries-1, k); len(w) != keys || w[k] != want {
							t.Fatalf("step %d row %d layer %d head %d key %d: got %v, want %v", s, r, l, h, k, w, want)
						}
					}
					if s > 0 {
						continue
					}
					for q := range queries {
						if got, want := in.PromptAttention[l][h][q][1], code(r, l, h, q, 1); got != want {
							t.Fatalf("prompt row %d layer %d head %d query %d: got %v, want %v", r, l, h, q, got, want)
						}
					}
				}
				// Layer l adds l to id l: layer 0 ranks 3 then 1, layer
				// 1 ties ids 1 and 3 at 2 (the lower id first), layer 2
				// ranks 2 (2.25) then 3.
				wantIDs := [][]int{{3, 1}, {1, 3}, {2, 3}}[l]
				lse := 0.0
				for id, v := range m.logits {
					if id == l {
						v += float32(l)
					}
					lse += math.Exp(float64(v))
				}
				for k, c := range in.Lens[l] {
					logit := m.logits[c.ID]
					if c.ID == l {
						logit += float32(l)
					}
					if c.ID != wantIDs[k] || c.Logit != logit || math.Abs(c.Prob-math.Exp(float64(logit))/lse) > 1e-12 {
						t.Errorf("step %d row %d layer %d lens %d: got %+v, want id %d logit %v", s, r, l, k, c, wantIDs[k], logit)
					}
				}
			}
			if (in.PromptAttention != nil) != (s == 0) {
				t.Errorf("step %d row %d: prompt_attention recorded %v, want only at step 0", s, r, in.PromptAttention != nil)
			}
		}
	}
}

// TestForwardRecordsEveryRow runs a left-padded batch of two through
// Generate on insideModel with record_forward and checks that every row of
// every step holds its own answers: the norms, each layer's heads, its
// neurons and the step's bytes, in trace.Forward's places.
func TestForwardRecordsEveryRow(t *testing.T) {
	m := &insideModel{fixedModel: fixedModel{logits: []float32{0.5, 1, 0.25, 2, -1}}, layers: 3, heads: 2}
	o, notices, err := Resolve(m.Info(), nil, &Settings{MaxNewTokens: ptr(3), PadTokenID: ptr(4), RecordForward: ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Generate(context.Background(), Request{Model: m, Prompts: [][]int{{0}, {1, 2}}, Options: o, Notices: notices, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != 3 || tr.Options.RecordForward != 2 {
		t.Fatalf("%d steps, record_forward %d; want 3 and 2", len(tr.Steps), tr.Options.RecordForward)
	}
	for s, st := range tr.Steps {
		past, n := 0, 2
		if s > 0 {
			past, n = 1+s, 1
		}
		for r, row := range st.Rows {
			if row.Inside == nil || row.Inside.Forward == nil || row.Inside.Attention != nil || row.Inside.Lens != nil {
				t.Fatalf("step %d row %d: inside %+v, want the forward pass only", s, r, row.Inside)
			}
			f := row.Inside.Forward
			if len(f.Layers) != 3 || f.Embedding != forwardCode(r, 0, 0) || f.Final != forwardCode(r, 16, 0) || f.EmbedBytes != int64(3*n) || f.UnembedBytes != 11 {
				t.Fatalf("step %d row %d: forward %+v", s, r, f)
			}
			for l, fl := range f.Layers {
				norms := []float64{fl.In, fl.Attn, fl.Mid, fl.MLP, fl.Out}
				for i, v := range norms {
					if want := forwardCode(r, 1+5*l+i, 0); v != want {
						t.Errorf("step %d row %d layer %d norm %d: %v, want %v", s, r, l, i, v, want)
					}
				}
				if !slices.Equal(fl.Heads, []trace.Head{{Index: 1, Share: forwardCode(r, 2*l+1, 1)}, {Index: 0, Share: forwardCode(r, 2*l, 1)}}) {
					t.Errorf("step %d row %d layer %d: heads %v", s, r, l, fl.Heads)
				}
				want := []trace.Neuron{{Index: (r + l) % insideFFN, Act: 9}, {Index: (r + l + 1) % insideFFN, Act: -8}}
				if !slices.Equal(fl.Neurons, want) {
					t.Errorf("step %d row %d layer %d: neurons %v, want %v", s, r, l, fl.Neurons, want)
				}
				if fl.AttnBytes != int64(100*l+past) || fl.MLPBytes != int64(100*l+7) {
					t.Errorf("step %d row %d layer %d: bytes %d and %d", s, r, l, fl.AttnBytes, fl.MLPBytes)
				}
			}
		}
	}
	if err := tr.Validate(); err != nil {
		t.Errorf("the trace does not validate: %v", err)
	}
}

// TestInsideOptions: recording off asks nothing; a model without an
// inside, a bad record_attention and prompt matrices over the limit are
// option errors that say what to do.
func TestInsideOptions(t *testing.T) {
	plain := &fixedModel{logits: []float32{0, 1}}
	deep := &insideModel{fixedModel: fixedModel{logits: []float32{0, 1}}, layers: 32, heads: 32}
	for _, tc := range []struct {
		name      string
		m         Model
		attention string
		lens      int
		record    bool
		prompt    int
		want      string // "" = accepted
	}{
		{"not recording", plain, "all", 5, false, 2, ""},
		{"step on a model with an inside", deep, "step", 0, true, 2, ""},
		{"no inside", plain, "", 3, true, 2, "need a transformer"},
		{"unknown attention", deep, "heads", 0, true, 2, `record_attention must be "step" or "all"`},
		{"negative lens", deep, "", -1, true, 2, "record_lens must be 0 (off) or more"},
		{"negative forward", deep, "", 0, true, 2, "record_forward must be 0 (off) or more"},
		{"forward above the cap", deep, "", 0, true, 2, "record_forward must be at most 64"},
		{"forward wider than the MLP", deep, "", 0, true, 2, "record_forward must be at most the model's MLP width of 8"},
		{"forward of the MLP's width", deep, "", 0, true, 2, ""},
		{"forward without an inside", plain, "", 0, true, 2, "record_attention, record_lens and record_forward need a transformer"},
		{"prompt matrices too large", deep, "all", 0, true, 400, "over the limit of 4194304: record each step's attention only"},
		{"step attention of a long prompt", deep, "step", 0, true, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Resolve checks the values; Generate what the model can answer.
			forward := map[string]int{"negative forward": -1, "forward above the cap": 65, "forward wider than the MLP": 9,
				"forward of the MLP's width": 8, "forward without an inside": 3}[tc.name]
			o, _, err := Resolve(tc.m.Info(), nil, &Settings{MaxNewTokens: ptr(1), RecordAttention: &tc.attention, RecordLens: &tc.lens, RecordForward: &forward})
			if err == nil {
				_, err = Generate(context.Background(), Request{Model: tc.m, Prompts: [][]int{make([]int, tc.prompt)}, Options: o, Record: tc.record})
			}
			var oe *OptionError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case tc.want != "" && (!errors.As(err, &oe) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got error %v, want an option error containing %q", err, tc.want)
			}
		})
	}
}
