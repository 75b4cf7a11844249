package arch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/safetensors"
)

// TestGPT2CheckpointNaming rewrites a GPT2LMHeadModel checkpoint the way
// OpenAI's GPT-2 checkpoints are stored (no "transformer." prefix, with the
// attn.bias and attn.masked_bias buffers) and checks the logits agree.
func TestGPT2CheckpointNaming(t *testing.T) {
	s := tinyShape("gpt2")
	dir := t.TempDir()
	writeTestModel(t, dir, s, 3)
	// Close each model before its file is rewritten: the weights are mapped.
	m := openModelDir(t, dir)
	want := run(t, m, []int{1, 2, 3})
	m.Close()

	data, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Parse("model.safetensors", data)
	if err != nil {
		t.Fatal(err)
	}
	var out []safetensors.Tensor
	for _, name := range f.Names() {
		ts, _ := f.Tensor(name)
		ts.Name = strings.TrimPrefix(name, "transformer.")
		out = append(out, ts)
	}
	for l := 0; l < s.layers; l++ {
		p := fmt.Sprintf("h.%d.attn.", l)
		out = append(out,
			safetensors.Tensor{Name: p + "bias", DType: "U8", Shape: []int{1, 1, s.maxPos, s.maxPos}, Data: make([]byte, s.maxPos*s.maxPos)},
			safetensors.Tensor{Name: p + "masked_bias", DType: safetensors.F32, Shape: []int{}, Data: make([]byte, 4)})
	}
	var b bytes.Buffer
	if err := safetensors.Write(&b, out, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m = openModelDir(t, dir)
	got := run(t, m, []int{1, 2, 3})
	if d := maxDiff(got, want); d != 0 {
		t.Errorf("logits without the prefix differ by %g", d)
	}
}

func openModelDir(t *testing.T, dir string) *Model {
	t.Helper()
	m, err := OpenHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.(*Model).Close() })
	return m.(*Model)
}
