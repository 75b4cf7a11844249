package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"tracer/engine"
	modelhub "tracer/engine/hub"
	"tracer/engine/hub/hubtest"
	"tracer/engine/models"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
	"tracer/web/runs"
)

// lockedBuffer is a log sink goroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// panicModel is a model with a bug: its Forward (or, with inInfo, its
// Info) panics.
type panicModel struct {
	engine.Model
	inInfo bool
}

func (m panicModel) Forward(engine.Cache, *engine.Batch, [][]float32) error {
	panic("boom: a bug in the model's forward pass")
}

func (m panicModel) Info() engine.Info {
	if m.inInfo {
		panic("boom: a bug in the model's info")
	}
	return m.Model.Info()
}

// addPanicModels offers "boom" (Forward panics) and "boom-info" (Info
// panics) beside the toy.
func addPanicModels(t *testing.T, s *Server) {
	t.Helper()
	base := s.Toy.Model
	for _, inInfo := range []bool{false, true} {
		name := "boom"
		if inInfo {
			name = "boom-info"
		}
		m := &models.Loaded{Spec: name, Model: panicModel{base, inInfo}, Tokenizer: s.Toy.Tokenizer, Config: s.Toy.Config}
		s.Catalog.Add(name, name+" (panics)", m)
	}
}

// pageAt opens a new page's session on ts and connects to it, as its
// script does.
func pageAt(t *testing.T, ts *httptest.Server) (string, *websocket.Conn) {
	t.Helper()
	status, _, id := getPage(t, ts.URL+"/")
	if status != http.StatusOK || id == "" {
		t.Fatalf("GET /: got %d, session %q; want a page", status, id)
	}
	c := dial(t, wsURL(ts)+id)
	// The first answer means the server has registered the connection.
	if o := roundTrip(t, c, `{"type": "view"}`); o.Type != live.MsgView {
		t.Fatalf("a new page's first view: got %+v", o)
	}
	return id, c
}

func wsURL(ts *httptest.Server) string {
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws?session="
}

// startServer runs a server for cfg on httptest, setup adding models first.
func startServer(t *testing.T, cfg Config, setup func(*Server)) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.Close(); ts.Close() })
	return s, ts
}

// endOrError accepts the end of a run or an error: either way the page
// heard back.
func endOrError(o live.Outbound) bool { return o.Type == live.MsgError || finished(o) }

