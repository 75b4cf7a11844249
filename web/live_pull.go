package web

import (
	"encoding/json"
	"errors"

	"tracer/web/words"
)

// mayPull says whether the session's page may download models: never with
// Config.NoPull; in classroom mode, only the instructor; otherwise only
// while the server listens on loopback, where the page is its user's own.
func (s *protocol) mayPull(sess *session) error {
	switch {
	case s.cfg.NoPull:
		return errors.New("this server does not download models (it was started with --no-pull): run tracer pull ORG/NAME on its machine")
	case s.class != nil && !sess.teach:
		return errors.New("in a classroom only the instructor downloads models: ask the instructor")
	case s.class == nil && !s.cfg.OnLoopback():
		return errors.New("this server is open to other machines, so its pages do not download models: run tracer pull ORG/NAME on its machine, or serve in --classroom mode and download from the instructor's page")
	}
	return nil
}

// canPull reports whether the run form shows the download row to sess.
func (s *protocol) canPull(sess *session) bool {
	return s.cfg.Hub != nil && s.cfg.HFCache != "" && (sess == nil || s.mayPull(sess) == nil)
}

// startPull downloads repo in the background (runner.pull), streaming
// progress to the session's pages; when it is done the model joins the
// menu.
func (s *protocol) startPull(sess *session, repo string) error {
	sess.mu.Lock()
	w := s.words(sess.lang)
	sess.mu.Unlock()
	return s.pull(repo, func(spec string) {
		s.hub.broadcast(sess.id, pageMessage(msgProgress, w.F(words.KeyDbgPullStarted, "repo", spec)))
	}, func(text string) {
		s.hub.broadcast(sess.id, pageMessage(msgProgress, text))
	}, func(spec string, err error) {
		if err != nil {
			s.hub.broadcast(sess.id, errorMessage(err.Error()))
			return
		}
		s.hub.broadcast(sess.id, pageMessage(msgPulled, w.F(words.KeyDbgPullDone, "repo", spec)))
	})
}

// pageMessage encodes a short message of type typ.
func pageMessage(typ, text string) []byte {
	b, _ := json.Marshal(outbound{Type: typ, Message: text})
	return b
}
