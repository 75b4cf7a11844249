package web

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
)

// liveServer starts a server with the loop model added (slowed by delay)
// and one page's session, and connects to it.
func liveServer(t *testing.T, cfg Config, delay time.Duration) (*Server, *live.Session, *websocket.Conn) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Catalog.Add("loop", "loop (slow toy)", testsupport.LoopModel(t, delay))
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.Close(); ts.Close() })
	d, err := s.FirstRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.Sessions.Create(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, sess, dial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws?session="+sess.ID)
}

// sendJSON sends one message.
func sendJSON(t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, b); err != nil {
		t.Fatalf("send %s: %v", b, err)
	}
}

// waitFor reads messages until one satisfies ok; an error reply fails the
// test unless ok accepts it.
func waitFor(t *testing.T, c *websocket.Conn, what string, ok func(live.Outbound) bool) live.Outbound {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.SetReadDeadline(deadline)
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		var o live.Outbound
		if err := json.Unmarshal(data, &o); err != nil {
			t.Fatalf("reply is not JSON: %v", err)
		}
		if ok(o) {
			return o
		}
		if o.Type == live.MsgError {
			t.Fatalf("waiting for %s: got error %q", what, o.Message)
		}
	}
}

// settle waits until the server's generations have ended and every view
// they sent has arrived, and returns the session's current view: every
// view built before the request has a lower sequence number than the reply.
func settle(t *testing.T, s *Server, c *websocket.Conn) live.Outbound {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitJobs(ctx); err != nil {
		t.Fatal(err)
	}
	mark := s.Seq.Load()
	sendJSON(t, c, map[string]string{"type": "view"})
	return waitFor(t, c, "the current view", func(o live.Outbound) bool { return o.Type == live.MsgView && o.Seq > mark })
}

// finished accepts the view of a run that has ended.
func finished(o live.Outbound) bool { return o.Type == live.MsgView && !o.Running }

// errorSaying accepts an error reply containing text.
func errorSaying(text string) func(live.Outbound) bool {
	return func(o live.Outbound) bool { return o.Type == live.MsgError && strings.Contains(o.Message, text) }
}

type form = map[string]string

// generate runs a form to its end and returns the view once every view
// on its way has arrived.
func generate(t *testing.T, s *Server, c *websocket.Conn, f form) live.Outbound {
	t.Helper()
	sendJSON(t, c, map[string]any{"type": "generate", "form": f})
	waitFor(t, c, "the run's end", finished)
	return settle(t, s, c)
}

// sessionTrace returns a snapshot of the session's first run.
func sessionTrace(sess *live.Session) *trace.Trace {
	sess.Mu.Lock()
	defer sess.Mu.Unlock()
	return sess.Doc.Runs[0].Snapshot()
}

func TestGenerateToy(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	o := generate(t, s, c, form{"model": "toy", "do_sample": "false"})
	if o.Count != 4 || !strings.Contains(o.HTML, `data-state="done"`) {
		t.Fatalf("got a view of %d positions, html %.300s; want 4 steps, done", o.Count, o.HTML)
	}
	o = roundTrip(t, c, `{"type": "last"}`)
	if got, ok := testsupport.OutputText(o.HTML); got != "I love chai" {
		t.Errorf("got output text %q (present %v), want I love chai", got, ok)
	}
	for _, want := range []string{`data-testid="funnel"`, `data-testid="kv"`, `data-testid="traffic"`, `data-testid="token-hex">3c 2f 73 3e`} {
		if !strings.Contains(o.HTML, want) {
			t.Errorf("the last step's view has no %s", want)
		}
	}
	if tr := sessionTrace(sess); tr.Output.NewText != "I love chai" || len(tr.Steps) != 4 {
		t.Errorf("got %q in %d steps, want I love chai in 4", tr.Output.NewText, len(tr.Steps))
	}
}