// TestPanicsStayInTheirRun: a model that panics, in a generation, a
// comparison, a branch or while the message is answered, costs its page
// that run (an error saying so, the stack in the log), never the server:
// another page still generates. The sampling messages that once panicked
// in the engine get an answer too.
func TestPanicsStayInTheirRun(t *testing.T) {
	var log lockedBuffer
	s, ts := startServer(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}, func(s *Server) {
		addPanicModels(t, s)
		s.Catalog.Add("loop", "loop", testsupport.LoopModel(t, 0))
	})
	cases := []struct {
		name string
		msg  any
		ok   func(live.Outbound) bool
	}{
		{"generate, forward panics", map[string]any{"type": "generate", "form": form{"model": "boom"}}, errorSaying("internal error")},
		{"compare, forward panics", map[string]any{"type": "compare", "form": form{"model": "boom", "variants": "greedy\nT=0.7"}}, errorSaying("internal error")},
		{"generate, info panics", map[string]any{"type": "generate", "form": form{"model": "boom-info"}}, errorSaying("internal error")},
		{"sampling at T=1e-45", map[string]any{"type": "generate", "form": form{"model": "toy", "do_sample": "true", "temperature": "1e-45"}}, endOrError},
		{"compare at T=1e-45", map[string]any{"type": "compare", "form": form{"model": "toy", "variants": "greedy\nT=1e-45"}}, endOrError},
		{"sampling the loop at T=1e-45", map[string]any{"type": "generate", "form": form{"model": "loop", "do_sample": "true", "temperature": "1e-45", "max_new_tokens": "5"}}, endOrError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c := pageAt(t, ts) // a page of its own: nothing left over from another case
			sendJSON(t, c, tc.msg)
			waitFor(t, c, "an answer", tc.ok)
			settleQuiet(t, s, c)
		})
	}
	t.Run("a branch whose model panics", func(t *testing.T) {
		id, c := pageAt(t, ts)
		sess, ok := s.Sessions.Get(id)
		if !ok {
			t.Fatal("the page's session is gone")
		}
		d, err := s.FirstRun(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sess.Mu.Lock()
		r := d.Runs[0]
		sess.Doc, sess.Cur = &runs.Document{Runs: []*runs.Run{r}, Source: "test"}, runs.Cursor{}
		r.Model = &models.Loaded{Spec: "boom", Model: panicModel{s.Toy.Model, false}, Tokenizer: s.Toy.Tokenizer}
		r.Req.Model = r.Model.Model
		r.Caches = map[int]engine.Cache{}
		sess.Mu.Unlock()
		sendJSON(t, c, map[string]any{"type": "branch", "step": 0, "id": 1})
		waitFor(t, c, "the branch's error", errorSaying("internal error"))
		if o := settleQuiet(t, s, c); o.Running {
			t.Error("after the panic the page still shows the branch running")
		}
	})
	if got := log.String(); !strings.Contains(got, "boom: a bug in the model") || !strings.Contains(got, "goroutine") {
		t.Errorf("the log lacks the panic and its stack:\n%.2000s", got)
	}
	// The server goes on: a fresh page generates and steps.
	_, c2 := pageAt(t, ts)
	generate(t, s, c2, form{"model": "toy", "do_sample": "false"})
	if o := roundTrip(t, c2, `{"type": "first"}`); o.Type != live.MsgView || o.Index != 0 {
		t.Errorf("a fresh page after the panics: got %+v, want the view at 0", o)
	}
}

// settleQuiet is settle for a page that may hear errors on the way: it
// skips them.
func settleQuiet(t *testing.T, s *Server, c *websocket.Conn) live.Outbound {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitJobs(ctx); err != nil {
		t.Fatal(err)
	}
	mark := s.Seq.Load()
	sendJSON(t, c, map[string]string{"type": "view"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.SetReadDeadline(deadline)
		var o live.Outbound
		if err := c.ReadJSON(&o); err != nil {
			t.Fatalf("waiting for the current view: %v", err)
		}
		if o.Type == live.MsgView && o.Seq > mark {
			return o
		}
	}
}

// TestRunLimits: each limit a classroom server needs refuses with a clear
// message naming the limit's flag.
func TestRunLimits(t *testing.T) {
	s, ts := startServer(t, Config{MaxRunBytes: 4 << 20, MaxPageRuns: 1}, func(s *Server) {
		s.Catalog.Add("loop", "loop", testsupport.LoopModel(t, 20*time.Millisecond))
	})
	_, c := pageAt(t, ts)
	cases := []struct {
		name string
		f    form
		says string
	}{
		{"a million beams", form{"model": "loop", "num_beams": "1000000", "max_new_tokens": "3"}, "--max-rows-beams"},
		{"rows × beams", form{"model": "loop", "prompt": strings.Repeat("a\n", 16), "input": "text", "num_beams": "8", "max_new_tokens": "3"}, "--max-rows-beams"},
		{"memory by estimate", form{"model": "loop", "num_beams": "8", "max_new_tokens": "1000"}, "--max-run-mib"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sendJSON(t, c, map[string]any{"type": "generate", "form": tc.f})
			o := waitFor(t, c, "the refusal", func(o live.Outbound) bool { return o.Type == live.MsgError })
			if !strings.Contains(o.Message, tc.says) {
				t.Errorf("got %q, want a refusal naming %s", o.Message, tc.says)
			}
		})
	}
	t.Run("runs per page", func(t *testing.T) {
		sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "loop", "max_new_tokens": "200"}})
		waitFor(t, c, "the run to start", func(o live.Outbound) bool { return o.Type == live.MsgView && o.Running })
		sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "loop", "max_new_tokens": "3"}})
		o := waitFor(t, c, "the refusal", func(o live.Outbound) bool { return o.Type == live.MsgError })
		if !strings.Contains(o.Message, "--max-page-runs") {
			t.Errorf("got %q, want a refusal naming --max-page-runs", o.Message)
		}
		sendJSON(t, c, map[string]string{"type": "stop"})
		settle(t, s, c)
		generate(t, s, c, form{"model": "loop", "max_new_tokens": "3"}) // once it has ended, the page runs again
	})
}

