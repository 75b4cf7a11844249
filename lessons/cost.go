package lessons

import (
	"time"

	"tracer/trace"
)

// PhaseCost adds up what the steps of one phase of a run cost, from the
// trace's traffic and timings: the figures of the memory-bound lesson.
type PhaseCost struct {
	Phase   string // trace.PhasePrefill, trace.PhaseDecode or trace.PhaseFull
	Steps   int    // steps of the phase
	Tokens  int    // tokens fed to the model, all rows and steps together
	FLOPs   int64
	Bytes   int64 // weights read, keys and values read and written
	Elapsed time.Duration
}

// Intensity is the phase's arithmetic intensity: FLOPs per byte moved. A
// decode step of one row does about two FLOPs per weight it reads.
func (c PhaseCost) Intensity() float64 {
	if c.Bytes == 0 {
		return 0
	}
	return float64(c.FLOPs) / float64(c.Bytes)
}

// BytesPerSecond is the memory bandwidth the phase achieved.
func (c PhaseCost) BytesPerSecond() float64 {
	if c.Elapsed <= 0 {
		return 0
	}
	return float64(c.Bytes) / c.Elapsed.Seconds()
}

// BytesPerToken is what the phase moved per token fed.
func (c PhaseCost) BytesPerToken() float64 {
	if c.Tokens == 0 {
		return 0
	}
	return float64(c.Bytes) / float64(c.Tokens)
}

// TimePerStep is the mean wall time of one step of the phase.
func (c PhaseCost) TimePerStep() time.Duration {
	if c.Steps == 0 {
		return 0
	}
	return c.Elapsed / time.Duration(c.Steps)
}

// Costs sums a trace's steps by phase, in the order prefill, decode, full;
// phases with no step are left out, and so are steps without traffic (the
// toy's).
func Costs(t *trace.Trace) []PhaseCost {
	phases := []string{trace.PhasePrefill, trace.PhaseDecode, trace.PhaseFull}
	sums := make([]PhaseCost, len(phases))
	for i, p := range phases {
		sums[i].Phase = p
	}
	for _, s := range t.Steps {
		if s.Traffic == nil {
			continue
		}
		for i, p := range phases {
			if s.Phase != p {
				continue
			}
			c := &sums[i]
			c.Steps++
			for _, r := range s.Rows {
				c.Tokens += len(r.InputIDs)
			}
			c.FLOPs += s.Traffic.FLOPs
			c.Bytes += s.Traffic.WeightBytes + s.Traffic.KVReadBytes + s.Traffic.KVWriteBytes
			c.Elapsed += time.Duration(s.ElapsedNS)
		}
	}
	var out []PhaseCost
	for _, c := range sums {
		if c.Steps > 0 {
			out = append(out, c)
		}
	}
	return out
}
