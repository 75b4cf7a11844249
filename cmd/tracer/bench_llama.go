package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"tracer/engine/remote"
)

// llamaServer is llama.cpp's HTTP server measured beside tracer by tracer
// bench --against-llama-server (a bench.Peer): started on loopback with
// the same GGUF file and thread count, asked for greedy completions of the
// bench's prompt ids without its prompt cache, its own timings read back
// (llama-bench is what llama.cpp measures with; its server's timings are
// the same engine's, a few µs of HTTP and sampling a token aside).
type llamaServer struct {
	*remote.LlamaServer
	name    string
	client  *http.Client
	timeout time.Duration // of one completion
}

// llamaReady bounds the wait for the server to load the model and listen.
const llamaReady = 2 * time.Minute

// startLlamaServer starts bin (llama-server) on model with threads
// threads for decode and prompt alike and a context of ctxLen positions,
// and waits until it listens.
func startLlamaServer(ctx context.Context, bin, model string, threads, ctxLen int) (*llamaServer, error) {
	t := strconv.Itoa(threads)
	ls, err := remote.StartLlamaServer(ctx, bin, llamaReady, "-m", model, "-t", t, "-tb", t, "-c", strconv.Itoa(ctxLen), "-np", "1", "--host", "127.0.0.1", "--port", "0")
	if err != nil {
		return nil, fmt.Errorf("--against-llama-server: %w", err)
	}
	s := &llamaServer{LlamaServer: ls, name: "llama-server", client: &http.Client{}, timeout: 10 * time.Minute}
	if build := s.build(ctx); build != "" {
		s.name += " " + build
	}
	return s, nil
}

// build asks the server's /props for its build ("b4748-c392e509"), or "".
func (s *llamaServer) build(ctx context.Context) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/props", nil)
	if err != nil {
		return ""
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var p struct {
		BuildInfo string `json:"build_info"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&p) != nil {
		return ""
	}
	return p.BuildInfo
}

// Name is the server and its build.
func (s *llamaServer) Name() string { return s.name }

// llamaTimings is the part of /completion's answer bench reads.
type llamaTimings struct {
	Timings struct {
		PromptN     int     `json:"prompt_n"`
		PromptMS    float64 `json:"prompt_ms"`
		PredictedN  int     `json:"predicted_n"`
		PredictedMS float64 `json:"predicted_ms"`
	} `json:"timings"`
}

// Generate asks for a greedy completion of prompt (token ids), newTokens
// tokens past any end of sequence, the prompt cache off so that every
// request feeds the whole prompt, and returns the server's own prefill and
// decode rates.
func (s *llamaServer) Generate(ctx context.Context, prompt []int, newTokens int) (prefill, decode float64, err error) {
	body, err := json.Marshal(map[string]any{
		"prompt": prompt, "n_predict": newTokens, "temperature": 0, "top_k": 1,
		"ignore_eos": true, "cache_prompt": false,
	})
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/completion", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("completion: %w\n%s", err, s.LogTail())
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("completion: %s: %.500s", resp.Status, raw)
	}
	var t llamaTimings
	if err := json.Unmarshal(raw, &t); err != nil {
		return 0, 0, fmt.Errorf("completion: %w in %.200q", err, raw)
	}
	tm := t.Timings
	switch {
	case tm.PromptN != len(prompt):
		return 0, 0, fmt.Errorf("it evaluated %d of the prompt's %d tokens (a prompt cache?): the rates would not compare", tm.PromptN, len(prompt))
	case tm.PredictedN < 2 || tm.PromptMS <= 0 || tm.PredictedMS <= 0:
		return 0, 0, errors.New("its answer holds no timings (prompt_ms, predicted_n, predicted_ms)")
	}
	return float64(tm.PromptN) / (tm.PromptMS / 1e3), float64(tm.PredictedN) / (tm.PredictedMS / 1e3), nil
}
