package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"tracer/trace"
)

// Request is one recording.
type Request struct {
	// The prompt: one of Text, Messages (a chat, rendered by the server's
	// template) and IDs (token ids, where the server takes them).
	Text     string
	Messages []trace.Message
	IDs      []int

	// Options are the generation options, resolved as for tracer's own
	// engine; MaxNewTokens must be positive. The server gets those its API
	// has (see Client.body); ForceIDs needs step mode.
	Options     trace.Options
	TopLogprobs int  // alternatives per step; 0: 20
	Step        bool // one request per token

	// Notices are added to the trace's (e.g. from resolving the options).
	Notices []string

	// OnStart, when set, gets the trace before its first step (model,
	// source, options, prompt with its ids where the server tokenized it,
	// notices), so a caller can show the run while it streams.
	OnStart func(trace.Trace)
	// OnStep, when set, gets each step as soon as it exists.
	OnStep func(trace.Step)

	// MaxBytes bounds what the recording may hold, by estimate of the
	// trace's size (candidates, their tokens and bytes, text); past it the
	// recording stops, its partial trace kept. 0: DefaultMaxBytes.
	MaxBytes int64
}

// DefaultMaxBytes is a recording's budget unless Request.MaxBytes says
// otherwise: under the size trace.Read accepts (trace.DefaultMaxSize), so
// that what tracer records, tracer can read again.
const DefaultMaxBytes = trace.DefaultMaxSize / 2

// maxTokenBytes is the most UTF-8 bytes one token of a server's answer may
// carry: the longest tokens of real vocabularies have a few dozen.
const maxTokenBytes = 1024

// ErrTooLarge says a server's answer passed the recording's budget
// (Request.MaxBytes).
var ErrTooLarge = errors.New("the recording passed its size budget")

// unknownAlways is what no server's OpenAI-compatible API tells.
var unknownAlways = []string{"logits", "distribution_beyond_top", "entropy", "stages", "kv_cache", "traffic", "draw"}

// Unknown lists what no server's OpenAI-compatible API tells, as a
// trace's model.source.unknown names it.
func Unknown() []string { return slices.Clone(unknownAlways) }

// recorder builds one trace.
type recorder struct {
	c   *Client
	req Request
	t   *trace.Trace

	ids     []int           // prompt + chosen ids, while every id is known
	idsOK   bool            // ids is the whole context
	newText strings.Builder // the text generated so far
	lastLen int             // bytes the newest token added to newText
	size    int64           // the recording's size so far, by estimate (see stepSize)
	chat    bool            // step mode on a chat: Text is the messages rendered by the server's template

	sawPrompt bool  // vLLM's prompt_logprobs are recorded
	eos       []int // EOS ids the server revealed (stop_type "eos")
}

// Record generates from the server and returns the trace. When the answer
// breaks off (a stream cut in the middle), it returns the partial trace,
// marked in Model.Source.Incomplete, together with an error wrapping
// ErrStreamCut.
func (c *Client) Record(ctx context.Context, req Request) (*trace.Trace, error) {
	o := req.Options
	switch {
	case o.MaxNewTokens <= 0 && o.MaxLength <= 0:
		return nil, errors.New("remote: set max_new_tokens (or max_length): a server needs to be told how many tokens to generate")
	case len(o.ForceIDs) > 0 && !req.Step:
		return nil, fmt.Errorf("remote: %w", ErrNeedsStepMode)
	}
	if req.TopLogprobs <= 0 {
		req.TopLogprobs = 20
	}
	r := &recorder{c: c, req: req}
	if req.Step && len(req.Messages) > 0 {
		text, err := c.renderChat(ctx, req.Messages)
		if err != nil {
			return nil, err
		}
		r.req.Text, r.chat = text, true
	}
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	if err := r.budget(); err != nil {
		return nil, err
	}
	if req.OnStart != nil {
		head := *r.t
		head.Notices = slices.Clone(head.Notices)
		head.Steps = []trace.Step{}
		req.OnStart(head)
	}
	var err error
	if req.Step {
		err = r.steps(ctx)
	} else {
		err = r.plain(ctx)
	}
	if err != nil && !errors.Is(err, ErrStreamCut) {
		return nil, err
	}
	r.finish()
	if verr := r.t.Validate(); verr != nil {
		return nil, fmt.Errorf("remote: the server's answer does not make a valid trace (%v): %w", verr, ErrBadAnswer)
	}
	return r.t, err
}

