package trace_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"tracer/trace"
)

// insideTrace is a toy trace dressed as a model of 2 layers × 3 heads,
// every row carrying an inside view of the right shape: even attention
// over its context, causal prompt matrices at step 0 and a 2-entry lens.
func insideTrace(t testing.TB) *trace.Trace {
	t.Helper()
	tr := toyTrace(t, nil, [][]int{{0}})
	tr.Model.Layers, tr.Model.Heads = 2, 3
	tr.Options.RecordAttention, tr.Options.RecordLens = trace.RecordAttentionAll, 2
	even := func(keys, of int) trace.Weights {
		w := make(trace.Weights, keys)
		for k := range of {
			w[k] = 1 / float32(of)
		}
		return w
	}
	for s := range tr.Steps {
		for r := range tr.Steps[s].Rows {
			row := &tr.Steps[s].Rows[r]
			in := &trace.Inside{}
			for range tr.Model.Layers {
				var heads []trace.Weights
				var prompt [][]trace.Weights
				for range tr.Model.Heads {
					heads = append(heads, even(row.Context, row.Context))
					var qs []trace.Weights
					for q := range row.InputIDs {
						qs = append(qs, even(len(row.InputIDs), q+1))
					}
					prompt = append(prompt, qs)
				}
				in.Attention = append(in.Attention, heads)
				if s == 0 {
					in.PromptAttention = append(in.PromptAttention, prompt)
				}
				in.Lens = append(in.Lens, []trace.Candidate{{ID: 1, Logit: 2.5, Prob: 0.6}, {ID: 0, Logit: 2.25, Prob: 0.4}})
			}
			row.Inside = in
		}
	}
	return tr
}

// TestInsideSchemaAndRoundTrip: a trace with inside views validates
// against schema.json, reads back, and writes back byte for byte.
func TestInsideSchemaAndRoundTrip(t *testing.T) {
	want := insideTrace(t)
	data := encode(t, want)
	got, err := trace.Read(bytes.NewReader(data), 0)
	if err != nil {
		t.Fatalf("a valid inside trace is refused: %v", err)
	}
	if again := encode(t, got); !bytes.Equal(again, data) {
		t.Errorf("inside trace changed on a write/read round trip")
	}
	c := jsonschema.NewCompiler()
	f, err := os.Open("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("schema.json does not compile: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Errorf("inside trace does not validate against schema.json: %v", err)
	}
}

// TestWeightsCompact: weights are written as the shortest decimal that
// reads back to the same float32, non-finite ones as null, which reads
// back as NaN.
func TestWeightsCompact(t *testing.T) {
	w := trace.Weights{0.1, 1.0 / 3, 1, 0, 1e-7, float32(math.NaN())}
	b, err := json.Marshal(w)
	if want := `[0.1,0.33333334,1,0,1e-07,null]`; err != nil || string(b) != want {
		t.Fatalf("got %s, %v; want %s", b, err, want)
	}
	var back trace.Weights
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for i := range w[:5] {
		if back[i] != w[i] {
			t.Errorf("weight %d: got %v back, want %v", i, back[i], w[i])
		}
	}
	if back[5] == back[5] {
		t.Errorf("null read back as %v, want NaN", back[5])
	}
}

