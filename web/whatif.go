package web

import (
	"tracer/engine"
	"tracer/trace"
)

// keepLogits reports whether a run keeps every raw logit of its steps for
// the what-if panel: when the run's memory estimate, the logits counted,
// stays within the server's limit (Config.MaxRunBytes, --max-run-mib).
// A run too large for that keeps only its recorded candidates, and the
// panel says the full vocabulary is missing.
func (s *Server) keepLogits(info engine.Info, o trace.Options, prompts [][]int) bool {
	if o.FullLogits {
		return true
	}
	o.FullLogits = true
	return estimateRun(info, o, prompts).total() <= float64(s.cfg.MaxRunBytes)
}
