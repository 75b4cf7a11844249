package runs

import (
	"fmt"

	"tracer/trace"
)

// MaxVocab is the largest vocabulary an imported trace may claim, a
// ceiling for every server: the what-if panel and the charts allocate
// arrays of the vocabulary's size, so a trace claiming 16 million tokens
// could make one message cost gigabytes. The largest vocabulary in common
// use (Gemma's) has 262,144 tokens.
const MaxVocab = 1 << 20

// CheckImport checks an imported trace's plausibility before anything is
// built from it: its vocabulary within MaxVocab, its branches within the
// server's limit.
func (s *Runner) CheckImport(t *trace.Trace) error {
	if v := t.Model.VocabSize; v > MaxVocab {
		return fmt.Errorf("the trace claims a vocabulary of %d tokens, more than any model this server runs (at most %d): it cannot be shown", v, MaxVocab)
	}
	if n := len(t.Branches); s.cfg.MaxBranches > 0 && n > s.cfg.MaxBranches {
		return fmt.Errorf("the trace has %d branches, more than this server shows of one run (%d): start the server with a larger --max-branches", n, s.cfg.MaxBranches)
	}
	return nil
}

// CheckBranch says whether r may grow one more branch: every branch keeps
// its steps (and may keep a KV cache), so a run's tree is bounded.
func (s *Runner) CheckBranch(r *Run) error {
	if n := len(r.Trace.Branches); s.cfg.MaxBranches > 0 && n >= s.cfg.MaxBranches {
		return fmt.Errorf("this run has %d branches, the most one run may have on this server: branch from a new run, or start the server with a larger --max-branches", n)
	}
	return nil
}
