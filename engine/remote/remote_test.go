package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"tracer/engine/refdata"
	"tracer/trace"
)

// fixture reads a file under the repository's testdata/servers.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(refdata.Need(t, "servers/"+name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// models is a /v1/models answer listing one model owned by owner.
func models(name, owner string, vocab int) string {
	m := map[string]any{"id": name, "object": "model", "owned_by": owner}
	if vocab > 0 {
		m["meta"] = map[string]any{"n_vocab": vocab}
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "data": []any{m}})
	return string(b)
}

// fake starts a server that answers /v1/models with modelsJSON and every
// other request with answer.
func fake(t *testing.T, modelsJSON string, answer http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, modelsJSON)
			return
		}
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// serve answers with a fixture: a .txt one as a server-sent event stream,
// a .json one as JSON.
func serve(data []byte, name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(name, ".txt") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Write(data)
	}
}

// greedy are options for n greedy new tokens.
func greedy(n int) trace.Options {
	return trace.Options{MaxNewTokens: n, MaxLength: -1, TopK: 50, TopP: 1, Temperature: 1, RepetitionPenalty: 1, NumBeams: 1, NumReturnSequences: 1, PadTokenID: -1, EarlyStopping: "false"}
}

// roundTrip writes a trace and reads it back through trace.Read, so every
// test checks that the result is a valid trace.
func roundTrip(t *testing.T, tr *trace.Trace) *trace.Trace {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := traceSchema(t).Validate(doc); err != nil {
		t.Errorf("the trace does not validate against trace/schema.json: %v", err)
	}
	back, err := trace.Read(&buf, 0)
	if err != nil {
		t.Fatalf("trace.Read: %v", err)
	}
	return back
}

