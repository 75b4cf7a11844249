package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"tracer/engine/tokenizer"
	"tracer/trace"
	"tracer/web/runs"
	"tracer/web/view"
	"tracer/web/words"
)

// handleMessage answers one WebSocket message from a page. A message that
// changes the session publishes its new view to every page showing it; a
// bad one gets an error reply on its own connection.
//
// It runs behind a recovery boundary: a panic while answering is this
// page's error, and the server goes on.
func (s *Protocol) handleMessage(c *client, data []byte) {
	var m inbound
	err := s.Guard("answering the page's message", func() error {
		var err error
		m, err = ParseInbound(data)
		if err == nil {
			err = s.Apply(c.sess, m)
		}
		if err != nil {
			return err
		}
		if m.Type == MsgView && c.sess.Following() { // the stream from the start
			c.castAgain.Store(true)
			c.nudge()
			return nil
		}
		if m.Type == MsgView { // only the asking page needs it
			msg, seq := s.ViewMessage(c.sess)
			s.Hub.offer(c, msg, seq)
			return nil
		}
		if m.Type == MsgWhatIf { // the asking page's alone; the session stays as it is
			msg, err := s.WhatIfMessage(c.sess, m.WhatIf)
			if err != nil {
				return err
			}
			s.Hub.send(c, msg)
			return nil
		}
		s.Publish(c.sess)
		return nil
	})
	if err == nil {
		return
	}
	text := s.Catalog.Redact(err.Error())
	if m.Type == MsgGenerate || m.Type == MsgCompare { // refused: no run started
		field := ""
		if m.Form != nil {
			field = runs.FormField(*m.Form, m.Type == MsgCompare, text)
		}
		s.Hub.send(c, refusedMessage(text, field))
		return
	}
	s.Hub.send(c, ErrorMessage(text))
}

// Apply makes the change a message asks of a session.
func (s *Protocol) Apply(sess *Session, m inbound) error {
	switch m.Type {
	case MsgView, MsgWhatIf:
		return nil
	case msgPair, msgCharts: // the page's own preferences, also while following
		sess.Mu.Lock()
		defer sess.Mu.Unlock()
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
	case msgRecall:
		return s.recall(sess)
	}
	if sess.Following() {
		return errFollowing
	}
	switch m.Type {
	case msgFirst, msgPrev, msgNext, msgLast, msgStep:
		return sess.move(m)
	case MsgGenerate:
		sp, err := s.Prepare(*m.Form, "")
		if err != nil {
			return err
		}
		if err := s.reserveRun(sess); err != nil {
			return err
		}
		s.startRuns(sess, []runs.Spec{sp}, false, fmt.Sprintf("run of %s, %s", sp.Name, sp.Label))
		return nil
	case MsgCompare:
		specs, source, err := s.CompareSpecs(*m.Form)
		if err != nil {
			return err
		}
		if err := s.reserveRun(sess); err != nil {
			return err
		}
		s.startRuns(sess, specs, true, source)
		return nil
	}
	sess.Mu.Lock()
	defer sess.Mu.Unlock()
	switch m.Type {
	case msgStop:
		if sess.job == nil {
			return errors.New("nothing is generating")
		}
		sess.stopLocked()
		return nil
	case msgSelect:
		return selectBranch(sess, *m.Branch)
	case MsgBranch:
		p, err := runs.PlanBranch(sess.Doc, sess.Cur, runs.BranchAsk{Step: m.Step, ID: m.ID, Token: m.Token, WhatIf: m.WhatIf})
		if err != nil {
			return err
		}
		if p.Existing >= 0 { // that token was chosen there already: go to it
			goToExisting(sess, p)
			return nil
		}
		if err := s.CheckBranch(sess.Doc.Runs[0]); err != nil {
			return err
		}
		if err := s.reserveRun(sess); err != nil {
			return err
		}
		s.startBranch(sess, p)
		return nil
	case msgUntil:
		if sess.Doc.Walk != nil || sess.Doc.Compare {
			return errors.New("breakpoints work on a single run: generate one first")
		}
		r := sess.Doc.Runs[0]
		var tok tokenizer.Tokenizer
		if r.Model != nil {
			tok = r.Model.Tokenizer
		}
		b, err := m.Until.Parse(tok, r.Trace.Model.VocabSize)
		if err != nil {
			return err
		}
		b.W = s.Words(sess.Lang)
		runUntil(sess, b)
		return nil
	case msgRow:
		n := runs.RowCount(sess.Doc.Runs[0].Trace)
		if *m.Index < 0 || *m.Index >= n || sess.Doc.Walk != nil {
			return fmt.Errorf("row %d is out of range: this run has rows 0 to %d", *m.Index, n-1)
		}
		sess.Cur.Row = *m.Index
		return nil
	}
	return fmt.Errorf("bad message: %q is not handled", m.Type)
}

