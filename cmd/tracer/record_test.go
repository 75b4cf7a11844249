package main

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/refdata"
	"tracer/engine/remote/remotetest"
	"tracer/trace"
)

// tracerEnv runs the binary with extra environment variables.
func tracerEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), stderr.String(), exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// traceOf runs tracer with --json and reads the trace it prints.
func traceOf(t *testing.T, args ...string) *trace.Trace {
	t.Helper()
	out, errOut, code := tracer(t, "", append(args, "--json")...)
	if code != 0 {
		t.Fatalf("tracer %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	tr, err := trace.Read(strings.NewReader(out), 0)
	if err != nil {
		t.Fatalf("tracer %s: %v", strings.Join(args, " "), err)
	}
	return tr
}

// sameSteps checks that a server's trace chose the same tokens as tracer's
// own engine and that every step's top-10 probabilities agree within 1e-4.
func sameSteps(t *testing.T, server, local *trace.Trace) {
	t.Helper()
	if len(server.Steps) != len(local.Steps) {
		t.Fatalf("server: %d steps, tracer run: %d", len(server.Steps), len(local.Steps))
	}
	worst := 0.0
	defer func() { t.Logf("%d steps, worst top-10 |Δp| %.3g", len(local.Steps), worst) }()
	for i := range local.Steps {
		s, l := server.Steps[i].Rows[0], local.Steps[i].Rows[0]
		if s.Chosen.ID != l.Chosen.ID || s.Chosen.By != l.Chosen.By {
			t.Errorf("step %d: server chose %d (%s), tracer run %d (%s)", i, s.Chosen.ID, s.Chosen.By, l.Chosen.ID, l.Chosen.By)
		}
		probs := map[int]float64{}
		for _, c := range s.Candidates {
			probs[c.ID] = c.Prob
		}
		for k, c := range l.Candidates[:min(10, len(l.Candidates))] {
			p, ok := probs[c.ID]
			if ok {
				worst = max(worst, math.Abs(p-c.Prob))
			}
			if !ok || math.Abs(p-c.Prob) > 1e-4 {
				t.Errorf("step %d, candidate %d (id %d %q): server p=%v (listed %v), tracer run p=%v; want within 1e-4", i, k, c.ID, c.Token, p, ok, c.Prob)
			}
		}
	}
}

func TestRecordAgainstLlamaServer(t *testing.T) {
	url := remotetest.StartLlamaServer(t)
	bin := refdata.Need(t, "models/stories260K/stories260K.bin")
	prompt := []string{"--prompt", "Once upon a time", "--max-new-tokens", "32"}
	local := traceOf(t, append([]string{"run", "--model", bin}, prompt...)...)

	for _, tc := range []struct {
		name             string
		args             []string
		engine, endpoint string
	}{
		{"plain mode matches tracer run", nil, "llama.cpp", "/completion"},
		{"step mode matches tracer run", []string{"--step"}, "llama.cpp", "/completion"},
		// llama.cpp's /v1/completions answers in the chat shape (content: [...]).
		{"plain mode through /v1/completions matches tracer run", []string{"--server-engine", "openai"}, "openai", "/v1/completions"},
		{"step mode through /v1/completions matches tracer run", []string{"--server-engine", "openai", "--step"}, "openai", "/v1/completions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := traceOf(t, append(append([]string{"record", "--server", url}, prompt...), tc.args...)...)
			if src := tr.Model.Source; src == nil || src.Engine != tc.engine || src.Endpoint != tc.endpoint || src.URL != url || !src.TokenIDs {
				t.Errorf("model.source %+v, want %s %s at %s with token ids", src, tc.engine, tc.endpoint, url)
			}
			if got, want := tr.Output.NewText, local.Output.NewText; got != want {
				t.Errorf("new text %q, want tracer run's %q", got, want)
			}
			sameSteps(t, tr, local)
		})
	}

	t.Run("a token that ends inside a UTF-8 sequence: plain mode marks it, step mode fills it", func(t *testing.T) {
		// A proxy pushes the first token of the prompt's continuation to the
		// lone byte 0xE2 (id 229 in stories260K's vocabulary), after which
		// the text ends inside a UTF-8 sequence and llama.cpp leaves out
		// the token's probabilities.
		proxy := biasProxy(t, url, 5, 229)
		plain := traceOf(t, "record", "--server", proxy, "--prompt", "Once upon a time", "--max-new-tokens", "3")
		if len(plain.Steps) != 3 {
			t.Fatalf("plain: %d steps, want 3", len(plain.Steps))
		}
		for i, s := range plain.Steps {
			if r := s.Rows[0]; r.Server == nil || r.Server.Missing != trace.MissingUTF8 || len(r.Candidates) != 0 {
				t.Errorf("plain step %d: server %+v, %d candidates; want marked utf8 with none", i, r.Server, len(r.Candidates))
			}
		}
		step := traceOf(t, "record", "--server", proxy, "--step", "--prompt", "Once upon a time", "--max-new-tokens", "4")
		want := traceOf(t, "run", "--model", bin, "--prompt", "Once upon a time", "--max-new-tokens", "4", "--force-ids", "229")
		r0 := step.Steps[0].Rows[0]
		if r0.Chosen.ID != 229 || r0.Server == nil || !r0.Server.Filled {
			t.Fatalf("step 0: chosen %d, server %+v; want 229, filled", r0.Chosen.ID, r0.Server)
		}
		// Step 0 is the server's choice, tracer run's forced one: compare
		// its distribution, then the steps after it.
		step.Steps[0].Rows[0].Chosen.By = trace.ByForced
		sameSteps(t, step, want)
	})

	t.Run("a stop string ends the run as in tracer run", func(t *testing.T) {
		args := []string{"--prompt", "Once", "--stop", "girl", "--max-new-tokens", "30"}
		want := traceOf(t, append([]string{"run", "--model", bin}, args...)...)
		for _, mode := range [][]string{nil, {"--step"}} {
			got := traceOf(t, append(append([]string{"record", "--server", url}, args...), mode...)...)
			if got.Output.NewText != want.Output.NewText || got.Output.StopReason != want.Output.StopReason {
				t.Errorf("%v: got %q (%s), want tracer run's %q (%s)", mode, got.Output.NewText, got.Output.StopReason, want.Output.NewText, want.Output.StopReason)
			}
		}
	})

	t.Run("a branch in step mode continues from the forced token", func(t *testing.T) {
		// " there a" instead of ", there": two forced tokens, then free.
		args := []string{"--prompt", "Once upon a time", "--max-new-tokens", "12", "--force-ids", "383,261"}
		branch := traceOf(t, append([]string{"record", "--server", url, "--step"}, args...)...)
		want := traceOf(t, append([]string{"run", "--model", bin}, args...)...)
		if got := branch.Output.NewIDs[:2]; got[0] != 383 || got[1] != 261 {
			t.Errorf("first new ids %v, want the forced [383 261]", got)
		}
		sameSteps(t, branch, want)
	})

	t.Run("sampling with a seed records the chosen token among the candidates", func(t *testing.T) {
		for _, mode := range [][]string{nil, {"--step"}} {
			tr := traceOf(t, append([]string{"record", "--server", url, "--prompt", "Once upon a time", "--max-new-tokens", "24",
				"--do-sample", "--seed", "7", "--temperature", "1.3", "--top-k", "0"}, mode...)...)
			if tr.Options.Seed != 7 || !tr.Options.DoSample {
				t.Errorf("%v: options seed %d do_sample %v, want 7 true", mode, tr.Options.Seed, tr.Options.DoSample)
			}
			for i, s := range tr.Steps {
				r := s.Rows[0]
				found := false
				for _, c := range r.Candidates {
					found = found || (c.ID == r.Chosen.ID && c.Prob == r.Chosen.Prob)
				}
				if r.Chosen.By != trace.BySample || !found {
					t.Errorf("%v step %d: chosen %+v is not among its %d candidates", mode, i, r.Chosen, len(r.Candidates))
				}
			}
		}
	})

	t.Run("--out writes a trace validate accepts, and the text goes to stdout", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "server.json")
		want, _, _ := tracer(t, "", "run", "--model", bin, "--prompt", "Once upon a time", "--max-new-tokens", "8")
		out, errOut, code := tracer(t, "", "record", "--server", url, "--prompt", "Once upon a time", "--max-new-tokens", "8", "--out", path)
		if code != 0 || out != want {
			t.Errorf("got %q (stderr %q, exit %d), want tracer run's %q", out, errOut, code, want)
		}
		vout, verr, code := tracer(t, "", "validate", path)
		if code != 0 || !strings.Contains(vout, "8 steps") {
			t.Errorf("validate: %q %q exit %d", vout, verr, code)
		}
	})
}

