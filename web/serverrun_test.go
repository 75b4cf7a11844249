package web

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"tracer/trace"
	"tracer/web/catalog"
	"tracer/web/live"
)

// fakeLlama is a llama.cpp server in miniature: model "m" with a
// vocabulary of 512, /tokenize giving one id per byte after BOS 1, and
// /completion choosing after id x the id x+1 (probability 0.8) over x+7
// (0.2), named "t<id>", streamed one event per token.
type fakeLlama struct {
	URL string

	mu      sync.Mutex
	prompts [][]int // the prompt of every /completion request
	steps   []bool  // whether each was a step-mode request (n_predict 1)
	hold    chan struct{}
}

func newFakeLlama(t *testing.T) *fakeLlama {
	f := &fakeLlama{}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *fakeLlama) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/models":
		io.WriteString(w, `{"object":"list","data":[{"id":"m","owned_by":"llamacpp","meta":{"n_vocab":512}}]}`)
	case "/tokenize":
		var b struct {
			Content    string `json:"content"`
			AddSpecial bool   `json:"add_special"`
		}
		json.NewDecoder(r.Body).Decode(&b)
		toks := []map[string]any{}
		if b.AddSpecial {
			toks = append(toks, map[string]any{"id": 1, "piece": "<s>"})
		}
		for _, c := range []byte(b.Content) {
			toks = append(toks, map[string]any{"id": 100 + int(c)%300, "piece": string(c)})
		}
		json.NewEncoder(w).Encode(map[string]any{"tokens": toks})
	case "/props":
		io.WriteString(w, `{"chat_template":"{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}","bos_token":"<s>","eos_token":"</s>"}`)
	case "/v1/chat/completions":
		// A streamed chat: t51, t52, ... (the fake gives no prompt ids).
		var b struct {
			MaxTokens int `json:"max_tokens"`
		}
		json.NewDecoder(r.Body).Decode(&b)
		f.mu.Lock()
		f.prompts = append(f.prompts, nil)
		f.steps = append(f.steps, false)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range b.MaxTokens {
			id, alt := 51+i, 57+i
			finish := "null"
			if i == b.MaxTokens-1 {
				finish = `"length"`
			}
			fmt.Fprintf(w, `data: {"choices":[{"delta":{"content":"t%d"},"logprobs":{"content":[{"id":%d,"token":"t%d","logprob":-0.2231435513,"top_logprobs":[{"id":%d,"token":"t%d","logprob":-0.2231435513},{"id":%d,"token":"t%d","logprob":-1.6094379124}]}]},"finish_reason":%s}]}`+"\n\n", id, id, id, id, id, alt, alt, finish)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	case "/completion":
		var b struct {
			Prompt   []int `json:"prompt"`
			NPredict int   `json:"n_predict"`
			Stream   bool  `json:"stream"`
		}
		json.NewDecoder(r.Body).Decode(&b)
		f.mu.Lock()
		f.prompts = append(f.prompts, b.Prompt)
		f.steps = append(f.steps, b.NPredict == 1)
		hold := f.hold
		f.mu.Unlock()
		last := b.Prompt[len(b.Prompt)-1]
		if !b.Stream {
			io.WriteString(w, fakeToken(last, true, ""))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range b.NPredict {
			final := i == b.NPredict-1
			fmt.Fprintf(w, "data: %s\n\n", fakeToken(last, final, "limit"))
			w.(http.Flusher).Flush()
			last = (last + 1) % 512
			if hold != nil && i == 1 {
				select { // a long run: it waits here until the test lets go or the client hangs up
				case <-hold:
				case <-r.Context().Done():
					return
				}
			}
		}
	default:
		http.Error(w, `{"error":{"message":"no such endpoint"}}`, http.StatusNotFound)
	}
}

// fakeToken is the answer choosing after id last: last+1 over last+7.
func fakeToken(last int, stop bool, stopType string) string {
	id, alt := (last+1)%512, (last+7)%512
	e := func(id int, lp float64) string {
		return fmt.Sprintf(`{"id":%d,"token":"t%d","bytes":[116],"logprob":%g}`, id, id, lp)
	}
	probs := fmt.Sprintf(`[{"id":%d,"token":"t%d","logprob":-0.2231435513,"top_logprobs":[%s,%s]}]`, id, id, e(id, -0.2231435513), e(alt, -1.6094379124))
	if stopType == "" {
		stopType = "limit"
	}
	return fmt.Sprintf(`{"content":"t%d","tokens":[%d],"stop":%v,"stop_type":%q,"completion_probabilities":%s}`, id, id, stop, stopType, probs)
}

