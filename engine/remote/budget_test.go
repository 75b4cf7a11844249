package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"tracer/trace"
)

// TestModelsListIsCappedAndLinear: a server listing 40,000 models gives
// MaxModels clients at once (each was found by a scan of the whole list
// before, 40,000² steps), and an error that lists them names a few.
func TestModelsListIsCappedAndLinear(t *testing.T) {
	const n = 40000
	var body strings.Builder
	body.WriteString(`{"object": "list", "data": [`)
	for i := range n {
		if i > 0 {
			body.WriteString(",")
		}
		fmt.Fprintf(&body, `{"id": "model-%d", "owned_by": "vllm"}`, i)
	}
	body.WriteString("]}")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body.String()))
	}))
	t.Cleanup(srv.Close)
	cs, err := Models(context.Background(), Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != MaxModels || cs[0].Model != "model-0" || cs[MaxModels-1].Engine != EngineVLLM {
		t.Errorf("got %d clients (first %q), want the first %d models", len(cs), cs[0].Model, MaxModels)
	}
	_, err = Dial(context.Background(), Config{URL: srv.URL, Model: "nope"})
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), fmt.Sprintf("and %d more", n-8)) {
		t.Errorf("an unknown model among %d: got %d bytes of error %.200q, want a short list", n, len(err.Error()), err)
	}
}

// TestRedirectsAreNotFollowed: a server that redirects elsewhere (another
// port of the same host) is not followed, so the key never leaves for a
// place it was not given to; the error says what the server answered.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
		w.Write([]byte(`{"object": "list", "data": [{"id": "m"}]}`))
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	_, err := Dial(context.Background(), Config{URL: srv.URL, Key: "sk-secret"})
	if err == nil || !strings.Contains(err.Error(), "307") {
		t.Errorf("a redirecting server: got %v, want an error naming its 307", err)
	}
	if leaked.Load() {
		t.Error("the key went to the server the redirect named")
	}
}

// TestErrorExcerptIsShort: an engine's error body reaches the caller as a
// short excerpt, not its first 300 characters.
func TestErrorExcerptIsShort(t *testing.T) {
	long := strings.Repeat("x", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error": {"message": "`+long+`"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	_, err := Dial(context.Background(), Config{URL: srv.URL})
	if err == nil || strings.Count(err.Error(), "x") > maxExcerpt || !strings.Contains(err.Error(), "400") {
		t.Errorf("a 5,000-character error: got %.300v, want the status and at most %d characters of it", err, maxExcerpt)
	}
}

// streamOf is a completions stream of n tokens, each alternatives long
// tokens of size bytes of text.
func streamOf(n, alternatives, size int) []byte {
	var b bytes.Buffer
	for i := range n {
		tok := fmt.Sprintf("%d%s", i, strings.Repeat("y", size-len(fmt.Sprint(i))))
		top := map[string]float64{tok: -0.1}
		for k := 1; k < alternatives; k++ {
			top[fmt.Sprintf("%d-%d%s", i, k, strings.Repeat("z", size))[:size]] = -3 - float64(k)
		}
		chunk := map[string]any{"choices": []any{map[string]any{"index": 0, "text": tok, "logprobs": map[string]any{
			"tokens": []string{tok}, "token_logprobs": []float64{-0.1}, "top_logprobs": []any{top},
		}, "finish_reason": nil}}}
		data, _ := json.Marshal(chunk)
		fmt.Fprintf(&b, "data: %s\n\n", data)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// TestRecordingHasABudget: a server whose tokens are large fills the
// recording's budget; the recording stops there, its partial trace kept
// and marked, instead of growing until the process runs out of memory.
func TestRecordingHasABudget(t *testing.T) {
	stream := streamOf(200, 20, 1000)
	url := fake(t, models("m", "vllm", 0), serve(stream, ".txt"))
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Record(context.Background(), Request{Text: "x", Options: greedy(200), MaxBytes: 256 << 10})
	if !errors.Is(err, ErrStreamCut) || !strings.Contains(err.Error(), "budget of 256 KiB") {
		t.Fatalf("got %v, want the recording cut at its budget", err)
	}
	if tr == nil || len(tr.Steps) == 0 || len(tr.Steps) >= 200 || tr.Model.Source.Incomplete == "" {
		t.Fatalf("got a trace of %d steps, want a partial one marked incomplete", len(tr.Steps))
	}
	if size := len(roundTripBytes(t, tr)); size > 2*(256<<10) {
		t.Errorf("the partial trace is %d bytes, more than twice the budget", size)
	}
}

// TestOversizedTokensAreRefused: a token longer than any vocabulary's (a
// megabyte of text) is a bad answer, refused as it arrives.
func TestOversizedTokensAreRefused(t *testing.T) {
	url := fake(t, models("m", "vllm", 0), serve(streamOf(3, 1, 1<<20), ".txt"))
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Record(context.Background(), Request{Text: "x", Options: greedy(3)}); !errors.Is(err, ErrBadAnswer) || !strings.Contains(err.Error(), "more than 1024") {
		t.Errorf("tokens of 1 MB: got %v, want a bad answer naming the limit", err)
	}
}

// roundTripBytes writes tr.
func roundTripBytes(t *testing.T, tr *trace.Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := trace.Write(&b, tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
