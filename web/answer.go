package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"tracer/engine/tokenizer"
	"tracer/trace"
	"tracer/web/view"
	"tracer/web/words"
)

// handleMessage answers one WebSocket message from a page. A message that
// changes the session publishes its new view to every page showing it; a
// bad one gets an error reply on its own connection.
//
// It runs behind a recovery boundary: a panic while answering is this
// page's error, and the server goes on.
func (s *protocol) handleMessage(c *client, data []byte) {
	err := s.guard("answering the page's message", func() error {
		m, err := parseInbound(data)
		if err == nil {
			err = s.apply(c.sess, m)
		}
		if err != nil {
			return err
		}
		if m.Type == msgView && c.sess.following() { // the stream from the start
			c.castAgain.Store(true)
			c.nudge()
			return nil
		}
		if m.Type == msgView { // only the asking page needs it
			msg, seq := s.viewMessage(c.sess)
			s.hub.offer(c, msg, seq)
			return nil
		}
		if m.Type == msgWhatIf { // the asking page's alone; the session stays as it is
			msg, err := s.whatIfMessage(c.sess, m.WhatIf)
			if err != nil {
				return err
			}
			s.hub.send(c, msg)
			return nil
		}
		s.publish(c.sess)
		return nil
	})
	if err != nil {
		s.hub.send(c, errorMessage(s.catalog.Redact(err.Error())))
	}
}

// apply makes the change a message asks of a session.
func (s *protocol) apply(sess *session, m inbound) error {
	switch m.Type {
	case msgView, msgWhatIf:
		return nil
	case msgPair, msgCharts: // the page's own preferences, also while following
		sess.mu.Lock()
		defer sess.mu.Unlock()
		if m.Type == msgPair {
			sess.pair = *m.On
		} else {
			sess.charts = *m.On
			if m.Dark != nil {
				sess.dark = *m.Dark
			}
		}
		return nil
	case msgPull:
		if err := s.mayPull(sess); err != nil {
			return err
		}
		return s.startPull(sess, *m.Repo)
	case msgDetach:
		return s.detach(sess)
	case msgRejoin:
		return s.rejoin(sess)
	}
	if sess.following() {
		return errFollowing
	}
	switch m.Type {
	case msgFirst, msgPrev, msgNext, msgLast, msgStep:
		return sess.move(m)
	case msgGenerate:
		sp, err := s.prepare(*m.Form, "")
		if err != nil {
			return err
		}
		if err := s.reserveRun(sess); err != nil {
			return err
		}
		s.startRuns(sess, []runSpec{sp}, false, fmt.Sprintf("run of %s, %s", sp.name, sp.label))
		return nil
	case msgCompare:
		specs, source, err := s.compareSpecs(*m.Form)
		if err != nil {
			return err
		}
		if err := s.reserveRun(sess); err != nil {
			return err
		}
		s.startRuns(sess, specs, true, source)
		return nil
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	switch m.Type {
	case msgStop:
		if sess.job == nil {
			return errors.New("nothing is generating")
		}
		sess.stopLocked()
		return nil
	case msgSelect:
		return selectBranch(sess, *m.Branch)
	case msgBranch:
		p, err := planBranch(sess.doc, sess.cur, branchAsk{Step: m.Step, ID: m.ID, Token: m.Token, WhatIf: m.WhatIf})
		if err != nil {
			return err
		}
		if p.existing >= 0 { // that token was chosen there already: go to it
			goToExisting(sess, p)
			return nil
		}
		if err := s.reserveRun(sess); err != nil {
			return err
		}
		s.startBranch(sess, p)
		return nil
	case msgUntil:
		if sess.doc.walk != nil || sess.doc.compare {
			return errors.New("breakpoints work on a single run: generate one first")
		}
		r := sess.doc.runs[0]
		var tok tokenizer.Tokenizer
		if r.model != nil {
			tok = r.model.Tokenizer
		}
		b, err := m.Until.parse(tok, r.trace.Model.VocabSize)
		if err != nil {
			return err
		}
		b.w = s.words(sess.lang)
		runUntil(sess, b)
		return nil
	case msgRow:
		n := rowCount(sess.doc.runs[0].trace)
		if *m.Index < 0 || *m.Index >= n || sess.doc.walk != nil {
			return fmt.Errorf("row %d is out of range: this run has rows 0 to %d", *m.Index, n-1)
		}
		sess.cur.row = *m.Index
		return nil
	}
	return fmt.Errorf("bad message: %q is not handled", m.Type)
}

// selectBranch follows another branch of the run, keeping the position
// where the new path has it. The caller holds the session's lock.
func selectBranch(sess *session, id int) error {
	d := sess.doc
	t := d.runs[0].trace
	if d.compare || id < 0 || id > len(t.Branches) {
		return fmt.Errorf("branch %d does not exist: this run has branches 0 (the trunk) to %d", id, len(t.Branches))
	}
	if d.walk != nil {
		sess.doc = &document{runs: d.runs, source: d.source, origin: d.origin}
	}
	sess.cur.branch, sess.cur.hit, sess.cur.pending, sess.until = id, "", false, nil
	sess.cur.pos = min(sess.cur.pos, sess.doc.count(id)-1)
	sess.tail = false
	return nil
}

// publish sends the session's view to every page showing it, and for the
// classroom's instructor, to every student following. A panic while
// building the views is logged and reported to the session's pages.
func (s *protocol) publish(sess *session) {
	err := s.guard("showing the view", func() error {
		s.publishViews(sess)
		return nil
	})
	if err != nil {
		s.hub.broadcast(sess.id, errorMessage(err.Error()))
	}
}

func (s *protocol) publishViews(sess *session) {
	if sess.following() { // its pages take the classroom's stream
		s.hub.wakeSession(sess.id)
		return
	}
	msg, seq := s.viewMessage(sess)
	s.hub.offerSession(sess.id, msg, seq)
	if sess.teach {
		s.publishCast()
	}
}

// viewMessage renders what a session's page shows as a "view" message, and
// returns it with its sequence number.
func (s *protocol) viewMessage(sess *session) ([]byte, uint64) {
	v, running, seq := s.stepperFor(sess)
	var html bytes.Buffer
	if err := view.Stepper(v).Render(context.Background(), &html); err != nil {
		return errorMessage("could not render the view: " + err.Error()), seq
	}
	// The HTML travels as a JSON string; escaping its < and > for embedding
	// in HTML would only make it longer.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(outbound{Type: msgView, Seq: seq, Index: v.Index, Count: v.Count, Running: running, HTML: html.String()}); err != nil {
		return errorMessage("could not encode the view"), seq
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), seq
}

