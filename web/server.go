// Package web is tracer's browser UI: a step-through debugger for text
// generation. Opening the page runs the toy bigram model greedily and walks
// through the lesson's moments beside the bigram table and a Python listing
// of the loop. From there the page generates live on any model the server
// offers, streaming each step as it is computed, and shows every step in
// detail: the candidates before and after the processors, the sampling
// funnel, where the random draw landed, the KV cache, the memory traffic,
// the tokenizer's bytes and charts. It compares runs on one random stream,
// branches at any step with another token (reusing the shared prefix's KV
// cache), plays until a breakpoint on the distribution hits, and in
// classroom mode lets an instructor drive what the students' pages show.
//
// Each page holds a session (its runs and position) on the server. The page
// talks to it over a WebSocket with small JSON messages, {"type": "next"},
// and the server answers with the new view as HTML rendered by the same templ
// components that render the full page. Imports are plain HTTP POSTs of the
// trace file, validated by trace.Read under a size limit.
//
// This package is the composition root: Server wires the rooms below it
// (web/live, the protocol; web/runs, the runs; web/catalog, the models;
// web/view, the views; web/lessonpage, web/export, web/words, web/static)
// and holds the routes, the handlers and the HTTP guards. It may import
// every one of them; none imports it (the README's Development section
// draws the arrows).
package web

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"tracer/engine/bench"
	modelhub "tracer/engine/hub"

	"tracer/engine/models"
	"tracer/toy"
	"tracer/web/catalog"
	"tracer/web/lessonpage"
	"tracer/web/live"
	"tracer/web/runs"
	"tracer/web/words"
)

// Defaults for Config's zero values.
const (
	DefaultMaxTraceSize = 16 << 20 // largest importable trace, in bytes
	DefaultMaxSessions  = 1000
	DefaultSessionTTL   = 2 * time.Hour
	DefaultMaxNewTokens = 1024
	DefaultMaxRowsBeams = 64        // rows × beams of one run
	DefaultMaxRunBytes  = 1 << 30   // estimated memory of one run, in bytes
	DefaultMaxImports   = 256 << 20 // imported traces held, all sessions together, in bytes
	DefaultMaxHeld      = 1 << 30   // full logits and KV caches finished runs hold, all sessions together, in bytes
	DefaultMaxPageRuns  = 2         // generations of one page not yet ended
	DefaultMaxBranches  = 64        // branches one run may grow, or an imported trace carry
	// DefaultGenerations is how many runs generate at once, server-wide.
	// Runs on one model share each step's pass over the weights (the
	// engine batches their steps), so a class's runs go together rather
	// than in turns; more wait in line, each page told its place.
	DefaultGenerations  = 64
	DefaultMaxPullBytes = 4 << 30         // one download from the Hub, in bytes
	DefaultMaxPulls     = 2               // downloads running at once
	shutdownWait        = 5 * time.Second // how long Serve waits for requests and connections to end
)

// ServerConfig is a serving engine whose models the page offers (see
// catalog.ServerConfig).
type ServerConfig = catalog.ServerConfig

