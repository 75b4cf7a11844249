package live

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"tracer/web/runs"
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
func (s *Protocol) startRuns(sess *Session, specs []runs.Spec, compare bool, source string) {
	d := s.NewRuns(specs, compare, source, s.InsideOpts(sess))
	s.Sessions.HoldImport(sess, 0, 0) // an imported trace the page showed is gone
	sess.Mu.Lock()
	defer sess.Mu.Unlock()
	sess.stopLocked()
	sess.Doc, sess.Cur, sess.until, sess.tail = d, runs.Cursor{}, nil, true
	j := s.newSessionJob(sess)
	k := s.sessionSink(sess, j)
	s.launch(sess, j, func() error {
		var errs []error
		shown := true
		for _, r := range d.Runs {
			if err := s.GenerateRun(j.ctx, r, k); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.Label, err))
				shown = shown && r.Err() != ""
			}
		}
		err := errors.Join(errs...)
		if err != nil && shown {
			return shownError{err}
		}
		return err
	})
}

// shownError is the error of runs whose statuses in the view say why
// they failed ("generation failed: …"): the page need not repeat it.
type shownError struct{ error }

func (e shownError) Unwrap() error { return e.error }

// InsideOpts are the inside stores' options for a session's runs.
func (s *Protocol) InsideOpts(sess *Session) runs.InsideOpts {
	o := runs.InsideOpts{Keep: runs.InsideKeep, Changed: func() { s.Publish(sess) }}
	if sess.Teach {
		o.Keep = runs.ClassInsideKeep
	}
	return o
}

// sessionSink is the sink of a session's job j: its steps move the
// session's cursor (stepArrived, runEnded) and wake j's publisher.
func (s *Protocol) sessionSink(sess *Session, j *job) runs.Sink {
	return runs.Sink{
		Lock:  &sess.Mu,
		Step:  func(r *runs.Run, branch int) { s.stepArrived(sess, j, r, branch) },
		Poke:  j.poke,
		Ended: func(r *runs.Run, branch int) { s.runEnded(sess, j, r, branch) },
	}
}

// newSessionJob replaces the session's job with a new one. The caller
// holds the session's lock.
func (s *Protocol) newSessionJob(sess *Session) *job {
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
	waiting []*Session // one entry per waiting run
}

// join puts a run of sess at the end of the line and returns its entry.
func (q *runQueue) join(s *Protocol, sess *Session) *Session {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = append(q.waiting, sess)
	q.tellLocked(s, len(q.waiting)-1)
	return sess
}

// leave takes a run out of the line (its slot came, or it was stopped):
// its page hears it waits no more ("ahead": -1), the runs behind it that
// they moved up.
func (q *runQueue) leave(s *Protocol, e *Session) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.waiting, e)
	if i < 0 {
		return
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	s.Hub.placeSession(e.ID, -1)
	q.tellLocked(s, i)
}