// traceSchema compiles trace/schema.json.
func traceSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	root, err := refdata.Root()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "trace", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRecordFixtures(t *testing.T) {
	type cand struct {
		id    int
		token string
		prob  float64
	}
	for _, tc := range []struct {
		name, models, answer string
		engine               string
		chat                 bool
		steps                int
		newText, stop        string
		first                []cand // step 0's candidates
		ids                  bool   // the trace has token ids
		override             string // Config.Engine
	}{
		{name: "vllm completions streamed", models: "vllm-models.json", answer: "vllm-completions-stream.txt", engine: EngineVLLM,
			steps: 3, newText: " Paris, which", stop: trace.StopMaxNewTokens,
			first: []cand{{-1, " Paris", math.Exp(-0.0713)}, {-1, " the", math.Exp(-2.9104)}, {-1, " a", math.Exp(-4.0187)}}},
		{name: "vllm completions plain with token ids", models: "vllm-models.json", answer: "vllm-completions-ids.json", engine: EngineVLLM,
			steps: 2, newText: "", stop: trace.StopMaxNewTokens, ids: true,
			first: []cand{{12366, "", math.Exp(-0.0713)}, {279, "", math.Exp(-2.9104)}, {264, "", math.Exp(-4.0187)}}},
		{name: "vllm chat streamed", models: "vllm-models.json", answer: "vllm-chat-stream.txt", engine: EngineVLLM, chat: true,
			steps: 2, newText: "Paris.", stop: trace.StopEOS,
			first: []cand{{-1, "Paris", math.Exp(-0.0021)}, {-1, "The", math.Exp(-6.3125)}, {-1, "It", math.Exp(-8.125)}}},
		{name: "sglang completions plain", models: "sglang-models.json", answer: "sglang-completions.json", engine: EngineSGLang,
			steps: 2, newText: " Paris.", stop: trace.StopMaxNewTokens,
			first: []cand{{-1, " Paris", math.Exp(-0.1052)}, {-1, " the", math.Exp(-2.6513)}}},
		{name: "sglang chat plain", models: "sglang-models.json", answer: "sglang-chat.json", engine: EngineSGLang, chat: true,
			steps: 1, newText: "Paris", stop: trace.StopEOS,
			first: []cand{{-1, "Paris", math.Exp(-0.0457)}, {-1, "The", math.Exp(-3.1088)}}},
		{name: "ollama chat streamed", models: "ollama-models.json", answer: "ollama-chat-stream.txt", engine: EngineOllama, chat: true,
			steps: 2, newText: "Hello!", stop: trace.StopEOS,
			first: []cand{{-1, "Hello", math.Exp(-0.3134)}, {-1, "Hi", math.Exp(-1.3271)}, {-1, "Hey", math.Exp(-4.0022)}}},
		{name: "llama.cpp v1 completions in the chat shape", models: "llamacpp-models.json", answer: "llamacpp-v1-completions.json", engine: EngineOpenAI, override: EngineOpenAI,
			steps: 3, newText: ", there was", stop: trace.StopMaxNewTokens, ids: true,
			first: []cand{{432, ",", math.Exp(-0.03170236945152283)}, {383, " there", math.Exp(-3.549842119216919)}, {322, " in", math.Exp(-8.121450424194336)}}},
		{name: "llama.cpp native stream", models: "llamacpp-models.json", answer: "llamacpp-completion-stream.txt", engine: EngineLlamaCpp,
			steps: 3, newText: ", there was", stop: trace.StopMaxNewTokens, ids: true,
			first: []cand{{432, ",", math.Exp(-0.03170236945152283)}, {383, " there", math.Exp(-3.549842119216919)}, {322, " in", math.Exp(-8.121450424194336)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gotPath string
			answer := serve(fixture(t, tc.answer), tc.answer)
			url := fake(t, string(fixture(t, tc.models)), func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/tokenize" {
					io.WriteString(w, `{"tokens":[{"id":1,"piece":"<s>"},{"id":403,"piece":" Once"}]}`)
					return
				}
				gotPath = r.URL.Path
				answer(w, r)
			})
			c, err := Dial(context.Background(), Config{URL: url, Engine: tc.override})
			if err != nil {
				t.Fatal(err)
			}
			if c.Engine != tc.engine {
				t.Errorf("engine %q, want %q", c.Engine, tc.engine)
			}
			req := Request{Text: "The capital of France is", Options: greedy(tc.steps)}
			if tc.chat {
				req = Request{Messages: []trace.Message{{Role: "user", Content: "Capital of France?"}}, Options: greedy(tc.steps)}
			}
			tr, err := c.Record(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			tr = roundTrip(t, tr)
			wantPath := "/v1/completions"
			switch {
			case tc.chat:
				wantPath = "/v1/chat/completions"
			case tc.engine == EngineLlamaCpp:
				wantPath = "/completion"
			}
			if gotPath != wantPath {
				t.Errorf("requested %s, want %s", gotPath, wantPath)
			}
			if len(tr.Steps) != tc.steps || tr.Output.NewText != tc.newText || tr.Output.StopReason != tc.stop {
				t.Errorf("got %d steps, text %q, stop %q; want %d, %q, %q", len(tr.Steps), tr.Output.NewText, tr.Output.StopReason, tc.steps, tc.newText, tc.stop)
			}
			if tr.Model.Source == nil || tr.Model.Source.Kind != "server" || tr.Model.Source.TokenIDs != tc.ids {
				t.Errorf("source %+v, want kind server and token_ids %v", tr.Model.Source, tc.ids)
			}
			if len(tr.Steps) == 0 {
				return
			}
			got := tr.Steps[0].Rows[0].Candidates
			if len(got) != len(tc.first) {
				t.Fatalf("step 0 has %d candidates, want %d", len(got), len(tc.first))
			}
			for i, w := range tc.first {
				g := got[i]
				if g.ID != w.id || g.Token != w.token || math.Abs(g.Prob-w.prob) > 1e-12 || !math.IsNaN(float64(g.Logit)) {
					t.Errorf("candidate %d: got {%d %q p=%v logit=%v}, want {%d %q p=%v logit=NaN}", i, g.ID, g.Token, g.Prob, g.Logit, w.id, w.token, w.prob)
				}
			}
			ch := tr.Steps[0].Rows[0].Chosen
			if ch.Rank != 1 || math.Abs(ch.Prob-tc.first[0].prob) > 1e-12 {
				t.Errorf("chosen %+v, want rank 1 with p=%v", ch, tc.first[0].prob)
			}
		})
	}
}

