package remote

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// token is one generated token as a server reports it.
type token struct {
	ID      int    // -1 when the server gives no ids
	Text    string // as the server writes it
	Bytes   []int  // nil when the server does not give them
	Logprob float64
	// Processed: Logprob is the log of a probability after the server's
	// sampling processors (llama.cpp's post_sampling_probs).
	Processed bool
	Top       []alt // by descending probability
}

// alt is one alternative at a step.
type alt struct {
	ID      int
	Text    string
	Bytes   []int
	Logprob float64
}

// chatEntry is one entry of the chat shape (choices[].logprobs.content[]),
// which llama.cpp also uses for /v1/completions and for its native
// completion_probabilities. With post_sampling_probs llama.cpp writes prob
// and top_probs instead of logprob and top_logprobs.
type chatEntry struct {
	ID          *int        `json:"id"`
	Token       string      `json:"token"`
	Bytes       []int       `json:"bytes"`
	Logprob     *float64    `json:"logprob"`
	Prob        *float64    `json:"prob"`
	TopLogprobs []chatEntry `json:"top_logprobs"`
	TopProbs    []chatEntry `json:"top_probs"`
}

// legacyLogprobs is OpenAI's legacy completions shape (vLLM, SGLang).
type legacyLogprobs struct {
	Tokens        []string              `json:"tokens"`
	TokenLogprobs []*float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]*float64 `json:"top_logprobs"`
}

// parseLogprobs reads a choice's logprobs object in either shape: the chat
// shape {"content": [...]} (llama.cpp answers /v1/completions this way) or
// the legacy {"tokens", "token_logprobs", "top_logprobs"}. null gives no
// tokens.
func parseLogprobs(raw json.RawMessage) ([]token, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var probe struct {
		Content *[]chatEntry `json:"content"`
		legacyLogprobs
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("logprobs: %v: %w", err, ErrBadAnswer)
	}
	if probe.Content != nil {
		return fromChat(*probe.Content)
	}
	return fromLegacy(probe.legacyLogprobs)
}

// checkTokenSize refuses a token longer than any vocabulary's: a hostile
// or broken server must not make one token cost megabytes.
func checkTokenSize(text string, bytes []int) error {
	if len(text) > maxTokenBytes || len(bytes) > maxTokenBytes {
		return fmt.Errorf("a token of %d bytes (%d listed), more than %d: %w", len(text), len(bytes), maxTokenBytes, ErrBadAnswer)
	}
	return nil
}

// fromChat converts chat-shape entries.
func fromChat(entries []chatEntry) ([]token, error) {
	out := make([]token, 0, len(entries))
	for i, e := range entries {
		lp, processed, err := e.logprob()
		if err != nil {
			return nil, fmt.Errorf("logprobs entry %d (%q): %w", i, e.Token, err)
		}
		if err := checkTokenSize(e.Token, e.Bytes); err != nil {
			return nil, fmt.Errorf("logprobs entry %d: %w", i, err)
		}
		t := token{ID: idOf(e.ID, e.Token), Text: textOf(e.Token), Bytes: e.Bytes, Logprob: lp, Processed: processed}
		top := e.TopLogprobs
		if top == nil {
			top = e.TopProbs
		}
		if len(top) > maxTopLogits {
			return nil, fmt.Errorf("logprobs entry %d has %d alternatives, more than %d: %w", i, len(top), maxTopLogits, ErrBadAnswer)
		}
		for j, a := range top {
			alp, _, err := a.logprob()
			if err != nil {
				return nil, fmt.Errorf("logprobs entry %d, alternative %d (%q): %w", i, j, a.Token, err)
			}
			if err := checkTokenSize(a.Token, a.Bytes); err != nil {
				return nil, fmt.Errorf("logprobs entry %d, alternative %d: %w", i, j, err)
			}
			t.Top = append(t.Top, alt{ID: idOf(a.ID, a.Token), Text: textOf(a.Token), Bytes: a.Bytes, Logprob: alp})
		}
		sortAlts(t.Top)
		out = append(out, t)
	}
	return out, nil
}

