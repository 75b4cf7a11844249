package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// session is one open page: its document, its position and its running
// generation. In classroom mode a student's session follows the
// instructor's (leader) until it detaches.
type session struct {
	id       string
	leader   *session    // classroom: the instructor's session this one follows; nil otherwise
	detached atomic.Bool // a follower exploring on its own
	teach    bool        // the classroom's instructor session

	mu     sync.Mutex
	doc    *document
	cur    cursor
	pair   bool         // show the toy's step beside a real run
	charts bool         // render the charts panel
	dark   bool         // the page is dark: charts in the dark palette
	lang   string       // the page's language: "en" or "hi"
	tail   bool         // follow the newest step while generating
	until  *breakpoints // breakpoints waiting for steps still to come
	job    *job         // the generation in progress, if any
	used   time.Time

	conns    atomic.Int32 // pages connected over the WebSocket now
	seen     atomic.Bool  // a page has connected at least once
	runs     atomic.Int32 // generations of this page not yet ended (a stopped one may still be finishing)
	imported atomic.Int64 // bytes of the imported trace it holds, counted against Config.MaxImportTotal
}

func newSession(id string, d *document, now time.Time) *session {
	return &session{id: id, doc: d, used: now, charts: true}
}

// following reports whether the session mirrors its leader right now.
func (s *session) following() bool {
	return s.leader != nil && !s.detached.Load()
}

// source returns the session whose document and cursor the page shows: the
// leader while following, else s itself.
func (s *session) source() *session {
	if s.following() {
		return s.leader
	}
	return s
}

// load replaces the session's document, stops its generation and goes back
// to the start.
func (s *session) load(d *document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
	s.doc, s.cur, s.until, s.tail = d, cursor{}, nil, false
}

// move applies a navigation message. Only an explicit index can be out of
// range; first/prev/next/last stay inside.
func (s *session) move(m inbound) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.doc.count(s.cur.branch)
	pos := s.cur.pos
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
	case msgView:
		return nil
	}
	s.cur.pos, s.cur.hit, s.cur.pending, s.until = pos, "", false, nil
	s.tail = s.doc.live() && pos == n-1
	return nil
}

// stopLocked cancels the session's generation, if any. The caller holds mu.
func (s *session) stopLocked() {
	if s.job != nil {
		s.job.cancel()
		s.job = nil
	}
}

// close stops whatever the session runs; the store calls it when the
// session is forgotten.
func (s *session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
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

	mu      sync.Mutex
	byID    map[string]*session
	pinned  map[string]bool
	imports int64 // bytes of imported traces the sessions hold, the sum of their imported
}

// errSessionsFull is create's answer when every session has a page
// connected.
type errSessionsFull struct{ max int }

func (e errSessionsFull) Error() string {
	return fmt.Sprintf("this server already has %d pages open, its limit: close a tab, or start tracer serve with a larger --max-sessions", e.max)
}

func newStore(max int, ttl time.Duration) *store {
	return &store{max: max, ttl: ttl, now: time.Now, byID: map[string]*session{}, pinned: map[string]bool{}}
}

// create opens a session showing d; init, when not nil, sets it up before
// anyone can find it.
func (st *store) create(d *document, init func(*session)) (*session, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("web: session id: %w", err)
	}
	now := st.now()
	s := newSession(hex.EncodeToString(b[:]), d, now)
	if init != nil {
		init(s)
	}
	var dropped []*session
	st.mu.Lock()
	dropped = st.expire(now)
	for len(st.byID)-len(st.pinned) >= st.max {
		old := st.evictable(now)
		if old == nil {
			st.mu.Unlock()
			st.closeDropped(dropped)
			return nil, errSessionsFull{st.max}
		}
		delete(st.byID, old.id)
		dropped = append(dropped, old)
	}
	st.byID[s.id] = s
	st.mu.Unlock()
	st.closeDropped(dropped)
	return s, nil
}

// closeDropped stops the sessions just forgotten and frees what their
// imports held against the import limit.
func (st *store) closeDropped(ss []*session) {
	for _, s := range ss {
		st.holdImport(s, 0, 0)
		s.close()
	}
}

// holdImport counts n bytes of imported trace for s in place of what it
// held before, unless all sessions together would then hold more than
// limit (0: no limit, for releasing); it reports the total held and
// whether it did.
func (st *store) holdImport(s *session, n, limit int64) (int64, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	total := st.imports - s.imported.Load() + n
	if limit > 0 && total > limit {
		return st.imports, false
	}
	st.imports = total
	s.imported.Store(n)
	return total, true
}

// pin keeps s open for good.
func (st *store) pin(s *session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.pinned[s.id] = true
}

// get returns the session with the id and marks it used.
func (st *store) get(id string) (*session, bool) {
	now := st.now()
	st.mu.Lock()
	s, ok := st.byID[id]
	if ok && st.stale(id, s, now) {
		delete(st.byID, id)
		st.mu.Unlock()
		st.closeDropped([]*session{s})
		return nil, false
	}
	st.mu.Unlock()
	if !ok {
		return nil, false
	}
	s.touch(now)
	return s, true
}

// stale reports whether a session has outlived the ttl: idle that long,
// not pinned, and no page connected. The caller holds st.mu.
func (st *store) stale(id string, s *session, now time.Time) bool {
	return !st.pinned[id] && s.conns.Load() == 0 && now.Sub(s.lastUsed()) > st.ttl
}

// len returns the number of open sessions.
func (st *store) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}

// closeAll stops every session's generation (at shutdown).
func (st *store) closeAll() {
	st.mu.Lock()
	all := make([]*session, 0, len(st.byID))
	for _, s := range st.byID {
		all = append(all, s)
	}
	st.mu.Unlock()
	for _, s := range all {
		s.close()
	}
}

func (st *store) expire(now time.Time) []*session {
	var out []*session
	for id, s := range st.byID {
		if st.stale(id, s, now) {
			delete(st.byID, id)
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
func (st *store) evictable(now time.Time) *session {
	rank := func(s *session) int {
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
	var pick *session
	pickRank := 0
	for id, s := range st.byID {
		if st.pinned[id] || s.conns.Load() > 0 {
			continue
		}
		r := rank(s)
		if pick == nil || r < pickRank || r == pickRank && s.lastUsed().Before(pick.lastUsed()) {
			pick, pickRank = s, r
		}
	}
	return pick
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