func TestGenerateErrors(t *testing.T) {
	_, _, c := liveServer(t, Config{MaxNewTokens: 50}, 0)
	cases := []struct {
		name string
		form form
		says string
	}{
		{"engine option", form{"do_sample": "true", "temperature": "0"}, "temperature must be strictly positive when sampling"},
		{"top_p", form{"top_p": "1.5"}, "top_p must be in (0, 1]"},
		{"not a number", form{"temperature": "warm"}, `temperature: "warm" is not a number`},
		{"unknown model", form{"model": "/etc/passwd"}, "not on this server's list"},
		{"chat", form{"input": "chat", "prompt": "hi"}, "chat"},
		{"not a word", form{"prompt": "I adore"}, `"adore" is not a word of the table`},
		{"id outside", form{"input": "ids", "prompt": "0 99"}, "outside the vocabulary"},
		{"bad id", form{"input": "ids", "prompt": "0 x"}, `"x" is not a token id`},
		{"too long", form{"max_new_tokens": "51"}, "more than this server allows (50)"},
		{"beams and sampling", form{"num_beams": "2", "do_sample": "true"}, "beam search with sampling"},
		{"padding", form{"padding": "middle"}, "padding"},
		{"unknown field", form{"sudo": "1"}, "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sendJSON(t, c, map[string]any{"type": "generate", "form": tc.form})
			waitFor(t, c, "an error saying "+tc.says, errorSaying(tc.says))
		})
	}
}

// TestGenerateErrorKinds: the error of a run refused before it starts
// says so and names the run form's field its message names; that of a run
// that failed after it started says the run's view shows it (issue 37,
// points 8 and 9).
func TestGenerateErrorKinds(t *testing.T) {
	_, _, c := liveServer(t, Config{MaxNewTokens: 50}, 0)
	for _, tc := range []struct {
		typ   string
		form  form
		field string
	}{
		{"generate", form{"max_new_tokens": "51"}, "max_new_tokens"},
		{"generate", form{"do_sample": "true", "temperature": "0"}, "temperature"},
		{"generate", form{"prompt": "I adore"}, ""},
		{"compare", form{"variants": "greedy"}, "variants"},
		{"compare", form{"variants": "greedy\nT=0.7 top_p=2"}, "variants"},
	} {
		sendJSON(t, c, map[string]any{"type": tc.typ, "form": tc.form})
		o := waitFor(t, c, "the refusal", func(o live.Outbound) bool { return o.Type == live.MsgError })
		if !o.Refused || o.Field != tc.field || o.Shown {
			t.Errorf("%s %v: got refused %v, field %q, shown %v (%q), want refused naming %q", tc.typ, tc.form, o.Refused, o.Field, o.Shown, o.Message, tc.field)
		}
	}
	sendJSON(t, c, map[string]any{"type": "generate", "form": form{"input": "ids", "prompt": "0 99"}})
	o := waitFor(t, c, "the run's error", errorSaying("outside the vocabulary"))
	if o.Refused || o.Field != "" || !o.Shown {
		t.Errorf("a failed run: got refused %v, field %q, shown %v, want shown alone", o.Refused, o.Field, o.Shown)
	}
}

func TestGenerateStreamsAndStops(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 5*time.Millisecond)
	sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "loop", "max_new_tokens": "400"}})
	o := waitFor(t, c, "a running view past step 5", func(o live.Outbound) bool { return o.Type == live.MsgView && o.Running && o.Count > 5 })
	// Step back while it runs: the position stays where the learner put it.
	o = roundTrip(t, c, `{"type": "step", "index": 2}`)
	if o.Index != 2 {
		t.Fatalf("stepping back while generating: got index %d, want 2", o.Index)
	}
	later := waitFor(t, c, "more steps", func(x live.Outbound) bool { return x.Type == live.MsgView && x.Count > o.Count+3 })
	if later.Index != 2 {
		t.Errorf("a new step moved the learner from step 2 to %d", later.Index)
	}
	sendJSON(t, c, map[string]string{"type": "stop"})
	end := waitFor(t, c, "the stopped run", finished)
	if !strings.Contains(end.HTML, `data-state="stopped"`) {
		t.Errorf("after stop: status is not stopped: %.400s", end.HTML)
	}
	tr := sessionTrace(sess)
	if tr.Output.StopReason != trace.StopCancelled || len(tr.Steps) >= 400 {
		t.Errorf("got stop reason %q after %d steps, want cancelled early", tr.Output.StopReason, len(tr.Steps))
	}
	settle(t, s, c)
	o = roundTrip(t, c, `{"type": "stop"}`)
	if o.Type != live.MsgError || !strings.Contains(o.Message, "nothing is generating") {
		t.Errorf("stop with nothing running: got %+v, want an error", o)
	}
}