// nativeChunk is one llama.cpp /completion answer or stream event.
func nativeChunk(content string, ids []int, probs string, stop string) string {
	b, _ := json.Marshal(ids)
	s := `{"content":` + mustJSON(content) + `,"tokens":` + string(b)
	if probs != "" {
		s += `,"completion_probabilities":` + probs
	}
	if stop != "" {
		s += `,"stop":true,"stop_type":"` + stop + `"`
	} else {
		s += `,"stop":false`
	}
	return s + "}"
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// entry is a chat-shape logprobs entry for the chosen id with alternatives
// (id, logprob) pairs.
func entry(id int, text string, lp float64, top ...[2]float64) string {
	var alts []map[string]any
	for _, a := range top {
		alts = append(alts, map[string]any{"id": int(a[0]), "token": "t" + mustJSON(int(a[0])), "logprob": a[1]})
	}
	return mustJSON(map[string]any{"id": id, "token": text, "logprob": lp, "top_logprobs": alts})
}

func TestLlamaCppQuirks(t *testing.T) {
	ctx := context.Background()
	lm := models("stories", "llamacpp", 512)
	t.Run("plain mode marks a step left out inside a UTF-8 sequence", func(t *testing.T) {
		// 0xE2 0x80 0x9C is “: the lone byte token 200 leaves the text
		// inside a UTF-8 sequence, so llama.cpp sends no probabilities for
		// it, only for the completing token 300. A stream skips 200 and only
		// counts it in tokens_predicted; a whole answer lists its id.
		probs := "[" + entry(300, "“", -0.5, [2]float64{300, -0.5}, [2]float64{7, -1.2}) + "]"
		for _, tc := range []struct {
			name, contentType, body string
			wantFirst               int
		}{
			{"streamed", "text/event-stream",
				"data: " + strings.Replace(nativeChunk("“", []int{300}, probs, ""), "{", `{"tokens_predicted":2,`, 1) + "\n\n" +
					"data: " + strings.Replace(nativeChunk("", nil, "", "limit"), "{", `{"tokens_predicted":2,`, 1) + "\n\n", -1},
			{"whole", "application/json", nativeChunk("“", []int{200, 300}, probs, "limit"), 200},
		} {
			t.Run(tc.name, func(t *testing.T) {
				url := fake(t, lm, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", tc.contentType)
					io.WriteString(w, tc.body)
				})
				c, err := Dial(ctx, Config{URL: url})
				if err != nil {
					t.Fatal(err)
				}
				tr, err := c.Record(ctx, Request{IDs: []int{1, 5}, Options: greedy(2)})
				if err != nil {
					t.Fatal(err)
				}
				tr = roundTrip(t, tr)
				if len(tr.Steps) != 2 {
					t.Fatalf("got %d steps, want 2", len(tr.Steps))
				}
				s0, s1 := tr.Steps[0].Rows[0], tr.Steps[1].Rows[0]
				if s0.Chosen.ID != tc.wantFirst || s0.Server == nil || s0.Server.Missing != trace.MissingUTF8 || len(s0.Candidates) != 0 {
					t.Errorf("step 0: chosen %d, server %+v, %d candidates; want %d, missing utf8, none", s0.Chosen.ID, s0.Server, len(s0.Candidates), tc.wantFirst)
				}
				if s1.Chosen.ID != 300 || s1.Server != nil || len(s1.Candidates) != 2 {
					t.Errorf("step 1: chosen %d, server %+v, %d candidates; want 300, nothing missing, 2", s1.Chosen.ID, s1.Server, len(s1.Candidates))
				}
				if tr.Output.NewText != "“" || !strings.Contains(strings.Join(tr.Notices, " "), "left out the probabilities of 1 token") {
					t.Errorf("new text %q, notices %q; want “ and a notice of 1 token left out", tr.Output.NewText, tr.Notices)
				}
			})
		}
	})
	t.Run("step mode fills a step left out inside a UTF-8 sequence", func(t *testing.T) {
		var banned atomic.Int32
		url := fake(t, lm, func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			json.NewDecoder(r.Body).Decode(&body)
			w.Header().Set("Content-Type", "application/json")
			if _, ok := body["logit_bias"]; ok {
				// Banned 200: the server picks 7, with the same raw distribution.
				banned.Add(1)
				io.WriteString(w, nativeChunk("x", []int{7}, "["+entry(7, "x", -1.2, [2]float64{200, -0.4}, [2]float64{7, -1.2})+"]", "limit"))
				return
			}
			io.WriteString(w, nativeChunk("", []int{200}, "[]", "limit"))
		})
		c, err := Dial(ctx, Config{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := c.Record(ctx, Request{IDs: []int{1, 5}, Options: greedy(1), Step: true})
		if err != nil {
			t.Fatal(err)
		}
		tr = roundTrip(t, tr)
		r := tr.Steps[0].Rows[0]
		if banned.Load() != 1 {
			t.Errorf("asked %d times with a ban, want 1", banned.Load())
		}
		if r.Chosen.ID != 200 || r.Server == nil || !r.Server.Filled || r.Server.Missing != "" || len(r.Candidates) != 2 {
			t.Errorf("got chosen %d, server %+v, %d candidates; want 200, filled, 2", r.Chosen.ID, r.Server, len(r.Candidates))
		}
		if want := math.Exp(-0.4); math.Abs(r.Chosen.Prob-want) > 1e-12 || r.Chosen.Rank != 1 {
			t.Errorf("chosen p=%v rank %d, want p=%v rank 1", r.Chosen.Prob, r.Chosen.Rank, want)
		}
	})
	t.Run("post-sampling probabilities go to final, not candidates", func(t *testing.T) {
		// post_sampling_probs at temperature 0: the chosen token has prob 1.
		ans := `{"content":",","tokens":[432],"stop":true,"stop_type":"limit","completion_probabilities":[{"id":432,"token":",","bytes":[44],"prob":1.0,"top_probs":[{"id":432,"token":",","bytes":[44],"prob":1.0},{"id":383,"token":" there","bytes":[32,116,104,101,114,101],"prob":0.0}]}]}`
		url := fake(t, lm, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, ans)
		})
		c, err := Dial(ctx, Config{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := c.Record(ctx, Request{IDs: []int{1, 403}, Options: greedy(1), Step: true})
		if err != nil {
			t.Fatal(err)
		}
		tr = roundTrip(t, tr)
		r := tr.Steps[0].Rows[0]
		if len(r.Candidates) != 0 || r.Final == nil || len(r.Final.IDs) != 2 || r.Final.Probs[0] != 1 {
			t.Errorf("candidates %v, final %+v; want no candidates and final [432 383] with p 1 first", r.Candidates, r.Final)
		}
		if tr.Model.Source.Probs != trace.ProbsProcessed {
			t.Errorf("source.probs %q, want processed", tr.Model.Source.Probs)
		}
		if !strings.Contains(strings.Join(tr.Notices, "\n"), "probability 1") {
			t.Errorf("notices %q, want one that explains the chosen token's probability of 1", tr.Notices)
		}
	})
}

func TestRecordErrors(t *testing.T) {
	ctx := context.Background()
	lm := models("m", "vllm", 0)
	chunk := `data: {"choices":[{"text":" a","logprobs":{"tokens":[" a"],"token_logprobs":[-0.1],"top_logprobs":[{" a":-0.1}]},"finish_reason":null}]}` + "\n\n"
	// A free port with nothing listening.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		name    string
		url     string
		handler http.HandlerFunc
		model   string
		want    error
		partial int // steps kept in a partial trace
		step    bool
	}{
		{name: "connection refused", url: refused, want: ErrRefused},
		{name: "401", handler: status(401, `{"error":{"message":"Invalid API key","type":"invalid_request_error"}}`), want: ErrAuth},
		{name: "403", handler: status(403, `{"error":"forbidden"}`), want: ErrAuth},
		{name: "unknown model named", handler: serveText(chunk), model: "other", want: ErrUnknownModel},
		{name: "unknown model answered 404", handler: status(404, `{"error":{"message":"The model 'm' does not exist.","code":"model_not_found"}}`), want: ErrUnknownModel},
		{name: "server ignores logprobs", handler: serveText(`data: {"choices":[{"text":" a","finish_reason":null}]}` + "\n\n" + `data: {"choices":[{"text":"","finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n"), want: ErrNoLogprobs},
		{name: "server ignores logprobs in step mode", handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"choices":[{"text":" a","finish_reason":"length"}]}`)
		}, step: true, want: ErrNoLogprobs},
		{name: "stream cut in the middle", handler: serveText(chunk + chunk), want: ErrStreamCut, partial: 2},
		{name: "stream cut mid-event", handler: serveText(chunk + chunk[:40]), want: ErrStreamCut, partial: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if url == "" {
				url = fake(t, lm, tc.handler)
			}
			c, err := Dial(ctx, Config{URL: url, Model: tc.model, Retries: 1})
			var tr *trace.Trace
			if err == nil {
				tr, err = c.Record(ctx, Request{Text: "x", Options: greedy(4), Step: tc.step})
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got error %v, want %v", err, tc.want)
			}
			if tc.partial == 0 {
				if tr != nil {
					t.Errorf("got a trace with the error, want none")
				}
				return
			}
			if tr == nil {
				t.Fatal("got no partial trace, want one")
			}
			tr = roundTrip(t, tr)
			if len(tr.Steps) != tc.partial || tr.Model.Source.Incomplete == "" || tr.Output.StopReason != trace.StopCancelled {
				t.Errorf("partial trace: %d steps, incomplete %q, stop %q; want %d steps, marked, cancelled", len(tr.Steps), tr.Model.Source.Incomplete, tr.Output.StopReason, tc.partial)
			}
		})
	}
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func serveText(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  int32
		wantTries int32
		wantErr   bool
	}{
		{"recovers after two 503s", 2, 3, false},
		{"gives up after three", 100, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tries atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tries.Add(1) <= tc.failures {
					w.WriteHeader(503)
					io.WriteString(w, `{"error":{"message":"Loading model"}}`)
					return
				}
				io.WriteString(w, models("m", "vllm", 0))
			}))
			defer srv.Close()
			_, err := Dial(context.Background(), Config{URL: srv.URL, Retries: 2})
			if (err != nil) != tc.wantErr || tries.Load() != tc.wantTries {
				t.Errorf("got error %v after %d tries; want error %v after %d", err, tries.Load(), tc.wantErr, tc.wantTries)
			}
		})
	}
}