// fakeServer is an OpenAI-compatible server on 127.0.0.1 that lists
// models at /v1/models and answers everything else with completion; it
// returns its URL and closes with the test.
func fakeServer(t *testing.T, models string, completion http.HandlerFunc) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, models)
			return
		}
		completion(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRecordServerErrors(t *testing.T) {
	const key = "sk-test-0123456789"
	models := `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`
	event := `data: {"choices":[{"text":" a","logprobs":{"tokens":[" a"],"token_logprobs":[-0.1],"top_logprobs":[{" a":-0.1," b":-2.5}]},"finish_reason":null}]}` + "\n\n"
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
		args    []string
		want    string
		partial int // steps in the partial trace written to --out
	}{
		{name: "connection refused", url: refused, want: "connection refused"},
		{name: "401 names the key variable", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"invalid key"}}`)
		}, want: "--server-key-env"},
		{name: "403", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			io.WriteString(w, `{"error":"forbidden"}`)
		}, want: "refused the API key"},
		{name: "unknown model", handler: func(w http.ResponseWriter, r *http.Request) {}, args: []string{"--server-model", "llama-70b"}, want: `model "llama-70b"`},
		{name: "a server that ignores logprobs", handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `data: {"choices":[{"text":" a","finish_reason":"length"}]}`+"\n\ndata: [DONE]\n\n")
		}, want: "ignored the request for log-probabilities"},
		{name: "a stream cut in the middle keeps the partial trace", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, event+event+event)
		}, want: "partial trace is kept", partial: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if url == "" {
				url = fakeServer(t, models, tc.handler)
			}
			out := filepath.Join(t.TempDir(), "t.json")
			args := append([]string{"record", "--server", url, "--prompt", "x", "--max-new-tokens", "5", "--out", out}, tc.args...)
			stdout, stderr, code := tracerEnv(t, []string{"OPENAI_API_KEY=" + key}, args...)
			if code != exitError || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "panic") {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
				t.Errorf("stderr has %d lines, want one clear line: %q", n+1, stderr)
			}
			if strings.Contains(stdout+stderr, key) {
				t.Errorf("the API key appears in the output")
			}
			data, err := os.ReadFile(out)
			if tc.partial == 0 {
				if err == nil {
					t.Errorf("wrote %s, want no trace", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("no partial trace: %v", err)
			}
			tr, err := trace.Read(bytes.NewReader(data), 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Steps) != tc.partial || tr.Model.Source.Incomplete == "" || strings.Contains(string(data), key) {
				t.Errorf("partial trace: %d steps, incomplete %q; want %d steps, marked, without the key", len(tr.Steps), tr.Model.Source.Incomplete, tc.partial)
			}
		})
	}
}

func TestRecordSendsTheKeyFromTheNamedVariable(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		w.WriteHeader(401)
	}))
	defer srv.Close()
	tracerEnv(t, []string{"MY_KEY=k-1", "OPENAI_API_KEY=k-2"}, "record", "--server", srv.URL, "--server-key-env", "MY_KEY", "--prompt", "x", "--max-new-tokens", "1")
	if h := <-got; h != "Bearer k-1" {
		t.Errorf("Authorization %q, want the key from MY_KEY", h)
	}
}

func TestRecordUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no server", []string{"--prompt", "x"}, "--server URL is required"},
		{"not an HTTP URL", []string{"--server", "ftp://host", "--prompt", "x"}, `got "ftp://host"`},
		{"not an HTTP URL, password not echoed", []string{"--server", "ftp://me:hunter2@host", "--prompt", "x"}, `got "ftp://host"`},
		{"no prompt", []string{"--server", "http://127.0.0.1:1"}, "give one of --prompt"},
		{"two prompts", []string{"--server", "http://127.0.0.1:1", "--prompt", "x", "--chat", "y"}, "give one of --prompt"},
		{"beam search", []string{"--server", "http://127.0.0.1:1", "--prompt", "x", "--num-beams", "2"}, "--num-beams cannot be sent to a server"},
		{"forced tokens need step mode", []string{"--server", "http://127.0.0.1:1", "--prompt", "x", "--force-ids", "3"}, "--force-ids needs --step"},
		{"top-logprobs out of range", []string{"--server", "http://127.0.0.1:1", "--prompt", "x", "--top-logprobs", "0"}, "--top-logprobs must be in 1..1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := tracer(t, "", append([]string{"record"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, exitUsage, tc.want)
			}
		})
	}
}

func TestRecordOverTLS(t *testing.T) {
	stream, err := os.ReadFile(refdata.Need(t, "servers/vllm-completions-stream.txt"))
	if err != nil {
		t.Fatal(err)
	}
	models, err := os.ReadFile(refdata.Need(t, "servers/vllm-models.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write(models)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream)
	}))
	defer srv.Close()
	// The binary trusts the test server's certificate through the system's
	// usual variable, as it would trust a company's CA.
	ca := filepath.Join(t.TempDir(), "ca.pem")
	var pemData bytes.Buffer
	pem.Encode(&pemData, &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemData.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		code int
		want string
	}{
		{"trusted certificate", []string{"SSL_CERT_FILE=" + ca}, exitOK, " Paris, which\n"},
		{"unknown certificate", []string{"SSL_CERT_FILE=" + filepath.Join(t.TempDir(), "none.pem")}, exitError, "TLS certificate is not trusted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := tracerEnv(t, tc.env, "record", "--server", srv.URL, "--prompt", "The capital of France is", "--max-new-tokens", "3")
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
}

// biasProxy forwards requests to a llama.cpp server, adding a logit bias of
// +100 for id to each /completion request whose prompt has promptLen ids
// and no logit_bias of its own.
func biasProxy(t *testing.T, target string, promptLen, id int) string {
	t.Helper()
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every request's body is read whole before it is passed on:
		// streamed through, a body the server is still reading when the
		// proxy starts its answer could cut the answer off (unexpected EOF).
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/completion" {
			var body map[string]any
			json.Unmarshal(data, &body)
			prompt, _ := body["prompt"].([]any)
			if _, ok := body["logit_bias"]; !ok && len(prompt) == promptLen {
				body["logit_bias"] = [][]any{{id, 100}}
			}
			data, _ = json.Marshal(body)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRecordStepChat records a chat in step mode: against llama.cpp's
// server, whose /props gives the chat template, it extends the rendered
// chat token by token and chooses what the server's own chat endpoint
// chooses; a server that does not expose its template gets a clear refusal
// that says to use plain mode.
func TestRecordStepChat(t *testing.T) {
	t.Run("llama.cpp renders with the template from /props", func(t *testing.T) {
		url := remotetest.StartLlamaServer(t)
		args := []string{"record", "--server", url, "--chat", "Tell me a story", "--system", "You are kind", "--max-new-tokens", "12"}
		plain := traceOf(t, args...)
		step := traceOf(t, append(args, "--step")...)
		if step.Model.Source.Mode != "step" || plain.Model.Source.Endpoint != "/v1/chat/completions" {
			t.Fatalf("step mode %q, plain endpoint %q; want step and /v1/chat/completions", step.Model.Source.Mode, plain.Model.Source.Endpoint)
		}
		if !strings.Contains(step.Prompt.Text, "<|im_start|>system\nYou are kind<|im_end|>") || len(step.Prompt.Messages) != 2 {
			t.Errorf("step mode's prompt %q with %d messages, want the chat rendered by the server's template and both messages", step.Prompt.Text, len(step.Prompt.Messages))
		}
		if step.Output.NewText != plain.Output.NewText || step.Output.NewText == "" {
			t.Errorf("step mode wrote %q, the server's chat endpoint %q; want the same", step.Output.NewText, plain.Output.NewText)
		}
	})
	t.Run("a server without /props is refused", func(t *testing.T) {
		fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"object":"list","data":[{"id":"m","owned_by":"vllm"}]}`)
		}))
		defer fake.Close()
		_, errOut, code := tracer(t, "", "record", "--server", fake.URL, "--chat", "hi", "--step", "--max-new-tokens", "2")
		if code != exitError || !strings.Contains(errOut, "does not expose it") || !strings.Contains(errOut, "record the chat in plain mode (without --step)") {
			t.Errorf("got exit %d, stderr %q; want %d saying the server does not expose its template and to use plain mode", code, errOut, exitError)
		}
	})
}