// Config configures a Server. The zero value serves the lesson's toy.
type Config struct {
	Model        string        // the toy the page runs on opening: "toy" (default) or a toy table .json
	ModelsDir    string        // a folder of models the page may run (Hugging Face folders, llama2.c .bin, toy tables)
	HFCache      string        // the Hugging Face cache (HF_HUB_CACHE) whose models the page may run; "" for none
	Classroom    bool          // an instructor drives, students follow (see Server.TeachToken)
	MaxTraceSize int64         // largest importable trace in bytes; 0 means DefaultMaxTraceSize
	MaxSessions  int           // open pages kept; 0 means DefaultMaxSessions
	SessionTTL   time.Duration // a page idle this long is forgotten; 0 means DefaultSessionTTL
	MaxNewTokens int           // the most tokens a page may ask one run for; 0 means DefaultMaxNewTokens
	Generations  int           // generations running at once, server-wide; 0 means DefaultGenerations
	MaxRowsBeams int           // the most prompts × beams one run may use; 0 means DefaultMaxRowsBeams
	MaxRunBytes  int64         // the most memory one run may need by estimate (KV cache, recording); 0 means DefaultMaxRunBytes
	MaxImports   int64         // the most bytes of imported traces all sessions together hold; 0 means DefaultMaxImports
	MaxHeld      int64         // the most bytes of full logits and KV caches finished runs hold, all sessions together (held.go); 0 means DefaultMaxHeld
	MaxPageRuns  int           // generations one page may have not yet ended; 0 means DefaultMaxPageRuns
	MaxBranches  int           // branches one run may grow, or an imported trace carry; 0 means DefaultMaxBranches
	MaxPullBytes int64         // the largest download from the Hub; 0 means DefaultMaxPullBytes
	MaxPulls     int           // downloads running at once; 0 means DefaultMaxPulls
	NoPull       bool          // pages never download models, whoever asks
	AllowHosts   []string      // host names the server answers to besides loopback names and its IP address
	Logger       *slog.Logger  // nil: no logging

	// Machine reports what the bandwidth probe measured of the machine
	// (main memory and the last-level cache), zero while it is still being
	// measured; the traffic panel sets each step's achieved bandwidth
	// against the memory its bytes come from. nil: not measured ("n/a").
	Machine func() bench.Machine

	// Servers are serving engines (llama.cpp, vLLM, SGLang, Ollama, any
	// OpenAI-compatible server) whose models the run form offers beside
	// the local ones, labelled with each server's name.
	Servers []ServerConfig

	// Hub, when set, lets pages download models from the Hugging Face Hub
	// into HFCache (its CacheDir), with progress streamed to the page.
	Hub *modelhub.Options

	// StudentAddr is the host:port students type in classroom mode, as
	// tracer serve prints it (a LAN address of the machine, never [::]);
	// the instructor's page shows it as a link and a QR code. "": the
	// address the server listens on, or the one the instructor's browser
	// reached it at when that listens on every interface.
	StudentAddr string
}

// Server serves the debugger.
type Server struct {
	*live.Protocol // the pages' sessions and what they say
	cfg            Config
	static         *staticFiles
	lessons        *lessonpage.Pages // the /lessons pages and their runs
	mux            *http.ServeMux

	listen atomic.Value // *net.TCPAddr the server listens on, once ServeListener has started

	exports        chan struct{} // one token per one-file export being written (exportSlot)
	exportsWaiting atomic.Int32  // exports waiting for a token
}

// maxExportQueue is how many exports may wait for a slot; more are
// refused.
const maxExportQueue = 8

