package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/engine/remote"
	"tracer/trace"
)

// publishEvery spaces the views a running generation sends: steps that
// arrive faster are merged into the next view. While several runs
// generate, each run's page gets a view about every 2·publishEvery per
// run going (at most maxPublishEvery): the runs share the server's cores,
// and rendering views for all of them at the pace of one would take the
// time their steps need (publishSpacing).
const (
	publishEvery    = 40 * time.Millisecond
	maxPublishEvery = 2 * time.Second
)

// publishSpacing is how long a running generation's publisher waits after
// a view, with running runs generating: publishEvery alone, 2·running−1
// times that with others.
func publishSpacing(running int) time.Duration {
	return min(publishEvery*time.Duration(max(2*running-1, 1)), maxPublishEvery)
}

// runSpec is one run to start.
type runSpec struct {
	label string
	name  string // the model as the catalog names it, for the page
	model *models.Loaded
	req   engine.Request
	// server and sreq stand in for model and req for a server's model
	// (serverrun.go).
	server *remote.Client
	sreq   remote.Request
}

// prepare turns a run form into a request, checking everything that can be
// checked before generating: the model, the prompt and the options (the
// engine's own validation, with its clear messages).
func (s *Server) prepare(f runForm, label string) (runSpec, error) {
	if c, ok, err := s.catalog.Server(f.Model); ok {
		if err != nil {
			return runSpec{}, err
		}
		return s.prepareServer(f, label, c)
	}
	m, err := s.catalog.Open(f.Model)
	if err != nil {
		return runSpec{}, err
	}
	in, err := f.input()
	if err != nil {
		return runSpec{}, err
	}
	set, err := f.settings(s.cfg.MaxNewTokens)
	if err != nil {
		return runSpec{}, err
	}
	req, err := m.Request(in, set)
	if errors.Is(err, models.ErrNoTokenizer) {
		// The engine says what is wrong; the page says where its menu is.
		return runSpec{}, fmt.Errorf(`%w (choose "token ids" under Prompt as)`, err)
	}
	if err != nil {
		return runSpec{}, err
	}
	if req.Options.MaxNewTokens < 0 && req.Options.MaxLength > s.cfg.MaxNewTokens+256 {
		return runSpec{}, fmt.Errorf("max_length %d is more than this server allows: set max_new_tokens (at most %d)", req.Options.MaxLength, s.cfg.MaxNewTokens)
	}
	info := m.Model.Info()
	if liveInside(m.Model, &req.Options, req.Prompts) && s.checkRunSize(info, req.Options, req.Prompts) != nil {
		req.Options.RecordAttention, req.Options.RecordLens = "", 0 // it fits without them (checked below)
	}
	req.Options.FullLogits = s.keepLogits(info, req.Options, req.Prompts)
	if err := s.checkRunSize(info, req.Options, req.Prompts); err != nil {
		return runSpec{}, err
	}
	req.Record = true
	if label == "" {
		label = describe(req.Options)
	}
	return runSpec{label: label, name: cmp.Or(f.Model, "toy"), model: m, req: req}, nil
}