// postTrace imports data into the session as a page's script does and
// returns the status and the reply's message.
func postTrace(t *testing.T, ts *httptest.Server, id string, data []byte) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("trace", "loop.json")
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/import?session="+id, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestImportTotalLimit: imported traces count against one budget for all
// pages; a page that leaves frees its share.
func TestImportTotalLimit(t *testing.T) {
	data := testsupport.LoopTrace(t, 40)
	s, ts := startServer(t, Config{MaxImports: int64(len(data))*3/2 + 1<<10, SessionTTL: time.Minute}, nil)
	a, _ := pageAt(t, ts)
	if code, msg := postTrace(t, ts, a, data); code != http.StatusOK {
		t.Fatalf("the first import: got %d %s, want 200", code, msg)
	}
	if code, msg := postTrace(t, ts, a, data); code != http.StatusOK {
		t.Fatalf("the same page importing again (replacing its trace): got %d %s, want 200", code, msg)
	}
	b, _ := pageAt(t, ts)
	code, msg := postTrace(t, ts, b, data)
	if code != http.StatusInsufficientStorage || !strings.Contains(msg, "--max-import-mib") {
		t.Errorf("a second page's import past the total: got %d %s, want 507 naming --max-import-mib", code, msg)
	}
	// Page a generates: its imported trace is gone, and so is its share.
	ca := dial(t, wsURL(ts)+a)
	generate(t, s, ca, form{"model": "toy"})
	if code, msg := postTrace(t, ts, b, data); code != http.StatusOK {
		t.Errorf("after page a let its import go: got %d %s, want 200", code, msg)
	}
}

// TestPullLimits: a download larger than --max-pull-mib stops with a
// message naming the flag.
func TestPullLimits(t *testing.T) {
	h := hubtest.New(t, hubtest.Repo{ID: "org/tiny", Files: hubtest.TinyModel()})
	_, ts := startServer(t, Config{HFCache: t.TempDir(), Hub: &modelhub.Options{Endpoint: h.URL}, MaxPullBytes: 1000}, nil)
	_, c := pageAt(t, ts)
	sendJSON(t, c, map[string]string{"type": "pull", "repo": "org/tiny"})
	o := waitFor(t, c, "the refusal", func(o live.Outbound) bool { return o.Type == live.MsgError || o.Type == live.MsgPulled })
	if o.Type != live.MsgError || !strings.Contains(o.Message, "--max-pull-mib") {
		t.Errorf("got %+v, want the download stopped, naming --max-pull-mib", o)
	}
}

// TestSessionsSurviveCrowds: a thousand plain GET / never push out a page
// that is connected, or one connected a moment ago that reconnects.
func TestSessionsSurviveCrowds(t *testing.T) {
	s, ts := startServer(t, Config{MaxSessions: 5}, nil)
	connected, c := pageAt(t, ts)
	blip, cb := pageAt(t, ts) // its network drops for a moment
	cb.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.Hub.Count() > 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for range 30 {
		if status, _, _ := getPage(t, ts.URL+"/"); status != http.StatusOK {
			t.Fatalf("GET /: got %d, want 200", status)
		}
	}
	if o := roundTrip(t, c, `{"type": "next"}`); o.Type != live.MsgView || o.Index != 1 {
		t.Errorf("the connected page after the crowd: got %+v, want its view at 1", o)
	}
	for _, id := range []string{connected, blip} {
		c := dial(t, wsURL(ts)+id)
		if o := roundTrip(t, c, `{"type": "view"}`); o.Type != live.MsgView {
			t.Errorf("reconnecting session %s after the crowd: got %+v, want its view", id[:6], o)
		}
	}
	if n := s.Sessions.Len(); n > 5 {
		t.Errorf("got %d sessions, want at most 5", n)
	}
	// When every session has a page connected, a new page is refused
	// clearly rather than taking one of theirs.
	for range 3 { // with the two above, five pages connected
		pageAt(t, ts)
	}
	res, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "--max-sessions") {
		t.Errorf("GET / with every session connected: got %d %q, want 503 naming --max-sessions", res.StatusCode, body)
	}
}

