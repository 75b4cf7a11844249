package runs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/models"
	"tracer/engine/remote"
	"tracer/trace"
)

// Spec is one run to start.
type Spec struct {
	Label string
	Name  string // the model as the catalog names it, for the page
	model *models.Loaded
	req   engine.Request
	// server and sreq stand in for model and req for a server's model
	// (serverrun.go).
	server *remote.Client
	sreq   remote.Request
}

// Prepare turns a run form into a request, checking everything that can be
// checked before generating: the model, the prompt and the options (the
// engine's own validation, with its clear messages).
func (s *Runner) Prepare(f Form, label string) (Spec, error) {
	if c, ok, err := s.Catalog.Server(f.Model); ok {
		if err != nil {
			return Spec{}, err
		}
		return s.prepareServer(f, label, c)
	}
	q, err := arch.ParseQuantize(f.Quantize)
	if err != nil {
		return Spec{}, err
	}
	m, err := s.Catalog.OpenQuantized(f.Model, q)
	if err != nil {
		return Spec{}, err
	}
	in, err := f.input()
	if err != nil {
		return Spec{}, err
	}
	set, err := f.settings(s.cfg.MaxNewTokens)
	if err != nil {
		return Spec{}, err
	}
	req, err := m.Request(in, set)
	if errors.Is(err, models.ErrNoTokenizer) {
		// The engine says what is wrong; the page says where its menu is.
		return Spec{}, fmt.Errorf(`%w (choose "token ids" under Prompt as)`, err)
	}
	if err != nil {
		return Spec{}, err
	}
	if req.Options.MaxNewTokens < 0 && req.Options.MaxLength > s.cfg.MaxNewTokens+256 {
		return Spec{}, fmt.Errorf("max_length %d is more than this server allows: set max_new_tokens (at most %d)", req.Options.MaxLength, s.cfg.MaxNewTokens)
	}
	info := m.Model.Info()
	if liveInside(m.Model, &req.Options, req.Prompts) && s.checkRunSize(info, req.Options, req.Prompts) != nil {
		req.Options.RecordAttention, req.Options.RecordLens = "", 0 // it fits without them (checked below)
	}
	req.Options.FullLogits = s.keepLogits(info, req.Options, req.Prompts)
	if err := s.checkRunSize(info, req.Options, req.Prompts); err != nil {
		return Spec{}, err
	}
	req.Record = true
	if label == "" {
		label = describe(req.Options)
	}
	return Spec{Label: label, Name: cmp.Or(f.Model, "toy"), model: m, req: req}, nil
}

// checkRunSize holds a run to the server's limits before it starts: rows ×
// beams (Config.MaxRowsBeams), and the memory the run needs beyond the
// shared weights by estimate (Config.MaxRunBytes); see CheckRunSize.
func (s *Runner) checkRunSize(info engine.Info, o trace.Options, prompts [][]int) error {
	return CheckRunSize(info, o, prompts, Limits{MaxRowsBeams: s.cfg.MaxRowsBeams, MaxRunBytes: s.cfg.MaxRunBytes, Server: true})
}

// Limits are what one run may use: sequences at once (prompts × beams,
// or × return sequences when sampling) and memory beyond the weights, by
// estimate. Server says the limits are a server's (serve's flags) rather
// than a command's (tracer run's flags of the same names).
type Limits struct {
	MaxRowsBeams int
	MaxRunBytes  int64
	Server       bool
}

// CheckRunSize holds a run to l before it starts, with an error that
// names the flag that raises the limit.
func CheckRunSize(info engine.Info, o trace.Options, prompts [][]int, l Limits) error {
	who, flag := "tracer", "%s raises the limit"
	if l.Server {
		who, flag = "this server", "the server's %s sets the limit"
	}
	per := perPrompt(o)
	seqs := len(prompts) * per
	if len(prompts) > l.MaxRowsBeams || per > l.MaxRowsBeams || seqs > l.MaxRowsBeams {
		return fmt.Errorf("%d prompts × %d sequences each (beams, or return sequences when sampling) = %d is more than %s runs at once (%d): use fewer prompts, beams or return sequences ("+flag+")", len(prompts), per, seqs, who, l.MaxRowsBeams, "--max-rows-beams")
	}
	e := estimateRun(info, o, prompts)
	if e.total() > float64(l.MaxRunBytes) {
		return fmt.Errorf("this run needs about %s by estimate (KV cache %s for %d sequences of up to %d tokens, recorded steps %s), more than %s allows one run (%s): ask for fewer new tokens, prompts or beams ("+flag+")",
			mibText(e.total()), mibText(e.kv), seqs, e.length, mibText(e.record), who, SizeText(l.MaxRunBytes), "--max-run-mib")
	}
	return nil
}

