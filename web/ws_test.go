package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"tracer/web/live"
)

// wsServer starts a server with one session and returns the WebSocket URL
// of that session.
func wsServer(t *testing.T) (*Server, *httptest.Server, string) {
	t.Helper()
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	doc, err := s.FirstRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.Sessions.Create(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, ts, "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws?session=" + sess.ID
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	c, res, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		t.Fatalf("dial: %v (status %d)", err, status)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends a text message and reads the reply.
func roundTrip(t *testing.T, c *websocket.Conn, msg string) live.Outbound {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("send %s: %v", msg, err)
	}
	return read(t, c)
}

// read reads the next reply. A message of the classroom's stream is read
// as the page reads it (live.Follower) and returned as the view it shows;
// one that only sends views ahead, the cursor where it was, is skipped.
func read(t *testing.T, c *websocket.Conn) live.Outbound {
	t.Helper()
	for {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var o live.Outbound
		if err := json.Unmarshal(data, &o); err != nil {
			t.Fatalf("reply is not JSON: %v", err)
		}
		if o.Type != live.MsgCast {
			return o
		}
		var m live.Message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("stream message: %v", err)
		}
		f := follower(c)
		ahead := m.View < 0 || f.shown && f.view == m.View && (len(m.Frags) > 0 || len(m.Views) > 0) && m.FragsFrom > 0
		v, err := f.Apply(m)
		if err != nil {
			t.Fatalf("stream message: %v", err)
		}
		if v < 0 {
			continue // more of the stream follows
		}
		html, err := f.HTML(v)
		if err != nil {
			t.Fatalf("stream message: %v", err)
		}
		f.shown, f.view = true, m.View
		if ahead {
			continue
		}
		return live.Outbound{Type: live.MsgView, Index: m.Index, Count: m.Count, Running: m.Running, HTML: html}
	}
}

// testFollower is what a test's connection holds of the classroom's stream.
type testFollower struct {
	live.Follower
	shown bool
	view  int // the view shown last
}

var (
	followersMu sync.Mutex
	followers   = map[*websocket.Conn]*testFollower{}
)

// follower returns the stream state of a test's connection.
func follower(c *websocket.Conn) *testFollower {
	followersMu.Lock()
	defer followersMu.Unlock()
	f, ok := followers[c]
	if !ok {
		f = &testFollower{}
		followers[c] = f
	}
	return f
}

// waitGone waits until the server holds no connections and their pumps
// have ended.
func waitGone(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.Hub.Count() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("got %d clients registered after close, want 0", s.Hub.Count())
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Hub.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestWebSocketNavigation(t *testing.T) {
	_, _, url := wsServer(t)
	c := dial(t, url)
	steps := []struct {
		msg   string
		index int
	}{
		{`{"type": "view"}`, 0},
		{`{"type": "prev"}`, 0},
		{`{"type": "next"}`, 1},
		{`{"type": "step", "index": 5}`, 5},
		{`{"type": "last"}`, 9},
		{`{"type": "next"}`, 9},
		{`{"type": "first"}`, 0},
	}
	for _, s := range steps {
		o := roundTrip(t, c, s.msg)
		if o.Type != live.MsgView || o.Index != s.index || o.Count != 10 || !strings.Contains(o.HTML, `data-testid="step-index"`) {
			t.Errorf("%s: got %s at %d of %d, want a view at %d of 10", s.msg, o.Type, o.Index, o.Count, s.index)
		}
	}
}

func TestWebSocketHostileMessages(t *testing.T) {
	s, _, url := wsServer(t)
	c := dial(t, url)
	cases := []struct {
		name, msg, says string
	}{
		{"unknown type", `{"type": "rm -rf"}`, "unknown type"},
		{"no type", `{}`, `no "type"`},
		{"bad JSON", `{"type": "next"`, "bad message"},
		{"not an object", `[1, 2]`, "bad message"},
		{"null", `null`, `no "type"`},
		{"extra data", `{"type": "next"} {"type": "next"}`, "extra data"},
		{"unknown field", `{"type": "next", "sudo": true}`, "unknown field"},
		{"index on next", `{"type": "next", "index": 3}`, "takes no index"},
		{"step without index", `{"type": "step"}`, "needs an index"},
		{"index too large", `{"type": "step", "index": 10}`, "out of range"},
		{"index negative", `{"type": "step", "index": -1}`, "out of range"},
		{"index huge", `{"type": "step", "index": 1e30}`, "bad message"},
		{"index not a number", `{"type": "step", "index": "3"}`, "bad message"},
		{"branch outside the vocabulary", `{"type": "branch", "step": 0, "id": 99999}`, "token id 99999 is outside the vocabulary"},
		{"branch unknown token", `{"type": "branch", "step": 0, "token": "ümlaut"}`, "not a token"},
		{"generate unknown option", `{"type": "generate", "form": {"temperature": "1", "evil": "1"}}`, "unknown field"},
		{"form on a move", `{"type": "next", "form": {}}`, "takes no"},
		{"until without breakpoints", `{"type": "until", "until": {}}`, "breakpoints work on a single run"},
		{"select on the lesson", `{"type": "select", "branch": 3}`, "does not exist"},
		{"row out of range", `{"type": "row", "index": 1}`, "out of range"},
		{"detach outside a classroom", `{"type": "detach"}`, "not following a classroom"},
		{"pair without on", `{"type": "pair"}`, "needs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := roundTrip(t, c, tc.msg)
			if o.Type != live.MsgError || !strings.Contains(o.Message, tc.says) {
				t.Errorf("got %+v, want an error saying %q", o, tc.says)
			}
		})
	}
	t.Run("binary", func(t *testing.T) {
		c.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2})
		if o := read(t, c); o.Type != live.MsgError {
			t.Errorf("got %+v, want an error", o)
		}
	})
	// The connection survives all of that, at the position it had.
	if o := roundTrip(t, c, `{"type": "view"}`); o.Type != live.MsgView || o.Index != 0 {
		t.Errorf("after the bad messages: got %+v, want the view at 0", o)
	}
	c.Close()
	waitGone(t, s)
}