// checkRunSize holds a run to the server's limits before it starts: rows ×
// beams (Config.MaxRowsBeams), and the memory the run needs beyond the
// shared weights by estimate (Config.MaxRunBytes).
func (s *Server) checkRunSize(info engine.Info, o trace.Options, prompts [][]int) error {
	seqs := len(prompts) * max(1, o.NumBeams)
	if len(prompts) > s.cfg.MaxRowsBeams || max(1, o.NumBeams) > s.cfg.MaxRowsBeams || seqs > s.cfg.MaxRowsBeams {
		return fmt.Errorf("%d prompts × %d beams = %d sequences is more than this server runs at once (%d): use fewer prompts or beams (the server's --max-rows-beams sets the limit)", len(prompts), max(1, o.NumBeams), seqs, s.cfg.MaxRowsBeams)
	}
	e := estimateRun(info, o, prompts)
	if e.total() > float64(s.cfg.MaxRunBytes) {
		return fmt.Errorf("this run needs about %s by estimate (KV cache %s for %d sequences of up to %d tokens, recorded steps %s), more than this server allows one run (%s): ask for fewer new tokens, prompts or beams (the server's --max-run-mib sets the limit)",
			mibText(e.total()), mibText(e.kv), seqs, e.length, mibText(e.record), sizeText(s.cfg.MaxRunBytes))
	}
	return nil
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
	seqs := float64(len(prompts) * max(1, o.NumBeams))
	kvPerToken := float64(info.KVBytesPerToken)
	if kvPerToken == 0 {
		kvPerToken = float64(2 * 4 * info.Layers * max(info.KVHeads, info.Heads) * info.HeadDim)
	}
	const (
		entryBytes  = 48 // one recorded candidate: id, token string header, logit, prob
		recordLists = 8  // candidates, up to six processor stages, the final distribution
		rowBytes    = 512
	)
	perRowStep := float64(recordLists*max(o.RecordTop, 1)*entryBytes + rowBytes)
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
func placeholder(sp runSpec) *trace.Trace {
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

// startRuns shows a new document of the specs' runs and generates them one
// after the other in the session's job, streaming each step to the page.
func (s *Server) startRuns(sess *session, specs []runSpec, compare bool, source string) {
	d := &document{compare: compare, source: source, origin: origin{kind: originRun, model: specs[0].name}}
	if compare {
		d.origin = origin{kind: originCompare, model: specs[0].name, n: len(specs)}
	}
	for _, sp := range specs {
		if sp.server != nil {
			// A comparison of server runs asks one token per request, so
			// that every run's steps are the model's own distributions
			// and the runs share the seed stream step by step.
			sp.sreq.Step = compare
			r := newRun(s.runIDs.Add(1), serverPlaceholder(sp), sp.label)
			r.server, r.sreq, r.live = sp.server, sp.sreq, true
			d.runs = append(d.runs, r)
			continue
		}
		r := newRun(s.runIDs.Add(1), placeholder(sp), sp.label)
		r.model, r.req, r.live = sp.model, sp.req, true
		r.inside = s.newInsideStore(sp.model, sp.req, s.insideOpts(sess))
		r.keptLogits = sp.req.Options.FullLogits // the form never asks for them: they serve the what-if panel
		d.runs = append(d.runs, r)
	}
	s.sessions.holdImport(sess, 0, 0) // an imported trace the page showed is gone
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.stopLocked()
	sess.doc, sess.cur, sess.until, sess.tail = d, cursor{}, nil, true
	j := s.newSessionJob(sess)
	k := s.sessionSink(sess, j)
	s.launch(sess, j, func() error {
		var errs []error
		for _, r := range d.runs {
			if err := s.generateRun(j.ctx, r, k); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.label, err))
			}
		}
		return errors.Join(errs...)
	})
}

// sink is where a generation's steps go: the page that shows the run
// (live, in web's terms its session). A step is appended to the run's
// trace and step is called under lock; poke wakes the page's sender after
// the lock is released; ended is called under lock once the run (or a
// branch of it) has ended, its trace settled.
type sink struct {
	lock  sync.Locker
	step  func(r *run, branch int)
	poke  func()
	ended func(r *run, branch int)
}

// add appends st to branch (0: the trunk) of r and tells the page.
func (k sink) add(r *run, branch int, st trace.Step) {
	k.lock.Lock()
	if branch == 0 {
		r.trace.Steps = append(r.trace.Steps, st)
	} else {
		br := &r.trace.Branches[branch-1]
		br.Steps = append(br.Steps, st)
	}
	k.step(r, branch)
	k.lock.Unlock()
	k.poke()
}

// generateRun runs one run of a document to its end (or ctx's): on the
// local engine, or recorded from a server (as it streams), its steps going
// to k.
func (s *Server) generateRun(ctx context.Context, r *run, k sink) error {
	onStep := func(st trace.Step) { k.add(r, 0, st) }
	var out *trace.Trace
	err := ctx.Err()
	switch {
	case err != nil:
	case r.server != nil:
		req := r.sreq
		req.OnStep = onStep
		req.OnStart = func(head trace.Trace) {
			k.lock.Lock()
			defer k.lock.Unlock()
			head.Steps = r.trace.Steps
			*r.trace = head
		}
		out, err = s.record(ctx, "the run", r.server, req)
	default:
		req := r.req
		req.OnStep = onStep
		req.KeepCache = func(c engine.Cache) {
			k.lock.Lock()
			defer k.lock.Unlock()
			r.keepCache(0, c)
		}
		out, err = s.generate(ctx, "the run", req)
	}
	k.lock.Lock()
	defer k.lock.Unlock()
	switch {
	case out != nil && r.server != nil && err != nil:
		// A server's answer that broke off: the partial trace is kept,
		// marked (source.incomplete), and says why, unless the page
		// stopped it.
		r.trace = out
		if ctx.Err() != nil {
			err = nil
		} else {
			r.err = s.catalog.Redact(err.Error())
		}
	case out != nil:
		r.trace = out
	case ctx.Err() != nil:
		r.trace.Output = cutOutput()
		err = nil
	default:
		r.trace.Output = cutOutput()
		if errors.Is(err, remote.ErrNoChatTemplate) {
			// remote says to record in plain mode; the page's words for that are one run.
			err = errors.New("a comparison asks the server one token at a time, which needs the chat template, and this server does not expose it (llama.cpp's does): generate the chat as a single run instead")
		}
		r.err = s.catalog.Redact(err.Error())
	}
	r.live = false
	k.ended(r, 0)
	return err
}

