package remote

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"tracer/trace"
)

// answerTransport answers /v1/models with one model of an engine and every
// other request with a fixed body, without a network.
type answerTransport struct {
	models, body, contentType string
}

func (a answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, ct := a.body, a.contentType
	if r.URL.Path == "/v1/models" {
		body, ct = a.models, "application/json"
	}
	return &http.Response{
		StatusCode: 200, Header: http.Header{"Content-Type": {ct}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r,
	}, nil
}

// FuzzRecordAnswer feeds arbitrary server answers (streamed or whole, to
// any engine, in plain or step mode) to Record. Property: no panic, no
// hang, bounded memory, and either an error or a trace that passes
// trace.Validate and round-trips through trace.Read, with no more steps than
// asked for.
func FuzzRecordAnswer(f *testing.F) {
	for _, name := range []string{"vllm-completions-stream.txt", "vllm-completions-ids.json", "vllm-chat-stream.txt",
		"sglang-completions.json", "sglang-chat.json", "ollama-chat-stream.txt", "llamacpp-v1-completions.json", "llamacpp-completion-stream.txt", "vllm-completions-prompt-logprobs.json"} {
		data := fixture(f, name)
		for engine := uint8(0); engine < 3; engine++ {
			f.Add(data, strings.HasSuffix(name, ".txt"), engine, false, uint8(255))
		}
		f.Add(data, false, uint8(0), true, uint8(0))
	}
	f.Add([]byte(`{"content":"","tokens":[200],"completion_probabilities":[],"stop":true,"stop_type":"limit"}`), false, uint8(0), true, uint8(1))
	f.Add([]byte("data: {\"choices\":[{\"text\":\" a\",\"logprobs\":{\"tokens\":[\" a\"],\"token_logprobs\":[-0.1],\"top_logprobs\":[{\" a\":-0.1}]}}]}\n\ndata: {\"choices\":[{\"te"), true, uint8(1), false, uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, stream bool, engine uint8, step bool, budget uint8) {
		owners := []string{"llamacpp", "vllm", "library"}
		vocab := []int{512, 0, 0}
		e := int(engine) % len(owners)
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		c, err := Dial(context.Background(), Config{URL: "http://server.test", HTTP: &http.Client{Transport: answerTransport{
			models: models("m", owners[e], vocab[e]), body: string(body), contentType: ct,
		}}})
		if err != nil {
			t.Fatal(err)
		}
		// The recording's budget, 1 to 256 KiB: what it writes stays near it.
		maxBytes := int64(budget) + 1<<10
		req := Request{IDs: []int{1, 2}, Options: greedy(3), Step: step, TopLogprobs: 5, MaxBytes: maxBytes}
		tr, err := c.Record(context.Background(), req)
		if tr == nil {
			if err == nil {
				t.Fatal("no trace and no error")
			}
			return
		}
		if len(tr.Steps) > 3 {
			t.Errorf("%d steps, more than the 3 asked for", len(tr.Steps))
		}
		if verr := tr.Validate(); verr != nil {
			t.Fatalf("invalid trace: %v", verr)
		}
		var buf bytes.Buffer
		if err := trace.Write(&buf, tr); err != nil {
			t.Fatal(err)
		}
		if size := int64(buf.Len()); size > 2*maxBytes+16<<10 {
			t.Errorf("a recording with a budget of %d bytes wrote %d", maxBytes, size)
		}
		if _, err := trace.Read(&buf, 0); err != nil {
			t.Fatalf("the trace does not read back: %v", err)
		}
	})
}
