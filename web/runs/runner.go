// Package runs builds what the page shows from the engine: a run and its
// document (run.go), a comparison, a branch tree, beams, the what-if
// panel's re-sampling, breakpoints, the inside of a step (attention and
// the logit lens, recorded or computed on demand), runs on serving
// engines, downloads from the Hub, and the view models of every step and
// panel (build.go, panels.go). A Runner runs generations in its slots,
// behind a recovery boundary, within the server's limits; their steps go
// to a Sink, the page that shows them.
//
// It holds documents, not connections: it imports neither web/live nor
// net/http or a WebSocket (a serving engine's client, engine/remote, does
// its HTTP), and of web only web/catalog, web/view and web/words.
package runs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"tracer/engine"
	modelhub "tracer/engine/hub"
	"tracer/engine/models"
	"tracer/trace"
	"tracer/web/catalog"
)

// Runner runs the pages' generations: it opens their models (through the
// catalog), holds them to the server's limits, runs them in its slots
// behind a recovery boundary, and keeps count of the goroutines it
// started so that a shutdown can wait for them.
type Runner struct {
	cfg     Config
	Toy     *models.Loaded // the toy the page opens on
	Catalog *catalog.Catalog
	Log     *slog.Logger

	runIDs atomic.Uint64 // names runs in chart caches
	Slots  chan struct{} // one token per generation running
	Looks  chan struct{} // one token per look inside a step running (lookInside): at most half the CPUs
	Pulls  pulls         // downloads from the Hub in progress
	// Done ends with Close: work no page waits for (looking inside a
	// step ahead of the class) stops with it.
	Done   context.Context
	Stop   context.CancelFunc
	jobMu  sync.Mutex     // guards closing, and orders jobs.Add before jobs.Wait
	closed bool           // shutting down: no new generations
	Jobs   sync.WaitGroup // generation goroutines and their publishers
}

// Config is what the runner holds runs to (see Config's fields of the
// same names).
type Config struct {
	MaxNewTokens int
	MaxRowsBeams int
	MaxRunBytes  int64
	Generations  int
	Hub          *modelhub.Options
	HFCache      string
	MaxPullBytes int64
	MaxPulls     int
	MaxBranches  int // branches one run may grow or an import may carry
}

// New makes the runner of a server: m is its toy, cat its models.
func New(cfg Config, m *models.Loaded, cat *catalog.Catalog, log *slog.Logger) *Runner {
	s := &Runner{
		cfg: cfg, Toy: m, Catalog: cat, Log: log,
		Slots: make(chan struct{}, cfg.Generations),
		Looks: make(chan struct{}, max(1, runtime.NumCPU()/2)),
	}
	s.Done, s.Stop = context.WithCancel(context.Background())
	return s
}

// Close stops the runner: no new generation starts, the work no page
// waits for ends (Done), and downloads are cancelled (a partial file stays
// resumable). Generations running end as their pages' jobs are cancelled.
func (s *Runner) Close() {
	s.jobMu.Lock()
	s.closed = true
	s.jobMu.Unlock()
	s.Stop()
	s.Pulls.CancelAll()
}

// Stopping reports whether the runner has closed.
func (s *Runner) Stopping() bool {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	return s.closed
}

// AddJob counts a generation's two goroutines, unless the server is
// shutting down.
func (s *Runner) AddJob() bool {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	if s.closed {
		return false
	}
	s.Jobs.Add(2)
	return true
}

// WaitJobs waits until every generation has ended, or ctx ends.
func (s *Runner) WaitJobs(ctx context.Context) error {
	return WaitOrGiveUp(ctx, &s.Jobs, "web: generations did not stop in time")
}

// WaitOrGiveUp waits until wg's goroutines have ended, or returns the
// error late (which says what did not end) when ctx ends first.
func WaitOrGiveUp(ctx context.Context, wg *sync.WaitGroup, late string) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New(late)
	}
}

// ErrPanic marks an error that stands for a recovered panic.
var ErrPanic = errors.New("tracer hit an internal error")

// Guard runs f and turns a panic into an error naming what failed. The
// panic and its stack go to the server's log.
func (s *Runner) Guard(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.Log.Error("recovered from a panic", "in", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("%w in %s (%v): the server goes on; please report this with the server's log", ErrPanic, what, p)
		}
	}()
	return f()
}

// generate is engine.Generate behind a recovery boundary: a panic in the
// model, a processor or a callback is the run's error.
func (s *Runner) generate(ctx context.Context, what string, req engine.Request) (*trace.Trace, error) {
	return s.guardRun(what, func() (*trace.Trace, error) { return engine.Generate(ctx, req) })
}

// guardRun is guard for a run that returns its trace.
func (s *Runner) guardRun(what string, run func() (*trace.Trace, error)) (*trace.Trace, error) {
	var out *trace.Trace
	err := s.Guard(what, func() error {
		var err error
		out, err = run()
		return err
	})
	return out, err
}
