package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// softmaxScaledRef is SoftmaxScaled's reference loop in plain Go, in its
// documented order (chunks of 256 for Exp, four lanes for the sum): the
// twin the assembly must match bit for bit.
func softmaxScaledRef(w []float32, scale float32) {
	var best float32
	for j := range w {
		w[j] /= scale
		if j == 0 || w[j] > best {
			best = w[j]
		}
	}
	var s [4]float64
	for lo := 0; lo < len(w); lo += 256 {
		ws := w[lo:min(lo+256, len(w))]
		e := make([]float64, len(ws))
		for j, v := range ws {
			e[j] = float64(v - best)
		}
		Exp(e, e)
		for j := range ws {
			ws[j] = float32(e[j])
			s[(lo+j)%4] += float64(ws[j])
		}
	}
	total := float32((s[0] + s[1]) + (s[2] + s[3]))
	for j := range w {
		w[j] /= total
	}
}

func TestSoftmaxScaled(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name  string
		w     []float32
		scale float32
		nan   bool // every weight NaN
	}{
		{"one key", []float32{3}, 8, false},
		{"three keys", []float32{1, 2, 3}, 8, false},
		{"one vector", randVec(r, 8), 8, false},
		{"a vector and a tail", randVec(r, 13), 11.313708, false},
		{"one chunk", randVec(r, 256), 8, false},
		{"chunks and a tail", randVec(r, 601), 16, false},
		{"large scores", scaled(randVec(r, 100), 1e4), 8, false},
		{"equal scores", make([]float32, 40), 8, false},
		{"NaN in the vector part", append([]float32{nan}, randVec(r, 15)...), 8, true},
		{"NaN in the tail", append(randVec(r, 16), nan), 8, true},
		{"infinite score", append(randVec(r, 9), inf), 8, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]float32(nil), tt.w...)
			SoftmaxScaled(got, tt.scale)
			want := append([]float32(nil), tt.w...)
			softmaxScaledRef(want, tt.scale)
			for j := range want {
				if !sameBits(got[j], want[j]) {
					t.Fatalf("w[%d] = %v, reference loop %v (bit for bit)", j, got[j], want[j])
				}
			}
			if tt.nan {
				for j, v := range got {
					if v == v {
						t.Fatalf("w[%d] = %v, want NaN", j, v)
					}
				}
				return
			}
			exact := exactSoftmax(tt.w, tt.scale)
			var sum float64
			for j, v := range got {
				sum += float64(v)
				if d := math.Abs(float64(v) - exact[j]); d > 2e-7*exact[j]+1e-12 {
					t.Errorf("w[%d] = %v, exact %v", j, v, exact[j])
				}
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("weights sum to %v, want 1", sum)
			}
		})
	}
}

func scaled(v []float32, a float32) []float32 {
	for i := range v {
		v[i] *= a
	}
	return v
}

// exactSoftmax is the softmax of w/scale in float64 (w/scale rounded to
// float32 first, as the kernel divides).
func exactSoftmax(w []float32, scale float32) []float64 {
	best := math.Inf(-1)
	for _, v := range w {
		best = math.Max(best, float64(v/scale))
	}
	out := make([]float64, len(w))
	var s float64
	for j, v := range w {
		out[j] = math.Exp(float64(v/scale) - best)
		s += out[j]
	}
	for j := range out {
		out[j] /= s
	}
	return out
}

// FuzzSoftmaxScaled feeds SoftmaxScaled any scores (NaN, infinities and
// subnormals included, up to 2,000) and scale, and checks that it never
// panics and computes its reference loop's bits.
func FuzzSoftmaxScaled(f *testing.F) {
	seed := func(scale float32, w ...float32) []byte {
		b := binary.LittleEndian.AppendUint32(nil, math.Float32bits(scale))
		for _, v := range w {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		return b
	}
	f.Add(seed(8, 1, 2, 3, 4, 5, 6, 7, 8, 9))
	f.Add(seed(0.5, float32(math.Inf(-1)), 0, -1e30, 3e-42))
	f.Add(seed(-2, 1e38, -1e38, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 8 || len(data) > 4*2001 {
			return
		}
		scale := math.Float32frombits(binary.LittleEndian.Uint32(data))
		w := make([]float32, (len(data)-4)/4)
		for j := range w {
			w[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[4+4*j:]))
		}
		want := append([]float32(nil), w...)
		softmaxScaledRef(want, scale)
		SoftmaxScaled(w, scale)
		for j := range w {
			if !sameBits(w[j], want[j]) {
				t.Fatalf("w[%d] = %v, reference loop %v", j, w[j], want[j])
			}
		}
	})
}

// BenchmarkSoftmaxScaled is one row of prompt attention weights: 64 and 512
// keys.
func BenchmarkSoftmaxScaled(b *testing.B) {
	for _, n := range []int{64, 512} {
		w := benchVec(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				SoftmaxScaled(w, 1) // scale 1 keeps the scores from shrinking to 0
			}
		})
	}
}

// TestDivMatchesLoop checks Div's lanes against w[j] /= d one at a time,
// bit for bit, on lengths around the eight lanes, with zeros, infinities,
// NaNs and subnormals among the values and the divisors.
func TestDivMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	odd := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.SmallestNonzeroFloat32, math.MaxFloat32, 1e-40}
	for trial := range 5000 {
		w := make([]float32, r.IntN(40))
		for i := range w {
			w[i] = float32(r.NormFloat64())
			if r.IntN(8) == 0 {
				w[i] = odd[r.IntN(len(odd))]
			}
		}
		d := float32(r.NormFloat64() * 1e3)
		if trial%5 == 0 {
			d = odd[r.IntN(len(odd))]
		}
		want := slices.Clone(w)
		for j := range want {
			want[j] /= d
		}
		Div(w, d)
		for j := range w {
			if math.Float32bits(w[j]) != math.Float32bits(want[j]) && !(w[j] != w[j] && want[j] != want[j]) {
				t.Fatalf("trial %d: %d values / %v: [%d] = %v, want %v", trial, len(w), d, j, w[j], want[j])
			}
		}
	}
}
