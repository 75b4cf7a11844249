package arch

import (
	"bytes"
	"context"
	"testing"

	"tracer/engine"
	"tracer/trace"
)

// TestNaNWeightsStopTheRun poisons one weight of a model and checks that
// greedy decoding, sampling and beam search all stop with stop reason nan,
// naming where the NaN first appeared, and that the trace still writes and
// reads back as JSON.
func TestNaNWeightsStopTheRun(t *testing.T) {
	newTokens, sample, beams, two := 4, true, 2, 2
	modes := map[string]*engine.Settings{
		"greedy": {MaxNewTokens: &newTokens},
		"sample": {MaxNewTokens: &newTokens, DoSample: &sample},
		"beam":   {MaxNewTokens: &newTokens, NumBeams: &beams, NumReturnSequences: &two},
	}
	untied := tinyShape("llama")
	untied.tied = false
	for _, tc := range []struct {
		name   string
		shape  testShape
		tensor string
		elem   int
		force  []int // ForceIDs
		want   trace.NaN
		steps  int // recorded before the stop
	}{
		{"llama layer 1", tinyShape("llama"), "model.layers.1.mlp.down_proj.weight", 0, nil, trace.NaN{Step: 0, Where: trace.NaNLayer, Layer: 1}, 0},
		{"llama layer 0 attention", tinyShape("llama"), "model.layers.0.self_attn.k_proj.weight", 5, nil, trace.NaN{Step: 0, Where: trace.NaNLayer, Layer: 0}, 0},
		{"qwen2 layer 1", tinyShape("qwen2"), "model.layers.1.mlp.up_proj.weight", 3, nil, trace.NaN{Step: 0, Where: trace.NaNLayer, Layer: 1}, 0},
		{"gpt2 layer 1", tinyShape("gpt2"), "transformer.h.1.mlp.c_proj.weight", 0, nil, trace.NaN{Step: 0, Where: trace.NaNLayer, Layer: 1}, 0},
		{"untied head", untied, "lm_head.weight", 16 * 5, nil, trace.NaN{Step: 0, Where: trace.NaNHead, Layer: -1}, 0},
		// Token 7's embedding row holds the NaN: step 0 is forced to choose
		// it, so step 1 is the first to feed it.
		{"embedding at step 1", untied, "model.embed_tokens.weight", 7*16 + 2, []int{7}, trace.NaN{Step: 1, Where: trace.NaNEmbedding, Layer: -1}, 1},
	} {
		s := tc.shape
		s.nan = map[string]int{tc.tensor: tc.elem}
		m := openTestModel(t, s)
		for mode, user := range modes {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				if tc.force != nil && mode == "beam" {
					t.Skip("beam search takes no forced ids")
				}
				o, notices, err := engine.Resolve(m.Info(), nil, user)
				if err != nil {
					t.Fatal(err)
				}
				o.ForceIDs = tc.force // not a setting: set on the options
				tr, err := engine.Generate(context.Background(), engine.Request{Model: m, Prompts: [][]int{{1, 3}}, Options: o, Notices: notices, Record: true})
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if tr.Output.StopReason != trace.StopNaN {
					t.Fatalf("got stop reason %q, want %q (new ids %v)", tr.Output.StopReason, trace.StopNaN, tr.Output.NewIDs)
				}
				if got := tr.Output.NaN; got == nil || got.Step != tc.want.Step || got.Where != tc.want.Where || got.Layer != tc.want.Layer {
					t.Errorf("got output.nan %+v, want %+v", got, tc.want)
				}
				if len(tr.Steps) != tc.steps {
					t.Errorf("got %d steps recorded, want %d (those before the NaN)", len(tr.Steps), tc.steps)
				}
				var buf bytes.Buffer
				if err := trace.Write(&buf, tr); err != nil {
					t.Fatalf("trace.Write: %v", err)
				}
				back, err := trace.Decode(buf.Bytes())
				if err != nil {
					t.Fatalf("the written trace does not read back: %v", err)
				}
				if back.Output.NaN == nil || *back.Output.NaN != *tr.Output.NaN {
					t.Errorf("read back output.nan %+v, want %+v", back.Output.NaN, tr.Output.NaN)
				}
			})
		}
	}
}
