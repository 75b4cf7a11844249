package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tracer/engine/bench"
	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/live"

	"github.com/gorilla/websocket"

	modelhub "tracer/engine/hub"
	"tracer/engine/hub/hubtest"
)

// chaosMessages are what pages send, valid, mistaken and hostile: every
// message type, bad JSON, huge numbers, negative indices, a panicking
// model, the sampling settings that once panicked, a million beams,
// downloads past the size limit.
var chaosMessages = []string{
	`{"type": "first"}`, `{"type": "prev"}`, `{"type": "next"}`, `{"type": "last"}`, `{"type": "view"}`,
	`{"type": "step", "index": 2}`, `{"type": "step", "index": -1}`, `{"type": "step", "index": 2147483648}`,
	`{"type": "step", "index": 1e30}`, `{"type": "step", "index": -9223372036854775808}`,
	`{"type": "row", "index": 0}`, `{"type": "row", "index": -5}`, `{"type": "row", "index": 99999999999}`,
	`{"type": "select", "branch": 0}`, `{"type": "select", "branch": 1}`, `{"type": "select", "branch": -2147483648}`,
	`{"type": "branch", "step": 1, "id": 3}`, `{"type": "branch", "step": -1, "id": 3}`, `{"type": "branch", "id": -7}`,
	`{"type": "branch", "token": "love"}`, `{"type": "branch", "token": "#99999999999999999999"}`, `{"type": "branch", "step": 0, "token": ""}`,
	`{"type": "until", "until": {"top1_below": "0.9"}}`, `{"type": "until", "until": {"rank_above": "-1", "token_top_k": "0"}}`,
	`{"type": "until", "until": {"entropy_above": "NaN", "token": "#-1"}}`, `{"type": "until", "until": {"token": "chai", "token_top_k": "999999999999"}}`,
	`{"type": "pair", "on": true}`, `{"type": "charts", "on": true, "dark": true}`, `{"type": "charts", "on": false}`,
	`{"type": "detach"}`, `{"type": "rejoin"}`, `{"type": "stop"}`,
	`{"type": "pull", "repo": "org/tiny"}`, `{"type": "pull", "repo": "../../etc/passwd"}`, `{"type": "pull", "repo": "` + strings.Repeat("a", 500) + `"}`,
	`{"type": "generate", "form": {"model": "toy", "do_sample": "false"}}`,
	`{"type": "generate", "form": {"model": "toy", "do_sample": "true", "temperature": "1e-45"}}`,
	`{"type": "generate", "form": {"model": "loop", "max_new_tokens": "30"}}`,
	`{"type": "generate", "form": {"model": "loop", "num_beams": "1000000"}}`,
	`{"type": "generate", "form": {"model": "loop", "num_beams": "3", "max_new_tokens": "8"}}`,
	`{"type": "generate", "form": {"model": "loop", "max_new_tokens": "999999999999"}}`,
	`{"type": "generate", "form": {"model": "loop", "prompt": "a\nb\nc", "max_new_tokens": "5"}}`,
	`{"type": "generate", "form": {"model": "loop", "input": "ids", "prompt": "-1, 99999999999"}}`,
	`{"type": "generate", "form": {"model": "boom"}}`,
	`{"type": "generate", "form": {"model": "/etc/passwd"}}`,
	`{"type": "generate", "form": {"model": "toy", "input": "chat", "prompt": "hi"}}`,
	`{"type": "compare", "form": {"model": "toy", "variants": "greedy\nT=1e-45"}}`,
	`{"type": "compare", "form": {"model": "loop", "max_new_tokens": "6", "variants": "greedy\nT=0.7 top_k=2\nT=1.2 top_p=0.5"}}`,
	`{"type": "compare", "form": {"model": "boom", "variants": "greedy\nT=0.7"}}`,
	`{"type": "compare", "form": {"model": "toy", "variants": "` + strings.Repeat(`T=1\n`, 50) + `"}}`,
	`{"type": "next"`, `[1, 2]`, `null`, `"next"`, `{}`, `{"type": "rm -rf /"}`, `{"type": "next", "sudo": true}`,
	`{"type": "generate", "form": {"model": "toy", "pull": "org/tiny"}}`, `{"type": "step", "index": "3"}`,
	`{"type": "next"} {"type": "next"}`, "\xff\xfe{\"type\": \"next\"}", `{"type": "generate", "form": null}`,
	`{"type": "view", "pad": "` + strings.Repeat("x", 60<<10) + `"}`,
	// what-if storms and branch floods (past --max-branches)
	`{"type": "whatif"}`, `{"type": "whatif", "whatif": {"temperature": "1e-45", "top_k": "99999999999", "top_p": "NaN"}}`,
	`{"type": "branch", "step": 0, "id": 0}`, `{"type": "branch", "step": 0, "id": 1}`, `{"type": "branch", "step": 0, "id": 2}`,
	`{"type": "branch", "step": 1, "id": 4}`, `{"type": "branch", "step": 1, "id": 6}`, `{"type": "branch", "step": 2, "id": 7}`,
}

