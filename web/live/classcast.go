package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"tracer/web/runs"
	"tracer/web/view"
)

// A class is one document and many cursors. The students who follow the
// instructor get the instructor's document through the classroom's stream
// (web/live.Cast): every view is rendered once per group of followers that
// see it alike (language, charts, palette, the toy beside the run), not
// once per student, and each follower receives a view's fragments once.
// A move of the instructor is then a cursor of a few bytes, built once and
// written to every follower. While the instructor's document stands still
// (no run generating) the positions of the branch shown are rendered ahead
// and sent to the followers, so that the moves that follow carry nothing
// else.

// castSession stands for the session id in the download links of the
// stream's views; each follower's page writes its own id in its place.
const castSession = "follower"

// castAheadMax bounds the positions rendered ahead of the instructor's
// moves.
const castAheadMax = 1000

// castState is the server's side of the classroom's stream.
type castState struct {
	stream *Cast
	stamp  atomic.Uint64 // counts the instructor's changes: each publish of the leader

	renderMu sync.Mutex // one render of the leader's current view at a time
	whatIf   castWhatIf

	aheadMu  sync.Mutex
	aheadKey aheadKey // what the positions were last rendered ahead for
	aheadRun bool     // a goroutine renders ahead now
	// ahead counts the positions rendered ahead for aheadKey, of aheadOf
	// (0 while a run is generating).
	ahead, aheadOf atomic.Int64
}

func newCastState() *castState {
	return &castState{stream: NewCast(0)}
}

// castWhatIf holds the what-if answers given to followers since the
// instructor's last change (stamp), by language and settings: a class
// that asks the same question at a move costs one answer.
type castWhatIf struct {
	mu    sync.Mutex
	stamp uint64
	byKey map[string][]byte
}

// castWhatIfKeep bounds the answers kept for one change of the
// instructor's.
const castWhatIfKeep = 64

// get returns the answer for key at stamp, computing it when it is new.
// Answers to the same question wait for one computation.
func (w *castWhatIf) get(stamp uint64, key string, compute func() ([]byte, error)) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stamp != stamp || w.byKey == nil || len(w.byKey) >= castWhatIfKeep {
		w.stamp, w.byKey = stamp, map[string][]byte{}
	}
	if b, ok := w.byKey[key]; ok {
		return b, nil
	}
	b, err := compute()
	if err != nil {
		return nil, err
	}
	w.byKey[key] = b
	return b, nil
}

// castGroup names the group of followers a session's page belongs to and
// returns the options its views are rendered with.
func (s *Protocol) castGroup(sess *Session) (string, runs.BuildOpts) {
	sess.Mu.Lock()
	defer sess.Mu.Unlock()
	o := runs.BuildOpts{Session: castSession, Charts: sess.charts, Dark: sess.dark, Words: s.Words(sess.Lang), Machine: s.machine(), Following: "instructor"}
	if sess.pair {
		o.Lesson = s.Lesson
	}
	return castKey(o), o
}

// castKey is the name of the group that o renders for.
func castKey(o runs.BuildOpts) string {
	return o.Words.Lang + "/charts=" + strconv.FormatBool(o.Charts) + "/dark=" + strconv.FormatBool(o.Dark) + "/pair=" + strconv.FormatBool(o.Lesson != nil)
}

// castRender renders the leader's document for a group of followers: at
// the leader's cursor, or at at when it is not nil.
func (s *Protocol) castRender(o runs.BuildOpts, at *runs.Cursor) ([]byte, Cursor, error) {
	l := s.Class.Leader
	l.Mu.Lock()
	cur := l.Cur
	if at != nil {
		cur = *at
	}
	v, jobs := runs.BuildStepper(l.Doc, cur, o)
	if at == nil && cur.Pending {
		v.Hit = cur.Hit
	}
	running := l.Doc.Live()
	l.Mu.Unlock()
	if v.Charts != nil {
		view.RenderCharts(s.Charts, v.Charts, jobs)
	}
	var b bytes.Buffer
	if err := view.Stepper(v).Render(context.Background(), &b); err != nil {
		return nil, Cursor{}, fmt.Errorf("could not render the instructor's view: %w", err)
	}
	return b.Bytes(), Cursor{Index: v.Index, Count: v.Count, Running: running}, nil
}

// castShow makes group g show the leader's current view, rendering it
// unless the group shows it already.
func (s *Protocol) castShow(g string, o runs.BuildOpts) error {
	c := s.Class.cast
	fresh := func() bool {
		st, ok := c.stream.Stamp(g)
		return ok && st == c.stamp.Load()
	}
	if fresh() {
		return nil
	}
	c.renderMu.Lock()
	defer c.renderMu.Unlock()
	if fresh() {
		return nil
	}
	stamp := c.stamp.Load()
	html, cur, err := s.castRender(o, nil)
	if err != nil {
		return err
	}
	c.stream.Show(g, stamp, html, cur)
	return nil
}

// castGroups returns the groups of the followers connected now, each with
// the options that render it.
func (s *Protocol) castGroups() map[string]runs.BuildOpts {
	out := map[string]runs.BuildOpts{}
	for _, f := range s.Hub.classPages(s.Class.Leader, true) {
		g, o := s.castGroup(f)
		out[g] = o
	}
	return out
}

