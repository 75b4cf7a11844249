package web

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"tracer/lessons"
	"tracer/trace"
)

// document is what a session shows: a trace and, for toy traces that fit a
// table, its walkthrough. Documents are never changed once built, so
// sessions and renders share them without locks.
type document struct {
	trace  *trace.Trace
	walk   *lessons.Walkthrough // nil: the stepper walks trace steps
	source string               // where the trace came from, for the page
	notice string               // why a toy trace is not narrated, if it is not
}

// count is the number of stepper positions: the walkthrough's moments, or
// the trace's steps (at least one, so an empty trace still shows its output).
func (d *document) count() int {
	if d.walk != nil {
		return len(d.walk.Moments)
	}
	return max(1, len(d.trace.Steps))
}

// session is one open page: its document and position.
type session struct {
	id string

	mu   sync.Mutex
	doc  *document
	pos  int
	used time.Time
}

// state returns the session's document and position.
func (s *session) state() (*document, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doc, s.pos
}

// load replaces the session's document and goes back to the start.
func (s *session) load(d *document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc, s.pos = d, 0
}

// move applies a navigation message and returns the new state. Only an
// explicit index can be out of range; first/prev/next/last stay inside.
func (s *session) move(m inbound) (*document, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.doc.count()
	switch m.Type {
	case msgFirst:
		s.pos = 0
	case msgPrev:
		s.pos = max(0, s.pos-1)
	case msgNext:
		s.pos = min(n-1, s.pos+1)
	case msgLast:
		s.pos = n - 1
	case msgStep:
		if *m.Index < 0 || *m.Index >= n {
			return s.doc, s.pos, fmt.Errorf("step index %d is out of range: this trace has positions 0 to %d", *m.Index, n-1)
		}
		s.pos = *m.Index
	}
	return s.doc, s.pos, nil
}

// store holds the open sessions. Sessions idle longer than ttl are dropped,
// and when max sessions are open the least recently used one makes room.
type store struct {
	max int
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	byID map[string]*session
}

func newStore(max int, ttl time.Duration) *store {
	return &store{max: max, ttl: ttl, now: time.Now, byID: map[string]*session{}}
}

// create opens a session showing d.
func (st *store) create(d *document) (*session, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("web: session id: %w", err)
	}
	now := st.now()
	s := &session{id: hex.EncodeToString(b[:]), doc: d, used: now}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expire(now)
	for len(st.byID) >= st.max {
		st.dropOldest()
	}
	st.byID[s.id] = s
	return s, nil
}

// get returns the session with the id and marks it used.
func (st *store) get(id string) (*session, bool) {
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.byID[id]
	if !ok {
		return nil, false
	}
	if now.Sub(s.lastUsed()) > st.ttl {
		delete(st.byID, id)
		return nil, false
	}
	s.touch(now)
	return s, true
}

// len returns the number of open sessions.
func (st *store) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}

func (st *store) expire(now time.Time) {
	for id, s := range st.byID {
		if now.Sub(s.lastUsed()) > st.ttl {
			delete(st.byID, id)
		}
	}
}

func (st *store) dropOldest() {
	var oldest *session
	for _, s := range st.byID {
		if oldest == nil || s.lastUsed().Before(oldest.lastUsed()) {
			oldest = s
		}
	}
	delete(st.byID, oldest.id)
}

func (s *session) lastUsed() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

func (s *session) touch(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = now
}
