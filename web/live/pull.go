package live

import (
	"encoding/json"
	"errors"

	"tracer/web/words"
)

// mayPull says whether the session's page may download models: never with
// Config.NoPull; in classroom mode, only the instructor; otherwise only
// while the server listens on loopback, where the page is its user's own.
func (s *Protocol) mayPull(sess *Session) error {
	switch {
	case s.cfg.NoPull:
		return errors.New("this server does not download models (it was started with --no-pull): run tracer pull ORG/NAME on its machine")
	case s.Class != nil && !sess.Teach:
		return errors.New("in a classroom only the instructor downloads models: ask the instructor")
	case s.Class == nil && !s.cfg.OnLoopback():
		return errors.New("this server is open to other machines, so its pages do not download models: run tracer pull ORG/NAME on its machine, or serve in --classroom mode and download from the instructor's page")
	}
	return nil
}

// CanPull reports whether the run form shows the download row to sess.
func (s *Protocol) CanPull(sess *Session) bool {
	return s.cfg.Hub != nil && s.cfg.HFCache != "" && (sess == nil || s.mayPull(sess) == nil)
}

// startPull downloads repo in the background (runner.pull), streaming
// progress to the session's pages; when it is done the model joins the
// menu.
func (s *Protocol) startPull(sess *Session, repo string) error {
	sess.Mu.Lock()
	w := s.Words(sess.Lang)
	sess.Mu.Unlock()
	return s.Pull(repo, func(spec string) {
		s.Hub.broadcast(sess.ID, pageMessage(MsgProgress, w.F(words.KeyDbgPullStarted, "repo", spec)))
	}, func(text string) {
		s.Hub.broadcast(sess.ID, pageMessage(MsgProgress, text))
	}, func(spec string, err error) {
		if err != nil {
			s.Hub.broadcast(sess.ID, ErrorMessage(err.Error()))
			return
		}
		s.Hub.broadcast(sess.ID, pageMessage(MsgPulled, w.F(words.KeyDbgPullDone, "repo", spec)))
	})
}

// pageMessage encodes a short message of type typ.
func pageMessage(typ, text string) []byte {
	b, _ := json.Marshal(Outbound{Type: typ, Message: text})
	return b
}
