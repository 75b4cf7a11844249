package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestFlagHints runs the binary on errors the engine words in its own terms
// and checks that the command line adds its flag: the engine's text says
// what is wrong, the hint in parentheses which flag does it.
func TestFlagHints(t *testing.T) {
	noTok := writeNaNModel(t, -1) // a model folder without a tokenizer
	one := `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`
	two := `{"object":"list","data":[{"id":"a","object":"model","owned_by":"vllm"},{"id":"b","object":"model","owned_by":"vllm"}]}`
	nothing := func(w http.ResponseWriter, r *http.Request) {}
	// block returns a handler that holds each request until the test
	// ends: its release runs before the server's Close, which waits for
	// the handlers (cleanups run last first).
	block := func(t *testing.T) string {
		release := make(chan struct{})
		url := fakeServer(t, one, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		t.Cleanup(func() { close(release) })
		return url
	}
	tests := []struct {
		name   string
		args   func(t *testing.T) []string
		engine string // the engine's words, before the hint
		hint   string
	}{
		{"text prompt, no tokenizer", func(t *testing.T) []string {
			return []string{"run", "--model", noTok, "--prompt", "hello"}
		}, "has no tokenizer: give the prompt as token ids", "(--prompt-ids)"},
		{"several server models", func(t *testing.T) []string {
			return []string{"record", "--server", fakeServer(t, two, nothing), "--prompt", "x"}
		}, "the server has 2 models (a, b): choose one of them", "(--server-model)"},
		{"unknown server model", func(t *testing.T) []string {
			return []string{"record", "--server", fakeServer(t, one, nothing), "--server-model", "z", "--prompt", "x"}
		}, `model "z": the server has no such model (it lists m)`, "(check --server-model)"},
		{"server too slow", func(t *testing.T) []string {
			return []string{"record", "--server", block(t), "--timeout", "100ms", "--prompt", "x"}
		}, "the server may be busy: try again or allow it more time", "(raise --timeout)"},
		{"forced tokens on a text prompt", func(t *testing.T) []string {
			return []string{"record", "--server", fakeServer(t, one, nothing), "--step", "--force-ids", "3", "--prompt", "x"}
		}, "forced tokens need the prompt as token ids, or a server that tokenizes (llama.cpp)", "(--prompt-ids)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := tracer(t, "", tt.args(t)...)
			if code != exitError || out != "" || !strings.Contains(errOut, tt.engine+" "+tt.hint) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, no output and %q", code, out, errOut, exitError, tt.engine+" "+tt.hint)
			}
		})
	}
}
