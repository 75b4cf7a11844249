package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"tracer/web/runs"
)

// Session is one open page: its document, its position and its running
// generation. In classroom mode a student's session follows the
// instructor's (leader) until it detaches.
type Session struct {
	ID       string
	Leader   *Session    // classroom: the instructor's session this one follows; nil otherwise
	Detached atomic.Bool // a follower exploring on its own
	Teach    bool        // the classroom's instructor session

	Mu     sync.Mutex
	Doc    *runs.Document
	Cur    runs.Cursor
	pair   bool              // show the toy's step beside a real run
	charts bool              // render the charts panel
	dark   bool              // the page is dark: charts in the dark palette
	Lang   string            // the page's language: "en" or "hi"
	tail   bool              // follow the newest step while generating
	until  *runs.Breakpoints // breakpoints waiting for steps still to come
	job    *job              // the generation in progress, if any
	used   time.Time

	Conns    atomic.Int32 // pages connected over the WebSocket now
	seen     atomic.Bool  // a page has connected at least once
	runs     atomic.Int32 // generations of this page not yet ended (a stopped one may still be finishing)
	imported atomic.Int64 // bytes of the imported trace it holds, counted against Config.MaxImportTotal
}

func newSession(id string, d *runs.Document, now time.Time) *Session {
	return &Session{ID: id, Doc: d, used: now, charts: true}
}

// Following reports whether the session mirrors its leader right now.
func (s *Session) Following() bool {
	return s.Leader != nil && !s.Detached.Load()
}

// source returns the session whose document and cursor the page shows: the
// leader while following, else s itself.
func (s *Session) source() *Session {
	if s.Following() {
		return s.Leader
	}
	return s
}

// Load replaces the session's document, stops its generation and goes back
// to the start.
func (s *Session) Load(d *runs.Document) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.stopLocked()
	s.Doc, s.Cur, s.until, s.tail = d, runs.Cursor{}, nil, false
}

// move applies a navigation message. Only an explicit index can be out of
// range; first/prev/next/last stay inside.
func (s *Session) move(m inbound) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	n := s.Doc.Count(s.Cur.Branch)
	pos := s.Cur.Pos
	switch m.Type {
	case msgFirst:
		pos = 0
	case msgPrev:
		pos = max(0, pos-1)
	case msgNext:
		pos = min(n-1, pos+1)
	case msgLast:
		pos = n - 1
	case msgStep:
		if *m.Index < 0 || *m.Index >= n {
			return fmt.Errorf("step index %d is out of range: this trace has positions 0 to %d", *m.Index, n-1)
		}
		pos = *m.Index
	case MsgView:
		return nil
	}
	s.Cur.Pos, s.Cur.Hit, s.Cur.Pending, s.until = pos, "", false, nil
	s.tail = s.Doc.Live() && pos == n-1
	return nil
}

// stopLocked cancels the session's generation, if any. The caller holds mu.
func (s *Session) stopLocked() {
	if s.job != nil {
		s.job.cancel()
		s.job = nil
	}
}

// close stops whatever the session runs; the store calls it when the
// session is forgotten.
func (s *Session) close() {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.stopLocked()
}

// job is a generation running for a session.
type job struct {
	ctx    context.Context
	cancel context.CancelFunc
	notify chan struct{} // a step arrived or the run ended: publish (capacity 1, coalescing)
	done   chan struct{} // closed when the generation goroutine has ended
	err    error         // why the work failed; read after done is closed
}