func TestTimeoutSaysWhatToDo(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	_, err := Dial(context.Background(), Config{URL: srv.URL, Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "allow it more time") {
		t.Errorf("got %v, want ErrTimeout saying to allow more time", err)
	}
}

func TestKeyIsSentButNeverRecorded(t *testing.T) {
	const key = "sk-secret-123"
	var auth atomic.Value
	url := fake(t, models("m", "vllm", 0), func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		serve(fixture(t, "vllm-completions-stream.txt"), ".txt")(w, r)
	})
	// Credentials in the URL are not recorded either.
	url = strings.Replace(url, "http://", "http://user:pw@", 1)
	c, err := Dial(context.Background(), Config{URL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Record(context.Background(), Request{Text: "x", Options: greedy(3)})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := auth.Load().(string); got != "Bearer "+key {
		t.Errorf("Authorization %q, want the bearer key", got)
	}
	var buf bytes.Buffer
	trace.Write(&buf, tr)
	for _, secret := range []string{key, "user:pw", "pw@"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("the trace holds %q", secret)
		}
	}
}

func TestSampledTokenBelowTheTopJoinsTheCandidates(t *testing.T) {
	// A sampled token (id 9) that is not among the top 2 alternatives.
	ans := nativeChunk("z", []int{9}, "["+entry(9, "z", -6.5, [2]float64{4, -0.1}, [2]float64{5, -2.4})+"]", "limit")
	url := fake(t, models("m", "llamacpp", 512), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, ans)
	})
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	o := greedy(1)
	o.DoSample, o.Seed = true, 3
	tr, err := c.Record(context.Background(), Request{IDs: []int{1}, Options: o, Step: true, TopLogprobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := roundTrip(t, tr).Steps[0].Rows[0]
	var ids []int
	for _, c := range r.Candidates {
		ids = append(ids, c.ID)
	}
	if len(ids) != 3 || ids[2] != 9 || r.Chosen.Rank != 0 || math.Abs(r.Chosen.Prob-math.Exp(-6.5)) > 1e-12 {
		t.Errorf("candidates %v, chosen %+v; want [4 5 9], rank 0, p=exp(-6.5)", ids, r.Chosen)
	}
}

func TestStopStringsAreCheckedHere(t *testing.T) {
	// The server is not told the stop string (it would cut it from its
	// answer); tracer stops reading once the text holds it, keeping it, as
	// transformers does.
	var sent map[string]any
	url := fake(t, models("m", "vllm", 0), func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&sent)
		serve(fixture(t, "vllm-completions-stream.txt"), ".txt")(w, r)
	})
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	o := greedy(3)
	o.StopStrings = []string{"s,"}
	tr, err := c.Record(context.Background(), Request{Text: "x", Options: o})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sent["stop"]; ok {
		t.Errorf("the request sent stop %v, want none", sent["stop"])
	}
	if tr.Output.NewText != " Paris," || tr.Output.StopReason != trace.StopString || len(tr.Steps) != 2 {
		t.Errorf("got %q, %s, %d steps; want \" Paris,\", stop_string, 2 steps", tr.Output.NewText, tr.Output.StopReason, len(tr.Steps))
	}
}