// TestExpiredSessionReconnects: a page whose session the server no longer
// holds hears so over its socket (and reloads), instead of a dead 404.
func TestExpiredSessionReconnects(t *testing.T) {
	_, ts := startServer(t, Config{}, nil)
	c := dial(t, wsURL(ts)+"0123456789abcdef0123456789abcdef")
	o := read(t, c)
	if o.Type != live.MsgExpired || !strings.Contains(o.Message, "reloads") {
		t.Errorf("got %+v, want an expired message", o)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation {
		t.Errorf("got %v, want a close with 1008, which the page does not retry", err)
	}
	// A plain HTTP request for it is still a 404.
	res, err := http.Get(ts.URL + "/ws?session=nope")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /ws for an unknown session: got %d, want 404", res.StatusCode)
	}
}

// TestPullRoles: who may download from the page, and a following student
// who may not run.
func TestPullRoles(t *testing.T) {
	h := hubtest.New(t, hubtest.Repo{ID: "org/tiny", Files: hubtest.TinyModel()})
	hub := func() *modelhub.Options { return &modelhub.Options{Endpoint: h.URL} }
	t.Run("classroom", func(t *testing.T) {
		s, ts := startServer(t, Config{Classroom: true, HFCache: t.TempDir(), Hub: hub()}, nil)
		_, page, studentID := getPage(t, ts.URL+"/")
		if strings.Contains(page, `data-testid="pull-repo"`) {
			t.Error("a student's page shows the download row")
		}
		student := dial(t, wsURL(ts)+studentID)
		for _, tc := range []struct{ msg, says string }{
			{`{"type": "pull", "repo": "org/tiny"}`, "only the instructor"},
			{`{"type": "generate", "form": {"model": "toy"}}`, "press Detach"},
			{`{"type": "compare", "form": {"model": "toy", "variants": "greedy\nT=0.7"}}`, "press Detach"},
			{`{"type": "branch", "id": 1}`, "press Detach"},
		} {
			if o := roundTrip(t, student, tc.msg); o.Type != live.MsgError || !strings.Contains(o.Message, tc.says) {
				t.Errorf("student %s: got %+v, want an error saying %q", tc.msg, o, tc.says)
			}
		}
		_, page, _ = getPage(t, ts.URL+"/?teach="+s.TeachToken())
		if !strings.Contains(page, `data-testid="pull-repo"`) {
			t.Error("the instructor's page lacks the download row")
		}
		teacher := dial(t, wsURL(ts)+s.Class.Leader.ID+"&teach="+s.TeachToken())
		sendJSON(t, teacher, map[string]string{"type": "pull", "repo": "org/tiny"})
		waitFor(t, teacher, "the instructor's download", func(o live.Outbound) bool { return o.Type == live.MsgPulled })
	})
	t.Run("no-pull", func(t *testing.T) {
		_, ts := startServer(t, Config{NoPull: true, HFCache: t.TempDir(), Hub: hub()}, nil)
		_, page, id := getPage(t, ts.URL+"/")
		if strings.Contains(page, `data-testid="pull-repo"`) {
			t.Error("a --no-pull server's page shows the download row")
		}
		c := dial(t, wsURL(ts)+id)
		if o := roundTrip(t, c, `{"type": "pull", "repo": "org/tiny"}`); o.Type != live.MsgError || !strings.Contains(o.Message, "--no-pull") {
			t.Errorf("got %+v, want a refusal naming --no-pull", o)
		}
	})
	t.Run("open to the network", func(t *testing.T) {
		s, ts := startServer(t, Config{HFCache: t.TempDir(), Hub: hub()}, nil)
		s.listen.Store(&net.TCPAddr{IP: net.IPv4zero, Port: 8080}) // as if serving on 0.0.0.0
		_, _, id := getPage(t, ts.URL+"/")
		c := dial(t, wsURL(ts)+id)
		if o := roundTrip(t, c, `{"type": "pull", "repo": "org/tiny"}`); o.Type != live.MsgError || !strings.Contains(o.Message, "open to other machines") {
			t.Errorf("got %+v, want a refusal", o)
		}
	})
}

