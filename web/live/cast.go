package live

// The classroom's stream: the instructor's document rendered once per
// group of followers that see it alike, sent to each follower once, and a
// cursor per move. This file knows nothing of sessions, runs or
// templates: views come in as rendered HTML (classcast.go renders them).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/websocket"

	"tracer/web/pack"
)

// MsgCast is the type of the stream's messages.
const MsgCast = "cast"

// DefaultCastBytes bounds the fragments one group's stream holds; past it
// the stream starts again (a new epoch) from the view shown.
const DefaultCastBytes = 64 << 20

// ChunkBytes is about the most fragments one message of the stream
// carries, in bytes (a single larger fragment goes alone).
const ChunkBytes = 256 << 10

// Cursor is what a follower's page shows: view View of the stream at
// position Index of Count.
type Cursor struct {
	View    int  `json:"view"` // -1: no view to show yet (more of the stream follows) view
	Index   int  `json:"index"`
	Count   int  `json:"count"`
	Running bool `json:"running,omitempty"`
}

// Message is one message of the stream: the fragments and views the
// follower does not hold yet (those numbered from FragsFrom and ViewsFrom
// on), then the cursor. A message with both From fields 0 starts the
// stream again.
type Message struct {
	Type      string   `json:"type"` // MsgCast
	Epoch     uint64   `json:"epoch"`
	FragsFrom int      `json:"frags_from"`
	Frags     []string `json:"frags"`
	ViewsFrom int      `json:"views_from"`
	Views     [][]int  `json:"views"` // each a pack.Fragments.Cut list
	Cursor
}

// Cast is the classroom's stream, one per classroom. Each group (a
// language with the page's chart settings: whatever changes the HTML) has
// its own fragments and views. Every group's messages are built once per
// state a follower can be in and shared, as websocket.PreparedMessage, by
// every follower in that state: a move costs the same whether 10 or 1,000
// students follow. Cast is safe for concurrent use.
type Cast struct {
	limit int64

	mu     sync.Mutex
	epoch  uint64
	groups map[string]*group
}

type group struct {
	frags *pack.Fragments
	views [][]int
	last  []int          // per view, the highest fragment number it uses
	known map[string]int // a view's fragment list, as text -> its number
	cur   Cursor
	stamp uint64              // the caller's stamp of the state the cursor shows
	head  uint64              // changes with every change of frags, views or cur
	msgs  map[[2]int]prepared // messages to the current head, by the state they start from
}

// prepared is a message built once for every follower in one state.
type prepared struct {
	pm           *websocket.PreparedMessage
	frags, views int // what a follower holds after it
}

// NewCast returns an empty stream whose groups each hold at most limit
// bytes of fragments (0: DefaultCastBytes).
func NewCast(limit int64) *Cast {
	if limit <= 0 {
		limit = DefaultCastBytes
	}
	return &Cast{limit: limit, epoch: 1, groups: map[string]*group{}}
}

// State is what one connection holds of the stream; its zero value holds
// nothing.
type State struct {
	epoch        uint64
	group        string
	frags, views int
	head         uint64
	stamp        uint64
}

// Stamp is the stamp of the last cursor Next sent (see Cast.Stamp).
func (st *State) Stamp() uint64 { return st.stamp }

// Stamp returns the stamp the group's cursor was shown with, and false
// when the group has shown nothing yet.
func (c *Cast) Stamp(g string) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.groups[g]
	if !ok || x.cur.View < 0 {
		return 0, false
	}
	return x.stamp, true
}

// Show adds a rendered view to group g and moves its cursor there; stamp
// names the state it shows (see Stamp).
func (c *Cast) Show(g string, stamp uint64, html []byte, cur Cursor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.group(g)
	cur.View = x.add(html)
	if x.frags.Bytes() > c.limit { // start again with this view alone
		c.epoch++
		clear(c.groups)
		x = c.group(g)
		cur.View = x.add(html)
	}
	x.cur, x.stamp = cur, stamp
	x.changed()
}

// Add adds a rendered view to group g without moving its cursor: a
// position the instructor may move to next, sent ahead. It reports false
// when the group holds too much to take it.
func (c *Cast) Add(g string, html []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.group(g)
	if x.frags.Bytes()+int64(len(html)) > c.limit {
		return false
	}
	n := len(x.views)
	x.add(html)
	if len(x.views) != n {
		x.changed()
	}
	return true
}

// Reset forgets every group: the next message to each follower starts the
// stream again. Call it when the instructor's document is replaced.
func (c *Cast) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	clear(c.groups)
}

// Size returns the fragments held, all groups together, in bytes.
func (c *Cast) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, x := range c.groups {
		n += x.frags.Bytes()
	}
	return n
}