// publishCast shows the leader's change to every follower: one render per
// group, then a wake for every follower's connection, whose write pump
// takes what it lacks of the stream. It then renders ahead when the
// document stands still.
func (s *Protocol) publishCast() {
	c := s.Class.cast
	c.stamp.Add(1)
	groups := s.castGroups()
	for g, o := range groups {
		if err := s.castShow(g, o); err != nil {
			s.Hub.broadcast(s.Class.Leader.ID, ErrorMessage(err.Error()))
		}
	}
	s.Hub.wakeFollowers(s.Class.Leader)
	if len(groups) > 0 {
		s.renderAhead()
	}
}

// aheadKey is what the positions rendered ahead depend on besides the
// cursor: the document, the branch and row shown, how many positions and
// branches it has.
type aheadKey struct {
	doc                   *runs.Document
	branch, row, count, n int
}

// renderAhead renders the positions of the branch the leader shows, the
// nearest after the cursor first, for every group, and sends them to the
// followers, unless it did so already for the document as it stands. A
// running generation changes every position at each step: nothing is
// rendered ahead then.
func (s *Protocol) renderAhead() {
	c := s.Class.cast
	c.aheadMu.Lock()
	defer c.aheadMu.Unlock()
	if c.aheadRun || !s.AddJob() {
		return
	}
	c.aheadRun = true
	go func() {
		defer s.Jobs.Done()
		defer s.Jobs.Done() // addJob counts two goroutines
		for s.renderAheadOnce() {
		}
	}()
}

// renderAheadOnce renders ahead for the document as it stands; it reports
// whether the document changed meanwhile (render again) and otherwise
// marks the goroutine done.
func (s *Protocol) renderAheadOnce() bool {
	c := s.Class.cast
	l := s.Class.Leader
	l.Mu.Lock()
	d, cur := l.Doc, l.Cur
	k := aheadKey{doc: d, branch: cur.Branch, row: cur.Row, count: d.Count(cur.Branch)}
	if len(d.Runs) > 0 {
		k.n = len(d.Runs[0].Trace.Branches)
	}
	live := d.Live()
	l.Mu.Unlock()
	c.aheadMu.Lock()
	if live || k == c.aheadKey {
		if live {
			c.ahead.Store(0)
			c.aheadOf.Store(0)
		}
		c.aheadRun = false
		c.aheadMu.Unlock()
		return false
	}
	c.aheadKey = k
	c.ahead.Store(0)
	c.aheadOf.Store(int64(k.count))
	c.aheadMu.Unlock()

	var order []int
	c.ahead.Store(1) // the position shown
	for i := cur.Pos + 1; i < k.count; i++ {
		order = append(order, i)
	}
	for i := cur.Pos - 1; i >= 0; i-- {
		order = append(order, i)
	}
	order = order[:min(len(order), castAheadMax)]
	err := s.Guard("rendering the instructor's positions ahead", func() error {
		for n, pos := range order {
			if s.stopping() {
				return nil
			}
			l.Mu.Lock()
			same := l.Doc == d && l.Cur.Branch == k.branch && l.Cur.Row == k.row
			l.Mu.Unlock()
			if !same {
				return nil
			}
			at := runs.Cursor{Pos: pos, Branch: k.branch, Row: k.row}
			if n < runs.ClassInsideKeep-1 { // what the step's inside panels show, looked at once for all
				l.Mu.Lock()
				st, ids := runs.InsideToLook(l.Doc, at)
				l.Mu.Unlock()
				if st != nil {
					st.Ensure(ids)
				}
			}
			for g, o := range s.castGroups() {
				o.Ahead = true
				html, _, err := s.castRender(o, &at)
				if err != nil {
					return err
				}
				if !c.stream.Add(g, html) {
					return nil
				}
			}
			c.ahead.Add(1)
			if n%16 == 15 {
				s.Hub.wakeFollowers(l)
			}
		}
		return nil
	})
	if err != nil {
		s.Log.Warn("classroom", "err", err)
	}
	s.Hub.wakeFollowers(l)
	return true
}

// stopping reports whether the server is shutting down.
func (s *Protocol) stopping() bool {
	return s.Runner.Stopping()
}

// classStatus is what the instructor's page shows of the class: pages
// following, pages exploring on their own, and how many of the
// instructor's changes the slowest follower has still to receive.
type classStatus struct {
	Type      string `json:"type"` // "class"
	Following int    `json:"following"`
	Detached  int    `json:"detached"`
	Behind    uint64 `json:"behind"`
	Ahead     int64  `json:"ahead"`     // positions the followers have been sent (rendered ahead), of
	Positions int64  `json:"positions"` // the positions of the branch shown; 0 while a run generates
}

// msgClass is the type of the instructor's class status.
const msgClass = "class"

// classMessage encodes the class as the instructor's page shows it.
func (s *Protocol) classMessage() []byte {
	c := s.Class.cast
	st := s.Hub.classStatus(s.Class.Leader, c.stamp.Load())
	st.Type = msgClass
	if st.Following > 0 {
		st.Ahead, st.Positions = c.ahead.Load(), c.aheadOf.Load()
	}
	b, _ := json.Marshal(st)
	return b
}
