package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMulUpper: for every n from 1 to 130 (whole bands and not, up to
// past the AVX-512 kernel's eight registers), R a from the packed R is
// the triangular product in float64 within float32's rounding, R's lower
// triangle ignored; where the kernel runs, it gives the pure-Go loop's
// bits (both sum each output in column order, one FMA a term).
func TestMulUpper(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 130; n++ {
		R := make([]float64, n*n)
		for i := range R {
			R[i] = r.NormFloat64() // below the diagonal too: packing must drop it
		}
		a := make([]float32, n)
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		packed := make([]float32, UpperLen(n))
		PackUpper(packed, R, n)
		y := make([]float32, n)
		MulUpper(y, packed, a)
		for i := range n {
			var want, mag float64
			for j := i; j < n; j++ {
				term := float64(float32(R[i*n+j])) * float64(a[j])
				want += term
				mag += math.Abs(term)
			}
			if math.Abs(float64(y[i])-want) > 1e-6*mag {
				t.Fatalf("n %d: (R a)[%d] = %v, want %v", n, i, y[i], want)
			}
		}
		if useAVX512 && n%upperBand == 0 && n <= 8*upperBand {
			g := make([]float32, n)
			o := 0
			for j, aj := range a {
				w := j/upperBand*upperBand + upperBand
				for i := range w {
					g[i] = float32(math.FMA(float64(aj), float64(packed[o+i]), float64(g[i])))
				}
				o += w
			}
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(g[i]) {
					t.Fatalf("n %d: kernel %v, Go %v at %d", n, y[i], g[i], i)
				}
			}
		}
	}
}

// BenchmarkMulUpper is one head's share at a head dimension of 64, packed
// (10 KiB) and in cache.
func BenchmarkMulUpper(b *testing.B) {
	const n = 64
	R := make([]float64, n*n)
	for i := range R {
		R[i] = float64(i % 7)
	}
	packed := make([]float32, UpperLen(n))
	PackUpper(packed, R, n)
	a, y := make([]float32, n), make([]float32, n)
	for b.Loop() {
		MulUpper(y, packed, a)
	}
}