// Next returns the next message that brings a follower in group g from st
// to what the group shows now, and advances st; nil when st is there already or the group has shown
// nothing yet. A follower far behind (one that joins: it lacks the whole
// document) gets it in messages of about ChunkBytes of fragments each, so
// that a slow network delivers each one in time; the cursor comes with
// the message that completes its view (View is -1 in those before).
func (c *Cast) Next(g string, st *State) (*websocket.PreparedMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.groups[g]
	if !ok || x.cur.View < 0 {
		return nil, nil
	}
	if st.epoch != c.epoch || st.group != g {
		*st = State{epoch: c.epoch, group: g}
		st.head = x.head - 1 // anything but the head
	}
	if st.head == x.head {
		return nil, nil
	}
	from := [2]int{st.frags, st.views}
	m, ok := x.msgs[from]
	if !ok {
		frags := x.frags.From(st.frags)
		fe, n := st.frags, 0
		for _, f := range frags {
			if fe > st.frags && n+len(f) > ChunkBytes {
				break
			}
			fe, n = fe+1, n+len(f)
		}
		ve := st.views
		for ve < len(x.views) && x.last[ve] < fe {
			ve++
		}
		cur := x.cur
		if cur.View >= ve {
			cur.View = -1
		}
		b, err := json.Marshal(Message{
			Type: MsgCast, Epoch: c.epoch,
			FragsFrom: st.frags, Frags: frags[:fe-st.frags],
			ViewsFrom: st.views, Views: x.views[st.views:ve],
			Cursor: cur,
		})
		if err != nil {
			return nil, fmt.Errorf("live: encode the classroom's stream: %w", err)
		}
		pm, err := websocket.NewPreparedMessage(websocket.TextMessage, b)
		if err != nil {
			return nil, fmt.Errorf("live: prepare the classroom's stream: %w", err)
		}
		m = prepared{pm, fe, ve}
		x.msgs[from] = m
	}
	st.frags, st.views = m.frags, m.views
	if m.frags == x.frags.Len() && m.views == len(x.views) {
		st.head, st.stamp = x.head, x.stamp
	}
	return m.pm, nil
}

func (c *Cast) group(g string) *group {
	x, ok := c.groups[g]
	if !ok {
		x = &group{frags: pack.New(), known: map[string]int{}, cur: Cursor{View: -1}, msgs: map[[2]int]prepared{}}
		c.groups[g] = x
	}
	return x
}

// add returns the number of html's view, adding it when it is new.
func (x *group) add(html []byte) int {
	seq := x.frags.Cut(html)
	var key strings.Builder
	for _, d := range seq {
		key.WriteString(strconv.Itoa(d))
		key.WriteByte(',')
	}
	if v, ok := x.known[key.String()]; ok {
		return v
	}
	x.known[key.String()] = len(x.views)
	x.views = append(x.views, seq)
	last, id := -1, -1
	for _, d := range seq {
		id += d
		last = max(last, id)
	}
	x.last = append(x.last, last)
	return len(x.views) - 1
}

// changed drops the messages built for the old head.
func (x *group) changed() {
	x.head++
	clear(x.msgs)
}

// ErrGap is Follower.Apply's answer to a message that does not continue
// what the follower holds: ask for the stream again ({"type": "view"}).
var ErrGap = errors.New("live: the classroom's stream skipped ahead of what this page holds: ask for it again")

// Follower is a follower's side of the stream, as the page's script keeps
// it: tests and tracer bench read the stream through it. One with
// CountsOnly set checks that each message continues the last and keeps
// nothing else (a thousand of them in tracer bench --class would
// otherwise hold a thousand copies of the document).
type Follower struct {
	CountsOnly bool

	epoch          uint64
	nfrags, nviews int
	frags          []string
	views          [][]int
}

// Apply takes one message of the stream and returns the number of the
// view it shows; -1 when it shows none yet (more of the stream follows).
func (f *Follower) Apply(m Message) (int, error) {
	if err := f.advance(m, len(m.Frags), len(m.Views)); err != nil {
		return 0, err
	}
	if !f.CountsOnly {
		f.frags = append(f.frags, m.Frags...)
		f.views = append(f.views, m.Views...)
	}
	return m.View, nil
}

// advance checks that a message of nfrags fragments and nviews views
// continues what f holds, and counts them.
func (f *Follower) advance(m Message, nfrags, nviews int) error {
	if m.FragsFrom == 0 && m.ViewsFrom == 0 {
		*f = Follower{CountsOnly: f.CountsOnly, epoch: m.Epoch}
	}
	if m.Epoch != f.epoch || m.FragsFrom != f.nfrags || m.ViewsFrom != f.nviews {
		return ErrGap
	}
	f.nfrags += nfrags
	f.nviews += nviews
	if m.View < -1 || m.View >= f.nviews {
		return fmt.Errorf("live: the stream shows view %d of %d", m.View, f.nviews)
	}
	return nil
}

