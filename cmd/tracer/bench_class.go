package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"tracer/engine/arch"
	"tracer/engine/tensor"
	"tracer/web/live"
)

// tracer bench --class N is a class on this machine's loopback: a real
// tracer serve --classroom process, an instructor who records a run of a
// random model at a real shape and then steps through it at a fixed pace,
// N students' pages that follow (WebSocket clients that connect, ask and
// read exactly as the page does) and M students who detach and generate
// runs of their own. It reports what a class feels and what the server
// spends: the delay from each move to each follower's view, the bytes a
// follower receives, the server's CPU per move and its peak memory, and
// the students' first-step latency and tokens per second. Everything is
// bounded: the clients, the moves, the runs and a deadline.

// Bounds of tracer bench --class.
const (
	maxClass      = 5000             // followers, and generating students
	classDeadline = 30 * time.Minute // the whole class, from writing the model to the report
)

// classOptions are the flags of tracer bench --class.
type classOptions struct {
	followers, students int
	moves, steps        int           // the instructor's moves; the positions of the instructor's run
	every               time.Duration // between moves
	newTokens           int           // each generating student's run
	spread              time.Duration // the generating students start evenly over this
	shape               string
	dtype               tensor.DType
	seed                uint64
	deadline            time.Duration
}

// classReport is what tracer bench --class prints.
type classReport struct {
	Followers   int     `json:"followers"`
	Students    int     `json:"students"`
	Moves       int     `json:"moves"`
	EveryMs     float64 `json:"every_ms"`
	Positions   int     `json:"positions"`
	Shape       string  `json:"shape"`
	DType       string  `json:"dtype"`
	JoinSeconds float64 `json:"join_seconds"` // from the first follower's connection to every follower holding the run

	DelayP50Ms float64 `json:"delay_p50_ms"` // from a move sent to a follower's view of it
	DelayP99Ms float64 `json:"delay_p99_ms"`
	DelayMaxMs float64 `json:"delay_max_ms"`
	Missed     int     `json:"missed"` // (follower, move) pairs whose view never came
	Wrong      int     `json:"wrong"`  // views the checking follower got whose HTML is not at the cursor's position

	TraceBytes   float64 `json:"trace_bytes"`    // per follower, before the first move, on the wire
	BytesPerMove float64 `json:"bytes_per_move"` // per follower per move, after that

	CPUPerMoveMs float64 `json:"cpu_per_move_ms"` // the server's CPU time over the moves, per move
	PeakRSSMiB   float64 `json:"peak_rss_mib"`    // the server's peak resident memory

	FirstStepP50Ms float64 `json:"first_step_p50_ms,omitempty"` // from a student's generate to its first step
	FirstStepP99Ms float64 `json:"first_step_p99_ms,omitempty"`
	TokensPerSec   float64 `json:"tokens_per_sec,omitempty"` // all students' runs together
	RunsFailed     int     `json:"runs_failed,omitempty"`

	// One student's run alone, before the others start (with more than
	// one student; the median of three), and how many times that the runs
	// together make.
	AloneTokensPerSec float64 `json:"alone_tokens_per_sec,omitempty"`
	Speedup           float64 `json:"speedup,omitempty"`
}

// benchClass runs the class and prints its report.
func benchClass(ctx context.Context, o classOptions, asJSON bool, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	r, err := runClass(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tracer bench: --class: %s\n", hint(err))
		return exitError
	}
	if asJSON {
		return printJSON(stdout, stderr, "bench", r)
	}
	printClass(stdout, r)
	return exitOK
}