// stepperFor builds a session's stepper view, charts included: what its
// page shows (the instructor's document while following) with its own
// preferences.
func (s *protocol) stepperFor(sess *session) (view.StepperView, bool, uint64) {
	sess.mu.Lock()
	o := buildOpts{session: sess.id, charts: sess.charts, dark: sess.dark, words: s.words(sess.lang), bandwidth: s.bandwidth()}
	if sess.pair {
		o.lesson = s.lesson
	}
	sess.mu.Unlock()
	switch {
	case sess.following():
		o.following = "instructor"
	case sess.leader != nil:
		o.following = "detached"
	}
	src := sess.source()
	src.mu.Lock()
	v, jobs := stepperView(src.doc, src.cur, o)
	if src.cur.pending {
		v.Hit = src.cur.hit
	}
	running := src.doc.live()
	seq := s.seq.Add(1)
	src.mu.Unlock()
	if v.Charts != nil {
		view.RenderCharts(s.charts, v.Charts, jobs)
	}
	return v, running, seq
}

// chartRequest finds the chart named name at step of what the session
// shows, worded in the session's language (words gives a language's).
func chartRequest(sess *session, name string, step int, words func(lang string) words.Words) (view.ChartJob, error) {
	sess.mu.Lock()
	o := buildOpts{session: sess.id, dark: sess.dark, words: words(sess.lang)}
	sess.mu.Unlock()
	src := sess.source()
	src.mu.Lock()
	defer src.mu.Unlock()
	d, cur := src.doc, src.cur
	shown, branch := d.runs[:1], cur.branch
	var steps []trace.Step
	if d.compare {
		shown, branch = d.runs, 0
	} else {
		steps = pathSteps(d.runs[0].trace, branch)
	}
	n := d.count(branch)
	if d.walk != nil {
		n = len(d.runs[0].trace.Steps)
	}
	if step < 0 || step >= n {
		return view.ChartJob{}, fmt.Errorf("step index %d is out of range: this run has steps 0 to %d", step, n-1)
	}
	v, jobs := chartsFor(shown, branch, steps, step, o)
	for i, c := range v.Charts {
		if c.Name == name {
			return jobs[i], nil
		}
	}
	return view.ChartJob{}, fmt.Errorf("no chart %q for this run", name)
}