// refusedURL is a loopback address nothing listens on.
func refusedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// authServer answers every request 401, as a server given no or a wrong
// key does.
func authServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Invalid API key","type":"invalid_request_error"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestServerModelsInTheMenu(t *testing.T) {
	good := newFakeLlama(t)
	s, _, _ := liveServer(t, Config{Servers: []ServerConfig{
		{Name: "gpu", URL: good.URL, Key: "sk-secret"},
		{Name: "down", URL: refusedURL(t), Key: "sk-secret"},
		{Name: "locked", URL: authServer(t), Key: "sk-secret"},
	}}, 0)
	labels := map[string]string{}
	for _, m := range s.formView(nil).Models {
		labels[m.Value] = m.Label
	}
	for _, tc := range []struct{ name, value, label string }{
		{"a server's model beside the local ones", "server:gpu/m", "gpu: m (llama.cpp server)"},
		{"a server that is down", "server:down", "down: unavailable (connection refused"},
		{"a server that refuses the key", "server:locked", "locked: unavailable (the server refused the API key"},
		{"the local toy still there", "toy", "toy: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := labels[tc.value]; !strings.HasPrefix(got, tc.label) {
				t.Errorf("menu entry %q is labelled %q, want it to start %q (menu %v)", tc.value, got, tc.label, labels)
			}
		})
	}
	for v, l := range labels {
		if strings.Contains(l, "sk-secret") || strings.Contains(v, "sk-secret") {
			t.Errorf("the menu shows the API key: %q %q", v, l)
		}
	}
}

func TestServerRunStreamsAndBranches(t *testing.T) {
	fk := newFakeLlama(t)
	s, sess, c := liveServer(t, Config{Servers: []ServerConfig{{Name: "gpu", URL: fk.URL}}}, 0)
	o := generate(t, s, c, form{"model": "server:gpu/m", "prompt": "ab", "max_new_tokens": "4"})
	tr := sessionTrace(sess)
	if len(tr.Steps) != 4 || tr.Output.NewText != "t199t200t201t202" || tr.Model.Source == nil || tr.Model.Source.Mode != "plain" {
		t.Fatalf("got %d steps, text %q, source %+v; want 4 plain-mode steps t199..t202", len(tr.Steps), tr.Output.NewText, tr.Model.Source)
	}
	for _, want := range []string{"gives the log-probabilities of its top 20 tokens only", "The KV cache lives on the serving engine (llama.cpp)", "does not report the memory it read", "a serving engine&#39;s API does not give"} {
		if !strings.Contains(o.HTML, want) {
			t.Errorf("the step's panels do not say %q", want)
		}
	}
	if strings.Contains(o.HTML, "the toy keeps only its context") {
		t.Errorf("the KV panel speaks of the toy for a server's step")
	}

	t.Run("branch in step mode", func(t *testing.T) {
		// At step 2 (index 1), after t199, the server offers t200 and
		// t206: choose t206.
		sendJSON(t, c, map[string]any{"type": "branch", "step": 1, "token": "t206"})
		waitFor(t, c, "the branch's end", finished)
		settle(t, s, c)
		tr := sessionTrace(sess)
		if len(tr.Branches) != 1 {
			t.Fatalf("got %d branches, want 1", len(tr.Branches))
		}
		b := tr.Branches[0]
		var chosen []int
		for _, st := range b.Steps {
			chosen = append(chosen, st.Rows[0].Chosen.ID)
		}
		if fmt.Sprint(chosen) != "[206 207 208]" || b.Steps[0].Index != 1 || b.Steps[0].Rows[0].Chosen.By != trace.ByForced {
			t.Errorf("branch chose %v from step index %d (by %q), want [206 207 208] from 1, the first forced", chosen, b.Steps[0].Index, b.Steps[0].Rows[0].Chosen.By)
		}
		if b.Output.NewText != "t199t206t207t208" {
			t.Errorf("branch text %q, want t199t206t207t208", b.Output.NewText)
		}
		fk.mu.Lock()
		defer fk.mu.Unlock()
		n := len(fk.prompts)
		if n != 4 || !fk.steps[1] || !fk.steps[3] {
			t.Fatalf("the server got %d requests (step mode %v), want the trunk's and 3 of one token each", n, fk.steps)
		}
		// Prompt [1 197 198] ("ab" after BOS), then the trunk's t199,
		// then the forced t206.
		if got := fmt.Sprint(fk.prompts[1], fk.prompts[2]); got != "[1 197 198 199] [1 197 198 199 206]" {
			t.Errorf("step-mode prompts %s, want [1 197 198 199] [1 197 198 199 206]", got)
		}
	})

	t.Run("compare in step mode", func(t *testing.T) {
		fk.mu.Lock()
		before := len(fk.prompts)
		fk.mu.Unlock()
		sendJSON(t, c, map[string]any{"type": "compare", "form": form{"model": "server:gpu/m", "prompt": "ab", "max_new_tokens": "2", "seed": "7", "variants": "greedy\nT=0.7"}})
		waitFor(t, c, "the comparison's end", finished)
		settle(t, s, c)
		fk.mu.Lock()
		defer fk.mu.Unlock()
		if got := fk.steps[before:]; fmt.Sprint(got) != "[true true true true]" {
			t.Errorf("the comparison's requests were step mode %v, want 4 of one token each", got)
		}
	})
}

