package web

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"tracer/web/view"
)

// whatIfReply is the answer to a "whatif" message: the rendered outcome
// and the settings it used (the run's own when the page sent none).
type whatIfReply struct {
	Type     string          `json:"type"`
	HTML     string          `json:"html"`
	Settings *whatIfSettings `json:"settings,omitempty"` // nil with a note instead of an outcome
}

// whatIfMessage answers a "whatif" message for the page of sess: the step
// its stepper shows (the instructor's, while following), re-sampled with
// the form's settings. It changes nothing in the session. A follower's
// answer is the class's: computed once per change of the instructor's,
// language and settings (castWhatIf).
func (s *protocol) whatIfMessage(sess *session, f *whatIfForm) ([]byte, error) {
	if !sess.following() {
		return s.whatIfAnswer(sess, f)
	}
	sess.mu.Lock()
	lang := sess.lang
	sess.mu.Unlock()
	form, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	c := s.class.cast
	return c.whatIf.get(c.stamp.Load(), lang+"\x00"+string(form), func() ([]byte, error) { return s.whatIfAnswer(sess, f) })
}

// whatIfAnswer computes the answer to a "whatif" message.
func (s *protocol) whatIfAnswer(sess *session, f *whatIfForm) ([]byte, error) {
	src := sess.source()
	src.mu.Lock()
	w, err := whatIfAt(src.doc, src.cur)
	src.mu.Unlock()
	sess.mu.Lock()
	words := s.words(sess.lang)
	sess.mu.Unlock()
	var here errWhatIfHere
	if errors.As(err, &here) {
		var b strings.Builder
		if err := view.WhatIfNote(words.T(here.key)).Render(context.Background(), &b); err != nil {
			return nil, err
		}
		return json.Marshal(whatIfReply{Type: msgWhatIf, HTML: b.String()})
	}
	if err != nil {
		return nil, err
	}
	if w.again != nil {
		w.logits = w.again()
	}
	set, err := f.apply(settingsOf(w.t.Options), w.t.Model.VocabSize)
	if err != nil {
		return nil, err
	}
	out, err := reSample(w, set)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := view.WhatIfResult(whatIfView(w, out, words), words).Render(context.Background(), &b); err != nil {
		return nil, err
	}
	return json.Marshal(whatIfReply{Type: msgWhatIf, HTML: b.String(), Settings: &set})
}