func TestGenerateFollowsTheTail(t *testing.T) {
	_, _, c := liveServer(t, Config{}, 3*time.Millisecond)
	sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "loop", "max_new_tokens": "30"}})
	o := waitFor(t, c, "a view past step 10", func(o live.Outbound) bool { return o.Type == live.MsgView && o.Count > 10 })
	if o.Running && o.Index != o.Count-1 {
		t.Errorf("while generating at the newest step: got index %d of %d, want the newest", o.Index, o.Count)
	}
	end := waitFor(t, c, "the end", finished)
	if end.Index != 29 || end.Count != 30 {
		t.Errorf("at the end: got %d of %d, want 29 of 30", end.Index, end.Count)
	}
}

func TestBatchRows(t *testing.T) {
	s, _, c := liveServer(t, Config{}, 0)
	o := generate(t, s, c, form{"prompt": "I\nI love", "padding": "right", "max_new_tokens": "2"})
	if !strings.Contains(o.HTML, `data-testid="row-tabs"`) || !strings.Contains(o.HTML, `pad">pad</span>`) {
		t.Fatalf("a batch shows no row tabs or pads: %.500s", o.HTML)
	}
	o = roundTrip(t, c, `{"type": "row", "index": 1}`)
	if !strings.Contains(o.HTML, "showing row 1") {
		t.Errorf("row 1: the view does not show row 1")
	}
	if o = roundTrip(t, c, `{"type": "row", "index": 2}`); o.Type != live.MsgError {
		t.Errorf("row 2 of 2: got %+v, want an error", o)
	}
}

func TestBeamsAndCacheOff(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	o := generate(t, s, c, form{"num_beams": "2"})
	if !strings.Contains(o.HTML, "beam 1") || !strings.Contains(o.HTML, `data-state="done"`) {
		t.Errorf("beam search: no beam tabs or not done: %.400s", o.HTML)
	}
	if tr := sessionTrace(sess); tr.Steps[0].Rows[0].Chosen.By != trace.ByBeam {
		t.Errorf("beam search: got tokens chosen by %s", tr.Steps[0].Rows[0].Chosen.By)
	}
	if o = roundTrip(t, c, `{"type": "branch", "step": 0, "id": 3}`); o.Type != live.MsgError || !strings.Contains(o.Message, "beam search cannot branch") {
		t.Errorf("branching a beam search: got %+v", o)
	}
	generate(t, s, c, form{"use_cache": "false", "prompt": "I"})
	if tr := sessionTrace(sess); tr.Options.UseCache || tr.Steps[1].Phase != trace.PhaseFull {
		t.Errorf("cache off: got use_cache %v, phase %q", tr.Options.UseCache, tr.Steps[1].Phase)
	}
}

func TestPairWithToy(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	tr, err := trace.Decode(testsupport.LoopTrace(t, 12)) // labelled as a real model's run
	if err != nil {
		t.Fatal(err)
	}
	sess.Load(s.NewDocument(tr, "imported loop.json"))
	if o := roundTrip(t, c, `{"type": "view"}`); strings.Contains(o.HTML, `data-testid="pair"`) {
		t.Fatal("the toy is paired before the toggle")
	}
	roundTrip(t, c, `{"type": "pair", "on": true}`)
	for _, tc := range []struct {
		index int
		toy   string
	}{{1, "Toy step 2 of 4"}, {3, "Toy step 4 of 4"}, {9, "Toy step 4 of 4"}} {
		o := roundTrip(t, c, `{"type": "step", "index": `+itoa(tc.index)+`}`)
		if !strings.Contains(o.HTML, `data-testid="pair"`) || !strings.Contains(o.HTML, tc.toy) {
			t.Errorf("step %d: want %q beside the run", tc.index, tc.toy)
		}
	}
	if o := roundTrip(t, c, `{"type": "pair", "on": false}`); strings.Contains(o.HTML, `data-testid="pair"`) {
		t.Error("the toy is still paired after the toggle")
	}
}

func TestShutdownStopsGenerations(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.Catalog.Add("loop", "loop (slow toy)", testsupport.LoopModel(t, 5*time.Millisecond))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListener(ctx, ln) }()
	d, _ := s.FirstRun(context.Background())
	sess, _ := s.Sessions.Create(d, nil)
	c := dial(t, "ws://"+ln.Addr().String()+"/ws?session="+sess.ID)
	sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "loop", "max_new_tokens": "900"}})
	waitFor(t, c, "a running view", func(o live.Outbound) bool { return o.Type == live.MsgView && o.Running })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if tr := sessionTrace(sess); tr.Output.StopReason != trace.StopCancelled {
		t.Errorf("after shutdown: stop reason %q, want cancelled", tr.Output.StopReason)
	}
}
