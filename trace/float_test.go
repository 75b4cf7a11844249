package trace

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestFloatsAtTheirPrecision checks that a probability is written as the
// shortest decimal of the precision it holds: a float32 value (the final
// distribution, the chosen token) in at most 9 digits, a float64 value (the
// candidates' exp(logit - lse)) in full, and that both read back.
func TestFloatsAtTheirPrecision(t *testing.T) {
	p32 := float64(float32(0.7033182))
	const p64 = 0.12345678901234568
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"final, float32 and float64", Final{KeptCount: 2, IDs: []int{1, 2}, Probs: []float64{p32, p64}}, `{"kept_count":2,"ids":[1,2],"probs":[0.7033182,0.12345678901234568]}`},
		{"chosen, float32", Chosen{ID: 1, Token: "a", Prob: p32, Rank: 1, By: ByGreedy}, `{"id":1,"token":"a","prob":0.7033182,"rank":1,"by":"greedy"}`},
		{"candidate, float64", Candidate{ID: 1, Token: "a", Logit: 19.0805, Prob: p64}, `{"id":1,"token":"a","logit":19.0805,"prob":0.12345678901234568}`},
		{"candidate, float32 and a tiny one", Candidate{ID: 1, Token: "a", Logit: -3, Prob: float64(float32(3.4921957e-06))}, `{"id":1,"token":"a","logit":-3,"prob":3.4921957e-06}`},
		{"candidate, unknown logit", Candidate{ID: 1, Token: "a", Logit: float32(math.NaN()), Prob: 1}, `{"id":1,"token":"a","logit":null,"prob":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.v)
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"final", Final{IDs: []int{1}, Probs: []float64{math.NaN()}}},
		{"chosen", Chosen{Prob: math.Inf(1)}},
		{"candidate", Candidate{Prob: math.NaN()}},
	} {
		t.Run("non-finite "+tc.name, func(t *testing.T) {
			if got, err := json.Marshal(tc.v); err == nil || !strings.Contains(err.Error(), "not a number") {
				t.Errorf("got %s, %v; want an error saying the probability is not a number", got, err)
			}
		})
	}
	var back Final
	if err := json.Unmarshal([]byte(`{"kept_count":2,"ids":[1,2],"probs":[0.7033182,0.12345678901234568]}`), &back); err != nil {
		t.Fatal(err)
	}
	if float32(back.Probs[0]) != float32(p32) || back.Probs[1] != p64 {
		t.Errorf("read back %v, want float32 %v and float64 %v", back.Probs, float32(p32), p64)
	}
}

// TestForwardJSON: a forward pass is written by columns, its norms as the
// shortest decimal of their precision (float32 values in at most 9 digits,
// others in full), heads and neurons as lists of indices beside lists of
// their shares and activations, no layer's "in" (the stream leaving the
// layer before it), and bytes arrays cut where the rest repeat their last
// entry; it reads back to the same layers with In filled in. A norm that
// is not a number is an error, and so are columns of different lengths, a
// head without its share, and the earlier layout of one object per layer.
func TestForwardJSON(t *testing.T) {
	n32 := float64(float32(3.3198733))
	const n64 = 0.12345678901234568
	f := Forward{Embedding: n32, Final: n64, EmbedBytes: 64, UnembedBytes: 1 << 40, Layers: []ForwardLayer{{
		In: n32, Attn: 2, Mid: n64, MLP: 0, Out: 1e-7, Heads: []Head{{1, n32}, {0, n64}}, Neurons: []Neuron{{Index: 3, Act: -0.1}},
		AttnBytes: 5, MLPBytes: 6,
	}, {
		In: 1e-7, Attn: 1, Mid: 2, MLP: 3, Out: 4, Heads: []Head{{0, 1}}, Neurons: []Neuron{},
		AttnBytes: 7, MLPBytes: 6,
	}, {
		In: 4, Attn: 1, Mid: 2, MLP: 3, Out: 5, Heads: []Head{{0, 1}}, Neurons: []Neuron{},
		AttnBytes: 7, MLPBytes: 6,
	}}}
	want := `{"embedding":3.3198733,"attn":[2,1,1],"mid":[0.12345678901234568,2,2],"mlp":[0,3,3],"out":[1e-07,4,5],` +
		`"heads":[[1,0],[0],[0]],"head_shares":[[3.3198733,0.12345678901234568],[1],[1]],"neurons":[[3],[],[]],"neuron_acts":[[-0.1],[],[]],` +
		`"final":0.12345678901234568,"embed_bytes":64,"unembed_bytes":1099511627776,"attn_bytes":[5,7],"mlp_bytes":[6]}`
	got, err := json.Marshal(f)
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v; want %s", got, err, want)
	}
	var back Forward
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	// The decimals read back as float64s: a float32's shortest decimal is
	// not the float32 itself, but it writes again to the same text.
	f.Embedding, f.Layers[0].In, f.Layers[0].Heads[0].Share = 3.3198733, 3.3198733, 3.3198733
	if !reflect.DeepEqual(back, f) {
		t.Errorf("read back %+v, want %+v", back, f)
	}
	if again, _ := json.Marshal(back); string(again) != want {
		t.Errorf("written again %s", again)
	}
	const ok = `"mid":[1],"mlp":[1],"out":[1],"heads":[[0]],"head_shares":[[1]],"neurons":[[1]],"neuron_acts":[[2]],"attn_bytes":[1],"mlp_bytes":[1]}`
	if err := json.Unmarshal([]byte(`{"attn":[1],`+ok), &back); err != nil {
		t.Fatalf("one layer: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"attn":[1,2],` + ok, "mid has 1 entries and its attn 2"},
		{strings.Replace(`{"attn":[1],`+ok, `"heads":[[0]]`, `"heads":[]`, 1), "heads has 0 entries and its attn 1"},
		{strings.Replace(`{"attn":[1],`+ok, `"head_shares":[[1]]`, `"head_shares":[[1,2]]`, 1), "lists 1 heads with 2 shares"},
		{strings.Replace(`{"attn":[1],`+ok, `"neuron_acts":[[2]]`, `"neuron_acts":[[]]`, 1), "1 neurons with 0 activations"},
		{strings.Replace(`{"attn":[1],`+ok, `"neuron_acts":[[2]]`, `"neuron_acts":[[1e39]]`, 1), "float32"},
		{strings.Replace(`{"attn":[1],`+ok, `"neurons":[[1]]`, `"neurons":[[1.5]]`, 1), "int"},
		{strings.Replace(`{"attn":[1],`+ok, `"attn_bytes":[1]`, `"attn_bytes":[]`, 1), "attn_bytes has 0 entries for 1 layers"},
		{strings.Replace(`{"attn":[1],`+ok, `"mlp_bytes":[1]`, `"mlp_bytes":[1,2]`, 1), "mlp_bytes has 2 entries for 1 layers"},
		{`{"embedding":1,"layers":[{"attn":1}],"final":1}`, "record the run again"},
	} {
		var back Forward
		if err := json.Unmarshal([]byte(tc.in), &back); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
	for _, bad := range []Forward{{Embedding: math.NaN()}, {Layers: []ForwardLayer{{Heads: []Head{{0, math.Inf(1)}}}, {Heads: []Head{{0, 1}}}}}, {Layers: []ForwardLayer{{Neurons: []Neuron{{2, float32(math.NaN())}}}, {Neurons: []Neuron{{1, 1}}}}}} {
		if got, err := json.Marshal(bad); err == nil || !strings.Contains(err.Error(), "not a number") {
			t.Errorf("got %s, %v; want an error saying the norm is not a number", got, err)
		}
	}
}