// selectBranch follows another branch of the run, keeping the position
// where the new path has it. The caller holds the session's lock.
func selectBranch(sess *Session, id int) error {
	d := sess.Doc
	t := d.Runs[0].Trace
	if d.Compare || id < 0 || id > len(t.Branches) {
		return fmt.Errorf("branch %d does not exist: this run has branches 0 (the trunk) to %d", id, len(t.Branches))
	}
	if d.Walk != nil {
		sess.Doc = &runs.Document{Runs: d.Runs, Source: d.Source, Origin: d.Origin}
	}
	sess.Cur.Branch, sess.Cur.Hit, sess.Cur.Pending, sess.until = id, "", false, nil
	sess.Cur.Pos = min(sess.Cur.Pos, sess.Doc.Count(id)-1)
	sess.tail = false
	return nil
}

// Publish sends the session's view to every page showing it, and for the
// classroom's instructor, to every student following. A panic while
// building the views is logged and reported to the session's pages.
func (s *Protocol) Publish(sess *Session) {
	err := s.Guard("showing the view", func() error {
		s.publishViews(sess)
		return nil
	})
	if err != nil {
		s.Hub.broadcast(sess.ID, ErrorMessage(err.Error()))
	}
}

func (s *Protocol) publishViews(sess *Session) {
	if sess.Following() { // its pages take the classroom's stream
		s.Hub.wakeSession(sess.ID)
		return
	}
	msg, seq := s.ViewMessage(sess)
	s.Hub.offerSession(sess.ID, msg, seq)
	if sess.Teach {
		s.publishCast()
	}
}

// ViewMessage renders what a session's page shows as a "view" message, and
// returns it with its sequence number.
func (s *Protocol) ViewMessage(sess *Session) ([]byte, uint64) {
	v, running, seq := s.StepperFor(sess)
	var html bytes.Buffer
	if err := view.Stepper(v).Render(context.Background(), &html); err != nil {
		return ErrorMessage("could not render the view: " + err.Error()), seq
	}
	// The HTML travels as a JSON string; escaping its < and > for embedding
	// in HTML would only make it longer.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Outbound{Type: MsgView, Seq: seq, Index: v.Index, Count: v.Count, Running: running, HTML: html.String()}); err != nil {
		return ErrorMessage("could not encode the view"), seq
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), seq
}

// StepperFor builds a session's stepper view, charts included: what its
// page shows (the instructor's document while following) with its own
// preferences.
func (s *Protocol) StepperFor(sess *Session) (view.StepperView, bool, uint64) {
	sess.Mu.Lock()
	o := runs.BuildOpts{Session: sess.ID, Charts: sess.charts, Dark: sess.dark, Words: s.Words(sess.Lang), Machine: s.machine()}
	if sess.pair {
		o.Lesson = s.Lesson
	}
	sess.Mu.Unlock()
	switch {
	case sess.Following():
		o.Following = "instructor"
	case sess.Leader != nil:
		o.Following = "detached"
	}
	src := sess.source()
	src.Mu.Lock()
	v, jobs := runs.BuildStepper(src.Doc, src.Cur, o)
	if src.Cur.Pending {
		v.Hit = src.Cur.Hit
	}
	running := src.Doc.Live()
	seq := s.Seq.Add(1)
	src.Mu.Unlock()
	if v.Charts != nil {
		view.RenderCharts(s.Charts, v.Charts, jobs)
	}
	return v, running, seq
}

// ChartRequest finds the chart named name at step of what the session
// shows, worded in the session's language (words gives a language's).
func ChartRequest(sess *Session, name string, step int, words func(lang string) words.Words) (view.ChartJob, error) {
	sess.Mu.Lock()
	o := runs.BuildOpts{Session: sess.ID, Dark: sess.dark, Words: words(sess.Lang)}
	sess.Mu.Unlock()
	src := sess.source()
	src.Mu.Lock()
	defer src.Mu.Unlock()
	d, cur := src.Doc, src.Cur
	shown, branch := d.Runs[:1], cur.Branch
	var steps []trace.Step
	if d.Compare {
		shown, branch = d.Runs, 0
	} else {
		steps = runs.PathSteps(d.Runs[0].Trace, branch)
	}
	n := d.Count(branch)
	if d.Walk != nil {
		n = len(d.Runs[0].Trace.Steps)
	}
	if step < 0 || step >= n {
		return view.ChartJob{}, fmt.Errorf("step index %d is out of range: this run has steps 0 to %d", step, n-1)
	}
	v, jobs := runs.ChartsFor(shown, branch, steps, step, o)
	for i, c := range v.Charts {
		if c.Name == name {
			return jobs[i], nil
		}
	}
	return view.ChartJob{}, fmt.Errorf("no chart %q for this run", name)
}
