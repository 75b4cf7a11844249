package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
)

// classroom is the server's classroom mode: one instructor session (the
// leader) that students' sessions follow live. Only a page that shows the
// secret token may drive the leader.
type classroom struct {
	token  string
	leader *session
	cast   *castState // what the followers are shown (cast.go)
}

// newToken returns a random secret of 32 bytes in hex.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("web: classroom token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// check compares a token with the classroom's in constant time.
func (c *classroom) check(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(c.token)) == 1
}

// errFollowing answers a student who tries to drive while following.
var errFollowing = errors.New("You are following the instructor: press Detach (d) to explore on your own, and Rejoin to follow again.")

// detach gives a following student a copy of what the instructor shows,
// to step through and branch on their own.
func (s *protocol) detach(sess *session) error {
	if sess.leader == nil {
		return errors.New("detach: this page is not following a classroom")
	}
	if !sess.following() {
		return nil
	}
	l := sess.leader
	l.mu.Lock()
	d := s.forkDocument(l.doc)
	cur := l.cur
	cur.pending = false
	l.mu.Unlock()
	sess.mu.Lock()
	sess.stopLocked()
	sess.doc, sess.cur, sess.until, sess.tail = d, cur, nil, false
	sess.mu.Unlock()
	sess.detached.Store(true)
	return nil
}

// rejoin makes a detached student follow the instructor again.
func (s *protocol) rejoin(sess *session) error {
	if sess.leader == nil {
		return errors.New("rejoin: this page is not part of a classroom")
	}
	sess.detached.Store(false)
	sess.close()
	return nil
}

// teachCookie holds the instructor's secret once the instructor's page has
// opened: the page drops ?teach= from the address bar, and no link on the
// page carries the secret, so projecting the browser shows nothing a
// student could use. HttpOnly keeps it from the page's scripts;
// SameSite=Strict from other sites' requests.
const teachCookie = "tracer_teach"

// setTeachCookie remembers the instructor's secret in the browser for the
// page's requests (the WebSocket, imports).
func setTeachCookie(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{Name: teachCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// instructor reports whether a request comes from the instructor: it
// carries the secret in its cookie, or (scripts, older pages) in ?teach=.
func (s *protocol) instructor(r *http.Request) bool {
	if s.class == nil {
		return false
	}
	if c, err := r.Cookie(teachCookie); err == nil && s.class.check(c.Value) {
		return true
	}
	t := r.URL.Query().Get("teach")
	return t != "" && s.class.check(t)
}

// openClassroom makes the instructor's session and its secret.
func (s *protocol) openClassroom() error {
	token, err := newToken()
	if err != nil {
		return err
	}
	d, err := s.firstRun(context.Background())
	if err != nil {
		return err
	}
	leader, err := s.sessions.create(d, func(x *session) { x.teach = true })
	if err != nil {
		return err
	}
	s.sessions.pin(leader)
	s.class = &classroom{token: token, leader: leader, cast: newCastState()}
	return nil
}

// bandwidth is the machine's read bandwidth in GB/s, 0 when unknown.
func (s *protocol) bandwidth() float64 {
	if s.cfg.Bandwidth == nil {
		return 0
	}
	return s.cfg.Bandwidth()
}
