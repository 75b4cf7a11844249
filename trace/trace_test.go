package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"tracer/engine"
	"tracer/toy"
	"tracer/trace"
)

// toyTrace runs the lesson's toy with the given settings.
func toyTrace(t testing.TB, user *engine.Settings, prompts [][]int) *trace.Trace {
	t.Helper()
	m := toy.New(toy.Lesson())
	opts, notices, err := engine.Resolve(m.Info(), m.GenerationConfig(), user)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := engine.Generate(context.Background(), engine.Request{
		Model: m, Tokenizer: m, Prompts: prompts, Options: opts, Notices: notices, Record: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func encode(t testing.TB, tr *trace.Trace) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRealTracesValidateAgainstSchema(t *testing.T) {
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
	yes, seed, temp, topK := true, uint64(7), 0.7, 3
	for _, tc := range []struct {
		name    string
		user    *engine.Settings
		prompts [][]int
	}{
		{"greedy", nil, [][]int{{0}}},
		{"sampled", &engine.Settings{DoSample: &yes, Seed: &seed, Temperature: &temp, TopK: &topK}, [][]int{{0}}},
		{"batch", nil, [][]int{{0}, {0, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := encode(t, toyTrace(t, tc.user, tc.prompts))
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(v); err != nil {
				t.Errorf("trace does not validate against schema.json: %v", err)
			}
			// The schema must reject what Read rejects, too.
			var m map[string]any
			json.Unmarshal(data, &m)
			m["format"] = "tracer/v0"
			if schema.Validate(m) == nil {
				t.Errorf("schema accepts a foreign format")
			}
		})
	}
}

func TestReadRoundTrip(t *testing.T) {
	want := toyTrace(t, nil, [][]int{{0}})
	got, err := trace.Read(bytes.NewReader(encode(t, want)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, got), encode(t, want)) {
		t.Errorf("trace changed on a write/read round trip")
	}
}

func TestReadRejectsMalformedInput(t *testing.T) {
	good := encode(t, toyTrace(t, nil, [][]int{{0}}))
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	firstRow := func(m map[string]any) map[string]any {
		return m["steps"].([]any)[0].(map[string]any)["rows"].([]any)[0].(map[string]any)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		max  int64
		want string
	}{
		{"empty", nil, 0, "empty input"},
		{"truncated", good[:len(good)/2], 0, "truncated JSON"},
		{"not an object", []byte(`[1,2,3]`), 0, "not a tracer trace"},
		{"no format", []byte(`{"steps": []}`), 0, `no "format"`},
		{"wrong format", edit(func(m map[string]any) { m["format"] = "hfref-golden/1" }), 0, `bad file format "hfref-golden/1"`},
		{"chosen id outside vocab", edit(func(m map[string]any) {
			firstRow(m)["chosen"].(map[string]any)["id"] = 99
		}), 0, "token id 99 is outside the vocabulary"},
		{"output id outside vocab", edit(func(m map[string]any) { m["output"].(map[string]any)["ids"] = []int{0, -4} }), 0, "outside the vocabulary"},
		{"wrong type", edit(func(m map[string]any) { m["steps"] = "many" }), 0, "steps"},
		{"bad probability", edit(func(m map[string]any) {
			firstRow(m)["candidates"].([]any)[0].(map[string]any)["prob"] = 1.5
		}), 0, "outside [0, 1]"},
		{"steps out of order", edit(func(m map[string]any) { m["steps"].([]any)[1].(map[string]any)["index"] = 7 }), 0, "numbered"},
		{"unknown stop reason", edit(func(m map[string]any) { m["output"].(map[string]any)["stop_reason"] = "tired" }), 0, "stop_reason"},
		{"over the size limit", good, 100, "larger than the size limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := trace.Read(bytes.NewReader(tc.in), tc.max)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLogitsNullIsMinusInfinity(t *testing.T) {
	var l trace.Logits
	if err := json.Unmarshal([]byte(`[1.5, null]`), &l); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(l)
	if err != nil || string(b) != `[1.5,null]` {
		t.Errorf("got %s, %v; want [1.5,null]", b, err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"format":"tracer/v1","model":{"vocab_size":2},"steps":[],"output":{"stop_reason":"eos"}}`))
	f.Add([]byte(`{"format":"tracer/v1"`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"format":"tracer/v1","model":{"vocab_size":2},"steps":[],"output":{"stop_reason":"nan","nan":{"step":0,"row":0,"where":"layer","layer":1}}}`))
	f.Add([]byte(`{"format":"tracer/v1","model":{"vocab_size":2},"steps":[],"output":{"stop_reason":"nan","nan":{"step":3,"row":1,"where":"processors","layer":-1,"stage":"temperature"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Read(bytes.NewReader(data), 1<<20)
		if err != nil {
			return
		}
		if tr.Format != trace.Format {
			t.Errorf("accepted format %q", tr.Format)
		}
		// What is accepted writes back, and reads back again.
		var buf bytes.Buffer
		if err := trace.Write(&buf, tr); err != nil {
			t.Fatalf("an accepted trace does not write: %v", err)
		}
		if _, err := trace.Read(&buf, 1<<30); err != nil {
			t.Fatalf("an accepted trace, written back, does not read: %v", err)
		}
	})
}

// TestNaNOutput: stop reason nan and its output.nan are accepted, and a
// malformed output.nan is refused with the field named.
func TestNaNOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		nan  *trace.NaN
		want string // "" = valid
	}{
		{"layer", &trace.NaN{Step: 2, Row: 0, Where: trace.NaNLayer, Layer: 1}, ""},
		{"processor", &trace.NaN{Step: 0, Row: 1, Where: trace.NaNStage, Layer: -1, Stage: "temperature"}, ""},
		{"no nan field", nil, ""},
		{"unknown where", &trace.NaN{Where: "somewhere", Layer: -1}, "output.nan.where"},
		{"layer without where layer", &trace.NaN{Where: trace.NaNHead, Layer: 3}, "output.nan"},
		{"negative step", &trace.NaN{Step: -1, Where: trace.NaNLogits, Layer: -1}, "output.nan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := toyTrace(t, nil, [][]int{{0}})
			tr.Output.StopReason, tr.Output.NaN = trace.StopNaN, tc.nan
			_, err := trace.Decode(encode(t, tr))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want a valid trace", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestBranches(t *testing.T) {
	base := toyTrace(t, nil, [][]int{{0}})
	branch := func(id, parent, at int) trace.Branch {
		st := base.Steps[min(at, len(base.Steps)-1)]
		st.Index = at
		steps := []trace.Step{st}
		return trace.Branch{ID: id, Parent: parent, At: at, Steps: steps, Output: base.Output}
	}
	for _, tc := range []struct {
		name     string
		branches []trace.Branch
		want     string
	}{
		{"tree", []trace.Branch{branch(1, 0, 1), branch(2, 1, 1), branch(3, 0, 3)}, ""},
		{"ids out of order", []trace.Branch{branch(2, 0, 1)}, "numbered 1, 2, 3"},
		{"unknown parent", []trace.Branch{branch(1, 4, 1)}, "does not come before it"},
		{"step past the parent's end", []trace.Branch{branch(1, 0, 4)}, "does not have"},
		{"steps do not start at the branch point", []trace.Branch{{ID: 1, At: 2, Steps: base.Steps[:1], Output: base.Output}}, "start at index 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := *base
			tr.Branches = tc.branches
			_, err := trace.Decode(encode(t, &tr))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want a valid tree", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
