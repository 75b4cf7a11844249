package web

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"tracer/engine"
	"tracer/trace"
)

// addJob counts a generation's two goroutines, unless the server is
// shutting down.
func (s *Server) addJob() bool {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	if s.closed {
		return false
	}
	s.jobs.Add(2)
	return true
}

// waitJobs waits until every generation has ended, or ctx ends.
func (s *Server) waitJobs(ctx context.Context) error {
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
func (s *Server) guard(what string, f func() error) (err error) {
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
func (s *Server) generate(ctx context.Context, what string, req engine.Request) (*trace.Trace, error) {
	return s.guardRun(what, func() (*trace.Trace, error) { return engine.Generate(ctx, req) })
}

// guardRun is guard for a run that returns its trace.
func (s *Server) guardRun(what string, run func() (*trace.Trace, error)) (*trace.Trace, error) {
	var out *trace.Trace
	err := s.guard(what, func() error {
		var err error
		out, err = run()
		return err
	})
	return out, err
}
