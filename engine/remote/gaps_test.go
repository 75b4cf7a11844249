package remote

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"tracer/trace"
)

func TestModelsListsEveryModel(t *testing.T) {
	list := `{"object":"list","data":[{"id":"big","owned_by":"vllm"},{"id":"small","owned_by":"vllm"}]}`
	url := fake(t, list, status(500, "only /v1/models is asked"))
	cs, err := Models(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Model+"/"+c.Engine)
	}
	if strings.Join(got, " ") != "big/vllm small/vllm" {
		t.Errorf("got %q, want [big/vllm small/vllm]", got)
	}
	if _, err := Models(context.Background(), Config{URL: fake(t, `{"data":[]}`, nil)}); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("an empty list: got %v, want ErrUnknownModel", err)
	}
}

// bodies records the JSON bodies a fake server gets, safe for the
// handler's goroutines.
type bodies struct {
	mu   sync.Mutex
	list []map[string]any
}

func (b *bodies) add(r *http.Request) map[string]any {
	var m map[string]any
	json.NewDecoder(r.Body).Decode(&m)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.list = append(b.list, m)
	return m
}

func (b *bodies) get() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]map[string]any(nil), b.list...)
}

func TestVLLMPromptLogprobs(t *testing.T) {
	var sent bodies
	url := fake(t, models("m", "vllm", 0), func(w http.ResponseWriter, r *http.Request) {
		sent.add(r)
		serve(fixture(t, "vllm-completions-prompt-logprobs.json"), ".json")(w, r)
	})
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Record(context.Background(), Request{Text: "The capital of France is", Options: greedy(2)})
	if err != nil {
		t.Fatal(err)
	}
	tr = roundTrip(t, tr)
	if b := sent.get(); len(b) != 1 || b[0]["prompt_logprobs"] != float64(20) {
		t.Errorf("sent %v, want one request with prompt_logprobs 20", b)
	}
	notes := strings.Join(tr.Notices, "\n")
	for _, want := range []string{`1 "The" 5.317e-05 (rank 213)`, `3 " of" 0.9644 (rank 1)`, "over 5 tokens"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notices %q do not say %q", notes, want)
		}
	}
	if len(tr.Steps) != 2 || tr.Output.NewText != " Paris," {
		t.Errorf("got %d steps, %q; want 2, %q", len(tr.Steps), tr.Output.NewText, " Paris,")
	}
}