func TestServerRunStop(t *testing.T) {
	fk := newFakeLlama(t)
	fk.hold = make(chan struct{})
	defer close(fk.hold)
	s, sess, c := liveServer(t, Config{Servers: []ServerConfig{{Name: "gpu", URL: fk.URL}}}, 0)
	sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "server:gpu/m", "prompt": "ab", "max_new_tokens": "50"}})
	waitFor(t, c, "two steps streamed while the run goes on", func(o live.Outbound) bool { return o.Type == live.MsgView && o.Running && o.Count == 2 })
	sendJSON(t, c, map[string]string{"type": "stop"})
	waitFor(t, c, "the stopped run", finished)
	o := settle(t, s, c)
	tr := sessionTrace(sess)
	if len(tr.Steps) != 2 || tr.Output.StopReason != trace.StopCancelled || tr.Model.Source.Incomplete != "cancelled" {
		t.Errorf("got %d steps, stop %q, incomplete %q; want the 2 streamed, cancelled, cancelled", len(tr.Steps), tr.Output.StopReason, tr.Model.Source.Incomplete)
	}
	if !strings.Contains(o.HTML, "this trace is partial") || !strings.Contains(o.HTML, `data-state="stopped"`) {
		t.Errorf("the view does not mark the partial trace: %.400s", o.HTML)
	}
}

func TestServerRunErrors(t *testing.T) {
	fk := newFakeLlama(t)
	_, _, c := liveServer(t, Config{Servers: []ServerConfig{{Name: "gpu", URL: fk.URL}, {Name: "down", URL: refusedURL(t)}, {Name: "locked", URL: authServer(t)}}}, 0)
	for _, tc := range []struct {
		name string
		form form
		says string
	}{
		{"server down", form{"model": "server:down", "prompt": "x"}, "server down is unavailable: connection refused"},
		{"server refuses the key", form{"model": "server:locked", "prompt": "x"}, "server locked is unavailable: the server refused the API key"},
		{"model gone", form{"model": "server:gpu/other", "prompt": "x"}, `model "gpu/other" is not on this server's list`},
		{"beams", form{"model": "server:gpu/m", "prompt": "x", "num_beams": "2"}, "num_beams: servers' OpenAI APIs have no beam search"},
		{"cache off", form{"model": "server:gpu/m", "prompt": "x", "use_cache": "false"}, "use_cache: the server manages its own KV cache"},
		{"batch", form{"model": "server:gpu/m", "prompt": "x\ny"}, "one prompt at a time"},
		{"id outside", form{"model": "server:gpu/m", "input": "ids", "prompt": "1 600"}, "outside the vocabulary (0..511)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sendJSON(t, c, map[string]any{"type": "generate", "form": tc.form})
			waitFor(t, c, "an error saying "+tc.says, errorSaying(tc.says))
		})
	}
	t.Run("the page goes on", func(t *testing.T) {
		sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "toy", "do_sample": "false"}})
		waitFor(t, c, "the toy's run", finished)
	})
}

func TestServerModelInALink(t *testing.T) {
	// A lesson's deep link runs local models only: one naming a server's
	// model gets the toy's page with a clear message, not an internal
	// error.
	fk := newFakeLlama(t)
	s, _, _ := liveServer(t, Config{Servers: []ServerConfig{{Name: "gpu", URL: fk.URL}}}, 0)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	res, err := http.Get(ts.URL + "/?model=server:gpu/m&prompt=ab")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(body)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "a link runs a local model") || strings.Contains(page, "internal error") {
		t.Errorf("got %d and a page that does not say the link needs a local model: %.300s", res.StatusCode, page[strings.Index(page, "error-message"):])
	}
}

