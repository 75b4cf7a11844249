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

// TestExpNeg compares expNeg with math.Exp over [-707, 0]: the ends, the
// points where n (u·16/ln2 rounded) steps, tiny u, and random ones:
// within 2 ulps, as math.Exp is itself up to about an ulp off (at
// u = -25.321532939830497 it is 1.17 ulps below e^u, expNeg 0.83 above).
func TestExpNeg(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	us := []float64{0, -0, expNegMin, -706.99, -1e-300, -1e-17, -1e-9, -math.Ln2 / 32, -math.Ln2 / 16, -math.Ln2, -1, -0.5}
	for k := range 16400 {
		b := -float64(k) * math.Ln2 / 16
		us = append(us, b, math.Nextafter(b, 1), math.Nextafter(b, -1), b-math.Ln2/32, math.Nextafter(b-math.Ln2/32, 0))
	}
	for range 300000 {
		us = append(us, r.Float64()*expNegMin, -r.ExpFloat64()*3, -math.Exp(-r.Float64()*40))
	}
	worst := 0.0
	for _, u := range us {
		if u < expNegMin {
			continue
		}
		got, want := expNeg(u), math.Exp(u)
		ulp := math.Nextafter(want, math.Inf(1)) - want
		if d := math.Abs(got-want) / ulp; d > worst {
			worst = d
			if d > 2 {
				t.Fatalf("expNeg(%v) = %v, math.Exp %v: %.2f ulps apart", u, got, want, d)
			}
		}
	}
	t.Logf("at most %.2f ulp from math.Exp over %d values", worst, len(us))
}

// neumaier is a compensated sum (Neumaier's variant of Kahan's).
type neumaier struct{ s, c float64 }

func (n *neumaier) add(x float64) {
	t := n.s + x
	if math.Abs(n.s) >= math.Abs(x) {
		n.c += (n.s - t) + x
	} else {
		n.c += (x - t) + n.s
	}
	n.s = t
}

func (n *neumaier) sum() float64 { return n.s + n.c }

// TestSumExpMatchesGo checks SumExp (eight scores at a time with AVX-512)
// against its Go loop over all the scores, bit for bit, and, where m is
// the largest score, against compensated sums of math.Exp within 1e-13
// (eight partial sums of up to 6,144 terms each round): lengths
// around 8, 16 and SmolLM2's vocabulary, scores of -Inf, +Inf, NaN, -0
// and ones far below m, m the maximum, above or below it, or ±Inf.
func TestSumExpMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	odd := []float32{float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()), -800, 800, -1e30, 1e30, 0, float32(math.Copysign(0, -1))}
	for trial := range 5000 {
		n := r.IntN(1100)
		switch trial % 50 {
		case 0:
			n = 49152
		case 1:
			n = r.IntN(40)
		}
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64() * 5)
			if trial%3 == 0 && r.IntN(30) == 0 {
				s[i] = odd[r.IntN(len(odd))]
			}
		}
		mx, nan := MaxNaN(s)
		m := float64(mx)
		switch trial % 7 {
		case 1:
			m = r.NormFloat64() * 20
		case 2:
			m = math.Inf(1)
		case 3:
			m = []float64{0, -3, 800, math.Inf(-1)}[r.IntN(4)]
		}
		for _, dot := range []bool{false, true} {
			var a, b [8]float64
			sumExpGo(s, 0, m, dot, &a, &b)
			wantSum, wantDot := sum8(&a), sum8(&b)
			same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
			sum, dotSum := SumExp(s, m, dot)
			if !same(sum, wantSum) || !same(dotSum, wantDot) {
				t.Fatalf("trial %d (%d scores, m %v, dot %v): SumExp = %v, %v; its Go loop %v, %v", trial, n, m, dot, sum, dotSum, wantSum, wantDot)
			}
			if !dot && dotSum != 0 {
				t.Fatalf("trial %d: SumExp without dot gave Σe·u = %v", trial, dotSum)
			}
			if nan || m != float64(mx) || math.IsInf(m, 0) {
				continue
			}
			var es, eu neumaier
			for _, v := range s {
				if u := float64(v) - m; u >= expNegMin {
					e := math.Exp(u)
					es.add(e)
					eu.add(e * u)
				}
			}
			if es, eu := es.sum(), eu.sum(); math.Abs(sum-es) > 1e-13*es || dot && math.Abs(dotSum-eu) > -1e-13*eu {
				t.Fatalf("trial %d (%d scores, m %v): SumExp = %v, %v; sums of math.Exp %v, %v", trial, n, m, sum, dotSum, es, eu)
			}
		}
	}
}

// FuzzSumExp checks SumExp (eight scores at a time with AVX-512) against
// its Go loop, bit for bit, on arbitrary float32 scores and m.
func FuzzSumExp(f *testing.F) {
	f.Add([]byte("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x80\xff\x00\x00\xc0\x7f"), 2.0, true)
	f.Add(make([]byte, 4*17), 0.0, false)
	f.Fuzz(func(t *testing.T, b []byte, m float64, dot bool) {
		s := make([]float32, len(b)/4)
		for i := range s {
			s[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
		}
		var a, c [8]float64
		sumExpGo(s, 0, m, dot, &a, &c)
		sum, sumEU := SumExp(s, m, dot)
		if math.Float64bits(sum) != math.Float64bits(sum8(&a)) || math.Float64bits(sumEU) != math.Float64bits(sum8(&c)) {
			t.Fatalf("SumExp(%v, %v, %v) = %v, %v; its Go loop %v, %v", s, m, dot, sum, sumEU, sum8(&a), sum8(&c))
		}
	})
}