// TestHostHeader: a DNS-rebinding page reaches the server under its own
// name; the server answers only to its own.
func TestHostHeader(t *testing.T) {
	base, _ := serve(t, Config{AllowHosts: []string{"class.example"}}, nil)
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/"))
	cases := []struct {
		name, host string
		status     int
	}{
		{"rebinding name", "evil.example:" + port, http.StatusForbidden},
		{"rebinding name without a port", "evil.example", http.StatusForbidden},
		{"localhost", "localhost:" + port, http.StatusOK},
		{"loopback address", "127.0.0.1:" + port, http.StatusOK},
		{"IPv6 loopback", "[::1]:" + port, http.StatusOK},
		{"another address than the one listened on", "10.1.2.3:" + port, http.StatusForbidden},
		{"allowed with --allow-host", "class.example:" + port, http.StatusOK},
		{"allowed name, other case", "CLASS.example:" + port, http.StatusOK},
		{"empty", "", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/", "/lessons", "/static/app.js"} {
				req, _ := http.NewRequest("GET", base+strings.TrimPrefix(path, "/"), nil)
				req.Host = tc.host
				if tc.host == "" {
					req.Host = " " // Go sends the URL's host for ""; a blank one is as bad
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != tc.status && !(tc.status == http.StatusOK && res.StatusCode == http.StatusNotFound) {
					t.Errorf("%s with Host %q: got %d, want %d", path, tc.host, res.StatusCode, tc.status)
				}
				if tc.status == http.StatusForbidden && res.StatusCode == http.StatusForbidden && !strings.Contains(string(body), "--allow-host") {
					t.Errorf("%s: the refusal %q does not say how to allow the name", path, body)
				}
			}
		})
	}
	t.Run("websocket", func(t *testing.T) {
		_, _, id := getPage(t, base)
		ws := "ws://127.0.0.1:" + port + "/ws?session=" + id
		h := http.Header{"Host": {"evil.example:" + port}, "Origin": {"http://evil.example:" + port}}
		c, res, err := websocket.DefaultDialer.Dial(ws, h)
		if err == nil {
			c.Close()
		}
		if res == nil || res.StatusCode != http.StatusForbidden {
			t.Errorf("a rebinding page's socket: got %v, want 403", err)
		}
		h = http.Header{"Origin": {"http://127.0.0.1:" + port}}
		c, _, err = websocket.DefaultDialer.Dial(ws, h)
		if err != nil {
			t.Fatalf("the page's own socket: %v", err)
		}
		c.Close()
		h = http.Header{"Host": {"localhost:" + port}, "Origin": {"http://evil.example"}}
		if c, _, err := websocket.DefaultDialer.Dial(ws, h); err == nil {
			c.Close()
			t.Error("a good Host with another Origin got through: the Origin check must stay")
		}
	})
}

