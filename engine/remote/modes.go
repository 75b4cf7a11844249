package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"tracer/trace"
)

// body returns a request's fields: the prompt, the sampling options the
// API has, and how many alternatives to return. seedOffset is added to the
// seed (step mode: the step index).
func (r *recorder) body(prompt any, maxTokens int, seedOffset uint64, stream bool) map[string]any {
	c, o := r.c, r.req.Options
	b := map[string]any{"stream": stream}
	native := r.t.Model.Source.Endpoint == "/completion"
	chat := r.t.Model.Source.Endpoint == "/v1/chat/completions"
	switch {
	case native:
		b["prompt"], b["n_predict"], b["n_probs"] = prompt, maxTokens, r.req.TopLogprobs
		b["return_tokens"], b["post_sampling_probs"], b["cache_prompt"] = true, false, true
	case chat:
		b["model"], b["messages"], b["max_tokens"] = c.Model, r.req.Messages, maxTokens
		b["logprobs"], b["top_logprobs"] = true, r.req.TopLogprobs
	default:
		b["model"], b["prompt"], b["max_tokens"], b["logprobs"] = c.Model, prompt, maxTokens, r.req.TopLogprobs
		if c.Engine == EngineVLLM && seedOffset == 0 {
			// vLLM also scores the prompt: each prompt token's
			// log-probability after those before it (first request only).
			b["prompt_logprobs"] = r.req.TopLogprobs
		}
		if c.Engine == EngineVLLM && r.req.Step && r.idsOK {
			// Tokens come back as "token_id:N": step mode can then go on in
			// ids (their text is not given).
			b["return_tokens_as_token_ids"] = true
		}
	}
	if stream && !native && c.Engine != EngineOllama {
		b["stream_options"] = map[string]any{"include_usage": true}
	}
	// Stop strings are checked here, not sent: servers cut the stop string
	// (and the token holding it) from their answer, transformers keeps it.
	if !o.DoSample {
		b["temperature"] = 0
		return b
	}
	b["temperature"], b["top_p"], b["seed"] = o.Temperature, o.TopP, o.Seed+seedOffset
	switch c.Engine {
	case EngineLlamaCpp:
		b["top_k"], b["min_p"], b["repeat_penalty"], b["repeat_last_n"] = o.TopK, o.MinP, o.RepetitionPenalty, -1
	case EngineVLLM, EngineSGLang:
		b["top_k"], b["min_p"], b["repetition_penalty"] = o.TopK, o.MinP, o.RepetitionPenalty
		if o.TopK == 0 {
			b["top_k"] = -1 // off, in both engines
		}
	}
	return b
}

// chunk is what one answer (or one streamed event) holds.
type chunk struct {
	tokens    []token
	ids       []int          // llama.cpp's return_tokens: every generated id, even those without probabilities
	predicted int            // llama.cpp's tokens_predicted: tokens generated so far, sent or not; -1 if absent
	text      string         // new text
	finish    string         // finish_reason or stop_type; empty while unfinished
	byStop    bool           // the server stopped at a stop string
	errText   string         // an error event in the stream
	prompt    []*promptToken // vLLM's prompt_logprobs; nil when absent
}

