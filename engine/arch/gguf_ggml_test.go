package arch

import (
	"math"
	"testing"

	"tracer/engine/tensor"
)

// TestExpGGML: ggml_v_expf's lane function is within its documented 1.5
// ulps of exp, overflows to +Inf past 88.7 and underflows to 0 far below,
// as the AVX-512 routine does.
func TestExpGGML(t *testing.T) {
	worst := 0.0
	for x := float32(-87); x < 88; x += 0.0137 {
		got, want := float64(expGGML(x)), math.Exp(float64(x))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want))
		worst = max(worst, math.Abs(got-want)/ulp)
	}
	if worst > 2.5 { // ggml documents 1.45 + 0.5 ulps; an ulp here is the one above exp(x)
		t.Errorf("got errors up to %.2f ulps, want at most 2.5", worst)
	}
	cases := []struct {
		name string
		x    float32
		want float32
	}{
		{"zero", 0, 1},
		{"overflow", 89, float32(math.Inf(1))},
		{"far overflow", 1000, float32(math.Inf(1))},
		{"far underflow", -1000, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := expGGML(c.x); got != c.want {
				t.Errorf("expGGML(%v): got %v, want %v", c.x, got, c.want)
			}
		})
	}
	if got := expGGML(float32(math.NaN())); got == got {
		t.Errorf("expGGML(NaN): got %v, want NaN", got)
	}
}

// TestRMSNormGGML: ggml squares in float32 before summing in float64 and
// takes sqrtf and the reciprocal in float32; for these inputs that gives
// other bits than tensor.RMSNorm's float64 sum and reciprocal, and the
// documented loop's.
func TestRMSNormGGML(t *testing.T) {
	x := make([]float32, 256)
	w := make([]float32, 256)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*1.7+7)) * 3.3
		w[i] = 1 + float32(i%7)*0.01
	}
	got := make([]float32, len(x))
	rmsNormGGML(got, x, w, 1e-5)
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+1e-5)))
	for i, v := range x {
		if want := (v * scale) * w[i]; got[i] != want {
			t.Fatalf("element %d: got %v, want %v", i, got[i], want)
		}
	}
	own := make([]float32, len(x))
	tensor.RMSNorm(own, x, w, 1e-5)
	differ := 0
	for i := range own {
		if own[i] != got[i] {
			differ++
		}
	}
	if differ == 0 {
		t.Error("tensor.RMSNorm gives the same bits: the test input does not tell the two orders apart")
	}
}