func TestServerMenuIsBounded(t *testing.T) {
	var list strings.Builder
	list.WriteString(`{"object":"list","data":[`)
	for i := range catalog.MaxServerModels + 5 {
		if i > 0 {
			list.WriteString(",")
		}
		fmt.Fprintf(&list, `{"id":"m%d","owned_by":"vllm"}`, i)
	}
	list.WriteString(`]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, list.String()) }))
	defer srv.Close()
	s, _, _ := liveServer(t, Config{Servers: []ServerConfig{{Name: "big", URL: srv.URL}}}, 0)
	n, more := 0, ""
	for _, m := range s.formView(nil).Models {
		if strings.HasPrefix(m.Value, "server:big/") {
			n++
		} else if m.Value == "server:big" {
			more = m.Label
		}
	}
	if n != catalog.MaxServerModels || more != "big: … and 5 more models, not listed" {
		t.Errorf("got %d models and %q, want %d and a line for the 5 more", n, more, catalog.MaxServerModels)
	}
}

func TestServerChatBranch(t *testing.T) {
	// A chat recorded through the server's chat endpoint has no prompt
	// ids: its branch renders the chat with the server's template (/props)
	// and forces the tokens before the branch point, then the new one.
	fk := newFakeLlama(t)
	s, sess, c := liveServer(t, Config{Servers: []ServerConfig{{Name: "gpu", URL: fk.URL}}}, 0)
	generate(t, s, c, form{"model": "server:gpu/m", "input": "chat", "prompt": "hi", "max_new_tokens": "4"})
	tr := sessionTrace(sess)
	if len(tr.Steps) != 4 || len(tr.Prompt.IDs) != 0 || tr.Model.Source.Endpoint != "/v1/chat/completions" {
		t.Fatalf("trunk: %d steps, prompt ids %v, endpoint %q; want 4 steps from the chat endpoint without prompt ids", len(tr.Steps), tr.Prompt.IDs, tr.Model.Source.Endpoint)
	}
	sendJSON(t, c, map[string]any{"type": "branch", "step": 2, "token": "t59"})
	waitFor(t, c, "the branch's end", finished)
	settle(t, s, c)
	tr = sessionTrace(sess)
	if len(tr.Branches) != 1 {
		t.Fatalf("got %d branches, want 1", len(tr.Branches))
	}
	var chosen []string
	for _, st := range tr.Branches[0].Steps {
		chosen = append(chosen, fmt.Sprintf("%d:%d:%s", st.Index, st.Rows[0].Chosen.ID, st.Rows[0].Chosen.By))
	}
	if got := strings.Join(chosen, " "); !strings.HasPrefix(got, "2:59:forced 3:") || len(chosen) != 2 {
		t.Errorf("branch steps %q, want step 2 forced to 59, then step 3", got)
	}
	if err := tr.Validate(); err != nil {
		t.Errorf("the trace with its branch does not validate: %v", err)
	}
	fk.mu.Lock()
	defer fk.mu.Unlock()
	if got := fmt.Sprint(fk.steps[1:]); got != "[true true true true]" {
		t.Errorf("the branch's requests were step mode %s, want 4 of one token each", got)
	}
	if p := fk.prompts[2]; len(p) < 2 || p[len(p)-1] != 51 {
		t.Errorf("the branch's second request sent %v, want the rendered chat's ids then the forced 51", p)
	}
}

func TestServerConfigHidesTheKey(t *testing.T) {
	c := ServerConfig{Name: "gpu", URL: "http://user:hunter2@10.0.0.5:8000", Key: "sk-secret"}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "server", c)
	for _, tc := range []struct{ name, got string }{
		{"%v", fmt.Sprintf("%v", c)},
		{"%+v of a Config", fmt.Sprintf("%+v", Config{Servers: []ServerConfig{c}})},
		{"slog", logged.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.got, "sk-secret") || strings.Contains(tc.got, "hunter2") || !strings.Contains(tc.got, "gpu=http://10.0.0.5:8000") {
				t.Errorf("got %q, want gpu=http://10.0.0.5:8000 without the key or password", tc.got)
			}
		})
	}
}

func TestServerCompareChatWithoutTemplate(t *testing.T) {
	// vLLM renders chats only inside its chat endpoint: a comparison
	// (one token per request) of a chat says to generate it as one run.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"big","owned_by":"vllm"}]}`)
	}))
	defer srv.Close()
	_, _, c := liveServer(t, Config{Servers: []ServerConfig{{Name: "gpu", URL: srv.URL}}}, 0)
	sendJSON(t, c, map[string]any{"type": "compare", "form": form{"model": "server:gpu/big", "input": "chat", "prompt": "hi", "max_new_tokens": "2", "variants": "greedy\nT=0.7"}})
	waitFor(t, c, "the comparison's error", errorSaying("generate the chat as a single run instead"))
}