// tellLocked tells the runs from place i on how many runs are ahead of
// theirs. The caller holds q.mu. A page keeps only its newest place (see
// client.place): while a long line moves, each of its pages hears where
// it stands when it next writes, not every step of the way.
func (q *runQueue) tellLocked(s *Protocol, i int) {
	for k := i; k < len(q.waiting); k++ {
		s.Hub.placeSession(q.waiting[k].ID, k)
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
func (s *Protocol) launch(sess *Session, j *job, work func() error) {
	if !s.AddJob() {
		sess.runs.Add(-1)
		j.cancel()
		return
	}
	go func() {
		defer s.Jobs.Done()
		defer close(j.done)
		defer sess.runs.Add(-1)
		q := s.queue.join(s, sess)
		select {
		case s.Slots <- struct{}{}:
			s.queue.leave(s, q)
		case <-j.ctx.Done():
			s.queue.leave(s, q)
			j.err = s.Guard("a stopped run", work) // ends at once: the context is done
			return
		}
		defer func() { <-s.Slots }()
		j.err = s.Guard("a run", work)
		if errors.Is(j.err, runs.ErrPanic) {
			s.settleAfterPanic(sess, j)
		}
	}()
	go func() {
		defer s.Jobs.Done()
		for {
			select {
			case <-j.notify:
				s.publishGated(sess)
			case <-j.done:
				sess.Mu.Lock()
				if sess.job == j {
					sess.job = nil
				}
				sess.Mu.Unlock()
				j.cancel()
				s.Hold(sess)
				s.publishGated(sess)
				if j.err != nil {
					var shown shownError
					s.Hub.broadcast(sess.ID, failedMessage(s.Catalog.Redact(j.err.Error()), errors.As(j.err, &shown)))
				}
				return
			}
			select {
			case <-time.After(publishSpacing(len(s.Slots))):
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
func (s *Protocol) publishGated(sess *Session) {
	select {
	case s.renders <- struct{}{}:
	case <-s.Done.Done():
		return
	}
	defer func() { <-s.renders }()
	s.Publish(sess)
}

// settleAfterPanic marks the runs of a job that panicked as ended, so the
// page does not show them running for ever.
func (s *Protocol) settleAfterPanic(sess *Session, j *job) {
	sess.Mu.Lock()
	defer sess.Mu.Unlock()
	if sess.job != j || sess.Doc == nil {
		return
	}
	for _, r := range sess.Doc.Runs {
		if r.Live {
			r.Live = false
			if r.Trace.Output.StopReason == "" {
				r.Trace.Output = runs.CutOutput()
			}
		}
	}
	sess.tail, sess.until, sess.Cur.Pending = false, nil, false
	sess.Cur.Pos = min(sess.Cur.Pos, sess.Doc.Count(sess.Cur.Branch)-1)
}

// reserveRun counts a new generation of the page against
// Config.MaxPageRuns; a run stopped a moment ago still counts until its
// goroutine has ended. launch uncounts it.
func (s *Protocol) reserveRun(sess *Session) error {
	if n := sess.runs.Add(1); int(n) > s.cfg.MaxPageRuns {
		sess.runs.Add(-1)
		return fmt.Errorf("this page already has %d runs still ending, its limit: wait a moment and try again (the server's --max-page-runs sets the limit)", s.cfg.MaxPageRuns)
	}
	return nil
}

// stepArrived moves the cursor of a session whose run (branch) has a new
// step: to the newest step while it follows the tail, or to a pending
// breakpoint that hits. The caller holds the session's lock.
func (s *Protocol) stepArrived(sess *Session, j *job, r *runs.Run, branch int) {
	if sess.job != j || sess.Doc == nil || !containsRun(sess.Doc, r) || sess.Cur.Branch != branch {
		return
	}
	steps := runs.PathSteps(sess.Doc.Runs[0].Trace, branch)
	if sess.Doc.Compare {
		steps = r.Trace.Steps
	}
	last := len(steps) - 1
	if b := sess.until; b != nil && r == sess.Doc.Runs[0] {
		if hit := b.Check(steps, last, sess.Cur.Row); hit != "" {
			sess.Cur.Pos, sess.Cur.Hit, sess.Cur.Pending, sess.until, sess.tail = last, hit, false, nil, false
			return
		}
		sess.Cur.Pos = max(0, last)
		return
	}
	if sess.tail {
		sess.Cur.Pos = max(sess.Cur.Pos, sess.Doc.Count(branch)-1)
	}
}

// runEnded settles the cursor when a run ends: a breakpoint still waiting
// did not hit. The caller holds the session's lock.
func (s *Protocol) runEnded(sess *Session, j *job, r *runs.Run, branch int) {
	if sess.job != j || !containsRun(sess.Doc, r) {
		return
	}
	if sess.until != nil && !sess.Doc.Live() {
		sess.Cur.Pos = sess.Doc.Count(sess.Cur.Branch) - 1
		sess.Cur.Hit, sess.Cur.Pending, sess.until = "No breakpoint hit before the end of the run.", false, nil
	}
	if sess.tail {
		sess.Cur.Pos = sess.Doc.Count(sess.Cur.Branch) - 1
		if !sess.Doc.Live() {
			sess.tail = false
		}
	}
}

func containsRun(d *runs.Document, r *runs.Run) bool {
	for _, x := range d.Runs {
		if x == r {
			return true
		}
	}
	return false
}

// goToExisting shows the path a branch message names when it exists
// already: that branch, at the step that chose the token. The caller holds
// the session's lock.
func goToExisting(sess *Session, p *runs.BranchPlan) {
	d := sess.Doc
	pos := p.At
	if d.Walk != nil { // the walkthrough's moment of that step
		pos = sess.Cur.Pos
		for i, m := range d.Walk.Moments {
			if m.Step == p.At {
				pos = i
				break
			}
		}
	}
	sess.Cur = runs.Cursor{Pos: pos, Branch: p.Existing, Row: sess.Cur.Row}
	sess.tail, sess.until = false, nil
}

// startBranch adds the planned branch to the run's tree and runs it in the
// session's job; the cursor follows it. The caller holds the session's
// lock.
func (s *Protocol) startBranch(sess *Session, p *runs.BranchPlan) {
	b := runs.AddBranch(p)
	if sess.Doc.Walk != nil { // the lesson's walkthrough becomes a run to step through
		sess.Doc = &runs.Document{Runs: sess.Doc.Runs, Source: sess.Doc.Source, Origin: sess.Doc.Origin}
	}
	sess.Cur = runs.Cursor{Pos: p.At, Branch: b.ID}
	sess.tail, sess.until = true, nil
	j := s.newSessionJob(sess)
	s.launch(sess, j, s.BranchWork(j.ctx, p, b, s.sessionSink(sess, j)))
}

// runUntil moves the cursor to the first step after it where a breakpoint
// hits. When none does and the run is still generating, the breakpoints
// wait for the steps to come. The caller holds the session's lock.
func runUntil(sess *Session, b *runs.Breakpoints) {
	d := sess.Doc
	steps := runs.PathSteps(d.Runs[0].Trace, sess.Cur.Branch)
	for i := sess.Cur.Pos + 1; i < len(steps); i++ {
		if hit := b.Check(steps, i, sess.Cur.Row); hit != "" {
			sess.Cur.Pos, sess.Cur.Hit, sess.Cur.Pending, sess.until, sess.tail = i, hit, false, nil, false
			return
		}
	}
	r := d.Runs[0]
	if r.Live && r.LiveBranch == sess.Cur.Branch {
		sess.Cur.Pos = max(0, len(steps)-1)
		sess.Cur.Hit, sess.Cur.Pending, sess.until, sess.tail = b.W.F(words.KeyDbgPlayingUntil, "what", b.Describe()), true, b, false
		return
	}
	sess.Cur.Pos = max(0, len(steps)-1)
	sess.Cur.Hit, sess.Cur.Pending, sess.until = b.W.F(words.KeyDbgNoHit, "what", b.Describe()), false, nil
}
