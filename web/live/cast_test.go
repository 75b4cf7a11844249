package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// payload sends a prepared message over a real WebSocket on loopback,
// compressed as a browser asks, and returns what the page reads.
func payload(t *testing.T, pm *websocket.PreparedMessage) []byte {
	t.Helper()
	up := websocket.Upgrader{EnableCompression: true}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		c.WritePreparedMessage(pm)
		c.ReadMessage() // until the reader closes
	}))
	defer ts.Close()
	d := websocket.Dialer{EnableCompression: true}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// decode takes the message that brings st to what group g shows, as the
// page reads it.
func decode(t *testing.T, c *Cast, g string, st *State) (Message, bool) {
	t.Helper()
	pm, err := c.Next(g, st)
	if err != nil {
		t.Fatal(err)
	}
	if pm == nil {
		return Message{}, false
	}
	data := payload(t, pm)
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("message is not JSON: %v: %.80s", err, data)
	}
	return m, true
}

func viewHTML(i int) []byte {
	return fmt.Appendf(nil, `<div class="stepper"><p data-testid="step-index" data-index="%d">Step %d</p><table><tr><td>same</td></tr></table></div>`, i, i)
}

// TestCastFollowers drives a stream through moves, views sent ahead, a
// follower that joins late and one that reconnects: each page shows the
// HTML the instructor's view was, and a follower in step gets only what it
// lacks.
func TestCastFollowers(t *testing.T) {
	c := NewCast(0)
	var early State
	var f Follower
	if _, ok := decode(t, c, "en", &early); ok {
		t.Fatal("a stream that shows nothing sent a message")
	}
	c.Show("en", 1, viewHTML(0), Cursor{Index: 0, Count: 3})
	m, ok := decode(t, c, "en", &early)
	if !ok || m.FragsFrom != 0 || m.ViewsFrom != 0 || m.View != 0 {
		t.Fatalf("first message: %+v, want the stream from its start at view 0", m)
	}
	if html, err := show(&f, m); err != nil || html != string(viewHTML(0)) {
		t.Fatalf("first view: %q, %v", html, err)
	}
	if _, ok := decode(t, c, "en", &early); ok {
		t.Fatal("a follower in step got a message with nothing new")
	}
	// Views ahead: the cursor stays, the fragments come.
	c.Add("en", viewHTML(1))
	c.Add("en", viewHTML(2))
	m, _ = decode(t, c, "en", &early)
	if m.View != 0 || len(m.Views) != 2 || m.FragsFrom == 0 {
		t.Fatalf("ahead: %+v, want two views and the cursor at view 0", m)
	}
	if _, err := f.Apply(m); err != nil {
		t.Fatal(err)
	}
	// A move to a view sent ahead is a cursor alone.
	c.Show("en", 2, viewHTML(2), Cursor{Index: 2, Count: 3})
	m, _ = decode(t, c, "en", &early)
	if len(m.Frags) != 0 || len(m.Views) != 0 || m.View != 2 || m.Index != 2 {
		t.Fatalf("move: %+v, want the cursor alone at view 2", m)
	}
	b, _ := json.Marshal(m)
	if len(b) > 200 {
		t.Errorf("a move is %d bytes, want a cursor of a few dozen", len(b))
	}
	if html, err := show(&f, m); err != nil || html != string(viewHTML(2)) {
		t.Fatalf("move: %q, %v", html, err)
	}
	// A follower that joins now, or reconnects, gets everything at once,
	// and the same message object as every other one in its state.
	var late, late2 State
	pm1, _ := c.Next("en", &late)
	pm2, _ := c.Next("en", &late2)
	if pm1 != pm2 {
		t.Error("two followers in one state got two messages, want one shared")
	}
	var g Follower
	whole, _ := decodePM(t, pm1)
	if whole.View != 2 {
		t.Fatalf("late joiner: view %d, want 2", whole.View)
	} else if html, err := show(&g, whole); err != nil || html != string(viewHTML(2)) {
		t.Fatalf("late joiner: %q, %v", html, err)
	}
	// Another group renders its own.
	if _, ok := decode(t, c, "hi", &State{}); ok {
		t.Error("a group that showed nothing sent a message")
	}
	// A gap is refused; a reset starts the stream again.
	if _, err := (&Follower{}).Apply(Message{Epoch: 1, FragsFrom: 3, ViewsFrom: 1}); err != ErrGap {
		t.Errorf("a message after a gap: %v, want ErrGap", err)
	}
	counts := Follower{CountsOnly: true}
	if v, err := counts.Apply(whole); err != nil || v != 2 {
		t.Errorf("counts only: view %d, %v; want 2", v, err)
	}
	if _, err := counts.HTML(2); err == nil {
		t.Error("a follower that keeps counts only gave HTML")
	}
	// Scan reads the same messages token by token.
	scan := Follower{CountsOnly: true}
	if m, err := scan.Scan(bytes.NewReader(payload(t, pm1))); err != nil || m.View != 2 || m.Index != 2 || m.Count != 3 {
		t.Errorf("scan: %+v, %v; want view 2 at 2 of 3", m, err)
	}
	c.Show("en", 9, viewHTML(0), Cursor{Index: 0, Count: 3})
	pm, _ := c.Next("en", &late)
	if m, err := scan.Scan(bytes.NewReader(payload(t, pm))); err != nil || m.View != 0 {
		t.Errorf("scan of a move: %+v, %v; want view 0", m, err)
	}
	if _, err := scan.Scan(strings.NewReader(`{"type": "cast", "epoch": 1, "frags_from": 99, "frags": ["<p>"], "views_from": 0, "views": [[0]], "view": 0}`)); err != ErrGap {
		t.Errorf("scan after a gap: %v, want ErrGap", err)
	}
	if _, err := scan.Scan(strings.NewReader(`{"type": "cast", "frags": [`)); err == nil {
		t.Error("scan of a cut message: no error")
	}
	c.Reset()
	c.Show("en", 3, viewHTML(1), Cursor{Index: 1, Count: 3})
	m, _ = decode(t, c, "en", &early)
	if m.FragsFrom != 0 || m.ViewsFrom != 0 || m.Epoch == 1 {
		t.Fatalf("after a reset: %+v, want the stream from its start in a new epoch", m)
	}
	if html, err := show(&f, m); err != nil || html != string(viewHTML(1)) {
		t.Fatalf("after a reset: %q, %v", html, err)
	}
}

