package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"tracer/web/words"
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

// startRuns shows a new document of the specs' runs and generates them one
// after the other in the session's job, streaming each step to the page.
func (s *protocol) startRuns(sess *session, specs []runSpec, compare bool, source string) {
	d := s.newRuns(specs, compare, source, s.insideOpts(sess))
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

// insideOpts are the inside stores' options for a session's runs.
func (s *protocol) insideOpts(sess *session) insideOpts {
	o := insideOpts{keep: insideKeep, changed: func() { s.publish(sess) }}
	if sess.teach {
		o.keep = classInsideKeep
	}
	return o
}

// sessionSink is the sink of a session's job j: its steps move the
// session's cursor (stepArrived, runEnded) and wake j's publisher.
func (s *protocol) sessionSink(sess *session, j *job) sink {
	return sink{
		lock:  &sess.mu,
		step:  func(r *run, branch int) { s.stepArrived(sess, j, r, branch) },
		poke:  j.poke,
		ended: func(r *run, branch int) { s.runEnded(sess, j, r, branch) },
	}
}

// newSessionJob replaces the session's job with a new one. The caller
// holds the session's lock.
func (s *protocol) newSessionJob(sess *session) *job {
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
func (q *runQueue) join(s *protocol, sess *session) *session {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = append(q.waiting, sess)
	q.tellLocked(s, len(q.waiting)-1)
	return sess
}

// leave takes a run out of the line (its slot came, or it was stopped):
// its page hears it waits no more ("ahead": -1), the runs behind it that
// they moved up.
func (q *runQueue) leave(s *protocol, e *session) {
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
func (q *runQueue) tellLocked(s *protocol, i int) {
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
func (s *protocol) launch(sess *session, j *job, work func() error) {
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
func (s *protocol) publishGated(sess *session) {
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
func (s *protocol) settleAfterPanic(sess *session, j *job) {
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
func (s *protocol) reserveRun(sess *session) error {
	if n := sess.runs.Add(1); int(n) > s.cfg.MaxPageRuns {
		sess.runs.Add(-1)
		return fmt.Errorf("this page already has %d runs still ending, its limit: wait a moment and try again (the server's --max-page-runs sets the limit)", s.cfg.MaxPageRuns)
	}
	return nil
}

// stepArrived moves the cursor of a session whose run (branch) has a new
// step: to the newest step while it follows the tail, or to a pending
// breakpoint that hits. The caller holds the session's lock.
func (s *protocol) stepArrived(sess *session, j *job, r *run, branch int) {
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
func (s *protocol) runEnded(sess *session, j *job, r *run, branch int) {
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

// goToExisting shows the path a branch message names when it exists
// already: that branch, at the step that chose the token. The caller holds
// the session's lock.
func goToExisting(sess *session, p *branchPlan) {
	d := sess.doc
	pos := p.at
	if d.walk != nil { // the walkthrough's moment of that step
		pos = sess.cur.pos
		for i, m := range d.walk.Moments {
			if m.Step == p.at {
				pos = i
				break
			}
		}
	}
	sess.cur = cursor{pos: pos, branch: p.existing, row: sess.cur.row}
	sess.tail, sess.until = false, nil
}

// startBranch adds the planned branch to the run's tree and runs it in the
// session's job; the cursor follows it. The caller holds the session's
// lock.
func (s *protocol) startBranch(sess *session, p *branchPlan) {
	b := addBranch(p)
	if sess.doc.walk != nil { // the lesson's walkthrough becomes a run to step through
		sess.doc = &document{runs: sess.doc.runs, source: sess.doc.source, origin: sess.doc.origin}
	}
	sess.cur = cursor{pos: p.at, branch: b.ID}
	sess.tail, sess.until = true, nil
	j := s.newSessionJob(sess)
	s.launch(sess, j, s.branchWork(j.ctx, p, b, s.sessionSink(sess, j)))
}

// runUntil moves the cursor to the first step after it where a breakpoint
// hits. When none does and the run is still generating, the breakpoints
// wait for the steps to come. The caller holds the session's lock.
func runUntil(sess *session, b *breakpoints) {
	d := sess.doc
	steps := pathSteps(d.runs[0].trace, sess.cur.branch)
	for i := sess.cur.pos + 1; i < len(steps); i++ {
		if hit := b.check(steps, i, sess.cur.row); hit != "" {
			sess.cur.pos, sess.cur.hit, sess.cur.pending, sess.until, sess.tail = i, hit, false, nil, false
			return
		}
	}
	r := d.runs[0]
	if r.live && r.liveBranch == sess.cur.branch {
		sess.cur.pos = max(0, len(steps)-1)
		sess.cur.hit, sess.cur.pending, sess.until, sess.tail = b.w.F(words.KeyDbgPlayingUntil, "what", b.describe()), true, b, false
		return
	}
	sess.cur.pos = max(0, len(steps)-1)
	sess.cur.hit, sess.cur.pending, sess.until = b.w.F(words.KeyDbgNoHit, "what", b.describe()), false, nil
}
