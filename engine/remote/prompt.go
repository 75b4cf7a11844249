package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxPromptShown is how many prompt tokens the prompt_logprobs notice
// lists; the rest are summed up.
const maxPromptShown = 64

// promptToken is one prompt position as vLLM's prompt_logprobs scores it:
// the prompt's own token there, its log-probability given the tokens
// before it, and its rank among the vocabulary (0 when not given).
type promptToken struct {
	ID      int
	Text    string
	Logprob float64
	Rank    int
}

// parsePromptLogprobs reads vLLM's prompt_logprobs: a list with one entry
// per prompt position, null for the first (nothing comes before it), else
// an object from token id to {logprob, rank, decoded_token} that lists the
// prompt's own token first, then the top alternatives. JSON objects keep
// their order on the wire, so the first key is read as the prompt token.
// null or absent gives nil.
func parsePromptLogprobs(raw json.RawMessage) ([]*promptToken, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("prompt_logprobs: %v: %w", err, ErrBadAnswer)
	}
	out := make([]*promptToken, len(entries))
	for i, e := range entries {
		if len(e) == 0 || string(e) == "null" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(e))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, fmt.Errorf("prompt_logprobs entry %d: want an object of token ids: %w", i, ErrBadAnswer)
		}
		if !dec.More() {
			continue // an empty object: nothing scored here
		}
		key, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("prompt_logprobs entry %d: %v: %w", i, err, ErrBadAnswer)
		}
		ks, _ := key.(string)
		id, err := strconv.Atoi(ks)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("prompt_logprobs entry %d: key %q is not a token id: %w", i, ks, ErrBadAnswer)
		}
		var lp struct {
			Logprob *float64 `json:"logprob"`
			Rank    *int     `json:"rank"`
			Decoded *string  `json:"decoded_token"`
		}
		if err := dec.Decode(&lp); err != nil {
			return nil, fmt.Errorf("prompt_logprobs entry %d: %v: %w", i, err, ErrBadAnswer)
		}
		if lp.Logprob == nil || math.IsNaN(*lp.Logprob) || *lp.Logprob > 1e-6 {
			return nil, fmt.Errorf("prompt_logprobs entry %d: token %d has no log-probability <= 0: %w", i, id, ErrBadAnswer)
		}
		p := &promptToken{ID: id, Logprob: math.Min(*lp.Logprob, 0)}
		if lp.Rank != nil && *lp.Rank > 0 {
			p.Rank = *lp.Rank
		}
		if lp.Decoded != nil {
			p.Text = textOf(*lp.Decoded)
		}
		out[i] = p
	}
	return out, nil
}

// notePrompt records vLLM's prompt log-probabilities, once, as a notice
// listing each prompt token's probability (the trace has no field of its
// own for them), and notes a prompt id that disagrees with the trace's.
func (r *recorder) notePrompt(prompt []*promptToken) {
	if prompt == nil || r.sawPrompt {
		return
	}
	r.sawPrompt = true
	var parts []string
	scored := 0
	var sum float64
	for i, p := range prompt {
		if p == nil {
			continue
		}
		scored++
		sum += p.Logprob
		if len(parts) >= maxPromptShown {
			continue
		}
		text := p.Text
		if text == "" {
			text = "#" + strconv.Itoa(p.ID)
		}
		part := fmt.Sprintf("%d %q %.4g", i, text, math.Exp(p.Logprob))
		if p.Rank > 0 {
			part += fmt.Sprintf(" (rank %d)", p.Rank)
		}
		parts = append(parts, part)
	}
	if scored == 0 {
		return
	}
	if ids := r.t.Prompt.IDs; len(ids) == len(prompt) {
		for i, p := range prompt {
			if p != nil && p.ID != ids[i] {
				r.t.Notices = append(r.t.Notices, fmt.Sprintf("vLLM's prompt_logprobs name token %d at prompt position %d, the prompt has %d there: its scores may be for another tokenization", p.ID, i, ids[i]))
				break
			}
		}
	}
	more := ""
	if scored > len(parts) {
		more = fmt.Sprintf("; and %d more", scored-len(parts))
	}
	r.t.Notices = append(r.t.Notices, fmt.Sprintf(
		"prompt log-probabilities (vLLM prompt_logprobs): how likely the model found each prompt token after those before it, by position: %s%s; mean log-probability %.4g over %d tokens (perplexity %.4g)",
		strings.Join(parts, ", "), more, sum/float64(scored), scored, math.Exp(-sum/float64(scored))))
}
