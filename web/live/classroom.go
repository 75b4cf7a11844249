package live

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"tracer/engine/bench"
	"tracer/lessons"
)

// classroom is the server's classroom mode: one instructor session (the
// leader) that students' sessions follow live. Only a page that shows the
// secret token may drive the leader.
type classroom struct {
	Token  string
	Leader *Session
	cast   *castState // what the followers are shown (cast.go)

	quiz    *quizTally       // the students' quiz answers (quiz.go)
	lessons *lessons.Catalog // whose questions they answer
}

// newToken returns a random secret of 32 bytes in hex.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("web: classroom token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Check compares a token with the classroom's in constant time.
func (c *classroom) Check(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(c.Token)) == 1
}

// errFollowing answers a student who tries to drive while following.
var errFollowing = errors.New("You are following the instructor: press Detach (d) to explore on your own, and Rejoin to follow again.")

// detach gives a following student a copy of what the instructor shows,
// to step through and branch on their own.
func (s *Protocol) detach(sess *Session) error {
	if sess.Leader == nil {
		return errors.New("detach: this page is not following a classroom")
	}
	if !sess.Following() {
		return nil
	}
	l := sess.Leader
	l.Mu.Lock()
	d := s.ForkDocument(l.Doc)
	cur := l.Cur
	cur.Pending = false
	l.Mu.Unlock()
	sess.Mu.Lock()
	sess.stopLocked()
	sess.Doc, sess.Cur, sess.until, sess.tail = d, cur, nil, false
	sess.Mu.Unlock()
	sess.Detached.Store(true)
	return nil
}

// rejoin makes a detached student follow the instructor again.
func (s *Protocol) rejoin(sess *Session) error {
	if sess.Leader == nil {
		return errors.New("rejoin: this page is not part of a classroom")
	}
	sess.Detached.Store(false)
	sess.close()
	return nil
}

// recall makes every detached student of the instructor's class follow
// again, the instructor's "bring everyone back": each of their pages takes
// the classroom's stream from its start, as a page that rejoined itself
// and asked for the view would.
func (s *Protocol) recall(sess *Session) error {
	if s.Class == nil || sess != s.Class.Leader {
		return errors.New("recall: only the instructor of a classroom brings the class back")
	}
	for _, st := range s.Hub.classPages(sess, false) {
		if err := s.rejoin(st); err != nil {
			return err
		}
		s.Hub.restartStream(st)
	}
	return nil
}

// TeachCookie holds the instructor's secret once the instructor's page has
// opened: the page drops ?teach= from the address bar, and no link on the
// page carries the secret, so projecting the browser shows nothing a
// student could use. HttpOnly keeps it from the page's scripts;
// SameSite=Strict from other sites' requests.
const TeachCookie = "tracer_teach"

// SetTeachCookie remembers the instructor's secret in the browser for the
// page's requests (the WebSocket, imports).
func SetTeachCookie(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{Name: TeachCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// Instructor reports whether a request comes from the instructor: it
// carries the secret in its cookie, or (scripts, older pages) in ?teach=.
func (s *Protocol) Instructor(r *http.Request) bool {
	if s.Class == nil {
		return false
	}
	if c, err := r.Cookie(TeachCookie); err == nil && s.Class.Check(c.Value) {
		return true
	}
	t := r.URL.Query().Get("teach")
	return t != "" && s.Class.Check(t)
}

// OpenClassroom makes the instructor's session and its secret.
func (s *Protocol) OpenClassroom() error {
	token, err := newToken()
	if err != nil {
		return err
	}
	d, err := s.FirstRun(context.Background())
	if err != nil {
		return err
	}
	leader, err := s.Sessions.Create(d, func(x *Session) { x.Teach = true })
	if err != nil {
		return err
	}
	quiz, err := newQuizTally()
	if err != nil {
		return err
	}
	cat, err := lessons.Load()
	if err != nil {
		return err
	}
	s.Sessions.pin(leader)
	s.Class = &classroom{Token: token, Leader: leader, cast: newCastState(), quiz: quiz, lessons: cat}
	return nil
}

// machine is what the bandwidth probe measured; zero when unknown.
func (s *Protocol) machine() bench.Machine {
	if s.cfg.Machine == nil {
		return bench.Machine{}
	}
	return s.cfg.Machine()
}