func printClass(w io.Writer, r *classReport) {
	fmt.Fprintf(w, "class: %d following, %d generating; the instructor moves %d times every %.0f ms through %d positions of a random %s %s run\n",
		r.Followers, r.Students, r.Moves, r.EveryMs, r.Positions, r.Shape, r.DType)
	fmt.Fprintf(w, "joining: every follower held the run %.1f s after the first connected, %s each on the wire\n", r.JoinSeconds, sizeText(r.TraceBytes))
	fmt.Fprintf(w, "move to view: p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d views missed, %d wrong\n", r.DelayP50Ms, r.DelayP99Ms, r.DelayMaxMs, r.Missed, r.Wrong)
	fmt.Fprintf(w, "per follower per move: %s on the wire\n", sizeText(r.BytesPerMove))
	fmt.Fprintf(w, "server: %.1f ms of CPU per move, peak RSS %.0f MiB\n", r.CPUPerMoveMs, r.PeakRSSMiB)
	if r.Students > 0 {
		fmt.Fprintf(w, "students' runs: first step p50 %.0f ms, p99 %.0f ms; %.1f tokens/s all together; %d failed\n", r.FirstStepP50Ms, r.FirstStepP99Ms, r.TokensPerSec, r.RunsFailed)
		if r.Speedup > 0 {
			fmt.Fprintf(w, "one student's run alone (median of 3): %.1f tokens/s; together %.2f× that\n", r.AloneTokensPerSec, r.Speedup)
		}
	}
}