// TestReadRejectsBadInside: each malformed inside view is refused with
// the field named.
func TestReadRejectsBadInside(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(tr *trace.Trace)
		want string
	}{
		{"too few layers", func(tr *trace.Trace) {
			in := tr.Steps[1].Rows[0].Inside
			in.Attention = in.Attention[:1]
		}, "steps[1].rows[0].inside.attention has 1 entries, want one per model.layers (2)"},
		{"too few heads", func(tr *trace.Trace) {
			in := tr.Steps[1].Rows[0].Inside
			in.Attention[1] = in.Attention[1][:2]
		}, "inside.attention[1] has 2 entries, want one per model.heads (3)"},
		{"a weight too many", func(tr *trace.Trace) {
			in := tr.Steps[1].Rows[0].Inside
			in.Attention[0][2] = append(in.Attention[0][2], 0)
		}, "inside.attention[0][2] has 3 weights, want 2"},
		{"not a distribution", func(tr *trace.Trace) {
			tr.Steps[1].Rows[0].Inside.Attention[0][1][0] = 0.1
		}, "inside.attention[0][1] sums to"},
		{"weight above 1", func(tr *trace.Trace) {
			tr.Steps[1].Rows[0].Inside.Attention[0][0][0] = 1.5
		}, "outside [0, 1]"},
		{"NaN weight", func(tr *trace.Trace) {
			tr.Steps[1].Rows[0].Inside.Attention[0][0][1] = float32(math.NaN())
		}, "inside.attention[0][0][1]: probability NaN"},
		{"prompt attention after step 0", func(tr *trace.Trace) {
			tr.Steps[1].Rows[0].Inside.PromptAttention = tr.Steps[0].Rows[0].Inside.PromptAttention
		}, "prompt_attention is recorded at step 1: it belongs to step 0 only"},
		{"prompt attention query missing", func(tr *trace.Trace) {
			pa := tr.Steps[0].Rows[0].Inside.PromptAttention
			pa[1][0] = pa[1][0][:0]
		}, "prompt_attention[1][0] has 0 queries, want one per input id (1)"},
		{"lens id outside vocab", func(tr *trace.Trace) {
			tr.Steps[2].Rows[0].Inside.Lens[1][0].ID = 999
		}, "inside.lens[1][0]: token id 999 is outside the vocabulary"},
		{"lens out of order", func(tr *trace.Trace) {
			tr.Steps[2].Rows[0].Inside.Lens[0][1].Logit = 7
		}, "inside.lens[0] is not ordered by descending logit"},
		{"lens probability", func(tr *trace.Trace) {
			tr.Steps[2].Rows[0].Inside.Lens[0][1].Prob = -0.5
		}, "inside.lens[0][1]: probability -0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := insideTrace(t)
			tc.edit(tr)
			_, err := trace.Read(bytes.NewReader(encode(t, tr)), 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// FuzzReadInside feeds mutations of a trace with inside views to Read:
// no panic or hang, and what is accepted holds attention lists of one
// weight per context position summing to 1, and writes back to a trace
// that reads again.
func FuzzReadInside(f *testing.F) {
	var buf bytes.Buffer
	if err := trace.Write(&buf, insideTrace(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"tracer/v1","model":{"vocab_size":2,"layers":1,"heads":1},"steps":[{"index":0,"rows":[{"row":0,"input_ids":[0],"context":1,"candidates":[],"entropy":0,"chosen":{"id":0,"token":"","prob":1,"rank":1,"by":"greedy"},"inside":{"attention":[[[1]]],"prompt_attention":[[[[1]]]],"lens":[[{"id":1,"token":"","logit":1,"prob":1}]]}}]}],"output":{"ids":null,"new_ids":null,"text":"","new_text":"","stop_reason":"eos"}}`))
	f.Add([]byte(`{"format":"tracer/v1","model":{"vocab_size":2},"steps":[{"index":0,"rows":[{"chosen":{"by":"greedy"},"inside":{"attention":[[[null]]]}}]}],"output":{"stop_reason":"eos"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Read(bytes.NewReader(data), 1<<20)
		if err != nil {
			return
		}
		for _, s := range tr.Steps {
			for _, r := range s.Rows {
				if r.Inside == nil {
					continue
				}
				for _, heads := range r.Inside.Attention {
					for _, w := range heads {
						var sum float64
						for _, v := range w {
							sum += float64(v)
						}
						if len(w) != r.Context || math.Abs(sum-1) > 1e-3 {
							t.Fatalf("accepted an attention list of %d weights summing to %v for a context of %d", len(w), sum, r.Context)
						}
					}
				}
			}
		}
		var out bytes.Buffer
		if err := trace.Write(&out, tr); err != nil {
			t.Fatalf("an accepted trace does not write: %v", err)
		}
		if _, err := trace.Read(&out, 1<<30); err != nil {
			t.Fatalf("an accepted trace, written back, does not read: %v", err)
		}
	})
}