// insideOpts are the inside stores' options for a session's runs.
func (s *Server) insideOpts(sess *session) insideOpts {
	o := insideOpts{keep: insideKeep, changed: func() { s.publish(sess) }}
	if sess.teach {
		o.keep = classInsideKeep
	}
	return o
}

// sessionSink is the sink of a session's job j: its steps move the
// session's cursor (stepArrived, runEnded) and wake j's publisher.
func (s *Server) sessionSink(sess *session, j *job) sink {
	return sink{
		lock:  &sess.mu,
		step:  func(r *run, branch int) { s.stepArrived(sess, j, r, branch) },
		poke:  j.poke,
		ended: func(r *run, branch int) { s.runEnded(sess, j, r, branch) },
	}
}

// newSessionJob replaces the session's job with a new one. The caller
// holds the session's lock.
func (s *Server) newSessionJob(sess *session) *job {
	sess.stopLocked()
	j := newJob()
	sess.job = j
	return j
}

// runQueue is the line of runs waiting for a generation slot, in the
// order they get one (a channel's blocked senders are served first come,
// first served). Each waiting page is told how many runs are ahead of its
// own whenever the line moves.
type runQueue struct {
	mu      sync.Mutex
	waiting []*session // one entry per waiting run
}

// join puts a run of sess at the end of the line and returns its entry.
func (q *runQueue) join(s *Server, sess *session) *session {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = append(q.waiting, sess)
	q.tellLocked(s, len(q.waiting)-1)
	return sess
}

// leave takes a run out of the line (its slot came, or it was stopped):
// its page hears it waits no more ("ahead": -1), the runs behind it that
// they moved up.
func (q *runQueue) leave(s *Server, e *session) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.waiting, e)
	if i < 0 {
		return
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	b, _ := json.Marshal(queueMessage{Type: msgQueue, Ahead: -1})
	s.hub.broadcast(e.id, b)
	q.tellLocked(s, i)
}

// tellLocked tells the runs from place i on how many runs are ahead of
// theirs. The caller holds q.mu.
func (q *runQueue) tellLocked(s *Server, i int) {
	for k := i; k < len(q.waiting); k++ {
		b, _ := json.Marshal(queueMessage{Type: msgQueue, Ahead: k})
		s.hub.broadcast(q.waiting[k].id, b)
	}
}

// queueMessage tells a page where its run waits: {"type": "queue",
// "ahead": 3}, the runs ahead of it; -1 once it waits no more.
type queueMessage struct {
	Type  string `json:"type"`
	Ahead int    `json:"ahead"`
}

// launch runs work in its own goroutine, once a generation slot is free,
// with a publisher that sends the session's view as steps arrive (at most
// every publishEvery) and once more at the end, with work's error if any.
// work runs behind a recovery boundary: its panic is its error. The caller
// has counted the run in sess.runs (see reserveRun); launch uncounts it when
// work ends.
func (s *Server) launch(sess *session, j *job, work func() error) {
	if !s.addJob() {
		sess.runs.Add(-1)
		j.cancel()
		return
	}
	go func() {
		defer s.jobs.Done()
		defer close(j.done)
		defer sess.runs.Add(-1)
		q := s.queue.join(s, sess)
		select {
		case s.slots <- struct{}{}:
			s.queue.leave(s, q)
		case <-j.ctx.Done():
			s.queue.leave(s, q)
			j.err = s.guard("a stopped run", work) // ends at once: the context is done
			return
		}
		defer func() { <-s.slots }()
		j.err = s.guard("a run", work)
		if errors.Is(j.err, errPanic) {
			s.settleAfterPanic(sess, j)
		}
	}()
	go func() {
		defer s.jobs.Done()
		for {
			select {
			case <-j.notify:
				s.publishGated(sess)
			case <-j.done:
				sess.mu.Lock()
				if sess.job == j {
					sess.job = nil
				}
				sess.mu.Unlock()
				j.cancel()
				s.hold(sess)
				s.publishGated(sess)
				if j.err != nil {
					s.hub.broadcast(sess.id, errorMessage(s.catalog.Redact(j.err.Error())))
				}
				return
			}
			select {
			case <-time.After(publishSpacing(len(s.slots))):
			case <-j.done:
			}
		}
	}()
}

