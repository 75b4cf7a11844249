package trace

import (
	"bytes"
	"encoding/json"
	"math"
)

// SourceServer is Source.Kind for a model reached through a serving engine's
// HTTP API (llama.cpp's server, vLLM, SGLang, Ollama, any OpenAI-compatible
// server).
const SourceServer = "server"

// What a serving engine's probabilities are (Source.Probs).
const (
	ProbsRaw       = "raw"       // softmax of the raw logits, before any processor
	ProbsProcessed = "processed" // after the server's sampling processors
	ProbsUnknown   = "unknown"   // the server does not say
)

// What a step is missing (ServerStep.Missing).
const (
	// MissingUTF8: the server left out the probabilities of a token after
	// which the generated text ended inside a UTF-8 sequence (llama.cpp).
	MissingUTF8 = "utf8"
	// MissingStream: the stream ended before the server sent them.
	MissingStream = "stream"
)

// Source describes a model whose steps came from a serving engine rather
// than from tracer's own engine. A server answers with the log-probabilities
// of the chosen token and of its top alternatives, so such a trace has
// candidates with a probability but no logit, and nothing about the
// processors, the KV cache or memory traffic: Unknown lists what the server
// cannot tell.
type Source struct {
	Kind        string `json:"kind"`         // SourceServer
	URL         string `json:"url"`          // the server's base URL, without credentials
	Engine      string `json:"engine"`       // "llama.cpp", "vllm", "sglang", "ollama" or "openai" (any other)
	ServerModel string `json:"server_model"` // the model name the server knows it by
	Endpoint    string `json:"endpoint"`     // the path requested, e.g. "/v1/completions"
	Mode        string `json:"mode"`         // "plain" (one completion) or "step" (one request per token)
	TopLogprobs int    `json:"top_logprobs"` // alternatives asked for per step
	Probs       string `json:"probs"`        // ProbsRaw, ProbsProcessed or ProbsUnknown
	TokenIDs    bool   `json:"token_ids"`    // whether the server gave token ids; if not, ids are -1

	// Unknown lists what the server cannot tell, e.g. "logits",
	// "distribution_beyond_top", "stages", "kv_cache", "traffic", "entropy".
	Unknown []string `json:"unknown"`

	// Incomplete says why the trace ends early (a stream cut in the
	// middle); empty for a complete answer.
	Incomplete string `json:"incomplete,omitempty"`
}

// ServerStep notes what a serving engine left out of one step.
type ServerStep struct {
	Missing string `json:"missing,omitempty"` // MissingUTF8 or MissingStream: no candidates were given
	Filled  bool   `json:"filled,omitempty"`  // the candidates came from a second request (step mode)
}

// MarshalJSON writes a Candidate, its logit as a float32 and its
// probability at its precision (float.go), a NaN or infinite logit
// (unknown, as for a server's candidates) as null.
// The fields keep Candidate's order; TestCandidateJSONHasEveryField checks
// that none is left out.
func (c Candidate) MarshalJSON() ([]byte, error) {
	p, err := appendProb(nil, c.Prob)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		ID    int             `json:"id"`
		Token string          `json:"token"`
		Logit json.RawMessage `json:"logit"`
		Prob  json.RawMessage `json:"prob"`
		Bytes []int           `json:"bytes,omitempty"`
	}{c.ID, c.Token, appendFloat32(nil, c.Logit), p, c.Bytes})
}

// UnmarshalJSON reads a Candidate; a null logit reads as NaN (unknown).
func (c *Candidate) UnmarshalJSON(data []byte) error {
	type plain Candidate
	var v struct {
		plain
		Logit json.RawMessage `json:"logit"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*c = Candidate(v.plain)
	switch {
	case len(v.Logit) == 0:
	case bytes.Equal(bytes.TrimSpace(v.Logit), []byte("null")):
		c.Logit = float32(math.NaN())
	default:
		return json.Unmarshal(v.Logit, &c.Logit)
	}
	return nil
}

// validate checks a Source's enumerated fields; a nil Source is tracer's own
// engine and always valid.
func (s *Source) validate(bad badFunc) error {
	if s == nil {
		return nil
	}
	if s.Kind != SourceServer {
		return bad("model.source.kind is %q: want %q", s.Kind, SourceServer)
	}
	switch s.Probs {
	case ProbsRaw, ProbsProcessed, ProbsUnknown:
	default:
		return bad("model.source.probs is %q: want raw, processed or unknown", s.Probs)
	}
	if s.Mode != "plain" && s.Mode != "step" {
		return bad("model.source.mode is %q: want plain or step", s.Mode)
	}
	return nil
}