func TestCancelKeepsThePartialTrace(t *testing.T) {
	event := `data: {"choices":[{"text":" a","logprobs":{"tokens":[" a"],"token_logprobs":[-0.1],"top_logprobs":[{" a":-0.1}]},"finish_reason":null}]}` + "\n\n"
	url := fake(t, models("m", "vllm", 0), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, event)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	})
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr, err := c.Record(ctx, Request{Text: "x", Options: greedy(5), OnStep: func(trace.Step) { cancel() }})
	if !errors.Is(err, ErrStreamCut) || tr == nil {
		t.Fatalf("got %v (trace %v), want a partial trace and ErrStreamCut", err, tr != nil)
	}
	tr = roundTrip(t, tr)
	if len(tr.Steps) != 1 || tr.Model.Source.Incomplete != "cancelled" || tr.Output.StopReason != trace.StopCancelled {
		t.Errorf("got %d steps, incomplete %q, stop %q; want 1, cancelled, cancelled", len(tr.Steps), tr.Model.Source.Incomplete, tr.Output.StopReason)
	}
}

func TestRecordRefusesWhatAServerCannotDo(t *testing.T) {
	url := fake(t, models("m", "vllm", 0), status(500, "should not be asked"))
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	forced := greedy(2)
	forced.ForceIDs = []int{3}
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"no length", Request{Text: "x", Options: trace.Options{MaxNewTokens: -1, MaxLength: -1}}, "set max_new_tokens"},
		{"forced tokens in plain mode", Request{Text: "x", Options: forced}, "need step mode"},
		{"forced tokens without prompt ids", Request{Text: "x", Options: forced, Step: true}, "prompt as token ids"},
		{"chat in step mode on a server without /props", Request{Messages: []trace.Message{{Role: "user", Content: "hi"}}, Options: greedy(2), Step: true}, "record the chat in plain mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := c.Record(context.Background(), tc.req)
			if err == nil || tr != nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v (trace %v), want an error that says %q", err, tr != nil, tc.want)
			}
		})
	}
}