func TestWebSocketOversizedFrame(t *testing.T) {
	s, _, url := wsServer(t)
	c := dial(t, url)
	// A 10 MB frame: the server stops reading at its limit and closes with
	// 1009 (message too big).
	big := `{"type": "next", "pad": "` + strings.Repeat("x", 10<<20) + `"}`
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	c.WriteMessage(websocket.TextMessage, []byte(big)) // may fail once the server has closed
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := c.ReadMessage()
	t.Logf("after a 10 MB frame: %v", err)
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		var ne net.Error
		if !errors.As(err, &ne) && !strings.Contains(fmt.Sprint(err), "reset") && !strings.Contains(fmt.Sprint(err), "broken pipe") {
			t.Errorf("got %v, want a close with code 1009 (message too big) or the connection cut", err)
		}
	}
	waitGone(t, s)
}

func TestWebSocketRejects(t *testing.T) {
	_, ts, url := wsServer(t)
	cases := []struct {
		name   string
		url    string
		origin string
		status int
	}{
		{"other origin", url, "http://evil.example", http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.origin != "" {
				h.Set("Origin", c.origin)
			}
			_, res, err := websocket.DefaultDialer.Dial(c.url, h)
			if err == nil || res == nil || res.StatusCode != c.status {
				t.Errorf("got %v, want the handshake refused with %d", err, c.status)
			}
		})
	}
	t.Run("same origin", func(t *testing.T) {
		h := http.Header{"Origin": {ts.URL}}
		c, _, err := websocket.DefaultDialer.Dial(url, h)
		if err != nil {
			t.Fatalf("same-origin dial: %v", err)
		}
		c.Close()
	})
}

func TestWebSocketImportBroadcast(t *testing.T) {
	s, _, url := wsServer(t)
	c := dial(t, url)
	roundTrip(t, c, `{"type": "last"}`)
	sess := onlySession(t, s)
	doc, err := s.FirstRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sess.Load(doc)
	s.Publish(sess)
	if o := read(t, c); o.Type != live.MsgView || o.Index != 0 {
		t.Errorf("got %+v, want the new document's first view", o)
	}
}

func TestServeShutsDownConnections(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListener(ctx, ln) }()
	res, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	c := dial(t, "ws://"+ln.Addr().String()+"/ws?session="+onlySession(t, s).ID)
	roundTrip(t, c, `{"type": "next"}`)

	cancel()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseNormalClosure {
		t.Errorf("got %v, want a normal close frame from the server", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v, want nil after a graceful shutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after ctx ended")
	}
	waitGone(t, s)
}

// onlySession returns the server's one session.
func onlySession(t *testing.T, s *Server) *live.Session {
	t.Helper()
	s.Sessions.Mu.Lock()
	defer s.Sessions.Mu.Unlock()
	if len(s.Sessions.ByID) != 1 {
		t.Fatalf("got %d sessions, want 1", len(s.Sessions.ByID))
	}
	for _, v := range s.Sessions.ByID {
		return v
	}
	return nil
}