// chaosImport is a trace that claims a vocabulary no model has and carries
// more branches than a run may grow: refused before anything is built.
func chaosImport() []byte {
	tr := &trace.Trace{Format: trace.Format, Model: trace.Model{Name: "huge", Kind: "toy", Architecture: "bigram", VocabSize: 1 << 24}}
	for i := range 200 {
		tr.Branches = append(tr.Branches, trace.Branch{ID: i + 1, Steps: []trace.Step{}})
	}
	b, _ := json.Marshal(tr)
	return b
}

// TestChaos: twenty pages send two thousand messages drawn from valid,
// mistaken and hostile ones. Afterwards the server's memory is within its
// budget, no goroutine is left over, and a fresh page still generates and
// steps.
func TestChaos(t *testing.T) {
	h := hubtest.New(t, hubtest.Repo{ID: "org/tiny", Files: hubtest.TinyModel()})
	hubTransport := &http.Transport{} // closed at the end, so its idle connections do not count as left over
	cfg := Config{
		MaxNewTokens: 50, MaxSessions: 200, Generations: 2, MaxRunBytes: 16 << 20, MaxImports: 4 << 20,
		MaxPullBytes: 1000, HFCache: t.TempDir(), Hub: &modelhub.Options{Endpoint: h.URL, Client: &http.Client{Transport: hubTransport}},
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addPanicModels(t, s)
	s.Catalog.Add("loop", "loop", testsupport.LoopModel(t, time.Millisecond))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	defer s.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore, peakOK := bench.RSSBytes(), bench.ResetPeakRSS()
	baseline := runtime.NumGoroutine()

	const clients, perClient = 20, 100
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var sent, answered atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Go(func() {
			if err := chaosClient(ctx, hc, ts.URL, rand.New(rand.NewPCG(uint64(i), 7)), perClient, &sent, &answered); err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the clients did not finish in time: %d of %d messages sent", sent.Load(), clients*perClient)
	}
	t.Logf("%d messages sent, %d answers read", sent.Load(), answered.Load())

	// Every run ends, every connection closes, nothing is left running.
	wait, cancelWait := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancelWait()
	if err := s.WaitJobs(wait); err != nil {
		t.Fatal(err)
	}
	s.Pulls.Wg.Wait()
	hc.Transport.(*http.Transport).CloseIdleConnections()
	hubTransport.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for s.Hub.Count() > 0 || runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("after the chaos: %d connections, %d goroutines, want 0 and at most %d\n%s", s.Hub.Count(), runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Memory: what the sessions hold is bounded by the limits.
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	budget := before.HeapInuse + uint64(cfg.MaxImports) + uint64(cfg.Generations)*uint64(cfg.MaxRunBytes) + uint64(cfg.MaxSessions)<<20
	t.Logf("HeapInuse %.1f MiB before, %.1f MiB after; budget %.1f MiB", float64(before.HeapInuse)/(1<<20), float64(after.HeapInuse)/(1<<20), float64(budget)/(1<<20))
	if after.HeapInuse > budget {
		t.Errorf("HeapInuse after the chaos is %d bytes, want at most %d (the limits' budget)", after.HeapInuse, budget)
	}
	// The peak resident memory of the whole process during the chaos: the
	// limits' budget, twice over for the garbage collector's headroom.
	if peak := bench.PeakRSSBytes(); peakOK && peak > 0 && rssBefore > 0 {
		limit := rssBefore + 2*int64(budget-before.HeapInuse)
		t.Logf("peak RSS %.1f MiB (%.1f MiB at the start); budget %.1f MiB", float64(peak)/(1<<20), float64(rssBefore)/(1<<20), float64(limit)/(1<<20))
		if peak > limit {
			t.Errorf("peak RSS during the chaos is %d bytes, want at most %d", peak, limit)
		}
	}

	// A fresh page still generates and steps.
	_, c := pageAt(t, ts)
	generate(t, s, c, form{"model": "toy", "do_sample": "false"})
	if o := roundTrip(t, c, `{"type": "first"}`); o.Type != live.MsgView || o.Index != 0 {
		t.Errorf("a fresh page after the chaos: got %+v, want the view at 0", o)
	}
	if o := roundTrip(t, c, `{"type": "next"}`); o.Type != live.MsgView || o.Index != 1 {
		t.Errorf("a fresh page after the chaos: got %+v, want the view at 1", o)
	}
}

// chaosClient opens a page and sends n messages drawn by rng, reading
// what comes back as it goes and waiting a moment for an answer after
// each; a connection the server closes (for an
// oversized frame, say) is dialled again. Sometimes it opens a new page
// or dials a session that does not exist.
func chaosClient(ctx context.Context, hc *http.Client, base string, rng *rand.Rand, n int, sent, answered *atomic.Int64) error {
	var id string // the page's session
	open := func() (*websocket.Conn, error) {
		res, err := hc.Get(base + "/")
		if err != nil {
			return nil, err
		}
		var buf [1 << 16]byte
		k, _ := readSome(res, buf[:])
		res.Body.Close()
		m := pageSession.FindSubmatch(buf[:k])
		id = "0123456789abcdef" // an unknown session: the server says it expired
		if m != nil {
			id = string(m[1])
		}
		d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
		c, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws?session="+id, nil)
		return c, err
	}
	c, err := open()
	if err != nil {
		return err
	}
	var readers sync.WaitGroup
	got := make(chan struct{}, 1) // an answer arrived
	drain := func(c *websocket.Conn) {
		readers.Go(func() {
			for {
				_, data, err := c.ReadMessage()
				if err != nil {
					return
				}
				if !json.Valid(data) {
					return
				}
				answered.Add(1)
				select {
				case got <- struct{}{}:
				default:
				}
			}
		})
	}
	drain(c)
	defer func() { c.Close(); readers.Wait() }()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		var err error
		switch r := rng.IntN(100); {
		case r < 2: // a new page
			c.Close()
			c, err = open()
			if err == nil {
				drain(c)
			}
		case r < 4:
			err = c.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2})
		case r < 5: // larger than the server reads: it closes the connection
			err = c.WriteMessage(websocket.TextMessage, []byte(`{"type": "next", "pad": "`+strings.Repeat("x", 100<<10)+`"}`))
		case r < 8: // the one-file export, a chart, an implausible import
			chaosHTTP(ctx, hc, base, id, rng)
		default:
			err = c.WriteMessage(websocket.TextMessage, []byte(chaosMessages[rng.IntN(len(chaosMessages))]))
		}
		sent.Add(1)
		if err == nil { // like a person, mostly wait for the answer before the next
			select {
			case <-got:
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
			}
		}
		if err != nil { // closed by the server: a new page
			c.Close()
			if c, err = open(); err != nil {
				return err
			}
			drain(c)
		}
	}
	return nil
}

// chaosHTTP makes one of the page's HTTP requests for session id, drawn
// by rng, and reads a little of the answer: some clients leave early.
func chaosHTTP(ctx context.Context, hc *http.Client, base, id string, rng *rand.Rand) {
	var req *http.Request
	switch rng.IntN(3) {
	case 0:
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/export?format=html&session="+id, nil)
	case 1:
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/chart?chart=confidence&format=svg&step=0&session="+id, nil)
	default:
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, base+"/import?session="+id, bytes.NewReader(chaosImport()))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return
	}
	var buf [4 << 10]byte
	readSome(res, buf[:])
	res.Body.Close()
}

// readSome reads up to len(buf) bytes of a response's body.
func readSome(res *http.Response, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := res.Body.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
