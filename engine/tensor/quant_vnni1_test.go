package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// vnni1Types are the types of quant_vnni1_amd64.s's kernels.
var vnni1Types = []DType{Q5_1, Q4_1, IQ4_NL}

// vnni1Quads runs the VNNI kernel of dt over rows of ggml's layout (rb
// bytes each from w) as quantJob.quads does: dst[p+j·h] for p < quads
// and j < 4 is row p+j·h against the activations a (one row of x).
func vnni1Quads(dt DType, dst []float32, h int, w []byte, rb int, a *qActs, quads int) {
	n := len(a.d)
	switch dt {
	case Q5_1:
		dotQuadsQ5_1VNNI(&dst[0], h, &w[0], rb, &a.d[0], &a.s[0], &a.qs[0], n, quads)
	case Q4_1:
		dotQuadsQ4_1VNNI(&dst[0], h, &w[0], rb, &a.d[0], &a.s[0], &a.qs[0], n, quads)
	default:
		dotQuadsIQ4NLVNNI(&dst[0], h, &w[0], rb, &a.d[0], &a.xv[0], n, quads)
	}
}

// checkVNNI1 fails unless dt's VNNI kernel gives the Go twin's bits for
// the row w against x: alone (h 0, the row four times), as each row of
// a quad a row apart (the third row a copy with its first scale changed,
// and its min for Q5_1 and Q4_1), and as row 5 of two quads two rows
// apart among random rows of the same length; packed, a quad, four
// quads, and two pairs of quads in two streams.
func checkVNNI1(t *testing.T, r *rand.Rand, dt DType, w []byte, x []float32) {
	t.Helper()
	var a qActs
	a.quantize(dt, x, 1, len(x))
	rb := len(w)
	want := twinDot(dt, w, &a, 0, len(x))
	w2 := slices.Clone(w)
	w2[1] ^= 0x04 // the first f16 scale's exponent ± 1
	w2[3] ^= 0x01 // Q5_1, Q4_1: the first min's last bit; IQ4_NL: a weight
	want2 := twinDot(dt, w2, &a, 0, len(x))
	check := func(what string, got, want float32) {
		t.Helper()
		if !sameBits(got, want) {
			t.Errorf("%s %s: got %v (%08x), want %v (%08x), the Go twin's", dt, what, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	var four [4]float32
	vnni1Quads(dt, four[:], 0, w, rb, &a, 1)
	check("alone", four[0], want)
	w4 := slices.Concat(w, w, w2, w)
	vnni1Quads(dt, four[:], 1, w4, rb, &a, 1)
	for j, v := range four {
		if j == 2 {
			check("quad row 2 (changed)", v, want2)
		} else {
			check(fmt.Sprintf("quad row %d", j), v, want)
		}
	}
	w8 := randomBlocks(r, dt, 8, len(x))
	copy(w8[5*rb:], w)
	var eight [8]float32
	vnni1Quads(dt, eight[:], 2, w8, rb, &a, 2)
	for i, v := range eight {
		check(fmt.Sprintf("row %d of two quads", i), v, twinDot(dt, w8[i*rb:(i+1)*rb], &a, 0, len(x)))
	}
	// Packed: one quad (the changed third row), then sixteen random rows
	// (w the sixth) as four quads one at a time and two pairs in two
	// streams.
	n := len(a.d)
	packed := func(dst *float32, w *byte, quads int) {
		switch dt {
		case Q5_1:
			dotQuadsPackedQ5_1VNNI(dst, w, &a.d[0], &a.s[0], &a.qs[0], n, quads)
		case Q4_1:
			dotQuadsPackedQ4_1VNNI(dst, w, &a.d[0], &a.s[0], &a.qs[0], n, quads)
		default:
			dotQuadsPackedIQ4NLVNNI(dst, w, &a.d[0], &a.xv[0], n, quads)
		}
	}
	packed2 := func(dst *float32, w *byte, pairs int) {
		switch dt {
		case Q5_1:
			dotQuads2PackedQ5_1VNNI(dst, w, &a.d[0], &a.s[0], &a.qs[0], n, pairs)
		case Q4_1:
			dotQuads2PackedQ4_1VNNI(dst, w, &a.d[0], &a.s[0], &a.qs[0], n, pairs)
		default:
			dotQuads2PackedIQ4NLVNNI(dst, w, &a.d[0], &a.xv[0], n, pairs)
		}
	}
	w4p := make([]byte, len(w4))
	if err := PackQuantRows(w4p, w4, dt, len(x)); err != nil {
		t.Fatal(err)
	}
	four = [4]float32{}
	packed(&four[0], &w4p[0], 1)
	for j, v := range four {
		if j == 2 {
			check("packed row 2 (changed)", v, want2)
		} else {
			check(fmt.Sprintf("packed row %d", j), v, want)
		}
	}
	w16 := randomBlocks(r, dt, 16, len(x))
	copy(w16[5*rb:], w)
	w16p := make([]byte, len(w16))
	if err := PackQuantRows(w16p, w16, dt, len(x)); err != nil {
		t.Fatal(err)
	}
	var one, two [16]float32
	packed(&one[0], &w16p[0], 4)
	packed2(&two[0], &w16p[0], 2)
	for i := range one {
		want := twinDot(dt, w16[i*rb:(i+1)*rb], &a, 0, len(x))
		check(fmt.Sprintf("packed row %d of four quads", i), one[i], want)
		check(fmt.Sprintf("packed row %d of two pairs in two streams", i), two[i], want)
	}
}

// TestVNNI1MatchesGo: the Q5_1, Q4_1 and IQ4_NL VNNI kernels give the
// bits of dotQ5_1, dotQ4_1 and dotIQ4NL, hence llama.cpp's, for random
// rows of every length from 1 to 40 blocks and some longer ones (groups
// of eight, pairs and a last odd block, blocks left): sane scales, every
// byte random (scales and mins NaN, infinite, subnormal); activations of
// every magnitude, all ±1 (the extreme lanes), all zero.
func TestVNNI1MatchesGo(t *testing.T) {
	if !useVNNI {
		t.Skip("no VNNI kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(41, 42))
	lengths := []int{48, 49, 63, 64, 65, 71, 72, 73, 95, 96}
	for blocks := 1; blocks <= 40; blocks++ {
		lengths = append(lengths, blocks)
	}
	for _, dt := range vnni1Types {
		for _, blocks := range lengths {
			for rep := range 7 {
				t.Run(fmt.Sprintf("%s/%d blocks/%d", dt, blocks, rep), func(t *testing.T) {
					w := randomBlocks(r, dt, 1, 32*blocks)
					if rep >= 4 { // every byte random, the scales and mins too
						for i := range w {
							w[i] = byte(r.Uint32())
						}
					}
					x := make([]float32, 32*blocks)
					for i := range x {
						x[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()*3))
						switch rep {
						case 2:
							x[i] = float32(1 - 2*(i%2)) // ±1: ±127 after rounding
						case 3:
							x[i] = 0
						}
					}
					checkVNNI1(t, r, dt, w, x)
				})
			}
		}
	}
}

// TestVNNI1MatMul: a product with Q5_1, Q4_1 or IQ4_NL weights, in
// ggml's layout and packed (one row of x or several, on a
// pool or not; row counts that leave rows after the last quad, quads
// odd and even for the two streams) gives each output the Go twin's
// bits, a row's the same whatever the number of rows of x; packed rows
// read back as the same weights.
func TestVNNI1MatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	pool := NewPool(2)
	defer pool.Close()
	for _, dt := range vnni1Types {
		for _, sh := range [][2]int{{1, 32}, {4, 32}, {5, 288}, {7, 96}, {8, 576}, {11, 896}, {33, 1536}, {64, 224}, {130, 160}} {
			rows, cols := sh[0], sh[1]
			m, err := NewQuantMatrix(randomBlocks(r, dt, rows, cols), dt, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			const n = 3
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			var a qActs
			a.quantize(dt, x, n, cols)
			ms := []Matrix{m}
			if PackedLayout(dt) {
				pm := packedCopy(t, m)
				wa, wb := make([]float32, cols), make([]float32, cols)
				for i := range rows {
					m.Row(wa, i)
					pm.Row(wb, i)
					if !slices.Equal(wa, wb) {
						t.Fatalf("%s %dx%d: row %d of the packed matrix gives other weights", dt, rows, cols, i)
					}
				}
				ms = append(ms, pm)
			}
			for _, mm := range ms {
				for _, p := range []*Pool{nil, pool} {
					got := make([]float32, n*rows)
					p.MatMul(got, mm, x)
					for tk := range n {
						one := make([]float32, rows)
						p.MatMul(one, mm, x[tk*cols:(tk+1)*cols])
						for i := range rows {
							want := twinDot(dt, m.quantRow(i), &a, tk, cols)
							if !sameBits(got[tk*rows+i], want) || !sameBits(one[i], want) {
								t.Fatalf("%s %dx%d packed %v pool %v: x row %d, out %d: got %v (batch) and %v (alone), want %v",
									dt, rows, cols, mm.packed, p != nil, tk, i, got[tk*rows+i], one[i], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestQuantQ8_1Z: the AVX-512 Q8_1 rounding gives quantizeQ8_1's values,
// scales and sums, bit for bit: ordinary blocks, an all-zero block, ties
// (x·127/amax halfway), scales and sums that overflow binary16 or fall
// into its subnormals or to zero, subnormal inputs, -0, sums that cancel.
func TestQuantQ8_1Z(t *testing.T) {
	if !useVNNI {
		t.Skip("no AVX-512 VNNI here")
	}
	r := rand.New(rand.NewPCG(73, 74))
	blocks := map[string]func(j int) float32{
		"normal":         func(int) float32 { return float32(r.NormFloat64()) },
		"positive":       func(int) float32 { return float32(r.Float64()) },
		"zero":           func(int) float32 { return 0 },
		"ties":           func(j int) float32 { return []float32{127, float32(j) - 15.5}[min(j, 1)] },
		"f16 overflow":   func(int) float32 { return float32(r.NormFloat64() * 1e9) },
		"s overflow":     func(int) float32 { return float32(6e4 + r.Float64()) },
		"f16 subnormal":  func(int) float32 { return float32(r.NormFloat64() * 1e-5) },
		"f16 zero":       func(int) float32 { return float32(r.NormFloat64() * 1e-12) },
		"subnormal x":    func(int) float32 { return float32(r.NormFloat64() * 1e-40) },
		"negative zeros": func(j int) float32 { return float32(math.Copysign(0, -1)) * float32(j%2) },
		"cancel":         func(j int) float32 { return float32(1 - 2*(j%2)) },
	}
	for name, f := range blocks {
		t.Run(name, func(t *testing.T) {
			x := make([]float32, 96)
			for j := range x {
				x[j] = f(j % 32)
			}
			checkQuantQ8_1Z(t, x)
		})
	}
}

// checkQuantQ8_1Z fails unless qActs.quantize gives quantizeQ8_1's bits
// for x (whole blocks).
func checkQuantQ8_1Z(t *testing.T, x []float32) {
	t.Helper()
	n := len(x) / 32
	wq, wd, ws := make([]int8, len(x)), make([]float32, n), make([]float32, n)
	for b := range n {
		wd[b], ws[b] = quantizeQ8_1(wq[32*b:], x[32*b:])
	}
	var got qActs
	got.quantize(Q5_1, x, 1, len(x))
	if !slices.Equal(got.qs, wq) {
		t.Errorf("x %v: got values %v, want %v", x, got.qs, wq)
	}
	for b := range n {
		if math.Float32bits(got.d[b]) != math.Float32bits(wd[b]) || math.Float32bits(got.s[b]) != math.Float32bits(ws[b]) {
			t.Errorf("block %d (x %v): got d %v, s %v; want %v, %v", b, x[32*b:32*b+32], got.d[b], got.s[b], wd[b], ws[b])
		}
	}
}

// FuzzQuantQ8_1Z: any finite float32s (from their bits) as a block of
// activations. Property: no panic, and the AVX-512 rounding gives the Go
// twin's values, scale and sum.
func FuzzQuantQ8_1Z(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xfe, 0x42})
	f.Add([]byte{1, 0, 0, 0, 0xff, 0xff, 0x7f, 0x7f})
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !useVNNI {
			t.Skip("no AVX-512 VNNI here")
		}
		x := make([]float32, 32)
		for i := range x {
			var b [4]byte
			copy(b[:], raw[min(len(raw), 4*i):min(len(raw), 4*i+4)])
			v := math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
			if v != v || math.IsInf(float64(v), 0) {
				v = 1 // finite activations: NaN means the model already failed
			}
			x[i] = v
		}
		checkQuantQ8_1Z(t, x)
	})
}