// sizeText writes a byte count for people.
func sizeText(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

func runClass(ctx context.Context, o classOptions, log io.Writer) (*classReport, error) {
	dir, err := os.MkdirTemp("", "tracer-class-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, ok := arch.KnownShape(o.shape)
	if !ok {
		return nil, fmt.Errorf("unknown shape %q", o.shape)
	}
	fmt.Fprintf(log, "writing random %s weights at %s's shape\n", o.dtype, o.shape)
	if err := writeModel(dir, o.shape, s, o.dtype, o.seed); err != nil {
		return nil, err
	}
	srv, err := startServer(ctx, dir, o.followers+o.students+16)
	if err != nil {
		return nil, err
	}
	defer srv.stop()

	r := &classReport{Followers: o.followers, Students: o.students, Moves: o.moves, EveryMs: float64(o.every) / float64(time.Millisecond), Shape: o.shape, DType: o.dtype.String()}
	fmt.Fprintf(log, "the instructor records a %d-step run\n", o.steps)
	teacher, err := srv.page(ctx, "/?teach="+srv.token, true, false)
	if err != nil {
		return nil, fmt.Errorf("the instructor's page: %w", err)
	}
	defer teacher.close()
	gen := map[string]any{"type": "generate", "form": map[string]string{"model": teacher.model, "input": "ids", "prompt": "1 400 401 402 403 404 405 406", "max_new_tokens": strconv.Itoa(o.steps), "do_sample": "false"}}
	if err := teacher.send(gen); err != nil {
		return nil, err
	}
	started := false
	if err := teacher.waitView(ctx, func(v pageView) bool {
		started = started || v.Running
		return started && !v.Running
	}); err != nil {
		return nil, fmt.Errorf("the instructor's run: %w", err)
	}
	r.Positions = teacher.last().Count

	fmt.Fprintf(log, "%d followers join\n", o.followers)
	joined := time.Now()
	fs := make([]*page, o.followers)
	var wg sync.WaitGroup
	var joinErr atomic.Value
	sem := make(chan struct{}, 32) // pages opening at once
	for i := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// A page that fails to open is opened again, as a student
			// reloads: while hundreds join, this machine's client may be too
			// slow to send its request in the server's time.
			var err error
			for try := range 3 {
				var p *page
				if p, err = srv.page(ctx, "/", false, i > 0); err == nil { // the first keeps the views, to check them
					fs[i] = p
					return
				}
				time.Sleep(time.Duration(try+1) * time.Second)
			}
			joinErr.CompareAndSwap(nil, err)
		}()
	}
	wg.Wait()
	defer func() {
		for _, p := range fs {
			if p != nil {
				p.close()
			}
		}
	}()
	if err, _ := joinErr.Load().(error); err != nil {
		return nil, fmt.Errorf("a follower's page: %w", err)
	}
	// The class is ready when the instructor's page says every follower
	// follows and has been sent every position, and the stream is quiet.
	for {
		teacher.mu.Lock()
		st := teacher.class
		teacher.mu.Unlock()
		if st.Following == len(fs) && st.Positions > 0 && st.Ahead >= min(st.Positions, 1001) && st.Behind == 0 {
			break
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("the class did not get ready: %w", ctx.Err())
		}
	}
	if err := quiet(ctx, fs, 500*time.Millisecond); err != nil {
		return nil, err
	}
	r.JoinSeconds = time.Since(joined).Seconds() - 0.5
	var before int64
	for _, p := range fs {
		before += p.bytes.Load()
	}
	r.TraceBytes = float64(before) / float64(max(1, len(fs)))

	// The generating students detach before the moves begin.
	students := make([]*page, o.students)
	for i := range students {
		p, err := srv.page(ctx, "/", false, false)
		if err != nil {
			return nil, fmt.Errorf("a generating student's page: %w", err)
		}
		defer p.close()
		if err := p.send(map[string]string{"type": "detach"}); err != nil {
			return nil, err
		}
		students[i] = p
	}
	for _, p := range students {
		if err := p.waitView(ctx, func(v pageView) bool { return v.HTML != "" && !strings.Contains(v.HTML, `data-following="true"`) }); err != nil {
			return nil, fmt.Errorf("a student's detach: %w", err)
		}
	}

	// One student's run alone first, on the same server, three times (the
	// median): what the class's runs together are measured against.
	if len(students) > 1 {
		fmt.Fprintf(log, "one student's run alone, three times\n")
		var rates []float64
		for k := range 3 {
			alone := students[0].generate(ctx, teacher.model, o.newTokens, len(students)+k)
			if alone.err != nil {
				return nil, fmt.Errorf("a student's run alone: %w", alone.err)
			}
			if d := alone.end.Sub(alone.start).Seconds(); d > 0 {
				rates = append(rates, float64(alone.tokens)/d)
			}
		}
		slices.Sort(rates)
		r.AloneTokensPerSec = quantile(rates, 0.5)
	}

	cpu0, err := srv.cpu()
	if err != nil {
		return nil, err
	}
	runsDone := make(chan runResult, len(students))
	t0 := time.Now()
	for i, p := range students {
		go func() {
			select {
			case <-time.After(time.Duration(i) * o.spread / time.Duration(max(1, len(students)))):
			case <-ctx.Done():
			}
			runsDone <- p.generate(ctx, teacher.model, o.newTokens, i)
		}()
	}

	sent := make([]time.Time, o.moves)
	idx := make([]int, o.moves)
	start := teacher.last().Index
	tick := time.NewTicker(o.every)
	for k := range o.moves {
		select {
		case <-tick.C:
		case <-ctx.Done():
			tick.Stop()
			return nil, ctx.Err()
		}
		idx[k] = (start + k + 1) % r.Positions
		sent[k] = time.Now()
		if err := teacher.send(map[string]any{"type": "step", "index": idx[k]}); err != nil {
			tick.Stop()
			return nil, err
		}
	}
	tick.Stop()
	// Give the last move the time the others had, and more.
	time.Sleep(max(2*o.every, time.Second))
	cpu1, err := srv.cpu()
	if err != nil {
		return nil, err
	}
	r.CPUPerMoveMs = (cpu1 - cpu0).Seconds() * 1000 / float64(o.moves)

	var delays []float64
	var after int64
	r.Wrong = int(fs[0].wrong.Load())
	for _, p := range fs {
		after += p.bytes.Load()
		seen := p.views()
		j := 0
		for k := range o.moves {
			// The first view of move k's position after it was sent.
			for j < len(seen) && seen[j].at.Before(sent[k]) {
				j++
			}
			found := false
			for x := j; x < len(seen) && (k+1 == o.moves || seen[x].at.Before(sent[k+1].Add(10*o.every))); x++ {
				if seen[x].index == idx[k] {
					delays = append(delays, float64(seen[x].at.Sub(sent[k]))/float64(time.Millisecond))
					found = true
					break
				}
			}
			if !found {
				r.Missed++
			}
		}
	}
	r.BytesPerMove = float64(after-before) / float64(max(1, len(fs))) / float64(o.moves)
	slices.Sort(delays)
	r.DelayP50Ms, r.DelayP99Ms = quantile(delays, 0.5), quantile(delays, 0.99)
	if len(delays) > 0 {
		r.DelayMaxMs = delays[len(delays)-1]
	}

	if len(students) > 0 {
		fmt.Fprintf(log, "waiting for %d students' runs\n", len(students))
		var firsts []float64
		tokens := 0
		last := t0
		for range students {
			res := <-runsDone
			if res.err != nil {
				r.RunsFailed++
				fmt.Fprintf(log, "a student's run: %v\n", res.err)
				continue
			}
			firsts = append(firsts, float64(res.first)/float64(time.Millisecond))
			tokens += res.tokens
			last = maxTime(last, res.end)
		}
		slices.Sort(firsts)
		r.FirstStepP50Ms, r.FirstStepP99Ms = quantile(firsts, 0.5), quantile(firsts, 0.99)
		if d := last.Sub(t0).Seconds(); d > 0 {
			r.TokensPerSec = float64(tokens) / d
		}
		if r.AloneTokensPerSec > 0 {
			r.Speedup = r.TokensPerSec / r.AloneTokensPerSec
		}
	}
	r.PeakRSSMiB = float64(srv.peakRSS()) / (1 << 20)
	return r, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// quantile is the q-quantile of sorted xs (nearest rank), 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// writeModel writes the random model the class runs.
func writeModel(dir, name string, s arch.Shape, dt tensor.DType, seed uint64) error {
	if dt == tensor.BF16 { // a Hugging Face folder: GGUF files here hold f32, f16 or quantized weights
		folder := filepath.Join(dir, "random-"+name)
		if err := os.Mkdir(folder, 0o755); err != nil {
			return err
		}
		return arch.WriteRandomHF(folder, name, s, dt, seed)
	}
	f, err := os.Create(filepath.Join(dir, "random-"+name+".gguf"))
	if err != nil {
		return err
	}
	err = arch.WriteRandomGGUF(f, name, s, dt, seed)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// classServer is the tracer serve process the class talks to.
type classServer struct {
	cmd   *exec.Cmd
	base  string // http://127.0.0.1:PORT
	token string
	done  chan struct{}
}

var linkPattern = regexp.MustCompile(`instructor \(keep this link to yourself\): (http://[^/\s]+)/\?teach=([0-9a-f]+)`)

// startServer starts tracer serve --classroom on a free loopback port,
// offering the models in dir.
func startServer(ctx context.Context, dir string, sessions int) (*classServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "serve", "--classroom", "--no-pull", "--addr", "127.0.0.1:0", "--models", dir, "--max-sessions", strconv.Itoa(sessions))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &classServer{cmd: cmd, done: make(chan struct{})}
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := linkPattern.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	select {
	case m := <-found:
		s.base, s.token = m[1], m[2]
		return s, nil
	case <-s.done:
		return nil, errors.New("tracer serve ended before it served")
	case <-time.After(2 * time.Minute):
	case <-ctx.Done():
	}
	s.stop()
	return nil, errors.New("tracer serve did not print its classroom links in time")
}

func (s *classServer) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// cpu is the server's CPU time so far, user and system.
func (s *classServer) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("the server's CPU time (Linux's /proc): %w", err)
	}
	// The command's name may hold spaces: the fields start after its ")".
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, errors.New("the server's CPU time: /proc's stat is short")
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * (time.Second / 100), nil // USER_HZ is 100 on Linux
}