// logprob returns an entry's log-probability, from logprob or from
// llama.cpp's post-sampling prob.
func (e chatEntry) logprob() (float64, bool, error) {
	switch {
	case e.Logprob != nil:
		if math.IsNaN(*e.Logprob) || *e.Logprob > 1e-6 {
			return 0, false, fmt.Errorf("log-probability %v is not <= 0: %w", *e.Logprob, ErrBadAnswer)
		}
		return math.Min(*e.Logprob, 0), false, nil
	case e.Prob != nil:
		if math.IsNaN(*e.Prob) || *e.Prob < 0 || *e.Prob > 1+1e-6 {
			return 0, true, fmt.Errorf("probability %v is outside [0, 1]: %w", *e.Prob, ErrBadAnswer)
		}
		return math.Log(math.Min(*e.Prob, 1)), true, nil
	}
	return 0, false, fmt.Errorf("no logprob: %w", ErrNoLogprobs)
}

// fromLegacy converts the legacy shape, whose alternatives are a map from
// token text to log-probability.
func fromLegacy(l legacyLogprobs) ([]token, error) {
	if len(l.TokenLogprobs) != len(l.Tokens) || (l.TopLogprobs != nil && len(l.TopLogprobs) != len(l.Tokens)) {
		return nil, fmt.Errorf("logprobs: %d tokens but %d token_logprobs and %d top_logprobs: %w", len(l.Tokens), len(l.TokenLogprobs), len(l.TopLogprobs), ErrBadAnswer)
	}
	out := make([]token, 0, len(l.Tokens))
	for i, tok := range l.Tokens {
		lp := l.TokenLogprobs[i]
		if lp == nil {
			return nil, fmt.Errorf("logprobs: token %d (%q) has no log-probability: %w", i, tok, ErrNoLogprobs)
		}
		if err := checkTokenSize(tok, nil); err != nil {
			return nil, fmt.Errorf("logprobs token %d: %w", i, err)
		}
		t := token{ID: idOf(nil, tok), Text: textOf(tok), Logprob: math.Min(*lp, 0)}
		if l.TopLogprobs != nil {
			if len(l.TopLogprobs[i]) > maxTopLogits {
				return nil, fmt.Errorf("logprobs: token %d has %d alternatives, more than %d: %w", i, len(l.TopLogprobs[i]), maxTopLogits, ErrBadAnswer)
			}
			for text, v := range l.TopLogprobs[i] {
				if v == nil || math.IsNaN(*v) {
					continue
				}
				t.Top = append(t.Top, alt{ID: idOf(nil, text), Text: textOf(text), Logprob: math.Min(*v, 0)})
			}
		}
		sortAlts(t.Top)
		out = append(out, t)
	}
	return out, nil
}

// idOf returns a token's id: the given one, or the N of vLLM's
// "token_id:N" (return_tokens_as_token_ids), or -1.
func idOf(id *int, text string) int {
	if id != nil && *id >= 0 {
		return *id
	}
	if rest, ok := strings.CutPrefix(text, "token_id:"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
			return n
		}
	}
	return -1
}

// textOf returns a token's text: empty for vLLM's "token_id:N", whose text
// the server did not give.
func textOf(text string) string {
	if rest, ok := strings.CutPrefix(text, "token_id:"); ok {
		if _, err := strconv.Atoi(rest); err == nil {
			return ""
		}
	}
	return text
}

// sortAlts orders alternatives by descending probability, ties by id then
// text, so a map's order never shows.
func sortAlts(a []alt) {
	sort.SliceStable(a, func(i, j int) bool {
		if a[i].Logprob != a[j].Logprob {
			return a[i].Logprob > a[j].Logprob
		}
		if a[i].ID != a[j].ID {
			return a[i].ID < a[j].ID
		}
		return a[i].Text < a[j].Text
	})
}