// allIDs reports whether every id in a trace's steps is known (not -1).
func allIDs(t *trace.Trace) bool {
	for _, s := range t.Steps {
		r := s.Rows[0]
		for _, c := range r.Candidates {
			if c.ID < 0 {
				return false
			}
		}
		if r.Final != nil && slices.Contains(r.Final.IDs, -1) {
			return false
		}
	}
	return true
}

// start fills the trace's model, options and prompt, tokenizing a text
// prompt where the server can (llama.cpp's /tokenize).
func (r *recorder) start(ctx context.Context) error {
	c, req := r.c, r.req
	mode, endpoint := "plain", "/v1/completions"
	if req.Step {
		mode = "step"
	}
	switch {
	case len(req.Messages) > 0 && !r.chat:
		endpoint = "/v1/chat/completions"
	case c.Engine == EngineLlamaCpp:
		endpoint = "/completion"
	}
	src := &trace.Source{
		Kind: trace.SourceServer, URL: c.URL(), Engine: c.Engine, ServerModel: c.Model,
		Endpoint: endpoint, Mode: mode, TopLogprobs: req.TopLogprobs, Probs: trace.ProbsRaw,
		TokenIDs: c.Engine == EngineLlamaCpp, Unknown: slices.Clone(unknownAlways),
	}
	if c.Engine != EngineLlamaCpp && c.Engine != EngineVLLM {
		// vLLM and llama.cpp document raw log-probabilities by default;
		// others do not say whether their processors ran first.
		src.Probs = trace.ProbsUnknown
	}
	r.t = &trace.Trace{
		Format: trace.Format,
		Model: trace.Model{
			Name: c.Model, Kind: trace.SourceServer, Architecture: c.Engine, VocabSize: c.VocabSize,
			BOS: -1, EOS: []int{}, PAD: -1, Source: src,
		},
		Options: req.Options,
		Prompt:  trace.Prompt{Text: req.Text, Messages: req.Messages, IDs: slices.Clone(req.IDs)},
		Steps:   []trace.Step{},
	}
	r.t.Notices = slices.Clone(req.Notices)
	r.t.Options.RecordTop = req.TopLogprobs
	r.t.Options.UseCache = true
	if req.Step {
		r.t.Notices = append(r.t.Notices, "step mode: one request per token; each step's seed is the run's seed plus the step index")
	}
	if r.chat {
		r.t.Notices = append(r.t.Notices, "step mode on a chat: tracer rendered the messages with the chat template the server reports (/props) and extends that text token by token, as the server's chat endpoint would")
	}
	if req.IDs == nil && req.Text != "" && c.Engine == EngineLlamaCpp {
		if err := r.tokenize(ctx); err != nil {
			return err
		}
	}
	r.ids, r.idsOK = slices.Clone(r.t.Prompt.IDs), len(r.t.Prompt.IDs) > 0
	if r.idsOK && c.VocabSize > 0 {
		for _, id := range r.ids {
			if id < 0 || id >= c.VocabSize {
				return fmt.Errorf("remote: prompt id %d is outside the server model's vocabulary (0..%d)", id, c.VocabSize-1)
			}
		}
	}
	return nil
}

// tokenize asks llama.cpp for the prompt's ids (with BOS, as /completion
// tokenizes a text prompt) and their pieces.
func (r *recorder) tokenize(ctx context.Context) error {
	var with, without struct {
		Tokens []struct {
			ID    int    `json:"id"`
			Piece string `json:"piece"`
		} `json:"tokens"`
	}
	if err := r.c.post(ctx, "/tokenize", map[string]any{"content": r.req.Text, "add_special": true, "with_pieces": true}, &with); err != nil {
		return err
	}
	if err := r.c.post(ctx, "/tokenize", map[string]any{"content": r.req.Text, "add_special": false, "with_pieces": true}, &without); err != nil {
		return err
	}
	p := &r.t.Prompt
	p.IDs, p.Tokens = []int{}, []string{}
	for _, t := range with.Tokens {
		p.IDs = append(p.IDs, t.ID)
		p.Tokens = append(p.Tokens, t.Piece)
	}
	if len(with.Tokens) == len(without.Tokens)+1 {
		r.t.Model.BOS = with.Tokens[0].ID
	}
	return nil
}

