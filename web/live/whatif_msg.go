package live

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"tracer/web/runs"
	"tracer/web/view"
)

// whatIfReply is the answer to a "whatif" message: the rendered outcome
// and the settings it used (the run's own when the page sent none).
type whatIfReply struct {
	Type     string               `json:"type"`
	HTML     string               `json:"html"`
	Settings *runs.WhatIfSettings `json:"settings,omitempty"` // nil with a note instead of an outcome
}

// WhatIfMessage answers a "whatif" message for the page of sess: the step
// its stepper shows (the instructor's, while following), re-sampled with
// the form's settings. It changes nothing in the session. A follower's
// answer is the class's: computed once per change of the instructor's,
// language and settings (castWhatIf).
func (s *Protocol) WhatIfMessage(sess *Session, f *runs.WhatIfForm) ([]byte, error) {
	if !sess.Following() {
		return s.whatIfAnswer(sess, f)
	}
	sess.Mu.Lock()
	lang := sess.Lang
	sess.Mu.Unlock()
	form, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	c := s.Class.cast
	return c.whatIf.get(c.stamp.Load(), lang+"\x00"+string(form), func() ([]byte, error) { return s.whatIfAnswer(sess, f) })
}

// whatIfAnswer computes the answer to a "whatif" message.
func (s *Protocol) whatIfAnswer(sess *Session, f *runs.WhatIfForm) ([]byte, error) {
	src := sess.source()
	src.Mu.Lock()
	w, err := runs.WhatIfAt(src.Doc, src.Cur)
	src.Mu.Unlock()
	sess.Mu.Lock()
	words := s.Words(sess.Lang)
	sess.Mu.Unlock()
	var here runs.ErrWhatIfHere
	if errors.As(err, &here) {
		var b strings.Builder
		if err := view.WhatIfNote(words.T(here.Key)).Render(context.Background(), &b); err != nil {
			return nil, err
		}
		return json.Marshal(whatIfReply{Type: MsgWhatIf, HTML: b.String()})
	}
	if err != nil {
		return nil, err
	}
	// Recomputing and re-sampling a step costs arrays of the vocabulary's
	// size: at most half the CPUs' worth run at once, the others wait.
	select {
	case s.whatIfs <- struct{}{}:
	case <-s.Done.Done():
		return nil, errors.New("the server is shutting down")
	}
	defer func() { <-s.whatIfs }()
	if w.Again != nil {
		w.Logits = w.Again()
	}
	set, err := f.Apply(runs.SettingsOf(w.T.Options), w.T.Model.VocabSize)
	if err != nil {
		return nil, err
	}
	out, err := runs.ReSample(w, set)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := view.WhatIfResult(runs.BuildWhatIf(w, out, words), words).Render(context.Background(), &b); err != nil {
		return nil, err
	}
	return json.Marshal(whatIfReply{Type: MsgWhatIf, HTML: b.String(), Settings: &set})
}