// perPrompt is how many sequences a run decodes per prompt: its beams, or
// its return sequences when it samples (each prompt sampled that many
// times, side by side).
func perPrompt(o trace.Options) int {
	if o.DoSample && o.NumBeams <= 1 && o.NumReturnSequences > 1 {
		return o.NumReturnSequences
	}
	return max(1, o.NumBeams)
}

// runEstimate is the memory a run needs beyond the weights, in bytes
// (float64, so that absurd requests cannot overflow).
type runEstimate struct {
	kv, work, record float64
	length           int // the longest a sequence may grow, in tokens
}

func (e runEstimate) total() float64 { return e.kv + e.work + e.record }

// estimateRun estimates a run's memory from the model's shape: the KV
// cache of every sequence (rows × beams) at its longest, the working
// buffers over the vocabulary, and the recorded steps (each row's
// candidates, processor stages and final distribution, RecordTop entries
// each, every logit with FullLogits, and the attention and lens when
// recorded).
func estimateRun(info engine.Info, o trace.Options, prompts [][]int) runEstimate {
	longest := 0
	for _, p := range prompts {
		longest = max(longest, len(p))
	}
	newTokens := o.MaxNewTokens
	if newTokens < 0 {
		newTokens = max(0, o.MaxLength-longest)
	}
	if info.MaxPositions > 0 {
		newTokens = min(newTokens, max(0, info.MaxPositions-longest))
	}
	length := longest + newTokens
	seqs := float64(len(prompts) * perPrompt(o))
	kvPerToken := float64(info.KVBytesPerToken)
	if kvPerToken == 0 {
		kvPerToken = float64(2 * 4 * info.Layers * max(info.KVHeads, info.Heads) * info.HeadDim)
	}
	const (
		entryBytes  = 48 // one recorded candidate: id, token string header, logit, prob
		recordLists = 8  // candidates, up to six processor stages, the final distribution
		rowBytes    = 512
	)
	perRowStep := float64(recordLists*max(min(o.RecordTop, max(info.VocabSize, 1)), 1)*entryBytes + rowBytes)
	if o.FullLogits {
		perRowStep += 4 * float64(info.VocabSize)
	}
	if !o.UseCache {
		perRowStep += 8 * float64(length) // every step feeds the whole context
	}
	perRowStep += insideBytes(info, o, length, entryBytes) // attention and lens (inside.go)
	return runEstimate{
		kv:     seqs * float64(length) * kvPerToken,
		work:   seqs * float64(info.VocabSize) * 4 * 4, // logits, scores, probabilities, sort order
		record: seqs*float64(newTokens)*perRowStep + keptInsideBytes(info, o, length, entryBytes),
		length: length,
	}
}

// mibText writes a byte count in MiB.
func mibText(n float64) string {
	return fmt.Sprintf("%.1f MiB", n/(1<<20))
}

// placeholder is the trace of a run before its first step: the model, the
// options and the prompt, so the page can show the context at once.
func placeholder(sp Spec) *trace.Trace {
	info := sp.model.Model.Info()
	t := &trace.Trace{Format: trace.Format, Model: info.TraceModel(), Options: sp.req.Options, Prompt: sp.req.Prompt, Notices: sp.req.Notices, Steps: []trace.Step{}}
	t.Prompt.IDs = append([]int{}, sp.req.Prompts[0]...)
	if tok := sp.model.Tokenizer; tok != nil && len(sp.req.Prompts) == 1 {
		for _, id := range t.Prompt.IDs {
			t.Prompt.Tokens = append(t.Prompt.Tokens, tok.Token(id))
		}
	}
	return t
}