// peakRSS is the server's peak resident memory in bytes, or 0.
func (s *classServer) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// page is one browser page of the class: its session's WebSocket, read
// as the page's script reads it.
type page struct {
	conn  *websocket.Conn
	model string // the first GGUF model the run form offers
	bytes atomic.Int64
	wrong atomic.Int64 // views whose HTML is not at the cursor's position

	wmu sync.Mutex // one write at a time; never held with mu

	mu    sync.Mutex
	cast  live.Follower
	seen  []viewSeen
	lastV pageView
	watch func(pageView, error) bool // a wait's test of each view; true ends the wait
	class classStatus                // the instructor's page: the class, as the server last said
}

// classStatus is the instructor's page's news of the class.
type classStatus struct {
	Following, Detached int
	Behind              uint64
	Ahead, Positions    int
}

type viewSeen struct {
	at    time.Time
	index int
}

// pageView is what a page shows now.
type pageView struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Count   int    `json:"count"`
	Running bool   `json:"running"`
	HTML    string `json:"html"`
	Message string `json:"message"`
}

var (
	sessionPattern = regexp.MustCompile(`data-session="([0-9a-f]+)"`)
	modelPattern   = regexp.MustCompile(`<option value="([^"]*random-[^"]*)"`)
)

// page opens path as a browser does (GET, then the WebSocket with
// permessage-deflate) and starts reading.
// A follower that keeps counts only checks the stream's continuity and
// keeps no HTML.
func (s *classServer) page(ctx context.Context, path string, teach, counts bool) (*page, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: time.Minute}
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+path, nil)
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, res.Status)
	}
	m := sessionPattern.FindSubmatch(body)
	if m == nil {
		return nil, fmt.Errorf("GET %s: the page names no session", path)
	}
	p := &page{}
	p.cast.CountsOnly = counts
	if mm := modelPattern.FindSubmatch(body); mm != nil {
		p.model = string(mm[1])
	}
	if teach && p.model == "" {
		return nil, errors.New("the run form does not offer the class's model")
	}
	u, _ := url.Parse(s.base)
	d := websocket.Dialer{
		EnableCompression: true, Jar: jar, HandshakeTimeout: time.Minute,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: c, n: &p.bytes}, nil
		},
	}
	conn, _, err := d.DialContext(ctx, "ws://"+u.Host+"/ws?session="+string(m[1]), nil)
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(256 << 20)
	p.conn = conn
	go p.read()
	if err := p.send(map[string]string{"type": "view"}); err != nil {
		conn.Close()
		return nil, err
	}
	return p, nil
}

