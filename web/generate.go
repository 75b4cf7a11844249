package web

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/trace"
)

// publishEvery spaces the views a running generation sends: steps that
// arrive faster are merged into the next view.
const publishEvery = 40 * time.Millisecond

// runSpec is one run to start.
type runSpec struct {
	label string
	model *models.Loaded
	req   engine.Request
}

// prepare turns a run form into a request, checking everything that can be
// checked before generating: the model, the prompt and the options (the
// engine's own validation, with its clear messages).
func (s *Server) prepare(f runForm, label string) (runSpec, error) {
	m, err := s.catalog.open(f.Model)
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
	if err != nil {
		// The engine speaks of the command line's flag; the page has a menu.
		return runSpec{}, errors.New(strings.ReplaceAll(err.Error(), "(--prompt-ids)", `(choose "token ids" under Prompt as)`))
	}
	if req.Options.MaxNewTokens < 0 && req.Options.MaxLength > s.cfg.MaxNewTokens+256 {
		return runSpec{}, fmt.Errorf("max_length %d is more than this server allows: set max_new_tokens (at most %d)", req.Options.MaxLength, s.cfg.MaxNewTokens)
	}
	info := m.Model.Info()
	for i, p := range req.Prompts {
		if len(p) == 0 {
			return runSpec{}, fmt.Errorf("prompt %d is empty: give at least one token", i+1)
		}
		for _, id := range p {
			if id < 0 || id >= info.VocabSize {
				return runSpec{}, fmt.Errorf("prompt %d: token id %d is outside the vocabulary (0..%d)", i+1, id, info.VocabSize-1)
			}
		}
	}
	if err := engine.Validate(req.Options, info); err != nil {
		return runSpec{}, err
	}
	req.Record = true
	if len(req.Prompts) > 1 {
		req.Options.Padding = "left"
		if f.Padding == "right" {
			req.Options.Padding = "right"
		}
	}
	if label == "" {
		label = describe(req.Options)
	}
	return runSpec{label: label, model: m, req: req}, nil
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
	d := &document{compare: compare, source: source}
	for _, sp := range specs {
		r := newRun(s.runIDs.Add(1), placeholder(sp), sp.label)
		r.model, r.req, r.live = sp.model, sp.req, true
		d.runs = append(d.runs, r)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.stopLocked()
	sess.doc, sess.cur, sess.until, sess.tail = d, cursor{}, nil, true
	j := s.newSessionJob(sess)
	s.launch(sess, j, func() error {
		var errs []error
		for _, r := range d.runs {
			if err := s.generateRun(sess, j, r); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.label, err))
			}
		}
		return errors.Join(errs...)
	})
}

// generateRun runs one run of a document to its end (or the job's).
func (s *Server) generateRun(sess *session, j *job, r *run) error {
	req := r.req
	req.OnStep = func(st trace.Step) {
		sess.mu.Lock()
		r.trace.Steps = append(r.trace.Steps, st)
		s.stepArrived(sess, j, r, 0)
		sess.mu.Unlock()
		j.poke()
	}
	req.KeepCache = func(c engine.Cache) {
		sess.mu.Lock()
		defer sess.mu.Unlock()
		r.keepCache(0, c)
	}
	var out *trace.Trace
	err := j.ctx.Err()
	if err == nil {
		out, err = engine.Generate(j.ctx, req)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	switch {
	case out != nil:
		r.trace = out
	case j.ctx.Err() != nil:
		r.trace.Output = cutOutput()
		err = nil
	default:
		r.trace.Output = cutOutput()
		r.err = err.Error()
	}
	r.live = false
	s.runEnded(sess, j, r, 0)
	return err
}

// newSessionJob replaces the session's job with a new one. The caller
// holds the session's lock.
func (s *Server) newSessionJob(sess *session) *job {
	sess.stopLocked()
	j := newJob()
	sess.job = j
	return j
}

// launch runs work in its own goroutine, once a generation slot is free,
// with a publisher that sends the session's view as steps arrive (at most
// every publishEvery) and once more at the end, with work's error if any.
func (s *Server) launch(sess *session, j *job, work func() error) {
	if !s.addJob() {
		j.cancel()
		return
	}
	go func() {
		defer s.jobs.Done()
		defer close(j.done)
		select {
		case s.slots <- struct{}{}:
		case <-j.ctx.Done():
			j.err = work() // ends at once: the context is done
			return
		}
		defer func() { <-s.slots }()
		j.err = work()
	}()
	go func() {
		defer s.jobs.Done()
		for {
			select {
			case <-j.notify:
				s.publish(sess)
			case <-j.done:
				sess.mu.Lock()
				if sess.job == j {
					sess.job = nil
				}
				sess.mu.Unlock()
				j.cancel()
				s.publish(sess)
				if j.err != nil {
					s.hub.broadcast(sess.id, errorMessage(j.err.Error()))
				}
				return
			}
			select {
			case <-time.After(publishEvery):
			case <-j.done:
			}
		}
	}()
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
