package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/engine/remote"
	"tracer/trace"
)

// serverTopLogprobs is how many alternatives a page's run on a server
// model asks for at each step: the OpenAI API's maximum.
const serverTopLogprobs = 20

// unknownVocab stands for the vocabulary size of a server model that does
// not tell it: ids are then the server's to check.
const unknownVocab = 1 << 30

// serverLacks says why a form's setting cannot be sent to a server model
// of the engine, or "" when every setting can. Settings left empty are
// never refused.
func serverLacks(set *engine.Settings, eng string) string {
	switch {
	case set.NumBeams != nil && *set.NumBeams > 1:
		return "num_beams: servers' OpenAI APIs have no beam search; leave num_beams empty, or run beams on a local model"
	case set.UseCache != nil && !*set.UseCache:
		return "use_cache: the server manages its own KV cache and cannot turn it off; leave use_cache empty"
	}
	if eng == remote.EngineLlamaCpp || eng == remote.EngineVLLM || eng == remote.EngineSGLang {
		return ""
	}
	for _, o := range []struct {
		name string
		set  bool
	}{{"top_k", set.TopK != nil}, {"min_p", set.MinP != nil}, {"repetition_penalty", set.RepetitionPenalty != nil}} {
		if o.set {
			return fmt.Sprintf("%s: this server (%s) speaks the plain OpenAI API, which has no %s; leave it empty for this model", o.name, eng, o.name)
		}
	}
	return ""
}

// prepareServer turns a run form for a server model into a recording
// request, checking what can be checked before asking the server.
func (s *Runner) prepareServer(f Form, label string, c *remote.Client) (Spec, error) {
	in, err := f.input()
	if err != nil {
		return Spec{}, err
	}
	if len(in.Texts) > 1 || len(in.IDs) > 1 {
		return Spec{}, errors.New("a server model runs one prompt at a time: write a single prompt line (batches need a local model)")
	}
	set, err := f.settings(s.cfg.MaxNewTokens)
	if err != nil {
		return Spec{}, err
	}
	if why := serverLacks(set, c.Engine); why != "" {
		return Spec{}, errors.New(why)
	}
	info := engine.Info{Name: c.Model, Kind: trace.SourceServer, VocabSize: cmpVocab(c.VocabSize), BOS: -1, PAD: -1}
	opts, notices, err := engine.Resolve(info, nil, set)
	if err != nil {
		return Spec{}, err
	}
	if opts.MaxNewTokens < 0 && opts.MaxLength > s.cfg.MaxNewTokens+256 {
		return Spec{}, fmt.Errorf("max_length %d is more than this server allows: set max_new_tokens (at most %d)", opts.MaxLength, s.cfg.MaxNewTokens)
	}
	req := remote.Request{Options: opts, Notices: notices, TopLogprobs: serverTopLogprobs, Messages: in.Messages, MaxBytes: s.cfg.MaxRunBytes}
	switch {
	case len(in.Texts) == 1:
		req.Text = in.Texts[0]
	case len(in.IDs) == 1:
		if len(in.IDs[0]) == 0 {
			return Spec{}, errors.New("prompt 1 is empty: give at least one token")
		}
		for _, id := range in.IDs[0] {
			if err := checkID(id, info.VocabSize); err != nil {
				return Spec{}, fmt.Errorf("prompt 1: %w", err)
			}
		}
		req.IDs = in.IDs[0]
	case len(in.Messages) == 0:
		return Spec{}, errors.New("no prompt: write one in the prompt box")
	}
	if label == "" {
		label = describe(opts)
	}
	return Spec{Label: label, Name: f.Model, server: c, sreq: req}, nil
}

// checkID says why id is not a token of a vocabulary of vocab tokens;
// with unknownVocab only a negative id is refused (the server checks the
// rest).
func checkID(id, vocab int) error {
	switch {
	case id < 0:
		return fmt.Errorf("token id %d is negative: ids count from 0", id)
	case vocab != unknownVocab && id >= vocab:
		return fmt.Errorf("token id %d is outside the vocabulary (0..%d)", id, vocab-1)
	}
	return nil
}

// cmpVocab is a server model's vocabulary size, or unknownVocab when the
// server does not tell it.
func cmpVocab(n int) int {
	if n <= 0 {
		return unknownVocab
	}
	return n
}

// serverPlaceholder is a server run's trace before the server has
// answered: what the page knows of the model, options and prompt.
// Record's OnStart replaces it with the recorder's own.
func serverPlaceholder(sp Spec) *trace.Trace {
	c, req := sp.server, sp.sreq
	mode := "plain"
	if req.Step {
		mode = "step"
	}
	return &trace.Trace{
		Format: trace.Format,
		Model: trace.Model{
			Name: c.Model, Kind: trace.SourceServer, Architecture: c.Engine, VocabSize: c.VocabSize,
			BOS: -1, PAD: -1, EOS: []int{},
			Source: &trace.Source{Kind: trace.SourceServer, URL: c.URL(), Engine: c.Engine, ServerModel: c.Model, Mode: mode, TopLogprobs: req.TopLogprobs, Probs: trace.ProbsUnknown, Unknown: remote.Unknown()},
		},
		Options: req.Options, Notices: slices.Clone(req.Notices),
		Prompt: trace.Prompt{Text: req.Text, Messages: req.Messages, IDs: append([]int{}, req.IDs...)},
		Steps:  []trace.Step{},
	}
}

