package live

import (
	"slices"
	"sync"
	"weak"

	"tracer/web/runs"
)

// What a finished run holds beyond its recorded steps is large and only
// serves two panels: the KV cache each branch ended with (branching
// without recomputing the prefix, and the what-if panel's whole
// vocabulary, recomputed from it: run.stepLogits) and, for runs of several
// prompts, every raw logit of each step (4 bytes a token of the vocabulary
// a step). A class of students who each run once would hold tens of MiB
// each for the sessions' life. heldRuns keeps the total of those parts,
// over every session, under Config.MaxHeld: past it the oldest runs shed
// them, the runs of pages no longer connected first. A run that shed them
// still shows every panel: what-if re-samples its recorded candidates and
// says the rest of the vocabulary is missing, and a branch computes its
// prefix again.

// heldRuns is the server's account of what finished runs hold.
type heldRuns struct {
	mu      sync.Mutex
	entries []heldEntry // oldest first
	total   int64
}

// heldEntry is one finished run: weak references, so a session the store
// forgets takes its runs with it.
type heldEntry struct {
	sess  weak.Pointer[Session]
	run   weak.Pointer[runs.Run]
	bytes int64
}

// Hold counts what the finished runs of sess's document hold (anew for a
// run counted before: a branch grew it), then sheds the oldest runs'
// until the server holds at most max bytes.
func (s *Protocol) Hold(sess *Session) {
	sess.Mu.Lock()
	var add []heldEntry
	for _, r := range sess.Doc.Runs {
		if !r.Live && r.Model != nil {
			add = append(add, heldEntry{sess: weak.Make(sess), run: weak.Make(r), bytes: r.HeldBytes()})
		}
	}
	sess.Mu.Unlock()
	h := &s.held
	h.mu.Lock()
	for _, e := range add {
		h.forgetLocked(e.run)
		if e.bytes > 0 {
			h.entries = append(h.entries, e)
			h.total += e.bytes
		}
	}
	var shed []heldEntry
	for _, connected := range []bool{false, true} { // pages gone first
		for i := 0; i < len(h.entries) && h.total > s.cfg.MaxHeld; {
			e := h.entries[i]
			x := e.sess.Value()
			if x != nil && (x.Teach || connected != (x.Conns.Load() > 0)) {
				i++
				continue
			}
			h.entries = slices.Delete(h.entries, i, i+1)
			h.total -= e.bytes
			shed = append(shed, e)
		}
	}
	h.mu.Unlock()
	for _, e := range shed {
		x, r := e.sess.Value(), e.run.Value()
		if x == nil || r == nil {
			continue
		}
		x.Mu.Lock()
		if !r.Live {
			r.Shed()
		}
		x.Mu.Unlock()
	}
}

// forgetLocked drops the entry of a run, if any. The caller holds h.mu.
func (h *heldRuns) forgetLocked(r weak.Pointer[runs.Run]) {
	if i := slices.IndexFunc(h.entries, func(e heldEntry) bool { return e.run == r }); i >= 0 {
		h.total -= h.entries[i].bytes
		h.entries = slices.Delete(h.entries, i, i+1)
	}
}

// HeldTotal returns the bytes the server counts as held.
func (s *Protocol) HeldTotal() int64 {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	return s.held.total
}

// SetMaxHeld changes the budget of what finished runs hold
// (Config.MaxHeld); it applies from the next Hold. Tests lower it to watch
// runs shed.
func (s *Protocol) SetMaxHeld(n int64) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	s.cfg.MaxHeld = n
}