func TestStepModeExtendsThePromptIDs(t *testing.T) {
	// vLLM in step mode: each answer gives the token as "token_id:N", so
	// the next request's prompt is the ids so far.
	answers := []string{"token_id:11", "token_id:12"}
	var prompts []any
	var asIDs []any
	url := fake(t, models("m", "vllm", 0), func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		prompts = append(prompts, body["prompt"])
		asIDs = append(asIDs, body["return_tokens_as_token_ids"])
		tok := answers[min(len(prompts)-1, len(answers)-1)]
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"text":"","logprobs":{"tokens":["`+tok+`"],"token_logprobs":[-0.2],"top_logprobs":[{"`+tok+`":-0.2,"token_id:99":-1.9}]},"finish_reason":"length"}]}`)
	})
	c, err := Dial(context.Background(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Record(context.Background(), Request{IDs: []int{1, 2}, Options: greedy(2), Step: true})
	if err != nil {
		t.Fatal(err)
	}
	tr = roundTrip(t, tr)
	if got := mustJSON(prompts); got != "[[1,2],[1,2,11]]" {
		t.Errorf("prompts sent %s, want [[1,2],[1,2,11]]", got)
	}
	if got := mustJSON(asIDs); got != "[true,true]" {
		t.Errorf("return_tokens_as_token_ids sent %s, want [true,true]", got)
	}
	if got := mustJSON(tr.Output.IDs); got != "[1,2,11,12]" || !tr.Model.Source.TokenIDs {
		t.Errorf("output ids %s, token_ids %v; want [1,2,11,12], true", got, tr.Model.Source.TokenIDs)
	}
}
