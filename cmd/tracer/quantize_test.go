package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tracer/engine/refdata"
	"tracer/trace"
)

// TestRunQuantize: tracer run --quantize q8_0 on stories260K's F32 GGUF
// runs on Q8_0 blocks made as it loaded, and the trace says so (weight
// types, activation rounding); a model with no float matrices and a type
// tracer does not make are usage errors that say what works.
func TestRunQuantize(t *testing.T) {
	model := refdata.Need(t, "models/stories260K/stories260K-f32.gguf")
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--model", model, "--prompt", "Once upon a time", "--max-new-tokens", "6", "--quantize", "q8_0", "--json"}
	if c := run(context.Background(), args, nil, &stdout, &stderr); c != exitOK {
		t.Fatalf("exit %d: %s", c, stderr.String())
	}
	var tr trace.Trace
	if err := json.Unmarshal(stdout.Bytes(), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Model.WeightTypes["q8_0"] == 0 || tr.Model.DType != "q8_0" || strings.Join(tr.Model.ActivationRounding, ",") != "q8_0" || len(tr.Output.NewIDs) != 6 {
		t.Errorf("model %+v, %d new tokens: want q8_0 weights rounding their activations to q8_0, 6 tokens", tr.Model, len(tr.Output.NewIDs))
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"run", "--model", "toy", "--quantize", "q4_k"}, "has no float weight matrices"},
		{[]string{"run", "--model", model, "--quantize", "q3_k"}, "tracer quantizes to q8_0, q4_0, q4_k, q5_k, q6_k"},
	} {
		stderr.Reset()
		if c := run(context.Background(), tc.args, nil, &stdout, &stderr); c != exitUsage || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%v: exit %d, %q; want a usage error saying %q", tc.args, c, stderr.String(), tc.says)
		}
	}
}
