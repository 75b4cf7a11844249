package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"tracer/engine"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
)

// TestHeldRunsShedOldestFirst fills the server's budget for what finished
// runs hold (full logits and KV caches) with runs of three pages: past it
// the oldest run of a page no longer connected sheds them first, then the
// oldest of a connected page; the newest keeps them, and a run that shed
// them still answers what-if.
func TestHeldRunsShedOldestFirst(t *testing.T) {
	s, a, ca := liveServer(t, Config{}, 0)
	s.Catalog.Add("rand", "random llama", testsupport.RandomModel(t, 64))
	addr := ca.RemoteAddr().String() // the server's
	page := func() (*live.Session, func(string)) {
		d, err := s.FirstRun(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		x, err := s.Sessions.Create(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := dial(t, "ws://"+addr+"/ws?session="+x.ID)
		return x, func(what string) {
			t.Helper()
			sendJSON(t, c, map[string]any{"type": "generate", "form": map[string]string{"model": "rand", "input": "ids", "prompt": "1 2 3", "max_new_tokens": "6"}})
			waitFor(t, c, what, func(o live.Outbound) bool { return finished(o) && strings.Contains(o.HTML, "random") })
			jobsEnded(t, s)
		}
	}
	runA := func() {
		sendJSON(t, ca, map[string]any{"type": "generate", "form": map[string]string{"model": "rand", "input": "ids", "prompt": "1 2 3", "max_new_tokens": "6"}})
		waitFor(t, ca, "a's run", func(o live.Outbound) bool { return finished(o) && strings.Contains(o.HTML, "random") })
		jobsEnded(t, s)
	}
	runA()
	one := s.HeldTotal()
	if one <= 0 {
		t.Fatalf("a finished run holds %d bytes by the server's count, want its KV cache", one)
	}
	b, runB := page()
	runB("b's run")
	ca.Close() // a's page is gone
	for deadline := time.Now().Add(5 * time.Second); a.Conns.Load() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a's page is still connected after it closed")
		}
	}
	s.SetMaxHeld(2 * one)
	c, runC := page()
	runC("c's run")

	holds := func(x *live.Session) bool {
		x.Mu.Lock()
		defer x.Mu.Unlock()
		return x.Doc.Runs[0].Caches[0] != nil
	}
	if holds(a) || !holds(b) || !holds(c) {
		t.Errorf("over the budget: a holds %v, b %v, c %v; want a (its page gone) shed, b and c kept", holds(a), holds(b), holds(c))
	}
	if got := s.HeldTotal(); got > 2*one {
		t.Errorf("the server counts %d bytes held, over its budget of %d", got, 2*one)
	}

	s.SetMaxHeld(one)
	s.Hold(c)
	if holds(b) || !holds(c) {
		t.Errorf("over the budget again: b holds %v, c %v; want the older b shed", holds(b), holds(c))
	}
	// What-if on a run that shed its cache re-samples its candidates.
	if _, err := s.WhatIfMessage(a, nil); err != nil {
		t.Errorf("what-if on a run that shed its logits: %v", err)
	}
}

// jobsEnded waits until every generation and its publisher have ended: a
// run's end is counted (hold) before its publisher ends.
func jobsEnded(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitJobs(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLookInsideStopsWithTheServer checks that a look inside a step that
// waits for a slot ends when the server closes, rather than
// running a forward pass over a model the shutdown is about to unmap.
func TestLookInsideStopsWithTheServer(t *testing.T) {
	s, _, _ := liveServer(t, Config{Generations: 1}, 0)
	for range cap(s.Looks) { // every slot busy
		s.Looks <- struct{}{}
	}
	defer func() {
		for range cap(s.Looks) {
			<-s.Looks
		}
	}()
	m := testsupport.LoopModel(t, 0)
	done := make(chan error, 1)
	go func() {
		_, err := s.LookInside(m, engine.Request{}, []int{0, 1})
		done <- err
	}()
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a look inside after Close succeeded, want it refused")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a look inside waiting for a slot went on after Close")
	}
}