// New makes a server. It opens the configured toy, which the page's first
// run narrates.
func New(cfg Config) (*Server, error) {
	if cfg.Model == "" {
		cfg.Model = "toy"
	}
	if cfg.MaxTraceSize <= 0 {
		cfg.MaxTraceSize = DefaultMaxTraceSize
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.MaxNewTokens <= 0 {
		cfg.MaxNewTokens = DefaultMaxNewTokens
	}
	if cfg.Generations <= 0 {
		cfg.Generations = DefaultGenerations
	}
	cfg.MaxRowsBeams = cmp.Or(max(cfg.MaxRowsBeams, 0), DefaultMaxRowsBeams)
	cfg.MaxRunBytes = cmp.Or(max(cfg.MaxRunBytes, 0), DefaultMaxRunBytes)
	cfg.MaxImports = cmp.Or(max(cfg.MaxImports, 0), DefaultMaxImports)
	cfg.MaxHeld = cmp.Or(max(cfg.MaxHeld, 0), DefaultMaxHeld)
	cfg.MaxPageRuns = cmp.Or(max(cfg.MaxPageRuns, 0), DefaultMaxPageRuns)
	cfg.MaxBranches = cmp.Or(max(cfg.MaxBranches, 0), DefaultMaxBranches)
	cfg.MaxPullBytes = cmp.Or(max(cfg.MaxPullBytes, 0), DefaultMaxPullBytes)
	cfg.MaxPulls = cmp.Or(max(cfg.MaxPulls, 0), DefaultMaxPulls)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := models.Open(cfg.Model)
	if err != nil {
		return nil, err
	}
	if toy.Of(m) == nil {
		return nil, errors.New("web: the page runs a toy model on opening; give \"toy\" or a toy table .json")
	}
	static, err := loadStatic()
	if err != nil {
		return nil, err
	}
	cat, err := catalog.New(m, cfg.ModelsDir, cfg.HFCache, cfg.Servers)
	if err != nil {
		return nil, err
	}
	rn := runs.New(runs.Config{
		MaxNewTokens: cfg.MaxNewTokens, MaxRowsBeams: cfg.MaxRowsBeams, MaxRunBytes: cfg.MaxRunBytes, Generations: cfg.Generations,
		Hub: cfg.Hub, HFCache: cfg.HFCache, MaxPullBytes: cfg.MaxPullBytes, MaxPulls: cfg.MaxPulls,
		MaxBranches: cfg.MaxBranches,
	}, m, cat, log)
	s := &Server{cfg: cfg, static: static, exports: make(chan struct{}, max(1, runtime.NumCPU()/2))}
	s.Protocol = live.New(live.Config{
		MaxSessions: cfg.MaxSessions, SessionTTL: cfg.SessionTTL, MaxPageRuns: cfg.MaxPageRuns, MaxHeld: cfg.MaxHeld,
		NoPull: cfg.NoPull, Machine: cfg.Machine, OnLoopback: s.onLoopback,
		Hub: cfg.Hub, HFCache: cfg.HFCache, MaxPullBytes: cfg.MaxPullBytes, MaxPulls: cfg.MaxPulls,
	}, rn)
	if s.Book, err = words.Load(); err != nil {
		return nil, err
	}
	if s.lessons, err = lessonpage.New(rn, s.Book, s.static.url); err != nil {
		return nil, err
	}
	if s.Lesson, err = s.FirstRun(context.Background()); err != nil {
		return nil, err
	}
	if cfg.Classroom {
		if err := s.OpenClassroom(); err != nil {
			return nil, err
		}
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /{$}", s.handlePage)
	s.mux.HandleFunc("GET /ws", s.HandleWS)
	s.mux.HandleFunc("POST /import", s.handleImport)
	s.mux.HandleFunc("GET /export", s.handleExport)
	s.mux.HandleFunc("GET /chart", s.handleChart)
	s.mux.HandleFunc("GET /static/{file}", s.static.serve)
	s.mux.HandleFunc("GET /lessons", s.handleLessons)
	s.mux.Handle("GET /tokenize", s.tokenizePage())
	s.mux.HandleFunc("GET /lessons/{lesson}/{step}", s.handleLessonStep)
	s.mux.HandleFunc("POST /quiz", s.HandleAnswer)
	return s, nil
}

// Busy reports whether a generation is running, so that a measurement of
// the machine would compete with it.
func (s *Server) Busy() bool { return len(s.Slots) > 0 }

// TeachToken returns the classroom's instructor token: the instructor's
// page is /?teach=TOKEN, and students open /. It is "" outside classroom
// mode.
func (s *Server) TeachToken() string {
	if s.Class == nil {
		return ""
	}
	return s.Class.Token
}

// Handler returns the server's HTTP handler. It refuses requests whose
// Host is not this server's (see hostAllowed) and answers a handler's
// panic with 500.
func (s *Server) Handler() http.Handler { return s.checkHost(securityHeaders(s.recoverHTTP(s.mux))) }

// Serve listens on addr and serves until ctx ends, then shuts down
// gracefully: generations are cancelled, WebSocket connections are closed
// and requests in progress may finish.
func (s *Server) Serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener is Serve on a listener the caller opened (to learn the port
// of "127.0.0.1:0", say). It closes ln.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		s.listen.Store(a)
	}
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.Log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(s.Hub.CloseAll)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	wait, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	err := hs.Shutdown(wait)
	<-errc // http.ErrServerClosed
	s.Close()
	if werr := s.Hub.Wait(wait); err == nil {
		err = werr
	}
	werr := s.WaitJobs(wait)
	if err == nil {
		err = werr
	}
	s.Pulls.Wg.Wait()
	if werr == nil { // a job still running may be reading a model's mapped weights: leave them to the exit
		s.Catalog.Close()
	}
	return err
}

// Close stops every generation and closes every connection without
// waiting; tests that serve the Handler themselves call it.
func (s *Server) Close() {
	s.Runner.Close()
	s.Sessions.CloseAll()
	s.Hub.CloseAll()
}

// securityHeaders keeps the page to its own origin: no scripts from
// elsewhere, no framing.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}