// record is Client.Record behind a recovery boundary, like generate.
func (s *Runner) record(ctx context.Context, what string, c *remote.Client, req remote.Request) (*trace.Trace, error) {
	return s.guardRun(what, func() (*trace.Trace, error) { return c.Record(ctx, req) })
}

// serverBranch prepares a branch of a server run in step mode: the
// prompt's ids and the tokens chosen before the branch point go as the
// prompt, the new token is forced, and the run goes on one token per
// request for what is left of the trunk's budget, with the seed the trunk
// would have used there. A chat whose prompt ids the server did not give
// (its chat endpoint renders it) is rendered again with llama.cpp's
// template and the tokens before the branch point are forced too:
// fromStart then says the request's steps count from the trunk's first.
func serverBranch(r *Run, at int, before []int, id int) (req remote.Request, fromStart bool, err error) {
	t := r.Trace
	if slices.Contains(before, -1) {
		return req, false, errors.New("the server did not give the id of a token before this step, so a branch here cannot send the context as ids: branch at an earlier step")
	}
	o := t.Options
	if len(t.Prompt.IDs) == 0 {
		if len(t.Prompt.Messages) == 0 || r.server.Engine != remote.EngineLlamaCpp {
			return req, false, errors.New("the server did not give the prompt's token ids, so a branch cannot continue from a forced token: give the prompt as token ids, or use a llama.cpp server, which tokenizes")
		}
		o.ForceIDs = append(slices.Clone(before), id)
		return remote.Request{Messages: t.Prompt.Messages, Options: o, TopLogprobs: cmpTop(r.sreq.TopLogprobs), Step: true, Notices: slices.Clone(r.sreq.Notices), MaxBytes: r.sreq.MaxBytes}, true, nil
	}
	total := o.MaxNewTokens
	if total <= 0 {
		total = o.MaxLength - len(t.Prompt.IDs)
	}
	o.MaxNewTokens, o.MaxLength = max(1, total-at), -1
	o.Seed += uint64(at)
	o.ForceIDs = []int{id}
	ids := append(slices.Clone(t.Prompt.IDs), before...)
	return remote.Request{IDs: ids, Options: o, TopLogprobs: cmpTop(r.sreq.TopLogprobs), Step: true, Notices: slices.Clone(r.sreq.Notices), MaxBytes: r.sreq.MaxBytes}, false, nil
}

func cmpTop(n int) int {
	if n <= 0 {
		return serverTopLogprobs
	}
	return n
}

// serverToken finds the id of a token typed to branch a server run: "#id",
// or the text of one of the step's recorded candidates (the page does not
// know a server model's vocabulary beyond them).
func serverToken(st trace.Step, text string, vocab int) (int, string, error) {
	if text == "" {
		return 0, "", errors.New("no token given: type a token or its id")
	}
	if rest, ok := strings.CutPrefix(text, "#"); ok {
		id, err := strconv.Atoi(rest)
		if err != nil {
			return 0, "", fmt.Errorf("%q is not a token id", text)
		}
		if err := checkID(id, vocab); err != nil {
			return 0, "", err
		}
		return id, "", nil
	}
	row := st.Rows[0]
	for _, c := range row.Candidates {
		if c.Token == text && c.ID >= 0 {
			return c.ID, c.Token, nil
		}
	}
	if row.Chosen.Token == text && row.Chosen.ID >= 0 {
		return row.Chosen.ID, row.Chosen.Token, nil
	}
	return 0, "", fmt.Errorf("%q is not among this step's recorded candidates: a server model's vocabulary is known only through them; type one of them or a token id (#123)", text)
}

// shiftBranch turns the trace a server branch recorded (its prompt the
// trunk's prompt and the tokens before the branch point) into the
// branch's steps and output as a local branch has them: steps numbered
// from the branch point, the output's text and ids from the trunk's first
// new token on.
func shiftBranch(out *trace.Trace, trunk *trace.Trace, at int, before []int, prefix string) ([]trace.Step, trace.Output) {
	steps := slices.Clone(out.Steps)
	for i := range steps {
		steps[i].Index += at
	}
	o := out.Output
	o.NewText = prefix + o.NewText
	o.Text = trunk.Prompt.Text + o.NewText
	if o.NewIDs != nil {
		o.NewIDs = append(slices.Clone(before), o.NewIDs...)
		o.IDs = append(slices.Clone(trunk.Prompt.IDs), o.NewIDs...)
	}
	return steps, o
}