// TestRecordStaysReadable: a server whose answer would make a trace larger
// than validate and export read (64 MiB) is recorded up to the budget (half
// of that, by estimate): the partial trace written is one tracer reads
// again, and the command says why it stopped.
func TestRecordStaysReadable(t *testing.T) {
	models := `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`
	url := fakeServer(t, models, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		long := strings.Repeat("y", 1000)
		for i := range 3000 {
			top := map[string]float64{}
			for k := range 20 {
				top[fmt.Sprintf("%d-%d%s", i, k, long)[:1000]] = -0.1 - float64(k)
			}
			tok := fmt.Sprintf("%d-0%s", i, long)[:1000]
			chunk, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"text": tok, "logprobs": map[string]any{
				"tokens": []string{tok}, "token_logprobs": []float64{-0.1}, "top_logprobs": []any{top},
			}, "finish_reason": nil}}})
			if _, err := fmt.Fprintf(w, "data: %s\n\n", chunk); err != nil {
				return // the client stopped reading
			}
		}
	})
	out := filepath.Join(t.TempDir(), "big.json")
	_, errOut, code := tracer(t, "", "record", "--server", url, "--prompt", "x", "--max-new-tokens", "3000", "--out", out)
	if code != exitError || !strings.Contains(errOut, "budget") {
		t.Fatalf("exit %d, stderr %.400q; want the recording stopped at its budget", code, errOut)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > trace.DefaultMaxSize {
		t.Errorf("the partial trace is %d bytes, more than validate reads (%d)", fi.Size(), trace.DefaultMaxSize)
	}
	if _, errOut, code := tracer(t, "", "validate", out); code != 0 {
		t.Errorf("tracer validate of the partial trace: exit %d, %s", code, errOut)
	}
}