func newJob() *job {
	ctx, cancel := context.WithCancel(context.Background())
	return &job{ctx: ctx, cancel: cancel, notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// poke asks the job's publisher to send the session's view; it never
// blocks: pokes that arrive while one is pending merge into it.
func (j *job) poke() {
	select {
	case j.notify <- struct{}{}:
	default:
	}
}

// store holds the open sessions. Sessions idle longer than ttl are dropped
// unless a page is connected to them. When max sessions are open, one that
// no page is connected to makes room: first those that never had a page
// connected (a plain GET /), then the least recently used. A session with a
// connected page is never dropped, and pinned sessions (the classroom's
// instructor) are never dropped: when every session is in use, create
// refuses with errSessionsFull.
type store struct {
	max int
	ttl time.Duration
	now func() time.Time

	Mu      sync.Mutex
	ByID    map[string]*Session
	pinned  map[string]bool
	imports int64 // bytes of imported traces the sessions hold, the sum of their imported
}

// SessionsFullError is create's answer when every session has a page
// connected.
type SessionsFullError struct{ max int }

func (e SessionsFullError) Error() string {
	return fmt.Sprintf("this server already has %d pages open, its limit: close a tab, or start tracer serve with a larger --max-sessions", e.max)
}

func newStore(max int, ttl time.Duration) *store {
	return &store{max: max, ttl: ttl, now: time.Now, ByID: map[string]*Session{}, pinned: map[string]bool{}}
}

// Create opens a session showing d; init, when not nil, sets it up before
// anyone can find it.
func (st *store) Create(d *runs.Document, init func(*Session)) (*Session, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("web: session id: %w", err)
	}
	now := st.now()
	s := newSession(hex.EncodeToString(b[:]), d, now)
	if init != nil {
		init(s)
	}
	var dropped []*Session
	st.Mu.Lock()
	dropped = st.expire(now)
	for len(st.ByID)-len(st.pinned) >= st.max {
		old := st.evictable(now)
		if old == nil {
			st.Mu.Unlock()
			st.closeDropped(dropped)
			return nil, SessionsFullError{st.max}
		}
		delete(st.ByID, old.ID)
		dropped = append(dropped, old)
	}
	st.ByID[s.ID] = s
	st.Mu.Unlock()
	st.closeDropped(dropped)
	return s, nil
}

// closeDropped stops the sessions just forgotten and frees what their
// imports held against the import limit.
func (st *store) closeDropped(ss []*Session) {
	for _, s := range ss {
		st.HoldImport(s, 0, 0)
		s.close()
	}
}

// HoldImport counts n bytes of imported trace for s in place of what it
// held before, unless all sessions together would then hold more than
// limit (0: no limit, for releasing); it reports the total held and
// whether it did.
func (st *store) HoldImport(s *Session, n, limit int64) (int64, bool) {
	st.Mu.Lock()
	defer st.Mu.Unlock()
	total := st.imports - s.imported.Load() + n
	if limit > 0 && total > limit {
		return st.imports, false
	}
	st.imports = total
	s.imported.Store(n)
	return total, true
}

// pin keeps s open for good.
func (st *store) pin(s *Session) {
	st.Mu.Lock()
	defer st.Mu.Unlock()
	st.pinned[s.ID] = true
}

// Get returns the session with the id and marks it used.
func (st *store) Get(id string) (*Session, bool) {
	now := st.now()
	st.Mu.Lock()
	s, ok := st.ByID[id]
	if ok && st.stale(id, s, now) {
		delete(st.ByID, id)
		st.Mu.Unlock()
		st.closeDropped([]*Session{s})
		return nil, false
	}
	st.Mu.Unlock()
	if !ok {
		return nil, false
	}
	s.touch(now)
	return s, true
}

// stale reports whether a session has outlived the ttl: idle that long,
// not pinned, and no page connected. The caller holds st.mu.
func (st *store) stale(id string, s *Session, now time.Time) bool {
	return !st.pinned[id] && s.Conns.Load() == 0 && now.Sub(s.lastUsed()) > st.ttl
}

// Len returns the number of open sessions.
func (st *store) Len() int {
	st.Mu.Lock()
	defer st.Mu.Unlock()
	return len(st.ByID)
}

// CloseAll stops every session's generation (at shutdown).
func (st *store) CloseAll() {
	st.Mu.Lock()
	all := make([]*Session, 0, len(st.ByID))
	for _, s := range st.ByID {
		all = append(all, s)
	}
	st.Mu.Unlock()
	for _, s := range all {
		s.close()
	}
}

func (st *store) expire(now time.Time) []*Session {
	var out []*Session
	for id, s := range st.ByID {
		if st.stale(id, s, now) {
			delete(st.ByID, id)
			out = append(out, s)
		}
	}
	return out
}

// sessionGrace is how long a session counts as fresh: a page just loaded
// that has not connected yet, or one whose connection dropped and that is
// still retrying (the page retries for about 5 s).
const sessionGrace = 10 * time.Second

// evictable picks the session to drop for a new one, never a pinned one or
// one with a page connected; nil when none may go. Among the others it
// drops, oldest first: pages never connected and no longer fresh (plain
// GETs, crawlers), then pages gone longer than the grace, then fresh pages
// not yet connected, and last pages that dropped a moment ago. A crowd of
// plain GETs thus evicts itself before a student who blinked. The caller
// holds st.mu.
func (st *store) evictable(now time.Time) *Session {
	rank := func(s *Session) int {
		fresh := now.Sub(s.lastUsed()) <= sessionGrace
		switch seen := s.seen.Load(); {
		case !seen && !fresh:
			return 0
		case seen && !fresh:
			return 1
		case !seen:
			return 2
		}
		return 3
	}
	var pick *Session
	pickRank := 0
	for id, s := range st.ByID {
		if st.pinned[id] || s.Conns.Load() > 0 {
			continue
		}
		r := rank(s)
		if pick == nil || r < pickRank || r == pickRank && s.lastUsed().Before(pick.lastUsed()) {
			pick, pickRank = s, r
		}
	}
	return pick
}

func (s *Session) lastUsed() time.Time {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.used
}

func (s *Session) touch(now time.Time) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.used = now
}