// TestIndentShallow checks Write's layout: members of the top two levels
// one per line, deeper values compact, strings untouched.
func TestIndentShallow(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty containers", `{"a":[],"b":{}}`, "{\n \"a\": [],\n \"b\": {}\n}"},
		{"two levels", `{"steps":[{"i":0,"r":[1,2]},{"i":1,"r":[]}],"n":1}`, "{\n \"steps\": [\n  {\"i\":0,\"r\":[1,2]},\n  {\"i\":1,\"r\":[]}\n ],\n \"n\": 1\n}"},
		{"strings with JSON inside", `{"t":"a,{\"[:\\"}`, "{\n \"t\": \"a,{\\\"[:\\\\\"\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(indentShallow(nil, []byte(tc.in), 2)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// FuzzIndentShallow: for any JSON value the layout stays valid JSON that
// compacts back to the input, without a panic; output grows by at most the
// indentation of each line.
func FuzzIndentShallow(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c,d"}],"e":{}}`, `[]`, `"x"`, `{"s":"\"{[,:]}\\"}`, `[[[[1]]],{"a":{"b":{"c":[]}}}]`, `{"steps":[{"index":0,"rows":[]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, in) != nil {
			return
		}
		out := indentShallow(nil, compact.Bytes(), 2)
		if !json.Valid(out) {
			t.Fatalf("%q laid out as invalid JSON %q", compact.Bytes(), out)
		}
		var again bytes.Buffer
		if err := json.Compact(&again, out); err != nil || !bytes.Equal(again.Bytes(), compact.Bytes()) {
			t.Fatalf("%q laid out as %q, which compacts to %q", compact.Bytes(), out, again.Bytes())
		}
		if len(out) > 4*len(compact.Bytes())+8 {
			t.Fatalf("%d bytes laid out as %d", compact.Len(), len(out))
		}
	})
}

// TestChosenJSONHasEveryField: Chosen.MarshalJSON lists the fields itself,
// so a field added to Chosen must be added there too.
func TestChosenJSONHasEveryField(t *testing.T) {
	data, err := json.Marshal(Chosen{ID: 1, Token: "a", Prob: 0.5, Rank: 1, By: ByGreedy})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if n := reflect.TypeFor[Chosen]().NumField(); len(got) != n {
		t.Errorf("got %d fields in %s, want Chosen's %d", len(got), data, n)
	}
}
