package chat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"tracer/engine/refdata"

	"tracer/engine/tokenizer"
)

// shared returns the path of a reference file named by its path under
// shared/ (the goldens name their tokenizer folders "shared/tokenizers/…"),
// found through refdata: a skip when absent, a failure in CI.
func shared(t *testing.T, rel string) string {
	t.Helper()
	return refdata.Need(t, strings.TrimPrefix(rel, "shared/"))
}

// goldenCase is one conversation rendered by transformers'
// apply_chat_template (shared/tokenizers/chat-golden.json).
type goldenCase struct {
	Name             string                     `json:"name"`
	Messages         []Message                  `json:"messages"`
	Kwargs           map[string]json.RawMessage `json:"kwargs"`
	Rendered         string                     `json:"rendered"`
	IDsTokenizerJSON []int                      `json:"ids_tokenizer_json"`
}

type goldenTokenizer struct {
	Dir               string       `json:"dir"`
	SpecialTokensMap  Object       `json:"special_tokens_map"`
	ChatTemplate      string       `json:"chat_template"`
	Cases             []goldenCase `json:"cases"`
	DefaultSysPrompt  string       `json:"default_system_prompt"`
	TransformersClass string       `json:"transformers_class"`
}

func loadGolden(t *testing.T) map[string]goldenTokenizer {
	t.Helper()
	path := shared(t, "tokenizers/chat-golden.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Schema     string                     `json:"schema"`
		Tokenizers map[string]goldenTokenizer `json:"tokenizers"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if golden.Schema != "hfref-chat-golden/1" {
		t.Fatalf("%s: schema %q, want hfref-chat-golden/1", path, golden.Schema)
	}
	return golden.Tokenizers
}

// goldenOptions turns a case's apply_chat_template kwargs into Options.
func goldenOptions(t *testing.T, kwargs map[string]json.RawMessage) Options {
	t.Helper()
	var opts Options
	for k, raw := range kwargs {
		switch k {
		case "add_generation_prompt":
			if err := json.Unmarshal(raw, &opts.AddGenerationPrompt); err != nil {
				t.Fatal(err)
			}
		case "tools":
			var tools []json.RawMessage
			if err := json.Unmarshal(raw, &tools); err != nil {
				t.Fatal(err)
			}
			opts.Tools = []any{}
			for _, tool := range tools {
				opts.Tools = append(opts.Tools, tool)
			}
		default:
			t.Fatalf("unknown kwarg %q", k)
		}
	}
	return opts
}

func TestRenderGolden(t *testing.T) {
	for name, tok := range loadGolden(t) {
		tmpl, err := Load(shared(t, tok.Dir))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if src, _ := tmpl.Source(""); src != tok.ChatTemplate {
			t.Errorf("%s: loaded template differs from the golden chat_template", name)
		}
		for _, c := range tok.Cases {
			t.Run(name+"/"+c.Name, func(t *testing.T) {
				got, err := tmpl.Render(c.Messages, goldenOptions(t, c.Kwargs))
				if err != nil {
					t.Fatal(err)
				}
				if got != c.Rendered {
					t.Errorf("rendered text differs\n got %q\nwant %q", got, c.Rendered)
				}
			})
		}
	}
}

func TestLoadSpecialTokens(t *testing.T) {
	for name, tok := range loadGolden(t) {
		t.Run(name, func(t *testing.T) {
			tmpl, err := Load(filepath.Join(shared(t, tok.Dir), "tokenizer_config.json"))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(tok.SpecialTokensMap)
			for _, m := range tok.SpecialTokensMap {
				got, _ := json.Marshal(tmpl.vars[m.Key])
				wantValue, _ := json.Marshal(m.Value)
				if string(got) != string(wantValue) {
					t.Errorf("%s = %s, want %s (special_tokens_map %s)", m.Key, got, wantValue, want)
				}
			}
			if len(tmpl.vars) != len(tok.SpecialTokensMap) {
				t.Errorf("got %d special-token variables %v, want %d", len(tmpl.vars), tmpl.vars, len(tok.SpecialTokensMap))
			}
		})
	}
}

func TestLoadWithoutChatTemplate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"model_max_length": 1024}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	if !errors.Is(err, ErrNoChatTemplate) {
		t.Fatalf("Load: got %v, want ErrNoChatTemplate", err)
	}
	if !strings.Contains(err.Error(), "tokenizer_config.json has no chat_template: this model is not a chat model; give it a plain prompt") {
		t.Errorf("error %q lacks the explanation", err)
	}
}

func TestLoadNamedTemplates(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"chat_template": [
		{"name": "default", "template": "default:{{ messages[0].content }}"},
		{"name": "tool_use", "template": "tools:{{ tools|length }}"}
	], "bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>", "pad_token": null}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "user", Content: "hi"}}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no tools", Options{}, "default:hi"},
		{"tools", Options{Tools: []any{Object{{"type", "function"}}}}, "tools:1"},
		{"empty tools", Options{Tools: []any{}}, "tools:0"},
		{"by name", Options{Template: "tool_use"}, "tools:0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tmpl.Render(msgs, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := tmpl.Render(msgs, Options{Template: "rag"}); err == nil {
		t.Error("Render with an unknown template name: got no error")
	}
	if got, want := tmpl.vars["bos_token"], "<s>"; got != want {
		t.Errorf("bos_token = %v, want %v", got, want)
	}
	if _, ok := tmpl.vars["pad_token"]; ok {
		t.Error("a null pad_token should not be a variable")
	}
}

func TestLoadChatTemplateJinja(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"tokenizer_config.json": `{"chat_template": "old", "eos_token": "</s>"}`,
		"chat_template.jinja":   "new{{ eos_token }}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmpl, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "new</s>"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRaiseException(t *testing.T) {
	tmpl, err := Parse(`{% if messages[0]['role'] != 'user' %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}ok`, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render([]Message{{Role: "assistant", Content: "hi"}}, Options{})
	var raised *RaiseError
	if !errors.As(err, &raised) {
		t.Fatalf("got %v, want a *RaiseError", err)
	}
	if want := "Conversation roles must alternate user/assistant/user/assistant/..."; raised.Message != want {
		t.Errorf("message %q, want %q", raised.Message, want)
	}
	if !strings.Contains(err.Error(), raised.Message) {
		t.Errorf("error text %q lacks the message", err)
	}
	got, err := tmpl.Render([]Message{{Role: "user", Content: "hi"}}, Options{})
	if err != nil || got != "ok" {
		t.Errorf("got %q, %v; want ok", got, err)
	}
}

func TestStrftimeNow(t *testing.T) {
	tmpl, err := Parse(`{{ strftime_now("%d %b %Y") }}|{{ strftime_now("%-d %B %y, %H:%M:%S %p %A %j") }}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, time.July, 5, 14, 3, 9, 0, time.UTC)
	got, err := tmpl.Render(nil, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if want := "05 Jul 2024|5 July 24, 14:03:09 PM Friday 187"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestMessageJSON(t *testing.T) {
	in := `{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":{"b":1,"a":2.5}}}]}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.Role != "assistant" || m.Content != "" || len(m.Extra) != 2 {
		t.Fatalf("decoded %+v", m)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
}

// TestRenderGoldenTokenIDs encodes each rendered golden conversation with
// the model's tokenizer, without added special tokens (the template writes
// them), as `tracer tokenize --chat` does, and compares with the ids of
// Hugging Face tokenizers (ids_tokenizer_json).
func TestRenderGoldenTokenIDs(t *testing.T) {
	for name, tok := range loadGolden(t) {
		dir := shared(t, tok.Dir)
		tmpl, err := Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		enc, err := tokenizer.Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range tok.Cases {
			t.Run(name+"/"+c.Name, func(t *testing.T) {
				text, err := tmpl.Render(c.Messages, goldenOptions(t, c.Kwargs))
				if err != nil {
					t.Fatal(err)
				}
				ids, err := enc.Encode(text, false)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids, c.IDsTokenizerJSON) {
					t.Errorf("ids differ\n got %v\nwant %v", ids, c.IDsTokenizerJSON)
				}
			})
		}
	}
}

// TestRenderConcurrently renders one template from several goroutines
// (run with -race).
func TestRenderConcurrently(t *testing.T) {
	tmpl, err := Parse(`{% set ns = namespace(n=0) %}{% macro m(x) %}[{{ x }}]{% endmacro %}`+
		`{% for msg in messages %}{% set ns.n = ns.n + 1 %}{{ m(msg.content) }}{% endfor %}{{ ns.n }}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}}
	done := make(chan error)
	for range 8 {
		go func() {
			for range 50 {
				got, err := tmpl.Render(msgs, Options{})
				if err == nil && got != "[a][b]2" {
					err = errors.New("got " + got)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
