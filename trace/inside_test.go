package trace_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"tracer/trace"
)

// insideTrace is a toy trace dressed as a model of 2 layers × 3 heads
// and an MLP of 4 neurons, every row carrying an inside view of the right
// shape: even attention over its context, causal prompt matrices at step
// 0, a 2-entry lens and a forward pass with 2 neurons a layer.
func insideTrace(t testing.TB) *trace.Trace {
	t.Helper()
	tr := toyTrace(t, nil, [][]int{{0}})
	tr.Model.Layers, tr.Model.Heads, tr.Model.Intermediate = 2, 3, 4
	tr.Options.RecordAttention, tr.Options.RecordLens, tr.Options.RecordForward = trace.RecordAttentionAll, 2, 2
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
			in.Forward = forwardOf(tr.Model.Layers, float64(s+1))
			row.Inside = in
		}
	}
	return tr
}

// forwardOf is a forward pass of layers layers of 3 heads and 2 neurons,
// its norms scaled by x: float64 norms of every precision, float32
// activations, byte counts.
func forwardOf(layers int, x float64) *trace.Forward {
	f := &trace.Forward{Embedding: 0.1 * x, Final: math.Pi * x, EmbedBytes: 1152, UnembedBytes: 56623104 + 2304}
	h := 0.1
	for l := range layers {
		in := h
		f.Layers = append(f.Layers, trace.ForwardLayer{
			In: in * x, Attn: 1.0 / 3 * x, Mid: (in + 0.25) * x, MLP: math.Sqrt(2) * x, Out: (in + 1) * x,
			Heads:     []trace.Head{{Index: 2, Share: 123456.789 * x}, {Index: 0, Share: 0.5 * x}},
			Neurons:   []trace.Neuron{{Index: 3, Act: -2.5}, {Index: l, Act: float32(1.0 / 3)}},
			AttnBytes: int64(1000 + l), MLPBytes: 5308416,
		})
		h = in + 1
	}
	return f
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
		{"forward layer missing", func(tr *trace.Trace) {
			f := tr.Steps[1].Rows[0].Inside.Forward
			f.Layers = f.Layers[:1]
		}, "steps[1].rows[0].inside.forward.layers has 1 entries, want one per model.layers (2)"},
		{"too many heads", func(tr *trace.Trace) {
			fl := &tr.Steps[0].Rows[0].Inside.Forward.Layers[1]
			fl.Heads = append(fl.Heads, trace.Head{Index: 1, Share: 0})
		}, "inside.forward.layers[1].heads has 3 entries, more than options.record_forward (2)"},
		{"head outside the model", func(tr *trace.Trace) {
			tr.Steps[0].Rows[0].Inside.Forward.Layers[1].Heads[1].Index = 3
		}, "inside.forward.layers[1].heads[1].index 3 is not a head of the model (0..2)"},
		{"head twice", func(tr *trace.Trace) {
			tr.Steps[0].Rows[0].Inside.Forward.Layers[1].Heads[1].Index = 2
		}, "inside.forward.layers[1].heads[1].index 2 is listed twice"},
		{"heads out of order", func(tr *trace.Trace) {
			tr.Steps[0].Rows[0].Inside.Forward.Layers[1].Heads[1].Share = 1e9
		}, "inside.forward.layers[1].heads is not ordered by descending share"},
		{"negative norm", func(tr *trace.Trace) {
			tr.Steps[2].Rows[0].Inside.Forward.Layers[0].Mid = -1
		}, "inside.forward.layers[0].mid is -1: want a norm"},
		{"negative head share", func(tr *trace.Trace) {
			tr.Steps[2].Rows[0].Inside.Forward.Layers[1].Heads[1].Share = -0.5
		}, "inside.forward.layers[1].heads[1].share is -0.5"},
		{"negative final", func(tr *trace.Trace) {
			tr.Steps[0].Rows[0].Inside.Forward.Final = -2
		}, "inside.forward.final is -2"},
		{"negative bytes", func(tr *trace.Trace) {
			tr.Steps[1].Rows[0].Inside.Forward.Layers[0].AttnBytes = -5
		}, "inside.forward.layers[0].attn_bytes is -5"},
		{"neuron outside the MLP", func(tr *trace.Trace) {
			tr.Steps[1].Rows[0].Inside.Forward.Layers[0].Neurons[0].Index = 4
		}, "inside.forward.layers[0].neurons[0].index 4 is outside the MLP (0..3)"},
		{"neurons out of order", func(tr *trace.Trace) {
			tr.Steps[1].Rows[0].Inside.Forward.Layers[1].Neurons[1].Act = 3
		}, "inside.forward.layers[1].neurons is not ordered by descending |act|"},
		{"neuron twice", func(tr *trace.Trace) {
			tr.Steps[1].Rows[0].Inside.Forward.Layers[1].Neurons[1].Index = 3
		}, "inside.forward.layers[1].neurons[1].index 3 is listed twice"},
		{"more neurons than asked", func(tr *trace.Trace) {
			fl := &tr.Steps[1].Rows[0].Inside.Forward.Layers[0]
			fl.Neurons = append(fl.Neurons, trace.Neuron{Index: 2, Act: 0.1})
		}, "inside.forward.layers[0].neurons has 3 entries, more than options.record_forward (2)"},
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
	f.Add([]byte(`{"format":"tracer/v1","model":{"vocab_size":2,"layers":1,"heads":1,"intermediate":2},"options":{"record_forward":1},"steps":[{"index":0,"rows":[{"row":0,"input_ids":[0],"context":1,"candidates":[],"entropy":0,"chosen":{"id":0,"token":"","prob":1,"rank":1,"by":"greedy"},"inside":{"forward":{"embedding":0.5,"attn":[1],"mid":[1.25],"mlp":[2],"out":[3],"heads":[[0]],"head_shares":[[1]],"neurons":[[1]],"neuron_acts":[[-4]],"final":1,"embed_bytes":4,"unembed_bytes":8,"attn_bytes":[10],"mlp_bytes":[20]}}}]}],"output":{"ids":null,"new_ids":null,"text":"","new_text":"","stop_reason":"eos"}}`))
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
				if f := r.Inside.Forward; f != nil {
					for _, fl := range f.Layers {
						if (tr.Model.Heads > 0 && len(fl.Heads) > tr.Model.Heads) || fl.In < 0 || fl.Out < 0 || math.IsNaN(fl.Mid) {
							t.Fatalf("accepted a forward layer %+v for %d heads", fl, tr.Model.Heads)
						}
					}
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

// TestForwardBytesRepeatTail: a forward pass's attn_bytes and mlp_bytes
// stop after the last layer that differs from the one before it, and read
// back with the layers after their end filled in with their last entry.
func TestForwardBytesRepeatTail(t *testing.T) {
	f := trace.Forward{Embedding: 1, Final: 2, EmbedBytes: 3, UnembedBytes: 4, Layers: []trace.ForwardLayer{
		{In: 1, Attn: 1, Mid: 1, MLP: 1, Out: 1, Heads: []trace.Head{{Index: 0, Share: 1}}, Neurons: []trace.Neuron{}, AttnBytes: 10, MLPBytes: 20},
		{In: 1, Attn: 1, Mid: 1, MLP: 1, Out: 2, Heads: []trace.Head{{Index: 0, Share: 1}}, Neurons: []trace.Neuron{}, AttnBytes: 10, MLPBytes: 20},
		{In: 2, Attn: 1, Mid: 1, MLP: 1, Out: 3, Heads: []trace.Head{{Index: 0, Share: 1}}, Neurons: []trace.Neuron{}, AttnBytes: 11, MLPBytes: 20},
		{In: 3, Attn: 1, Mid: 1, MLP: 1, Out: 4, Heads: []trace.Head{{Index: 0, Share: 1}}, Neurons: []trace.Neuron{}, AttnBytes: 11, MLPBytes: 20},
	}}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"attn_bytes":[10,10,11],"mlp_bytes":[20]}`) {
		t.Errorf("written as %s, want attn_bytes [10,10,11] and mlp_bytes [20]", b)
	}
	var back trace.Forward
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, f) {
		t.Errorf("read back %+v, want %+v", back, f)
	}
}
