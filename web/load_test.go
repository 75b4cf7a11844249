package web

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tracer/web/internal/testsupport"
	"tracer/web/live"
	"tracer/web/runs"

	"github.com/gorilla/websocket"
)

// importPage opens a page and imports data into its session, as a
// browser does; it returns the session id.
func importPage(hc *http.Client, ts *httptest.Server, data []byte) (string, error) {
	res, err := hc.Get(ts.URL + "/")
	if err != nil {
		return "", err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := pageSession.FindSubmatch(page)
	if m == nil {
		return "", io.ErrUnexpectedEOF
	}
	id := string(m[1])
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("trace", "loop.json")
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/import?session="+id, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	res, err = hc.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", io.ErrUnexpectedEOF
	}
	return id, nil
}

// replay steps a connection through every step and returns the round
// trip of each: from sending {"type": "step"} to its view arriving.
func replay(c *websocket.Conn, steps int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, steps)
	var o live.Outbound
	for i := range steps {
		start := time.Now()
		msg := []byte(`{"type": "step", "index": ` + itoa(i) + `}`)
		c.SetWriteDeadline(start.Add(30 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
			return out, err
		}
		for {
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, data, err := c.ReadMessage()
			if err != nil {
				return out, err
			}
			o = live.Outbound{}
			if err := json.Unmarshal(data, &o); err != nil {
				return out, err
			}
			if o.Type == live.MsgError {
				return out, errorString(o.Message)
			}
			if o.Index == i {
				break
			}
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

// TestLoad replays a 256-step trace on 200 WebSocket connections at once
// (each its own page, with the charts panel off, as a class replaying a
// lesson), reports the step round trip's p50 and p99 and the server's
// memory, and checks that every goroutine ends once they disconnect.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: skipped in -short mode")
	}
	if raceEnabled {
		t.Skip("load test: skipped under the race detector, which slows it tenfold")
	}
	clients, steps := 200, 256
	if n := os.Getenv("TRACER_LOAD_CLIENTS"); n != "" {
		clients, _ = strconv.Atoi(n)
	}
	data := testsupport.LoopTrace(t, steps)
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	baseline := runtime.NumGoroutine()

	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	ids := make([]string, clients)
	for i := range ids {
		if ids[i], err = importPage(hc, ts, data); err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	tr.CloseIdleConnections()
	wsURL := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws?session="
	conns := make([]*websocket.Conn, clients)
	for i, id := range ids {
		c, _, err := websocket.DefaultDialer.Dial(wsURL+id, nil)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns[i] = c
		if o := roundTrip(t, c, `{"type": "charts", "on": false}`); o.Type != live.MsgView || o.Count != steps {
			t.Fatalf("client %d: got %s of %d steps, want a view of %d", i, o.Type, o.Count, steps)
		}
	}

	var peak runtime.MemStats
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.HeapInuse {
				peak = ms
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()

	cpu0 := cpuTime()
	start := time.Now()
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for _, c := range conns {
		wg.Go(func() {
			d, err := replay(c, steps)
			if err != nil {
				errs <- err
			}
			mu.Lock()
			all = append(all, d...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	close(stopSampling)
	<-sampled
	close(errs)
	for err := range errs {
		t.Errorf("a client failed: %v", err)
	}
	slices.Sort(all)
	t.Logf("%d clients × %d steps in %v (%.0f steps/s): step round trip p50 %v, p99 %v, max %v",
		clients, steps, elapsed.Round(time.Millisecond), float64(len(all))/elapsed.Seconds(),
		quantile(all, 0.5).Round(time.Microsecond), quantile(all, 0.99).Round(time.Microsecond), all[len(all)-1].Round(time.Microsecond))
	t.Logf("CPU time of the test process (server and clients) while replaying: %v of %v wall", cpu.Round(time.Millisecond), elapsed.Round(time.Millisecond))
	t.Logf("server memory at the peak: HeapInuse %.1f MiB, Sys %.1f MiB; %d goroutines", float64(peak.HeapInuse)/(1<<20), float64(peak.Sys)/(1<<20), runtime.NumGoroutine())

	for _, c := range conns {
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Hub.Count() > 0 || runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("after disconnecting: %d connections, %d goroutines, want 0 and at most %d\n%s", s.Hub.Count(), runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPageLoad measures the page's load on loopback and logs the median:
// a figure to report, not an assertion that could flake on a busy machine.
func TestPageLoad(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	var times []time.Duration
	for range 50 {
		start := time.Now()
		res, err := http.Get(ts.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	t.Logf("page load on loopback (GET /, a new session running the toy): median %v, p90 %v", quantile(times, 0.5).Round(time.Microsecond), quantile(times, 0.9).Round(time.Microsecond))
}

// BenchmarkPageLoad is GET / on loopback.
func BenchmarkPageLoad(b *testing.B) {
	s, err := New(Config{MaxSessions: 100})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for b.Loop() {
		res, err := http.Get(ts.URL + "/")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

// BenchmarkStepRoundTrip is one page stepping through the toy lesson over
// its WebSocket, charts off and on.
func BenchmarkStepRoundTrip(b *testing.B) {
	for _, charts := range []bool{false, true} {
		name := "charts-off"
		if charts {
			name = "charts-on"
		}
		b.Run(name, func(b *testing.B) {
			s, err := New(Config{})
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()
			d := &runs.Document{Runs: s.Lesson.Runs, Source: "bench"}
			sess, _ := s.Sessions.Create(d, nil)
			c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws?session="+sess.ID, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			msg, _ := json.Marshal(map[string]any{"type": "charts", "on": charts})
			c.WriteMessage(websocket.TextMessage, msg)
			c.ReadMessage()
			i := 0
			for b.Loop() {
				i = (i + 1) % 4
				c.WriteMessage(websocket.TextMessage, []byte(`{"type": "step", "index": `+itoa(i)+`}`))
				if _, _, err := c.ReadMessage(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
