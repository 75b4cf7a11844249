package trace_test

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"tracer/trace"
)

func TestCandidateLogitNull(t *testing.T) {
	for _, tc := range []struct {
		name      string
		logit     float32
		wantJSON  string
		wantNaN   bool
		wantLogit float32
	}{
		{"finite logit", 1.5, `"logit":1.5`, false, 1.5},
		{"unknown logit is null", float32(math.NaN()), `"logit":null`, true, 0},
		{"minus infinity is null", float32(math.Inf(-1)), `"logit":null`, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(trace.Candidate{ID: 3, Token: "a", Logit: tc.logit, Prob: 0.5, Bytes: []int{97}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tc.wantJSON) || !strings.Contains(string(data), `"bytes":[97]`) {
				t.Errorf("got %s, want %s and the bytes", data, tc.wantJSON)
			}
			var back trace.Candidate
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if got := math.IsNaN(float64(back.Logit)); got != tc.wantNaN || (!got && back.Logit != tc.wantLogit) {
				t.Errorf("read back logit %v, want NaN %v (or %v)", back.Logit, tc.wantNaN, tc.wantLogit)
			}
			if back.ID != 3 || back.Token != "a" || back.Prob != 0.5 {
				t.Errorf("read back %+v, want id 3, token a, prob 0.5", back)
			}
		})
	}
	t.Run("absent logit reads as 0", func(t *testing.T) {
		var c trace.Candidate
		if err := json.Unmarshal([]byte(`{"id":1,"token":"x","prob":0.1}`), &c); err != nil || c.Logit != 0 {
			t.Errorf("got %v, %v; want logit 0", c.Logit, err)
		}
	})
}

// serverTrace is a small valid trace recorded from a server without token
// ids; edit changes it before it is read.
func serverTrace(t *testing.T, edit func(m map[string]any)) string {
	t.Helper()
	const base = `{"format":"tracer/v1",
	 "model":{"name":"llama3.2","kind":"server","architecture":"ollama","vocab_size":0,"bos_token_id":-1,"eos_token_id":[],"pad_token_id":-1,
	  "source":{"kind":"server","url":"http://127.0.0.1:11434","engine":"ollama","server_model":"llama3.2","endpoint":"/v1/chat/completions",
	   "mode":"plain","top_logprobs":2,"probs":"unknown","token_ids":false,"unknown":["logits"]}},
	 "options":{"max_new_tokens":1,"max_length":-1,"do_sample":false,"temperature":1,"top_k":50,"top_p":1,"min_p":0,"repetition_penalty":1,
	  "num_beams":1,"length_penalty":1,"early_stopping":"false","num_return_sequences":1,"eos_token_id":null,"pad_token_id":-1,"seed":0,"use_cache":true,"record_top":2},
	 "prompt":{"messages":[{"role":"user","content":"hi"}],"ids":null},
	 "steps":[{"index":0,"phase":"prefill","rows":[{"row":0,"input_ids":[],"context":0,"entropy":0,
	   "candidates":[{"id":-1,"token":"Hello","logit":null,"prob":0.73,"bytes":[72,101,108,108,111]},{"id":-1,"token":"Hi","logit":null,"prob":0.27}],
	   "chosen":{"id":-1,"token":"Hello","prob":0.73,"rank":1,"by":"greedy"}}]}],
	 "output":{"ids":null,"new_ids":null,"text":"Hello","new_text":"Hello","stop_reason":"max_new_tokens"}}`
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestServerTraces(t *testing.T) {
	source := func(m map[string]any) map[string]any {
		return m["model"].(map[string]any)["source"].(map[string]any)
	}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string // "" for valid
	}{
		{"without ids or vocabulary size", nil, ""},
		{"ids of -1 when the server said it gave ids", func(m map[string]any) { source(m)["token_ids"] = true }, "outside the vocabulary"},
		{"vocabulary size 0 without a server", func(m map[string]any) { delete(m["model"].(map[string]any), "source") }, "vocab_size is 0"},
		{"unknown source kind", func(m map[string]any) { source(m)["kind"] = "cloud" }, `model.source.kind is "cloud"`},
		{"unknown probs", func(m map[string]any) { source(m)["probs"] = "maybe" }, `model.source.probs is "maybe"`},
		{"unknown mode", func(m map[string]any) { source(m)["mode"] = "batch" }, `model.source.mode is "batch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := trace.Read(strings.NewReader(serverTrace(t, tc.edit)), 0)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got %v, want a valid trace", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got error %v, want one that says %q", err, tc.want)
			case tc.want == "":
				if c := tr.Steps[0].Rows[0].Candidates[0]; !math.IsNaN(float64(c.Logit)) || tr.Model.Source.Engine != "ollama" {
					t.Errorf("candidate logit %v, engine %q; want NaN and ollama", c.Logit, tr.Model.Source.Engine)
				}
			}
		})
	}
}

func TestCandidateJSONHasEveryField(t *testing.T) {
	// Candidate.MarshalJSON lists the fields itself: a field added to
	// Candidate must be added there too.
	c := trace.Candidate{}
	v := reflect.ValueOf(&c).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int:
			f.SetInt(7)
		case reflect.String:
			f.SetString("s")
		case reflect.Float32, reflect.Float64:
			f.SetFloat(0.25)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		default:
			t.Fatalf("field %s has kind %s: teach this test and Candidate.MarshalJSON about it", v.Type().Field(i).Name, f.Kind())
		}
	}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(data, &got)
	var names []string
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		names = append(names, name)
		if _, ok := got[name]; !ok {
			t.Errorf("field %q is missing from %s", name, data)
		}
	}
	if want := `{"id":7,"token":"s","logit":0.25,"prob":0.25,"bytes":[0]}`; string(data) != want {
		t.Errorf("got %s, want %s (fields %v in order)", data, want, names)
	}
}
