package plots_test

import (
	"bytes"
	"fmt"

	"tracer/trace"
	"tracer/web/plots"
)

// A step with two candidates, rendered as SVG to inline into the page.
func ExampleRender() {
	tr := &trace.Trace{Steps: []trace.Step{{Rows: []trace.StepRow{{
		Candidates: []trace.Candidate{{ID: 5, Token: " love", Prob: 0.7}, {ID: 6, Token: " eat", Prob: 0.3}},
		Final:      &trace.Final{KeptCount: 2, IDs: []int{5, 6}, Probs: []float64{0.7, 0.3}},
		Chosen:     trace.Chosen{ID: 5, Token: " love", Prob: 0.7, Rank: 1, By: trace.ByGreedy},
	}}}}}
	svg, err := plots.Render(plots.Candidates, []*trace.Trace{tr}, 0, plots.SVG, plots.Options{Width: 480, Height: 240})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plots.SVG.ContentType(), bytes.HasPrefix(svg, []byte("<svg")), bytes.Contains(svg, []byte("␣love")))

	_, err = plots.Render(plots.KV, []*trace.Trace{tr}, 0, plots.SVG, plots.Options{})
	fmt.Println(err)
	// Output:
	// image/svg+xml true true
	// plots: kv: no data: the trace records no KV cache
}