// countingConn counts the bytes read from the wire.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

func (p *page) send(m any) error {
	b, _ := json.Marshal(m)
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return p.conn.WriteMessage(websocket.TextMessage, b)
}

func (p *page) close() { p.conn.Close() }

// read takes every message as the page does: views whole, the stream
// through live.Follower (asking again after a gap).
func (p *page) read() {
	for {
		_, r, err := p.conn.NextReader()
		if err != nil {
			p.seeErr(err)
			return
		}
		if p.cast.CountsOnly { // the stream, token by token, never held whole
			m, err := p.cast.Scan(r)
			now := time.Now()
			io.Copy(io.Discard, r)
			if errors.Is(err, live.ErrGap) {
				p.send(map[string]string{"type": "view"})
			}
			if err == nil && m.View >= 0 {
				p.saw(now, pageView{Type: "view", Index: m.Index, Count: m.Count, Running: m.Running})
			}
			continue
		}
		data, err := io.ReadAll(r)
		now := time.Now()
		if err != nil {
			p.seeErr(err)
			return
		}
		var v pageView
		if json.Unmarshal(data, &v) != nil {
			continue
		}
		switch v.Type {
		case live.MsgCast:
			var m live.Message
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			p.mu.Lock()
			n, err := p.cast.Apply(m)
			if err == nil && n < 0 {
				p.mu.Unlock()
				continue // more of the stream follows
			}
			html := ""
			if err == nil && !p.cast.CountsOnly {
				html, err = p.cast.HTML(n)
			}
			p.mu.Unlock()
			if errors.Is(err, live.ErrGap) {
				p.send(map[string]string{"type": "view"})
				continue
			}
			if err != nil {
				continue
			}
			if !p.cast.CountsOnly && !strings.Contains(html, `data-index="`+strconv.Itoa(m.Index)+`"`) {
				p.wrong.Add(1)
			}
			v = pageView{Type: "view", Index: m.Index, Count: m.Count, Running: m.Running, HTML: html}
		case "view":
		case "class":
			var st classStatus
			if json.Unmarshal(data, &st) == nil {
				p.mu.Lock()
				p.class = st
				p.mu.Unlock()
			}
			continue
		case "error":
			p.seeErr(errors.New(v.Message))
			continue
		default:
			continue
		}
		p.saw(now, v)
	}
}

