package web

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

// runner runs the pages' generations: it opens their models (through the
// catalog), holds them to the server's limits, runs them in its slots
// behind a recovery boundary, and keeps count of the goroutines it
// started so that a shutdown can wait for them.
type runner struct {
	cfg     runConfig
	toy     *models.Loaded // the toy the page opens on
	catalog *catalog.Catalog
	log     *slog.Logger

	runIDs atomic.Uint64 // names runs in chart caches
	slots  chan struct{} // one token per generation running
	looks  chan struct{} // one token per look inside a step running (lookInside): at most half the CPUs
	pulls  pulls         // downloads from the Hub in progress
	// done ends with Close: work no page waits for (looking inside a
	// step ahead of the class) stops with it.
	done   context.Context
	stop   context.CancelFunc
	jobMu  sync.Mutex     // guards closing, and orders jobs.Add before jobs.Wait
	closed bool           // shutting down: no new generations
	jobs   sync.WaitGroup // generation goroutines and their publishers
}

// runConfig is what the runner holds runs to (see Config's fields of the
// same names).
type runConfig struct {
	MaxNewTokens int
	MaxRowsBeams int
	MaxRunBytes  int64
	Generations  int
	Hub          *modelhub.Options
	HFCache      string
	MaxPullBytes int64
	MaxPulls     int
}

// newRunner makes the runner of a server: m is its toy, cat its models.
func newRunner(cfg runConfig, m *models.Loaded, cat *catalog.Catalog, log *slog.Logger) *runner {
	s := &runner{
		cfg: cfg, toy: m, catalog: cat, log: log,
		slots: make(chan struct{}, cfg.Generations),
		looks: make(chan struct{}, max(1, runtime.NumCPU()/2)),
	}
	s.done, s.stop = context.WithCancel(context.Background())
	return s
}

// addJob counts a generation's two goroutines, unless the server is
// shutting down.
func (s *runner) addJob() bool {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	if s.closed {
		return false
	}
	s.jobs.Add(2)
	return true
}

// waitJobs waits until every generation has ended, or ctx ends.
func (s *runner) waitJobs(ctx context.Context) error {
	return waitOrGiveUp(ctx, &s.jobs, "web: generations did not stop in time")
}

// waitOrGiveUp waits until wg's goroutines have ended, or returns the
// error late (which says what did not end) when ctx ends first.
func waitOrGiveUp(ctx context.Context, wg *sync.WaitGroup, late string) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New(late)
	}
}

// errPanic marks an error that stands for a recovered panic.
var errPanic = errors.New("tracer hit an internal error")

// guard runs f and turns a panic into an error naming what failed. The
// panic and its stack go to the server's log.
func (s *runner) guard(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("recovered from a panic", "in", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("%w in %s (%v): the server goes on; please report this with the server's log", errPanic, what, p)
		}
	}()
	return f()
}

// generate is engine.Generate behind a recovery boundary: a panic in the
// model, a processor or a callback is the run's error.
func (s *runner) generate(ctx context.Context, what string, req engine.Request) (*trace.Trace, error) {
	return s.guardRun(what, func() (*trace.Trace, error) { return engine.Generate(ctx, req) })
}

// guardRun is guard for a run that returns its trace.
func (s *runner) guardRun(what string, run func() (*trace.Trace, error)) (*trace.Trace, error) {
	var out *trace.Trace
	err := s.guard(what, func() error {
		var err error
		out, err = run()
		return err
	})
	return out, err
}
