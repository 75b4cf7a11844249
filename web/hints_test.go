package web

import (
	"strings"
	"testing"

	"tracer/engine/models"
	"tracer/web/runs"
)

// TestNoTokenizerHints gives a text prompt to a model without a tokenizer:
// the engine says so in its terms, and each page adds its own hint (the
// debugger's Prompt as menu, the lesson page's model picker), never the
// command line's --prompt-ids.
func TestNoTokenizerHints(t *testing.T) {
	dir := twoModelsDir(t)
	s, err := New(Config{ModelsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const engineWords = "has no tokenizer: give the prompt as token ids"
	t.Run("debugger", func(t *testing.T) {
		_, err := s.Prepare(runs.Form{Model: "a-tiny-gpt2", Input: "text", Prompt: "hello"}, "")
		want := engineWords + ` (choose "token ids" under Prompt as)`
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "--prompt-ids") {
			t.Errorf("got %v, want an error saying %q", err, want)
		}
	})
	t.Run("lesson page", func(t *testing.T) {
		m, err := s.Catalog.Open("a-tiny-gpt2")
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Request(models.Input{Texts: []string{"hello"}}, nil)
		got := s.lessons.PageError(err)
		want := engineWords + " (pick a model with a tokenizer)"
		if !strings.Contains(got, want) || strings.Contains(got, "--prompt-ids") || strings.Contains(got, dir) {
			t.Errorf("got %q, want %q without a flag or the server's folder", got, want)
		}
	})
}
