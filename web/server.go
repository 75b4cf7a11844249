// Package web is tracer's browser UI: an HTTP server that shows a trace one
// step at a time. Opening the page runs the toy bigram model greedily and
// walks through the lesson's moments beside the bigram table and a Python
// listing of the loop; any trace can be imported from a file, stepped
// through and exported again.
//
// Each page holds a session (its trace and position) on the server. The page
// talks to it over a WebSocket with small JSON messages, {"type": "next"},
// and the server answers with the new view as HTML rendered by the same templ
// components that render the full page. Imports are plain HTTP POSTs of the
// trace file, validated by trace.Read under a size limit.
package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"tracer/engine/models"
)

// Defaults for Config's zero values.
const (
	DefaultMaxTraceSize = 16 << 20 // largest importable trace, in bytes
	DefaultMaxSessions  = 1000
	DefaultSessionTTL   = 2 * time.Hour
	shutdownWait        = 5 * time.Second // how long Serve waits for requests and connections to end
)

// Config configures a Server. The zero value serves the lesson's toy.
type Config struct {
	Model        string        // the model the page runs on opening: "toy" (default) or a toy table .json
	MaxTraceSize int64         // largest importable trace in bytes; 0 means DefaultMaxTraceSize
	MaxSessions  int           // open pages kept; 0 means DefaultMaxSessions
	SessionTTL   time.Duration // a page idle this long is forgotten; 0 means DefaultSessionTTL
	Logger       *slog.Logger  // nil: no logging
}

// Server serves the step-through UI.
type Server struct {
	cfg      Config
	model    *models.Loaded
	log      *slog.Logger
	sessions *store
	hub      *hub
	upgrader *websocket.Upgrader
	static   *staticFiles
	mux      *http.ServeMux
}

// New makes a server. It opens the configured model, which must be a toy:
// the page's first run narrates it.
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
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := models.Open(cfg.Model)
	if err != nil {
		return nil, err
	}
	if m.Toy == nil {
		return nil, errors.New("web: the page runs a toy model on opening; give \"toy\" or a toy table .json")
	}
	static, err := loadStatic()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, model: m, log: log,
		sessions: newStore(cfg.MaxSessions, cfg.SessionTTL),
		hub:      newHub(),
		upgrader: newUpgrader(),
		static:   static,
	}
	if _, err := s.firstRun(context.Background()); err != nil {
		return nil, err
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /{$}", s.handlePage)
	s.mux.HandleFunc("GET /ws", s.handleWS)
	s.mux.HandleFunc("POST /import", s.handleImport)
	s.mux.HandleFunc("GET /export", s.handleExport)
	s.mux.HandleFunc("GET /static/{file}", s.static.serve)
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return securityHeaders(s.mux) }

// Serve listens on addr and serves until ctx ends, then shuts down
// gracefully: WebSocket connections are closed and requests in progress
// may finish.
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
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(s.hub.closeAll)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.hub.closeAll()
		return err
	case <-ctx.Done():
	}
	wait, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	err := hs.Shutdown(wait)
	<-errc // http.ErrServerClosed
	s.hub.closeAll()
	if werr := s.hub.wait(wait); err == nil {
		err = werr
	}
	return err
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