// addStep records one step built from a server's token (nil when the
// server left its probabilities out: missing says why), the chosen id and
// text, and whether the choice was forced. It refuses a step that would
// take the recording past its budget (ErrTooLarge).
func (r *recorder) addStep(tok *token, chosenID int, chosenText string, forced bool, missing string, filled bool) error {
	i := len(r.t.Steps)
	row := trace.StepRow{InputIDs: []int{}, Candidates: []trace.Candidate{}, Context: len(r.t.Prompt.IDs) + i}
	if r.idsOK {
		if i == 0 {
			row.InputIDs = slices.Clone(r.ids)
		} else {
			row.InputIDs = []int{r.ids[len(r.ids)-1]}
		}
	}
	phase := trace.PhaseDecode
	if i == 0 {
		phase = trace.PhasePrefill
	}
	row.Chosen = trace.Chosen{ID: chosenID, Token: chosenText, By: trace.ByGreedy}
	switch {
	case forced:
		row.Chosen.By = trace.ByForced
	case r.req.Options.DoSample:
		row.Chosen.By = trace.BySample
	}
	if tok != nil {
		r.fill(&row, tok)
	}
	if missing != "" || filled {
		row.Server = &trace.ServerStep{Missing: missing, Filled: filled}
	}
	step := trace.Step{Index: i, Phase: phase, Rows: []trace.StepRow{row}}
	limit := cmp.Or(r.req.MaxBytes, DefaultMaxBytes)
	if r.size += stepSize(&row); r.size > limit {
		return fmt.Errorf("the server's answer passed the recording's budget of %s after %d tokens: %w", sizeText(limit), i, ErrTooLarge)
	}
	r.t.Steps = append(r.t.Steps, step)
	if r.req.OnStep != nil {
		r.req.OnStep(step)
	}
	r.append(row.Chosen.ID, row.Chosen.Token)
	return nil
}