// NewRuns is a new document of the specs' runs (a comparison when compare),
// live before their first step; o serves their inside stores.
func (s *Runner) NewRuns(specs []Spec, compare bool, source string, o InsideOpts) *Document {
	d := &Document{Compare: compare, Source: source, Origin: Origin{Kind: originRun, model: specs[0].Name}}
	if compare {
		d.Origin = Origin{Kind: originCompare, model: specs[0].Name, n: len(specs)}
	}
	for _, sp := range specs {
		if sp.server != nil {
			// A comparison of server runs asks one token per request, so
			// that every run's steps are the model's own distributions
			// and the runs share the seed stream step by step.
			sp.sreq.Step = compare
			r := NewRun(s.runIDs.Add(1), serverPlaceholder(sp), sp.Label)
			r.server, r.sreq, r.Live = sp.server, sp.sreq, true
			d.Runs = append(d.Runs, r)
			continue
		}
		r := NewRun(s.runIDs.Add(1), placeholder(sp), sp.Label)
		r.Model, r.Req, r.Live = sp.model, sp.req, true
		r.Inside = s.NewInsideStore(sp.model, sp.req, o)
		r.KeptLogits = sp.req.Options.FullLogits // the form never asks for them: they serve the what-if panel
		d.Runs = append(d.Runs, r)
	}
	return d
}

// Sink is where a generation's steps go: the page that shows the run
// (live, in web's terms its session). A step is appended to the run's
// trace and step is called under lock; poke wakes the page's sender after
// the lock is released; ended is called under lock once the run (or a
// branch of it) has ended, its trace settled.
type Sink struct {
	Lock  sync.Locker
	Step  func(r *Run, branch int)
	Poke  func()
	Ended func(r *Run, branch int)
}

// add appends st to branch (0: the trunk) of r and tells the page.
func (k Sink) add(r *Run, branch int, st trace.Step) {
	k.Lock.Lock()
	if branch == 0 {
		r.Trace.Steps = append(r.Trace.Steps, st)
	} else {
		br := &r.Trace.Branches[branch-1]
		br.Steps = append(br.Steps, st)
	}
	k.Step(r, branch)
	k.Lock.Unlock()
	k.Poke()
}

// GenerateRun runs one run of a document to its end (or ctx's): on the
// local engine, or recorded from a server (as it streams), its steps going
// to k.
func (s *Runner) GenerateRun(ctx context.Context, r *Run, k Sink) error {
	onStep := func(st trace.Step) { k.add(r, 0, st) }
	var out *trace.Trace
	err := ctx.Err()
	switch {
	case err != nil:
	case r.server != nil:
		req := r.sreq
		req.OnStep = onStep
		req.OnStart = func(head trace.Trace) {
			k.Lock.Lock()
			defer k.Lock.Unlock()
			head.Steps = r.Trace.Steps
			*r.Trace = head
		}
		out, err = s.record(ctx, "the run", r.server, req)
	default:
		req := r.Req
		req.OnStep = onStep
		req.KeepCache = func(c engine.Cache) {
			k.Lock.Lock()
			defer k.Lock.Unlock()
			r.keepCache(0, c)
		}
		out, err = s.generate(ctx, "the run", req)
	}
	k.Lock.Lock()
	defer k.Lock.Unlock()
	switch {
	case out != nil && r.server != nil && err != nil:
		// A server's answer that broke off: the partial trace is kept,
		// marked (source.incomplete), and says why, unless the page
		// stopped it.
		r.Trace = out
		switch {
		case ctx.Err() != nil:
			err = nil
		case errors.Is(err, remote.ErrTooLarge):
			err = fmt.Errorf("%w (the server's --max-run-mib sets the budget)", err)
			r.err = s.Catalog.Redact(err.Error())
		default:
			r.err = s.Catalog.Redact(err.Error())
		}
	case out != nil:
		r.Trace = out
	case ctx.Err() != nil:
		r.Trace.Output = CutOutput()
		err = nil
	default:
		r.Trace.Output = CutOutput()
		if errors.Is(err, remote.ErrNoChatTemplate) {
			// remote says to record in plain mode; the page's words for that are one run.
			err = errors.New("a comparison asks the server one token at a time, which needs the chat template, and this server does not expose it (llama.cpp's does): generate the chat as a single run instead")
		}
		r.err = s.Catalog.Redact(err.Error())
	}
	r.Live = false
	k.Ended(r, 0)
	return err
}

// CutOutput is the output of a run stopped before it ended.
func CutOutput() trace.Output {
	return trace.Output{StopReason: trace.StopCancelled}
}