// TestPagesNeverSeeServerPaths: a model's error names it as the menu
// does, never by the server's path.
func TestPagesNeverSeeServerPaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.json"), []byte(testsupport.LoopTable), 0o644); err != nil {
		t.Fatal(err)
	}
	s, ts := startServer(t, Config{ModelsDir: dir}, nil)
	_, c := pageAt(t, ts)
	sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "mine.json", "input": "chat", "prompt": "hi"}})
	o := waitFor(t, c, "the chat error", func(o live.Outbound) bool { return o.Type == live.MsgError })
	if strings.Contains(o.Message, dir) || !strings.Contains(o.Message, "mine.json") {
		t.Errorf("got %q, want the model named mine.json without the server's folder %s", o.Message, dir)
	}
	v := generate(t, s, c, form{"model": "mine.json", "max_new_tokens": "3"})
	if strings.Contains(v.HTML, dir) {
		t.Errorf("the run's view shows the server's folder %s", dir)
	}
	if i := strings.Index(v.HTML, "mine.json"); i < 0 {
		t.Error("the run's view does not name the model mine.json")
	}
}

// TestRunFormSendsOnlyItsFields: every named field of the run form, as
// rendered with the download row shown, is one the server's decoder
// accepts; the download box's own field once made Generate and Compare
// fail with `unknown field "pull"`.
func TestRunFormSendsOnlyItsFields(t *testing.T) {
	h := hubtest.New(t)
	_, ts := startServer(t, Config{HFCache: t.TempDir(), Hub: &modelhub.Options{Endpoint: h.URL}}, nil)
	_, page, id := getPage(t, ts.URL+"/")
	start := strings.Index(page, `id="run-form"`)
	end := strings.Index(page[max(start, 0):], "</form>")
	if start < 0 || end < 0 || !strings.Contains(page, `data-testid="pull-repo"`) {
		t.Fatal("the page lacks the run form with the download row")
	}
	fields := map[string]string{}
	for _, m := range regexp.MustCompile(`name="([^"]+)"`).FindAllStringSubmatch(page[start:start+end], -1) {
		fields[m[1]] = ""
	}
	delete(fields, "variants") // the script sends it with compare only
	c := dial(t, wsURL(ts)+id)
	for _, typ := range []string{live.MsgGenerate, live.MsgCompare} {
		f := map[string]string{}
		for k := range fields {
			f[k] = ""
		}
		if typ == live.MsgCompare {
			f["variants"] = "greedy\nT=0.7"
		}
		sendJSON(t, c, map[string]any{"type": typ, "form": f})
		o := waitFor(t, c, typ+"'s answer", endOrError)
		if o.Type == live.MsgError {
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range fields {
					if !yield(k) {
						return
					}
				}
			})
			t.Errorf("%s with the form's fields %v: got %q", typ, names, o.Message)
		}
	}
}

// panicTransport is an HTTP client transport with a bug.
type panicTransport struct{}

func (panicTransport) RoundTrip(*http.Request) (*http.Response, error) {
	panic("boom: a bug in the download")
}

// TestPanicsInPullsAndRequests: a download that panics is its page's
// error; a request whose handler panics gets 500 and a clear text; the
// server goes on.
func TestPanicsInPullsAndRequests(t *testing.T) {
	var log lockedBuffer
	s, ts := startServer(t, Config{
		HFCache: t.TempDir(), Hub: &modelhub.Options{Endpoint: "http://127.0.0.1:1", Client: &http.Client{Transport: panicTransport{}}},
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	}, nil)
	_, c := pageAt(t, ts)
	sendJSON(t, c, map[string]string{"type": "pull", "repo": "org/tiny"})
	if o := waitFor(t, c, "the download's error", func(o live.Outbound) bool { return o.Type == live.MsgError }); !strings.Contains(o.Message, "internal error") {
		t.Errorf("got %q, want the download's internal error", o.Message)
	}
	s.Pulls.Wg.Wait()

	h := s.checkHost(securityHeaders(s.recoverHTTP(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom: a bug in a handler")
	}))))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "http://localhost/import", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "internal error") {
		t.Errorf("a panicking handler: got %d %q, want 500 with a clear text", rec.Code, rec.Body.String())
	}
	for _, want := range []string{"boom: a bug in the download", "boom: a bug in a handler", "goroutine"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	generate(t, s, c, form{"model": "toy"}) // the server goes on
}
