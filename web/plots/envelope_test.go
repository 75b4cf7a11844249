package plots

import (
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"

	"tracer/trace"
)

// longTrace is a trace of n steps whose top probability swings.
func longTrace(n int) *trace.Trace {
	t := &trace.Trace{Model: trace.Model{Name: "m", VocabSize: 10}}
	for i := range n {
		p := 0.5 + 0.45*math.Sin(float64(i)/7)
		t.Steps = append(t.Steps, trace.Step{Index: i, Phase: trace.PhaseDecode, Rows: []trace.StepRow{{
			Candidates: []trace.Candidate{{ID: 1, Token: "a", Prob: p}},
			Chosen:     trace.Chosen{ID: 1, Token: "a", Prob: p, By: trace.ByGreedy},
			Entropy:    1 - p,
		}}})
	}
	return t
}

// TestLongLinesAreDrawnAtTheirPixels: the confidence chart of 34,000
// steps is drawn from the envelope of its lines, so its SVG is about as
// large as one of 4,000 steps (it was 5.5 MB), and the envelope keeps
// every stretch's extremes.
func TestLongLinesAreDrawnAtTheirPixels(t *testing.T) {
	small, err := Render(Confidence, []*trace.Trace{longTrace(4000)}, 0, SVG, Options{})
	if err != nil {
		t.Fatal(err)
	}
	big, err := Render(Confidence, []*trace.Trace{longTrace(34000)}, 0, SVG, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(big) > 2*len(small) || len(big) > 1<<20 {
		t.Errorf("the chart of 34,000 steps is %d bytes, of 4,000 steps %d: want about the same, under 1 MiB", len(big), len(small))
	}

	var xy plotter.XYs
	for i := range 10000 {
		xy = append(xy, plotter.XY{X: float64(i), Y: float64(i % 97)})
	}
	xy[5000].Y = 1000 // a lone peak
	env := envelope(xy, 100)
	if len(env) > 400 {
		t.Errorf("the envelope of 10,000 points in 100 stretches has %d points, want at most 400", len(env))
	}
	peak := false
	for i, p := range env {
		peak = peak || p.Y == 1000
		if i > 0 && p.X <= env[i-1].X {
			t.Fatalf("the envelope goes back at point %d (%v after %v)", i, p.X, env[i-1].X)
		}
	}
	if !peak {
		t.Error("the envelope lost the lone peak")
	}
}