func TestVLLMPromptLogprobsOnlyOnTheFirstStep(t *testing.T) {
	var sent bodies
	url := fake(t, models("m", "vllm", 0), func(w http.ResponseWriter, r *http.Request) {
		sent.add(r)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"text":"","logprobs":{"tokens":["token_id:11"],"token_logprobs":[-0.2],"top_logprobs":[{"token_id:11":-0.2}]},"finish_reason":"length","prompt_logprobs":[null,{"2":{"logprob":-1.5,"rank":3,"decoded_token":"token_id:2"}}]}]}`)
	})
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Record(context.Background(), Request{IDs: []int{1, 2}, Options: greedy(3), Step: true})
	if err != nil {
		t.Fatal(err)
	}
	var asked []any
	for _, b := range sent.get() {
		asked = append(asked, b["prompt_logprobs"])
	}
	if got := mustJSON(asked); got != "[20,null,null]" {
		t.Errorf("prompt_logprobs sent %s, want [20,null,null]", got)
	}
	if n := strings.Count(strings.Join(tr.Notices, "\n"), "prompt log-probabilities"); n != 1 {
		t.Errorf("%d prompt notices in %q, want 1", n, tr.Notices)
	}
}

func TestParsePromptLogprobs(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      string // "id:rank" per position, "-" for null
		err       bool
	}{
		{name: "absent", raw: ``, want: ""},
		{name: "null", raw: `null`, want: ""},
		{name: "prompt token first, below the top", raw: `[null,{"7":{"logprob":-3,"rank":4},"9":{"logprob":-0.1,"rank":1}}]`, want: "- 7:4"},
		{name: "prompt token is the top one", raw: `[null,{"9":{"logprob":-0.1,"rank":1}}]`, want: "- 9:1"},
		{name: "empty object", raw: `[null,{}]`, want: "- -"},
		{name: "key not an id", raw: `[null,{"x":{"logprob":-1}}]`, err: true},
		{name: "positive log-probability", raw: `[null,{"3":{"logprob":2}}]`, err: true},
		{name: "no log-probability", raw: `[null,{"3":{"rank":1}}]`, err: true},
		{name: "not a list", raw: `{"3":{}}`, err: true},
		{name: "entry not an object", raw: `[null,[1]]`, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePromptLogprobs(json.RawMessage(tc.raw))
			if tc.err {
				if !errors.Is(err, ErrBadAnswer) {
					t.Errorf("got %v, want ErrBadAnswer", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, p := range got {
				if p == nil {
					parts = append(parts, "-")
					continue
				}
				parts = append(parts, mustJSON(p.ID)+":"+mustJSON(p.Rank))
			}
			if s := strings.Join(parts, " "); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}
}

// llamaChat is a fake llama.cpp server for step mode on a chat: /props
// gives props (a JSON object), /tokenize numbers the text's bytes (with
// BOS 1 when add_special), /completion answers one token, 100 + the step.
func llamaChat(t *testing.T, props string, tokenized *[]string) string {
	var mu sync.Mutex
	return fake(t, models("m", "llamacpp", 512), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/props":
			io.WriteString(w, props)
		case "/tokenize":
			var b struct {
				Content    string `json:"content"`
				AddSpecial bool   `json:"add_special"`
			}
			json.NewDecoder(r.Body).Decode(&b)
			mu.Lock()
			*tokenized = append(*tokenized, b.Content)
			mu.Unlock()
			var toks []map[string]any
			if b.AddSpecial {
				toks = append(toks, map[string]any{"id": 1, "piece": "<s>"})
			}
			for _, c := range []byte(b.Content) {
				toks = append(toks, map[string]any{"id": 200 + int(c)%200, "piece": string(c)})
			}
			json.NewEncoder(w).Encode(map[string]any{"tokens": toks})
		case "/completion":
			var b struct {
				Prompt []int `json:"prompt"`
			}
			json.NewDecoder(r.Body).Decode(&b)
			id := 100 + len(b.Prompt)
			io.WriteString(w, `{"content":"x","tokens":[`+mustJSON(id)+`],"stop":true,"stop_type":"limit","completion_probabilities":[{"id":`+mustJSON(id)+`,"token":"x","logprob":-0.1,"top_logprobs":[{"id":`+mustJSON(id)+`,"token":"x","logprob":-0.1}]}]}`)
		default:
			http.Error(w, "no such endpoint", http.StatusNotFound)
		}
	})
}

func TestStepModeOnAChat(t *testing.T) {
	msgs := []trace.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}
	chatml := `{%- for message in messages -%}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}{%- endfor -%}{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}`
	props, _ := json.Marshal(map[string]any{"chat_template": chatml, "bos_token": "<s>", "eos_token": "</s>"})
	t.Run("template from /props", func(t *testing.T) {
		var tokenized []string
		c, err := Dial(context.Background(), Config{URL: llamaChat(t, string(props), &tokenized)})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := c.Record(context.Background(), Request{Messages: msgs, Options: greedy(2), Step: true})
		if err != nil {
			t.Fatal(err)
		}
		tr = roundTrip(t, tr)
		want := "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
		if len(tokenized) == 0 || tokenized[0] != want {
			t.Errorf("tokenized %q, want the chat rendered as %q", tokenized, want)
		}
		if tr.Prompt.Text != want || len(tr.Prompt.Messages) != 2 || tr.Model.Source.Endpoint != "/completion" || tr.Model.Source.Mode != "step" {
			t.Errorf("prompt %q with %d messages, endpoint %q, mode %q; want the rendered text, the 2 messages, /completion, step",
				tr.Prompt.Text, len(tr.Prompt.Messages), tr.Model.Source.Endpoint, tr.Model.Source.Mode)
		}
		n := len(tr.Prompt.IDs)
		if got := mustJSON(tr.Output.NewIDs); got != mustJSON([]int{100 + n, 101 + n}) {
			t.Errorf("new ids %s, want [%d,%d]: each step extends the rendered prompt's ids", got, 100+n, 101+n)
		}
	})
	for _, tc := range []struct {
		name, props, want string
	}{
		{"no template", `{"chat_template":""}`, "gives no chat_template"},
		{"broken template", `{"chat_template":"{% for %}"}`, "record the chat in plain mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tokenized []string
			c, err := Dial(context.Background(), Config{URL: llamaChat(t, tc.props, &tokenized)})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := c.Record(context.Background(), Request{Messages: msgs, Options: greedy(2), Step: true})
			if err == nil || tr != nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "plain mode") {
				t.Errorf("got %v (trace %v), want an error saying %q and to use plain mode", err, tr != nil, tc.want)
			}
		})
	}
}

// FuzzPromptLogprobs feeds arbitrary prompt_logprobs to the parser.
// Property: no panic, and either an ErrBadAnswer or one entry per list
// item, each nil or with an id >= 0, a log-probability <= 0 and a rank
// >= 0.
func FuzzPromptLogprobs(f *testing.F) {
	f.Add([]byte(`[null,{"7":{"logprob":-3,"rank":4,"decoded_token":" a"},"9":{"logprob":-0.1,"rank":1}}]`))
	f.Add([]byte(`[null,{}]`))
	f.Add([]byte(`[null,{"x":{"logprob":-1}}]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[null,{"3":{"logprob":1e-7,"rank":-2}}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := parsePromptLogprobs(json.RawMessage(raw))
		if err != nil {
			if !errors.Is(err, ErrBadAnswer) {
				t.Fatalf("error %v does not wrap ErrBadAnswer", err)
			}
			return
		}
		var items []json.RawMessage
		if len(out) > 0 {
			if json.Unmarshal(raw, &items) != nil || len(items) != len(out) {
				t.Fatalf("%d entries from %d list items", len(out), len(items))
			}
		}
		for i, p := range out {
			if p != nil && (p.ID < 0 || p.Logprob > 0 || p.Rank < 0) {
				t.Fatalf("entry %d: %+v", i, *p)
			}
		}
	})
}