// parseChunk reads one answer in any of the three shapes: llama.cpp's
// native /completion, OpenAI's completions and chat completions.
func parseChunk(data []byte) (chunk, error) {
	var raw struct {
		Content   *string         `json:"content"`
		Tokens    []int           `json:"tokens"`
		Predicted *int            `json:"tokens_predicted"`
		Stop      bool            `json:"stop"`
		StopType  string          `json:"stop_type"`
		Probs     json.RawMessage `json:"completion_probabilities"`
		Choices   []struct {
			Text         string                    `json:"text"`
			Delta        *struct{ Content string } `json:"delta"`
			Message      *struct{ Content string } `json:"message"`
			Logprobs     json.RawMessage           `json:"logprobs"`
			FinishReason *string                   `json:"finish_reason"`
			StopReason   json.RawMessage           `json:"stop_reason"`     // vLLM: the stop string or token id, null for EOS
			MatchedStop  json.RawMessage           `json:"matched_stop"`    // SGLang: the same
			PromptLogs   json.RawMessage           `json:"prompt_logprobs"` // vLLM: per prompt position, the prompt token first
		} `json:"choices"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return chunk{}, fmt.Errorf("%v: %w", err, ErrBadAnswer)
	}
	ch := chunk{predicted: -1}
	if raw.Predicted != nil && *raw.Predicted >= 0 {
		ch.predicted = *raw.Predicted
	}
	if len(raw.Error) > 0 && string(raw.Error) != "null" {
		ch.errText = string(raw.Error)
		return ch, nil
	}
	if raw.Content != nil && raw.Choices == nil {
		ch.text, ch.ids = *raw.Content, raw.Tokens
		if raw.Stop {
			ch.finish = raw.StopType
			if ch.finish == "" || ch.finish == "none" {
				ch.finish = "stop"
			}
			ch.byStop = raw.StopType == "word"
		}
		var err error
		if len(raw.Probs) > 0 && string(raw.Probs) != "null" {
			var entries []chatEntry
			if err = json.Unmarshal(raw.Probs, &entries); err != nil {
				return chunk{}, fmt.Errorf("completion_probabilities: %v: %w", err, ErrBadAnswer)
			}
			ch.tokens, err = fromChat(entries)
		}
		return ch, err
	}
	for _, c := range raw.Choices {
		switch {
		case c.Delta != nil:
			ch.text += c.Delta.Content
		case c.Message != nil:
			ch.text += c.Message.Content
		default:
			ch.text += c.Text
		}
		toks, err := parseLogprobs(c.Logprobs)
		if err != nil {
			return chunk{}, err
		}
		ch.tokens = append(ch.tokens, toks...)
		if ch.prompt, err = parsePromptLogprobs(c.PromptLogs); err != nil {
			return chunk{}, err
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			ch.finish = *c.FinishReason
			for _, s := range []json.RawMessage{c.StopReason, c.MatchedStop} {
				var str string
				if json.Unmarshal(s, &str) == nil && str != "" {
					ch.byStop = true
				}
			}
		}
		break // one choice: n is 1
	}
	return ch, nil
}

// slot is one generated token of an answer: with its probabilities, or
// missing them.
type slot struct {
	tok     *token
	id      int
	text    string
	missing string
}

// align lines up an answer's tokens with the ids the server generated.
// llama.cpp leaves out the probabilities of a token after which the text
// ends inside a UTF-8 sequence: a whole answer still lists its id in
// tokens, and a stream skips it but counts it in tokens_predicted, so such
// a step is kept, marked, with its id when known (else -1).
func (r *recorder) align(ch chunk) []slot {
	var out []slot
	if len(ch.ids) > len(ch.tokens) {
		j := 0
		for _, id := range ch.ids {
			if j < len(ch.tokens) && ch.tokens[j].ID == id {
				out = append(out, slot{tok: &ch.tokens[j], id: id, text: ch.tokens[j].Text})
				j++
				continue
			}
			out = append(out, slot{id: id, missing: trace.MissingUTF8})
		}
		for ; j < len(ch.tokens); j++ {
			out = append(out, slot{tok: &ch.tokens[j], id: ch.tokens[j].ID, text: ch.tokens[j].Text})
		}
		return out
	}
	for n := ch.predicted - len(r.t.Steps) - len(ch.tokens); n > 0; n-- {
		out = append(out, slot{id: -1, missing: trace.MissingUTF8})
	}
	for j := range ch.tokens {
		out = append(out, slot{tok: &ch.tokens[j], id: ch.tokens[j].ID, text: ch.tokens[j].Text})
	}
	return out
}

// errStopped ends reading a stream at a stop string.
var errStopped = errors.New("stopped at a stop string")

// plain asks for one streamed completion and records each token.
func (r *recorder) plain(ctx context.Context) error {
	var prompt any = r.req.Text
	if len(r.t.Prompt.IDs) > 0 {
		prompt = r.t.Prompt.IDs
	}
	resp, err := r.c.send(ctx, "POST", r.t.Model.Source.Endpoint, r.body(prompt, r.req.Options.MaxNewTokens, 0, true))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sawText, done := false, false
	last := time.Now()
	events := readEvents
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		// The server answered in one piece, as some do to stream: true.
		events = readWhole
	}
	err = events(resp.Body, func(data []byte) error {
		if string(data) == "[DONE]" {
			done = true
			return nil
		}
		ch, err := parseChunk(data)
		if err != nil {
			return err
		}
		if ch.errText != "" {
			return fmt.Errorf("the server reported an error mid-stream: %s", ch.errText)
		}
		r.notePrompt(ch.prompt)
		if n := max(len(r.t.Steps)+max(len(ch.tokens), len(ch.ids)), ch.predicted); n > r.req.Options.MaxNewTokens {
			return fmt.Errorf("the server sent %d tokens, more than the %d asked for: %w", n, r.req.Options.MaxNewTokens, ErrBadAnswer)
		}
		for _, s := range r.align(ch) {
			if err := r.addStep(s.tok, s.id, s.text, false, s.missing, false); err != nil {
				return err
			}
			r.elapsed(last)
			last = time.Now()
			if r.stopString() {
				r.t.Output.StopReason = trace.StopString
				return errStopped
			}
		}
		if ch.text != "" && len(ch.tokens) == 0 && len(ch.ids) == 0 {
			sawText = true
		}
		if ch.finish != "" {
			r.t.Output.StopReason = r.stopFor(ch.finish, ch.byStop)
			if r.t.Output.StopReason == trace.StopEOS && len(r.t.Steps) > 0 {
				r.noteEOS(r.t.Steps[len(r.t.Steps)-1].Rows[0].Chosen.ID)
			}
			done = true // llama.cpp's native stream has no [DONE]; others may send usage after this
		}
		return nil
	})
	if errors.Is(err, errStopped) {
		return nil // closing the body ends the server's generation
	}
	if ctx.Err() != nil {
		return r.cut("cancelled")
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		if errors.Is(err, ErrBadAnswer) || errors.Is(err, ErrNoLogprobs) {
			return fmt.Errorf("remote: %s: %w", r.t.Model.Source.Endpoint, err)
		}
		return r.cut(err.Error())
	}
	if len(r.t.Steps) == 0 && sawText {
		return fmt.Errorf("remote: %s answered text but no log-probabilities (logprobs=%d was sent): %w; this server or model cannot be recorded", r.t.Model.Source.Endpoint, r.req.TopLogprobs, ErrNoLogprobs)
	}
	if !done || r.t.Output.StopReason == "" {
		return r.cut("the stream ended without a finish reason")
	}
	return nil
}

// noteEOS remembers an id the server stopped at as an EOS id.
func (r *recorder) noteEOS(id int) {
	if id >= 0 && !slices.Contains(r.eos, id) {
		r.eos = append(r.eos, id)
	}
}

// readWhole calls f once with a whole JSON answer of at most maxBody bytes.
func readWhole(body io.Reader, f func([]byte) error) error {
	data, err := io.ReadAll(io.LimitReader(body, maxBody+1))
	if err != nil {
		return err
	}
	if len(data) > maxBody {
		return fmt.Errorf("the answer is larger than %d MiB: %w", maxBody>>20, ErrBadAnswer)
	}
	return f(data)
}

// readEvents calls f with the data of each server-sent event ("data: ..."
// lines), up to maxEvent bytes a line. A body that ends mid-line returns
// io.ErrUnexpectedEOF.
func readEvents(body io.Reader, f func([]byte) error) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxEvent)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if atEOF && len(data) > 0 && bytes.IndexByte(data, '\n') < 0 {
			return 0, nil, io.ErrUnexpectedEOF // the body ends mid-line
		}
		return bufio.ScanLines(data, atEOF)
	})
	for sc.Scan() {
		line := sc.Bytes()
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			if len(bytes.TrimSpace(line)) > 0 && line[0] == '{' {
				data = line // a server that streams bare JSON lines (Ollama's native API)
			} else {
				continue
			}
		}
		if err := f(bytes.TrimSpace(data)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("an event is longer than %d MiB: %w", maxEvent>>20, ErrBadAnswer)
		}
		return err
	}
	return nil
}

// steps asks for one token per request, appending each chosen (or forced)
// token to the prompt: as ids where they are known, as text otherwise.
func (r *recorder) steps(ctx context.Context) error {
	o := r.req.Options
	if len(o.ForceIDs) > 0 && !r.idsOK {
		return fmt.Errorf("remote: %w", ErrNeedsIDs)
	}
	for i := 0; i < o.MaxNewTokens; i++ {
		if ctx.Err() != nil {
			return r.cut("cancelled")
		}
		start := time.Now()
		ch, err := r.ask(ctx, i, nil)
		if err != nil {
			if len(r.t.Steps) > 0 {
				return r.cut(err.Error())
			}
			return err
		}
		var tok *token
		chosenID, chosenText := -1, ch.text
		if len(ch.ids) > 0 {
			chosenID = ch.ids[0]
		}
		if len(ch.tokens) > 0 {
			tok = &ch.tokens[0]
			chosenID, chosenText = tok.ID, tok.Text
		}
		missing, filled := "", false
		if tok == nil {
			if r.c.Engine != EngineLlamaCpp || (chosenID < 0 && ch.text == "" && ch.finish == "") {
				return fmt.Errorf("remote: step %d: the server answered no log-probabilities (logprobs=%d was sent): %w", i, r.req.TopLogprobs, ErrNoLogprobs)
			}
			if tok, err = r.refill(ctx, i, chosenID); err != nil {
				return r.cut(err.Error())
			}
			missing, filled = trace.MissingUTF8, tok != nil
			if filled {
				missing = ""
			}
		}
		forced := i < len(o.ForceIDs)
		if forced {
			chosenID, chosenText = o.ForceIDs[i], ""
		}
		if err := r.addStep(tok, chosenID, chosenText, forced, missing, filled); err != nil {
			return r.cut(err.Error())
		}
		r.elapsed(start)
		switch {
		case !forced && (ch.finish == "eos" || (ch.finish == "stop" && !ch.byStop)):
			r.noteEOS(chosenID)
			r.t.Output.StopReason = trace.StopEOS
			return nil
		case forced && slices.Contains(r.eos, chosenID):
			r.t.Output.StopReason = trace.StopEOS
			return nil
		case r.stopString():
			r.t.Output.StopReason = trace.StopString
			return nil
		}
	}
	r.t.Output.StopReason = trace.StopMaxNewTokens
	return nil
}

// ask requests one token at step i; ban lists ids the server must not
// choose (llama.cpp logit_bias: its probabilities are before the bias).
func (r *recorder) ask(ctx context.Context, i int, ban []int) (chunk, error) {
	var prompt any = r.req.Text + r.newText.String()
	switch {
	case r.idsOK:
		prompt = r.ids
	case r.req.Text == "":
		return chunk{}, fmt.Errorf("remote: step %d: the server gave no id for the last token: %w", i, ErrNeedsText)
	}
	b := r.body(prompt, 1, uint64(i), false)
	if len(ban) > 0 {
		bias := [][]any{}
		for _, id := range ban {
			bias = append(bias, []any{id, false})
		}
		b["logit_bias"] = bias
	}
	var raw json.RawMessage
	if err := r.c.post(ctx, r.t.Model.Source.Endpoint, b, &raw); err != nil {
		return chunk{}, err
	}
	ch, err := parseChunk(raw)
	if err != nil {
		return chunk{}, fmt.Errorf("remote: %s: %w", r.t.Model.Source.Endpoint, err)
	}
	if ch.errText != "" {
		return chunk{}, fmt.Errorf("remote: %s: the server reported an error: %s", r.t.Model.Source.Endpoint, ch.errText)
	}
	r.notePrompt(ch.prompt)
	if len(ch.tokens) == 0 && len(ch.ids) == 0 && ch.text != "" && r.c.Engine != EngineLlamaCpp {
		return chunk{}, fmt.Errorf("remote: %s answered text but no log-probabilities (logprobs=%d was sent): %w", r.t.Model.Source.Endpoint, r.req.TopLogprobs, ErrNoLogprobs)
	}
	return ch, nil
}

// refill asks again for a step whose probabilities the server left out
// (llama.cpp, when the chosen token ends the text inside a UTF-8 sequence),
// banning that token so that the server picks another whose text is
// complete: llama.cpp's probabilities come before the ban, so they are the
// same distribution. It gives up after a few tries and returns nil.
func (r *recorder) refill(ctx context.Context, i, chosen int) (*token, error) {
	if r.c.Engine != EngineLlamaCpp || chosen < 0 || !r.idsOK {
		return nil, nil
	}
	ban := []int{chosen}
	for try := 0; try < 4; try++ {
		ch, err := r.ask(ctx, i, ban)
		if err != nil {
			return nil, err
		}
		if len(ch.tokens) > 0 {
			t := ch.tokens[0]
			t.ID, t.Text, t.Logprob = chosen, "", logprobOf(t.Top, chosen)
			return &t, nil
		}
		if len(ch.ids) == 0 {
			return nil, nil
		}
		ban = append(ban, ch.ids[0])
	}
	return nil, nil
}

// logprobOf returns id's log-probability among the alternatives, or -Inf.
func logprobOf(top []alt, id int) float64 {
	for _, a := range top {
		if a.ID == id {
			return a.Logprob
		}
	}
	return math.Inf(-1)
}