// TestCastLimit checks that a group holds at most its limit: views ahead
// are refused past it, and a view shown past it starts a new epoch.
func TestCastLimit(t *testing.T) {
	c := NewCast(4096)
	c.Show("en", 1, viewHTML(0), Cursor{})
	big := func(i int) []byte { return []byte("<p>" + strings.Repeat(fmt.Sprint(i), 1500) + "</p>") }
	if !c.Add("en", big(1)) || !c.Add("en", big(2)) {
		t.Fatal("views under the limit refused")
	}
	if c.Add("en", big(3)) {
		t.Error("a view past the limit was taken")
	}
	c.Show("en", 2, big(4), Cursor{})
	if n := c.Size(); n > 4096 {
		t.Errorf("the stream holds %d bytes, over its limit of 4096", n)
	}
	var st State
	m, _ := decode(t, c, "en", &st)
	if m.Epoch != 2 || m.FragsFrom != 0 || len(m.Views) != 1 {
		t.Errorf("past the limit: %+v, want a new epoch with the one view shown", m)
	}
}

// show applies m and returns the HTML it shows.
func show(f *Follower, m Message) (string, error) {
	v, err := f.Apply(m)
	if err != nil {
		return "", err
	}
	return f.HTML(v)
}

func decodePM(t *testing.T, pm *websocket.PreparedMessage) (Message, bool) {
	t.Helper()
	var m Message
	if err := json.Unmarshal(payload(t, pm), &m); err != nil {
		t.Fatal(err)
	}
	return m, true
}

// FuzzFollowerScan feeds Scan arbitrary bytes: it never panics, and where
// the bytes are a message json reads, Scan agrees with Apply.
func FuzzFollowerScan(f *testing.F) {
	f.Add(`{"type":"cast","epoch":1,"frags_from":0,"frags":["<p>","a\"b</p>"],"views_from":0,"views":[[0,1]],"view":0,"index":0,"count":1}`)
	f.Add(`{"type":"cast","epoch":1,"frags_from":0,"frags":[],"views_from":0,"views":[[],[1,2,[3]]],"view":1,"index":2,"count":3,"running":true}`)
	f.Add(`{"type": "view", "html": "<p>"}`)
	f.Add(`{"frags": [`)
	f.Fuzz(func(t *testing.T, data string) {
		scan := Follower{CountsOnly: true}
		got, serr := scan.Scan(strings.NewReader(data))
		var m Message
		if json.Unmarshal([]byte(data), &m) != nil || m.Type != MsgCast {
			return
		}
		apply := Follower{CountsOnly: true}
		v, aerr := apply.Apply(m)
		if (serr == nil) != (aerr == nil) {
			t.Fatalf("scan: %v; apply: %v", serr, aerr)
		}
		if serr == nil && (got.View != v || got.Index != m.Index || got.Count != m.Count || scan.nfrags != apply.nfrags || scan.nviews != apply.nviews) {
			t.Fatalf("scan read %+v (%d, %d), apply %+v (%d, %d)", got, scan.nfrags, scan.nviews, m, apply.nfrags, apply.nviews)
		}
	})
}

// TestCastChunks checks that a follower that joins a stream of many
// views gets it in messages of about ChunkBytes of fragments, the cursor
// with the last, and ends where a follower in step is.
func TestCastChunks(t *testing.T) {
	c := NewCast(0)
	c.Show("en", 1, viewHTML(0), Cursor{Index: 0, Count: 40})
	for i := range 40 { // about 40 × 20 KiB of fragments no view shares
		c.Add("en", []byte(fmt.Sprintf("<div>%s</div><p>%d</p>", strings.Repeat(fmt.Sprintf("%02d", i), 10<<10), i)))
	}
	c.Show("en", 2, viewHTML(7), Cursor{Index: 7, Count: 40})
	var st State
	var f Follower
	messages := 0
	for {
		m, ok := decode(t, c, "en", &st)
		if !ok {
			break
		}
		messages++
		n := 0
		for _, x := range m.Frags {
			n += len(x)
		}
		if n > ChunkBytes+21<<10 {
			t.Errorf("message %d carries %d bytes of fragments, want about %d at most", messages, n, ChunkBytes)
		}
		v, err := f.Apply(m)
		if err != nil {
			t.Fatalf("message %d: %v", messages, err)
		}
		if v >= 0 {
			if html, _ := f.HTML(v); html != string(viewHTML(7)) {
				t.Errorf("message %d shows %.40q, want the view at 7", messages, html)
			}
		}
	}
	if messages < 3 {
		t.Errorf("got the stream in %d messages, want it in chunks", messages)
	}
	if st.Stamp() != 2 {
		t.Errorf("after the stream, the follower's stamp is %d, want 2", st.Stamp())
	}
}
