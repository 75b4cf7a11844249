package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExp compares Exp with math.Exp over the whole range, the edges and
// the special values: within 2 ulps (relative 4.5e-16) for normal results.
func TestExp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	src := []float64{0, -0, 1, -1, 0.5, -0.5, 709.78, 709.7827128933839, 709.79, -745.1, -745.2, -708.4, -1e-300,
		math.Inf(1), math.Inf(-1), math.NaN(), 88.7, -103.9, 1e-10, math.Ln2 / 2, -math.Ln2 / 2}
	for range 100000 {
		src = append(src, (r.Float64()*2-1)*750, r.NormFloat64()*5)
	}
	for len(src)%4 != 3 { // leave a tail for the Go loop
		src = append(src, r.Float64())
	}
	got := make([]float64, len(src))
	Exp(got, src)
	for i, x := range src {
		want := math.Exp(x)
		switch {
		case math.IsNaN(want):
			if !math.IsNaN(got[i]) {
				t.Errorf("Exp(%v) = %v, want NaN", x, got[i])
			}
		case want < 0x1p-1022: // subnormal or zero: absolute error
			if math.Abs(got[i]-want) > 0x1p-1074*4 {
				t.Errorf("Exp(%v) = %v, want %v", x, got[i], want)
			}
		case math.IsInf(want, 1):
			// math.Exp's assembly on amd64 overflows from 709.44 on;
			// the true values up to 709.78 are finite.
			if !math.IsInf(got[i], 1) && !(x < 709.79 && got[i] > 1.2e308) {
				t.Errorf("Exp(%v) = %v, want +Inf", x, got[i])
			}
		default:
			if d := math.Abs(got[i]-want) / want; d > 4.5e-16 {
				t.Errorf("Exp(%v) = %v, want %v (relative error %.3g)", x, got[i], want, d)
			}
		}
	}
}

// TestSiLU checks the vector SiLU against the float64 formula rounded to
// float32: equal but for a rare last-bit double rounding.
func TestSiLU(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := []float32{0, 1, -1, 100, -100, 1e-20, -1e-20, 88, -88, 200, -200, float32(math.Inf(1)), float32(math.Inf(-1))}
	for range 50000 {
		x = append(x, float32(r.NormFloat64()*4))
	}
	got := make([]float32, len(x))
	SiLU(got, x)
	off := 0
	for i, v := range x {
		f := float64(v)
		want := float32(f / (1 + math.Exp(-f)))
		if got[i] != want && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want))) {
			if d := math.Abs(float64(got[i]-want)) / math.Abs(float64(want)); d > 1.2e-7 {
				t.Errorf("SiLU(%v) = %v, want %v", v, got[i], want)
			}
			off++
		}
	}
	if off > len(x)/10000 {
		t.Errorf("%d of %d SiLU results differ from float64 math.Exp in the last bit", off, len(x))
	}
}

func BenchmarkExp(b *testing.B) {
	src := make([]float64, 4096)
	for i := range src {
		src[i] = -float64(i) / 100
	}
	dst := make([]float64, len(src))
	b.Run("vector", func(b *testing.B) {
		for b.Loop() {
			Exp(dst, src)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/value")
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for i, x := range src {
				dst[i] = math.Exp(x)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/value")
	})
}

// expRoundSumRef is ExpRoundSum as blocks of 512 through Exp, rounded and
// added one at a time.
func expRoundSumRef(dst, s []float32, m, sum float32) float32 {
	for lo := 0; lo < len(s); lo += 512 {
		ss := s[lo:min(lo+512, len(s))]
		e := make([]float64, len(ss))
		for i, v := range ss {
			e[i] = float64(v - m)
		}
		Exp(e, e)
		for i, x := range e {
			dst[lo+i] = float32(x)
			sum += dst[lo+i]
		}
	}
	return sum
}

// TestExpRoundSumMatchesBlocks checks ExpRoundSum (eight exponentials at a
// time with AVX-512, the sum in order) against the blocks of Exp, bit for
// bit: lengths around 8 and 512, scores of -Inf, +Inf, NaN and far below
// the maximum, shifts m from the maximum and beyond it.
func TestExpRoundSumMatchesBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	odd := []float32{float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()), -200, -1e30, 0}
	for trial := range 3000 {
		n := r.IntN(1100)
		if trial%500 == 0 {
			n = 49152
		}
		s := make([]float32, n)
		m := float32(math.Inf(-1))
		for i := range s {
			s[i] = float32(r.NormFloat64() * 5)
			if r.IntN(30) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
			m = max(m, s[i])
		}
		if trial%3 == 0 {
			m = float32(r.NormFloat64() * 20)
		}
		sum0 := float32(r.IntN(3))
		got, want := make([]float32, n), make([]float32, n)
		gs, ws := ExpRoundSum(got, s, m, sum0), expRoundSumRef(want, s, m, sum0)
		same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b }
		if !same(gs, ws) {
			t.Fatalf("trial %d (%d scores, m %v): sum %v, want %v", trial, n, m, gs, ws)
		}
		for i := range got {
			if !same(got[i], want[i]) {
				t.Fatalf("trial %d (%d scores, m %v): [%d] = %v, want %v", trial, n, m, i, got[i], want[i])
			}
		}
	}
}

// TestSumExpMatchesDefinition checks SumExp (eight scores at a time with
// AVX-512) against its definition, one score at a time (Exp over the whole
// vector for the same lanes), bit for bit: lengths around 8 and 512,
// scores of -Inf, +Inf, NaN and ones whose exponential underflows or
// overflows, m the maximum, above or below it, or +Inf.
func TestSumExpMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	odd := []float32{float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()), -800, 800, -1e30, 1e30, 0}
	for trial := range 5000 {
		n := r.IntN(1100)
		if trial%500 == 0 {
			n = 49152
		}
		s := make([]float32, n)
		m := math.Inf(-1)
		for i := range s {
			s[i] = float32(r.NormFloat64() * 5)
			if r.IntN(30) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
			if s[i] == s[i] {
				m = math.Max(m, float64(s[i]))
			}
		}
		switch trial % 5 {
		case 1:
			m = r.NormFloat64() * 20
		case 2:
			m = math.Inf(1)
		case 3:
			m = []float64{0, -3, 800}[r.IntN(3)]
		}
		u := make([]float64, n)
		for i, v := range s {
			u[i] = float64(v) - m
		}
		e := make([]float64, n)
		Exp(e, u)
		var a, b [4]float64
		for i, x := range e {
			if x > 0 {
				a[i%4] += x
				b[i%4] += float64(x * u[i])
			}
		}
		wantSum, wantDot := (a[0]+a[1])+(a[2]+a[3]), (b[0]+b[1])+(b[2]+b[3])
		same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) || x != x && y != y }
		if sum, dot := SumExp(s, m, true); !same(sum, wantSum) || !same(dot, wantDot) {
			t.Fatalf("trial %d (%d scores, m %v): SumExp = %v, %v; want %v, %v", trial, n, m, sum, dot, wantSum, wantDot)
		}
		if sum, dot := SumExp(s, m, false); !same(sum, wantSum) || dot != 0 {
			t.Fatalf("trial %d (%d scores, m %v): SumExp without dot = %v, %v; want %v, 0", trial, n, m, sum, dot, wantSum)
		}
	}
}
