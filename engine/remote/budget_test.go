package remote

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
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