// sizeText writes a byte count in MiB, or KiB under one MiB.
func sizeText(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// stepSize estimates what a recorded row adds to its trace, in bytes:
// about what its JSON takes.
func stepSize(row *trace.StepRow) int64 {
	const perEntry = 64 // an entry's fields and punctuation
	n := int64(256 + len(row.Chosen.Token) + 8*len(row.InputIDs))
	for _, c := range row.Candidates {
		n += perEntry + int64(len(c.Token)+4*len(c.Bytes))
	}
	if f := row.Final; f != nil {
		n += int64(perEntry * len(f.IDs))
	}
	return n
}

// fill sets a row's candidates (raw probabilities) or final distribution
// (processed ones) and the chosen token's probability and rank.
func (r *recorder) fill(row *trace.StepRow, tok *token) {
	ch := &row.Chosen
	if !tok.Processed {
		for _, a := range tok.Top {
			row.Candidates = append(row.Candidates, trace.Candidate{
				ID: a.ID, Token: a.Text, Logit: float32(math.NaN()), Prob: math.Exp(a.Logprob), Bytes: a.Bytes,
			})
		}
	} else {
		r.t.Model.Source.Probs = trace.ProbsProcessed
		row.Final = &trace.Final{KeptCount: len(tok.Top), IDs: []int{}, Probs: []float64{}}
		for _, a := range tok.Top {
			row.Final.IDs = append(row.Final.IDs, a.ID)
			row.Final.Probs = append(row.Final.Probs, math.Exp(a.Logprob))
		}
	}
	if ch.ID == tok.ID && (ch.Token == "" || ch.ID >= 0) {
		ch.Prob = math.Exp(tok.Logprob)
		if ch.Token == "" {
			ch.Token = tok.Text
		}
	}
	for k, a := range tok.Top {
		if (ch.ID >= 0 && a.ID == ch.ID) || (ch.ID < 0 && a.Text == ch.Token) {
			ch.Rank = k + 1
			ch.Prob = math.Exp(a.Logprob)
			if ch.Token == "" {
				ch.Token = a.Text
			}
			break
		}
	}
	if ch.Rank == 0 && ch.ID == tok.ID && ch.Prob > 0 && !tok.Processed {
		// A sampled token below the top N: the server still gave its
		// log-probability, so it joins the candidates (as OpenAI's API
		// lists it), in order, with rank 0 (its exact rank is unknown).
		c := trace.Candidate{ID: tok.ID, Token: tok.Text, Logit: float32(math.NaN()), Prob: ch.Prob, Bytes: tok.Bytes}
		at := len(row.Candidates)
		for at > 0 && row.Candidates[at-1].Prob < c.Prob {
			at--
		}
		row.Candidates = slices.Insert(row.Candidates, at, c)
	}
}

// append extends the context with a chosen token.
func (r *recorder) append(id int, text string) {
	r.newText.WriteString(text)
	r.lastLen = len(text)
	if id < 0 {
		r.idsOK = false
	}
	if r.idsOK {
		r.ids = append(r.ids, id)
	}
}

// stopString reports whether the new text holds one of the stop strings.
// It is asked after every token, so a stop string can only be new where
// it ends in the newest token's text: only that tail is searched, which
// keeps a long run linear in its text.
func (r *recorder) stopString() bool {
	text := r.newText.String()
	for _, s := range r.req.Options.StopStrings {
		if s == "" {
			continue
		}
		from := max(0, len(text)-r.lastLen-len(s)+1)
		if strings.Contains(text[from:], s) {
			return true
		}
	}
	return false
}

// cut marks the trace as broken off.
func (r *recorder) cut(why string) error {
	r.t.Model.Source.Incomplete = why
	r.t.Output.StopReason = trace.StopCancelled
	if why == "cancelled" {
		r.t.Notices = append(r.t.Notices, fmt.Sprintf("the run was stopped after %d tokens and its request to the server cancelled: this trace is partial", len(r.t.Steps)))
	} else {
		r.t.Notices = append(r.t.Notices, fmt.Sprintf("the server's answer broke off after %d tokens (%s): this trace is partial", len(r.t.Steps), why))
	}
	return fmt.Errorf("remote: %s after %d tokens (%s); the partial trace is kept: %w", r.c.URL(), len(r.t.Steps), why, ErrStreamCut)
}

// finish fills the output.
func (r *recorder) finish() {
	t := r.t
	o := &t.Output
	o.NewText = r.newText.String()
	o.Text = t.Prompt.Text + o.NewText
	o.NewIDs = []int{}
	known := true
	for _, s := range t.Steps {
		id := s.Rows[0].Chosen.ID
		if id < 0 {
			known = false
		}
		o.NewIDs = append(o.NewIDs, id)
	}
	if !known {
		o.NewIDs = nil
	}
	o.IDs = nil
	if known && len(t.Prompt.IDs) > 0 {
		o.IDs = append(slices.Clone(t.Prompt.IDs), o.NewIDs...)
	}
	if o.StopReason == "" {
		o.StopReason = trace.StopMaxNewTokens
	}
	t.Model.EOS = append(t.Model.EOS, r.eos...)
	t.Model.Source.TokenIDs = known && allIDs(t)
	missing := 0
	for _, s := range t.Steps {
		if sv := s.Rows[0].Server; sv != nil && sv.Missing != "" {
			missing++
		}
	}
	if missing > 0 {
		t.Notices = append(t.Notices, fmt.Sprintf("the server left out the probabilities of %d token(s) after which its text ended inside a UTF-8 character; those steps are marked server.missing (step mode fills them)", missing))
	}
	if t.Model.Source.Probs == trace.ProbsProcessed {
		t.Notices = append(t.Notices, "the server reported probabilities after its sampling processors (llama.cpp post_sampling_probs): they are in final, not candidates, and a greedy step's token has probability 1")
	}
}

// stopFor maps a finish reason ("stop", "length", llama.cpp's stop_type
// "eos"/"word"/"limit") to a trace stop reason.
func (r *recorder) stopFor(reason string, stoppedByString bool) string {
	switch reason {
	case "length", "limit":
		return trace.StopMaxNewTokens
	case "word":
		return trace.StopString
	case "stop", "eos":
		if stoppedByString {
			return trace.StopString
		}
		return trace.StopEOS
	}
	return trace.StopMaxNewTokens
}

// elapsed sets the last step's wall time.
func (r *recorder) elapsed(since time.Time) {
	if n := len(r.t.Steps); n > 0 {
		r.t.Steps[n-1].ElapsedNS = time.Since(since).Nanoseconds()
	}
}

// budget turns max_length (which counts the prompt) into the number of new
// tokens to ask for, once the prompt's length is known.
func (r *recorder) budget() error {
	o := &r.req.Options
	if o.MaxNewTokens > 0 {
		return nil
	}
	n := len(r.t.Prompt.IDs)
	if n == 0 {
		o.MaxNewTokens = o.MaxLength
		r.t.Notices = append(r.t.Notices, fmt.Sprintf("the server did not give the prompt's length in tokens: max_length %d is used as the number of new tokens", o.MaxLength))
		return nil
	}
	if o.MaxLength <= n {
		return fmt.Errorf("remote: the prompt has %d tokens, max_length %d leaves none to generate: set max_new_tokens", n, o.MaxLength)
	}
	o.MaxNewTokens = o.MaxLength - n
	return nil
}
