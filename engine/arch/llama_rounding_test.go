package arch

import (
	"testing"

	"tracer/engine/tensor"
)

// TestLlamaRoundsSharedInputsOnce: a decode step of a GGUF llama rounds
// each layer's normed input once for q, k and v and once for gate and up
// (with the attention output and the down projection's input: four a
// layer), plus once for the output head, not seven a layer (the review of
// issue 19); F32 weights round nothing.
func TestLlamaRoundsSharedInputsOnce(t *testing.T) {
	for _, c := range []struct {
		dtype tensor.DType
		want  int
	}{
		{tensor.Q8_0, 4*ggufTinyShape.Layers + 1},
		{tensor.Q4_0, 4*ggufTinyShape.Layers + 1},
		{tensor.F16, 4*ggufTinyShape.Layers + 1},
		{tensor.F32, 0},
	} {
		t.Run(c.dtype.String(), func(t *testing.T) {
			m, err := NewRandomGGUF("tiny", ggufTinyShape, c.dtype, 7)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.SetThreads(1)
			decodeLast(t, m, 1)
			if got := m.pool.Roundings(); got != c.want {
				t.Errorf("roundings of activations in one decode step of %d layers: got %d, want %d", ggufTinyShape.Layers, got, c.want)
			}
		})
	}
}
