package web

import (
	"slices"
	"testing"

	"tracer/engine/arch"
	"tracer/web/view"
)

// TestFormQuantizesWhatArchMakes: the run form's quantize menu offers
// exactly the types arch.Quantized makes.
func TestFormQuantizesWhatArchMakes(t *testing.T) {
	var want []string
	for _, q := range arch.QuantizeTypes {
		want = append(want, q.String())
	}
	if !slices.Equal(view.QuantizeTypes, want) {
		t.Errorf("the form offers %v, arch makes %v", view.QuantizeTypes, want)
	}
}