// Scan reads one message of the stream from r for a follower that keeps
// counts only: it counts the fragments and views without decoding them
// and never holds the message whole (the first holds the whole document),
// and returns the message's cursor.
func (f *Follower) Scan(r io.Reader) (Message, error) {
	if !f.CountsOnly {
		return Message{}, errors.New("live: Scan is for a follower that keeps counts only")
	}
	sc := scanner{r: bufio.NewReaderSize(r, 64<<10)}
	var m Message
	nfrags, nviews := 0, 0
	if err := sc.expect('{'); err != nil {
		return m, err
	}
	for {
		c, err := sc.next()
		if err != nil {
			return m, err
		}
		if c == '}' {
			break
		}
		if c == ',' {
			continue
		}
		sc.r.UnreadByte()
		sc.rec = &bytes.Buffer{}
		if err := sc.skip(); err != nil { // the key
			return m, err
		}
		var key string
		if err := json.Unmarshal(sc.rec.Bytes(), &key); err != nil {
			return m, fmt.Errorf("live: the stream's message: %w", err)
		}
		sc.rec = nil
		if err := sc.expect(':'); err != nil {
			return m, err
		}
		if key == "frags" || key == "views" {
			n, err := sc.count()
			if err != nil {
				return m, err
			}
			if key == "frags" {
				nfrags = n
			} else {
				nviews = n
			}
			continue
		}
		sc.rec = &bytes.Buffer{}
		if err := sc.skip(); err != nil {
			return m, err
		}
		var dst any
		switch key {
		case "type":
			dst = &m.Type
		case "epoch":
			dst = &m.Epoch
		case "frags_from":
			dst = &m.FragsFrom
		case "views_from":
			dst = &m.ViewsFrom
		case "view":
			dst = &m.View
		case "index":
			dst = &m.Index
		case "count":
			dst = &m.Count
		case "running":
			dst = &m.Running
		default:
			sc.rec = nil
			continue
		}
		if err := json.Unmarshal(sc.rec.Bytes(), dst); err != nil {
			return m, fmt.Errorf("live: the stream's message: %q: %w", key, err)
		}
		sc.rec = nil
	}
	if m.Type != MsgCast {
		return m, fmt.Errorf("live: a %q message is not the classroom's stream", m.Type)
	}
	return m, f.advance(m, nfrags, nviews)
}

// scanner walks JSON a byte at a time, copying what it reads into rec
// when rec is not nil. It checks only what counting needs.
type scanner struct {
	r   *bufio.Reader
	rec *bytes.Buffer
}

// read returns the next byte.
func (s *scanner) read() (byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		return 0, fmt.Errorf("live: the stream's message is cut short: %w", err)
	}
	if s.rec != nil {
		s.rec.WriteByte(c)
	}
	return c, nil
}

// next returns the next byte that is not white space.
func (s *scanner) next() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("live: the stream's message is cut short: %w", err)
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if s.rec != nil {
			s.rec.WriteByte(c)
		}
		return c, nil
	}
}

func (s *scanner) expect(want byte) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return fmt.Errorf("live: the stream's message has %q where %q belongs", c, want)
	}
	return nil
}

// skip reads one value.
func (s *scanner) skip() error {
	c, err := s.next()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		return s.str()
	case '[', '{':
		for depth := 1; depth > 0; {
			c, err := s.next()
			if err != nil {
				return err
			}
			switch c {
			case '"':
				if err := s.str(); err != nil {
					return err
				}
			case '[', '{':
				depth++
			case ']', '}':
				depth--
			}
		}
		return nil
	}
	for { // a number, true, false or null: up to the next delimiter
		c, err := s.r.ReadByte()
		if err != nil {
			return fmt.Errorf("live: the stream's message is cut short: %w", err)
		}
		switch c {
		case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
			return s.r.UnreadByte()
		}
		if s.rec != nil {
			s.rec.WriteByte(c)
		}
	}
}

// str reads the rest of a string whose opening quote was read.
func (s *scanner) str() error {
	for {
		c, err := s.read()
		if err != nil {
			return err
		}
		switch c {
		case '\\':
			if _, err := s.read(); err != nil {
				return err
			}
		case '"':
			return nil
		}
	}
}

// count reads an array and returns how many elements it has.
func (s *scanner) count() (int, error) {
	if err := s.expect('['); err != nil {
		return 0, err
	}
	for n := 0; ; n++ {
		c, err := s.next()
		if err != nil {
			return 0, err
		}
		if c == ']' {
			return n, nil
		}
		if n > 0 {
			if c != ',' {
				return 0, fmt.Errorf("live: the stream's message has %q where ',' belongs", c)
			}
		} else {
			s.r.UnreadByte()
		}
		if err := s.skip(); err != nil {
			return 0, err
		}
	}
}

// HTML is view v's HTML.
func (f *Follower) HTML(v int) (string, error) {
	if v < 0 || v >= len(f.views) {
		return "", fmt.Errorf("live: view %d of %d held", v, len(f.views))
	}
	var ids []int
	n, id := 0, -1
	for _, d := range f.views[v] {
		id += d
		if id < 0 || id >= len(f.frags) {
			return "", fmt.Errorf("live: view %d names fragment %d of %d", v, id, len(f.frags))
		}
		ids = append(ids, id)
		n += len(f.frags[id])
	}
	var b strings.Builder
	b.Grow(n)
	for _, id := range ids {
		b.WriteString(f.frags[id])
	}
	return b.String(), nil
}
