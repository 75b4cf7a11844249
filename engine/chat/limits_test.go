package chat

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
	"tracer/engine/refdata"
)

// fuzzConversation is the fixed conversation hostile and fuzzed templates
// render.
var fuzzConversation = []Message{
	{Role: "system", Content: "You are terse."},
	{Role: "user", Content: "Hi"},
	{Role: "assistant", Content: "Hello", Extra: Object{{"tool_calls", []any{
		Object{{"type", "function"}, {"function", Object{{"name", "f"}, {"arguments", Object{{"x", int64(1)}}}}}},
	}}}},
	{Role: "user", Content: "Bye 👋"},
}

var fuzzVars = map[string]any{"bos_token": "<s>", "eos_token": "</s>"}

// parseWithin parses src and fails the test if that takes longer than
// limit or panics.
func parseWithin(t *testing.T, src string, limit time.Duration) (*Template, error) {
	t.Helper()
	type result struct {
		tmpl *Template
		err  error
	}
	done := make(chan result, 1)
	go func() {
		tmpl, err := Parse(src, fuzzVars)
		done <- result{tmpl, err}
	}()
	select {
	case r := <-done:
		return r.tmpl, r.err
	case <-time.After(limit):
		t.Fatalf("template %q did not parse within %v", src, limit)
		return nil, nil
	}
}

// renderWithin renders src and fails the test if parsing or rendering
// takes longer than limit (a hang) or panics.
func renderWithin(t *testing.T, src string, limit time.Duration) (string, error) {
	t.Helper()
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		tmpl, err := Parse(src, fuzzVars)
		if err != nil {
			done <- result{"", err}
			return
		}
		text, err := tmpl.Render(fuzzConversation, Options{
			AddGenerationPrompt: true,
			Tools:               []any{Object{{"type", "function"}}},
		})
		done <- result{text, err}
	}()
	select {
	case r := <-done:
		return r.text, r.err
	case <-time.After(limit):
		t.Fatalf("template %q did not finish within %v", src, limit)
		return "", nil
	}
}

func TestHostileTemplates(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		wantErr string // "" means the render must succeed
	}{
		// Every item a loop iterates is charged to the output budget before
		// the loop starts (gonja gives each its own context), which at the
		// default budget stops nested loops before the step limit.
		{"nested loops", "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", "exceeded in for loop"},
		{"silent nested loops", "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}{% endfor %}{% endfor %}{% endfor %}", "exceeded in for loop"},
		{"recursive macro", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "nested deeper"},
		{"mutual recursion", "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}", "nested deeper"},
		{"wide recursion", "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}", "loop iterations"},
		{"huge range", "{{ range(10000000000)|length }}", "range too big"},
		{"string repetition", "{{ 'x' * 100000000000 }}", "output budget"},
		{"repeated repetition", "{% set s = 'x' * 1000000 %}{{ s * 1000000 }}", "output budget"},
		{"doubling", "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}", "output budget"},
		{"list repetition", "{{ ([1] * 100000000000)|length }}", "output budget"},
		{"output bomb", "{% for a in range(100000) %}" + strings.Repeat("x", 1000) + "{% endfor %}", "output budget"},
		{"macro output bomb", "{% macro m() %}{% for a in range(100000) %}" + strings.Repeat("y", 1000) + "{% endfor %}{% endmacro %}{{ m() }}", "output budget"},
		{"namespace cycle", "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}", "inside itself"},
		{"namespace cycle via list", "{% set ns = namespace() %}{% set ns.l = [ns] %}", "inside itself"},
		{"center width", "{{ 'x'.center(100000000000) }}", "output budget"},
		{"replace growth", "{% set s = 'a' * 10000 %}{{ s.replace('', s) }}", "output budget"},
		{"power", "{{ 10 ** 100000 }}", "too large"},
		{"deep brackets", "{{ " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + " }}", "nested deeper"},
		{"recursive loop", "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", "recursive for loops"},
		{"include", "{% include '/etc/passwd' %}", "not found"},
		{"extends", "{% extends 'base' %}", "not found"},
		{"modulo by zero", "{{ 1 % 0 }}", "ZeroDivisionError"},
		{"unterminated string", "{{ 'abc }}", "unterminated"},
		{"long chain", "{{ " + strings.Repeat("1 + ", 20000) + "1 }}", ""},
		{"many nots", "{{ " + strings.Repeat("not ", 20000) + "true }}", "expected"},
		{"macro concatenation", "{% macro m() %}" + strings.Repeat("z", 1<<19) + "{% endmacro %}{% macro o() %}" + strings.Repeat("{{ m() }}", 200) + "{% endmacro %}{{ o() }}", "output budget"},
		{"caller bomb", "{% macro m() %}{% for i in range(100000) %}{{ caller() }}{% endfor %}{% endmacro %}{% call m() %}" + strings.Repeat("c", 1000) + "{% endcall %}", "output budget"},
		{"long conditional chain", "{{ " + strings.Repeat("1 if false else ", 5000) + "2 }}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderWithin(t, tt.src, 30*time.Second)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got error %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("got %d bytes of output, want an error containing %q", len(got), tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("got error %q, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzRender checks that no template text makes Parse or Render panic or
// hang, and that no render allocates much past its output budget: at most
// renderAllowance (a few times the budget, and gonja's own work per loop
// step) in all, with the budget's accounting never past the budget and the
// text within it. Errors are fine. The seeds include every budget hog.
func FuzzRender(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	if path, err := refdata.Path("tokenizers/chat-golden.json"); err == nil {
		data, _ := os.ReadFile(path)
		var golden struct {
			Tokenizers map[string]struct {
				ChatTemplate string `json:"chat_template"`
			} `json:"tokenizers"`
		}
		if json.Unmarshal(data, &golden) == nil {
			for _, tok := range golden.Tokenizers {
				f.Add(tok.ChatTemplate)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := parseWithin(t, src, 2*renderTimeout)
		if err != nil {
			return
		}
		type result struct {
			allocated uint64
			st        *renderState
			text      string
		}
		done := make(chan result, 1)
		go func() {
			allocated, st, text, _ := measureRenderState(t, tmpl)
			done <- result{allocated, st, text}
		}()
		select {
		case r := <-done:
			if want := renderAllowance(r.st.steps); r.allocated > want {
				t.Errorf("render allocated %d bytes in %d steps, want at most %d", r.allocated, r.st.steps, want)
			}
			if r.st.used > r.st.budget || len(r.text) > r.st.budget {
				t.Errorf("render counted %d bytes and wrote %d, want both at most the budget of %d", r.st.used, len(r.text), r.st.budget)
			}
		case <-time.After(2 * renderTimeout):
			t.Fatalf("template %q did not render within %v", src, 2*renderTimeout)
		}
	})
}
