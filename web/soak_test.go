package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"tracer/engine/bench"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
)

// soakFor is how long TestSoak drives its clients; TRACER_SOAK (a Go
// duration) changes it.
func soakFor(t *testing.T) time.Duration {
	if v := os.Getenv("TRACER_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("TRACER_SOAK=%q: %v", v, err)
		}
		return d
	}
	return 2 * time.Minute
}

// TestSoak: fifty pages, for two minutes, each doing what a class does
// over and over: open the page, generate, branch, ask what-if, draw a
// chart, export the page as one file and import a trace. The server's
// peak resident memory stays within what its limits allow, every request
// is answered, and afterwards no run, connection or goroutine is left.
func TestSoak(t *testing.T) {
	cfg := Config{
		MaxSessions: 1000, Generations: 4, MaxRunBytes: 32 << 20, MaxImports: 16 << 20, MaxHeld: 64 << 20,
		MaxBranches: 8, MaxNewTokens: 64, SessionTTL: time.Minute,
	}
	s, ts := startServer(t, cfg, func(s *Server) { s.Catalog.Add("loop", "loop", testsupport.LoopModel(t, time.Millisecond)) })
	imported := testsupport.LoopTrace(t, 40)
	hc := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	runtime.GC()
	baseline := runtime.NumGoroutine()
	rssBefore, peakOK := bench.RSSBytes(), bench.ResetPeakRSS()
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)

	// Rounds start until the soak's time is up, and the rounds under way
	// then are finished and checked like any other: a request's deadline
	// is its own, never the soak's end (which would fail a dial cut at
	// that moment).
	ctx := t.Context()
	stop := time.Now().Add(soakFor(t))
	var requests atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	var once sync.Once
	for i := range 50 {
		wg.Go(func() {
			for round := 0; time.Now().Before(stop); round++ {
				if err := soakRound(ctx, hc, ts.URL, i+round, imported, &requests); err != nil {
					once.Do(func() { t.Log(soakDiagnosis(s)) })
					errs <- fmt.Errorf("client %d, round %d: %w", i, round, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	n := max(requests.Load(), 1)
	t.Logf("%d requests (messages and HTTP) in %v; process CPU %.1f s, %.2f ms per request (clients included)", n, soakFor(t), cpu.Seconds(), float64(cpu.Milliseconds())/float64(n))

	wait, cancelWait := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelWait()
	if err := s.WaitJobs(wait); err != nil {
		t.Fatal(err)
	}
	hc.Transport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(15 * time.Second)
	for s.Hub.Count() > 0 || runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("after the soak: %d connections, %d goroutines, want 0 and at most %d\n%s", s.Hub.Count(), runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The limits' budget: imports, the runs generating, what finished runs
	// hold, a MiB per session held for its views; the garbage collector may
	// take as much again.
	budget := cfg.MaxImports + int64(cfg.Generations)*cfg.MaxRunBytes + cfg.MaxHeld + int64(s.Sessions.Len())<<20
	if peak := bench.PeakRSSBytes(); peakOK && peak > 0 && rssBefore > 0 {
		t.Logf("peak RSS %.1f MiB (%.1f MiB at the start); budget %.1f MiB above the start, twice over", float64(peak)/(1<<20), float64(rssBefore)/(1<<20), float64(budget)/(1<<20))
		if peak > rssBefore+2*budget {
			t.Errorf("peak RSS during the soak is %d bytes, want at most %d", peak, rssBefore+2*budget)
		}
	}
}

// soakRound is one page's visit: open, generate, branch, what-if, chart,
// export, import; every answer awaited.
func soakRound(ctx context.Context, hc *http.Client, base string, seed int, imported []byte, requests *atomic.Int64) error {
	get := func(path string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		res, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		requests.Add(1)
		io.Copy(io.Discard, res.Body)
		switch res.StatusCode {
		case http.StatusOK, http.StatusServiceUnavailable, http.StatusConflict: // answered, busy, or a run still going
		default:
			return fmt.Errorf("GET %s: %s", path, res.Status)
		}
		return nil
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	requests.Add(1)
	m := pageSession.FindSubmatch(page)
	if m == nil {
		return fmt.Errorf("GET /: %s, no session", res.Status)
	}
	id := string(m[1])
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	c, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws?session="+id, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	// ask sends msg and reads until done says the answer came; its error
	// names the message and what arrived meanwhile.
	ask := func(msg map[string]any, done func(live.Outbound) bool) error {
		b, _ := json.Marshal(msg)
		if err := c.WriteMessage(websocket.TextMessage, b); err != nil {
			return err
		}
		requests.Add(1)
		var seen []string
		for {
			c.SetReadDeadline(time.Now().Add(45 * time.Second))
			var o live.Outbound
			if err := c.ReadJSON(&o); err != nil {
				return fmt.Errorf("%s (session %s), after %v: %w", msg["type"], id, seen, err)
			}
			seen = append(seen, fmt.Sprintf("%s(running %v, seq %d)", o.Type, o.Running, o.Seq))
			if done(o) {
				return nil
			}
		}
	}
	endOrError := func(o live.Outbound) bool { return o.Type == live.MsgError || o.Type == live.MsgView && !o.Running }
	steps := []error{
		ask(map[string]any{"type": "generate", "form": map[string]string{"model": "loop", "max_new_tokens": "12", "do_sample": "true", "seed": fmt.Sprint(seed)}}, endOrError),
		ask(map[string]any{"type": "branch", "step": 1 + seed%5, "id": seed % 3}, endOrError),
		ask(map[string]any{"type": "whatif"}, func(o live.Outbound) bool { return o.Type == live.MsgWhatIf || o.Type == live.MsgError }),
		get("/chart?chart=confidence&format=svg&step=0&session=" + id),
		get("/export?format=html&session=" + id),
	}
	if err := errors.Join(steps...); err != nil {
		return err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("trace", "loop.json")
	fw.Write(imported)
	mw.Close()
	ireq, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/import?session="+id, &body)
	ireq.Header.Set("Content-Type", mw.FormDataContentType())
	ireq.Header.Set("Accept", "application/json")
	ires, err := hc.Do(ireq)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, ires.Body)
	ires.Body.Close()
	requests.Add(1)
	if ires.StatusCode != http.StatusOK && ires.StatusCode != http.StatusInsufficientStorage {
		return fmt.Errorf("import: %s", ires.Status)
	}
	return nil
}

// soakDiagnosis says what the server is doing when a page's answer is
// late: the generations running and waiting, the connections, and the
// goroutines grouped by where they stand.
func soakDiagnosis(s *Server) string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	where := map[string]int{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(g, "\n")
		top := ""
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "tracer/") {
				top = l
				break
			}
		}
		if top == "" && len(lines) > 1 {
			top = lines[1]
		}
		state := lines[0]
		if i := strings.Index(state, "["); i >= 0 {
			state = state[i:]
		}
		if i := strings.LastIndex(top, "("); i >= 0 {
			top = top[:i] // the function, without its arguments
		}
		where[state+" "+top]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "when the first answer was late: %d generations running of %d, %d connections, %d sessions, %d goroutines:\n", len(s.Slots), cap(s.Slots), s.Hub.Count(), s.Sessions.Len(), runtime.NumGoroutine())
	keys := make([]string, 0, len(where))
	for k := range where {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return where[keys[i]] > where[keys[j]] })
	for _, k := range keys {
		fmt.Fprintf(&b, "%5d  %s\n", where[k], k)
	}
	return b.String()
}