// publishGated is publish for a running generation's publisher: it waits
// for a render token (Server.renders) first. While a class's runs
// generate together, their publishers would otherwise all render at once
// and crowd out the goroutines of the runs' shared forward pass, which
// waits for its slowest piece; waiting, a publisher renders the newest
// state when its turn comes, so the pages see fewer, later views and the
// runs keep their pace.
func (s *Server) publishGated(sess *session) {
	select {
	case s.renders <- struct{}{}:
	case <-s.done.Done():
		return
	}
	defer func() { <-s.renders }()
	s.publish(sess)
}

// settleAfterPanic marks the runs of a job that panicked as ended, so the
// page does not show them running for ever.
func (s *Server) settleAfterPanic(sess *session, j *job) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.job != j || sess.doc == nil {
		return
	}
	for _, r := range sess.doc.runs {
		if r.live {
			r.live = false
			if r.trace.Output.StopReason == "" {
				r.trace.Output = cutOutput()
			}
		}
	}
	sess.tail, sess.until, sess.cur.pending = false, nil, false
	sess.cur.pos = min(sess.cur.pos, sess.doc.count(sess.cur.branch)-1)
}

// reserveRun counts a new generation of the page against
// Config.MaxPageRuns; a run stopped a moment ago still counts until its
// goroutine has ended. launch uncounts it.
func (s *Server) reserveRun(sess *session) error {
	if n := sess.runs.Add(1); int(n) > s.cfg.MaxPageRuns {
		sess.runs.Add(-1)
		return fmt.Errorf("this page already has %d runs still ending, its limit: wait a moment and try again (the server's --max-page-runs sets the limit)", s.cfg.MaxPageRuns)
	}
	return nil
}

// stepArrived moves the cursor of a session whose run (branch) has a new
// step: to the newest step while it follows the tail, or to a pending
// breakpoint that hits. The caller holds the session's lock.
func (s *Server) stepArrived(sess *session, j *job, r *run, branch int) {
	if sess.job != j || sess.doc == nil || !containsRun(sess.doc, r) || sess.cur.branch != branch {
		return
	}
	steps := pathSteps(sess.doc.runs[0].trace, branch)
	if sess.doc.compare {
		steps = r.trace.Steps
	}
	last := len(steps) - 1
	if b := sess.until; b != nil && r == sess.doc.runs[0] {
		if hit := b.check(steps, last, sess.cur.row); hit != "" {
			sess.cur.pos, sess.cur.hit, sess.cur.pending, sess.until, sess.tail = last, hit, false, nil, false
			return
		}
		sess.cur.pos = max(0, last)
		return
	}
	if sess.tail {
		sess.cur.pos = max(sess.cur.pos, sess.doc.count(branch)-1)
	}
}

// runEnded settles the cursor when a run ends: a breakpoint still waiting
// did not hit. The caller holds the session's lock.
func (s *Server) runEnded(sess *session, j *job, r *run, branch int) {
	if sess.job != j || !containsRun(sess.doc, r) {
		return
	}
	if sess.until != nil && !sess.doc.live() {
		sess.cur.pos = sess.doc.count(sess.cur.branch) - 1
		sess.cur.hit, sess.cur.pending, sess.until = "No breakpoint hit before the end of the run.", false, nil
	}
	if sess.tail {
		sess.cur.pos = sess.doc.count(sess.cur.branch) - 1
		if !sess.doc.live() {
			sess.tail = false
		}
	}
}

func containsRun(d *document, r *run) bool {
	for _, x := range d.runs {
		if x == r {
			return true
		}
	}
	return false
}

// cutOutput is the output of a run stopped before it ended.
func cutOutput() trace.Output {
	return trace.Output{StopReason: trace.StopCancelled}
}