// saw notes a view the page shows from now.
func (p *page) saw(now time.Time, v pageView) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) == 0 || p.seen[len(p.seen)-1].index != v.Index {
		p.seen = append(p.seen, viewSeen{at: now, index: v.Index})
	}
	p.lastV = v
	if p.watch != nil && p.watch(v, nil) {
		p.watch = nil
	}
}

// seeErr ends a wait with err.
func (p *page) seeErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watch != nil && p.watch(pageView{}, err) {
		p.watch = nil
	}
}

func (p *page) last() pageView {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastV
}

func (p *page) views() []viewSeen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// waitView waits until the page shows a view ok accepts, testing every
// view as it arrives; an error message or a closed connection ends the
// wait.
func (p *page) waitView(ctx context.Context, ok func(pageView) bool) error {
	done := make(chan error, 1)
	p.mu.Lock()
	if p.lastV.HTML != "" && ok(p.lastV) {
		p.mu.Unlock()
		return nil
	}
	p.watch = func(v pageView, err error) bool {
		if err == nil && !ok(v) {
			return false
		}
		done <- err
		return true
	}
	p.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		p.mu.Lock()
		p.watch = nil
		p.mu.Unlock()
		return ctx.Err()
	}
}

// quiet waits until no follower has received anything for d.
func quiet(ctx context.Context, fs []*page, d time.Duration) error {
	total := func() int64 {
		var n int64
		for _, p := range fs {
			n += p.bytes.Load()
		}
		return n
	}
	last := total()
	for {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
		n := total()
		if n == last {
			return nil
		}
		last = n
	}
}

// runResult is one student's run.
type runResult struct {
	first  time.Duration // from generate to the first step shown
	start  time.Time
	end    time.Time
	tokens int
	err    error
}

// generate runs a greedy run of n tokens on the page and waits for it.
func (p *page) generate(ctx context.Context, model string, n, i int) runResult {
	start := time.Now()
	prompt := fmt.Sprintf("1 %d %d %d", 500+i, 600+i, 700+i)
	err := p.send(map[string]any{"type": "generate", "form": map[string]string{"model": model, "input": "ids", "prompt": prompt, "max_new_tokens": strconv.Itoa(n), "do_sample": "false"}})
	if err != nil {
		return runResult{err: err}
	}
	// Views come in order: the new run's first is running; its first
	// step shows the chosen panel; its last is not running.
	var first time.Duration
	started := false
	err = p.waitView(ctx, func(v pageView) bool {
		started = started || v.Running
		if started && first == 0 && strings.Contains(v.HTML, `data-testid="chosen-panel"`) {
			first = time.Since(start)
		}
		return started && !v.Running
	})
	if err != nil {
		return runResult{err: err}
	}
	return runResult{first: first, start: start, end: time.Now(), tokens: p.last().Count}
}
