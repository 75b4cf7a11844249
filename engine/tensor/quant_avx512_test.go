package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sameBits reports whether a and b are the same float32, every NaN being
// the same as every other.
func sameBits(a, b float32) bool {
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b)) || a != a && b != b
}

// q8Dots returns one Q8_0, Q4_0 or Q5_0 row's dot product with the
// activations x by each kernel this machine has: "go" always, "avx2"
// (not Q5_0) and the VNNI kernels where they run: the row alone (computed
// four times), and four rows whose third is a copy with its first scale
// changed, in ggml's layout and packed, and two packed quads in two
// streams. "changed go" is the Go twin of the copy, which every
// key starting "changed " must equal. With sums (Q4_0 only), the kernels
// of rows marked SumBlocks (packed only: the ggml layout's go one row
// at a time, by the AVX2 kernel).
func q8Dots(dt DType, sums bool, w []byte, x []float32) map[string]float32 {
	var a qActs
	a.quantize(dt, x, 1, len(x))
	a.vnni(dt) // also where quantize leaves it to the VNNI kernels
	n := len(a.d)
	out := map[string]float32{}
	dot, avx2 := dotQ8_0, dotQ8_0AVX2
	quads, packed, packed2 := dotQuadsQ8_0VNNI, dotQuadsPackedQ8_0VNNI, dotQuads2PackedQ8_0VNNI
	switch dt {
	case Q4_0:
		dot, avx2 = dotQ4_0, dotQ4_0AVX2
		quads, packed, packed2 = dotQuadsQ4_0VNNI, dotQuadsPackedQ4_0VNNI, dotQuads2PackedQ4_0VNNI
	case Q5_0: // no AVX2 kernel
		dot, avx2 = dotQ5_0, nil
		quads, packed, packed2 = dotQuadsQ5_0VNNI, dotQuadsPackedQ5_0VNNI, dotQuads2PackedQ5_0VNNI
	}
	if sums {
		dot, avx2 = dotQ4_0Blocks, dotQ4_0BlocksAVX2
		quads, packed, packed2 = nil, dotQuadsPackedQ4_0BVNNI, dotQuads2PackedQ4_0BVNNI
	}
	out["go"] = dot(w, a.d, a.qs)
	if useAsm && avx2 != nil {
		out["avx2"] = avx2(&w[0], &a.d[0], &a.qs[0], n)
	}
	if useVNNI {
		w2 := slices.Clone(w)
		w2[1] ^= 0x04 // the first f16 scale's exponent ± 1
		out["changed go"] = dot(w2, a.d, a.qs)
		w4 := slices.Concat(w, w, w2, w)
		w4p := make([]byte, len(w4))
		if err := PackQuantRows(w4p, w4, dt, 32*n); err != nil {
			panic(err)
		}
		var four [4]float32
		if quads != nil {
			quads(&four[0], 0, &w4[0], len(w), &a.d[0], &a.xv[0], n, 1)
			out["vnni alone"] = four[0]
			quads(&four[0], 1, &w4[0], len(w), &a.d[0], &a.xv[0], n, 1)
			out["vnni quad 0"], out["vnni quad 1"], out["vnni quad 3"] = four[0], four[1], four[3]
			out["changed vnni quad 2"] = four[2]
			four = [4]float32{}
		}
		packed(&four[0], &w4p[0], &a.d[0], &a.xv[0], n, 1)
		out["vnni packed 0"], out["vnni packed 1"], out["vnni packed 3"] = four[0], four[1], four[3]
		out["changed vnni packed 2"] = four[2]
		// Two quads in two streams: the second with rows 0 and 2 swapped.
		w8 := slices.Concat(w4, w2, w, w, w)
		w8p := make([]byte, len(w8))
		if err := PackQuantRows(w8p, w8, dt, 32*n); err != nil {
			panic(err)
		}
		var eight [8]float32
		packed2(&eight[0], &w8p[0], &a.d[0], &a.xv[0], n, 1)
		out["vnni 2 streams 0"], out["vnni 2 streams 5"], out["vnni 2 streams 7"] = eight[0], eight[5], eight[7]
		out["changed vnni 2 streams 2"], out["changed vnni 2 streams 4"] = eight[2], eight[4]
	}
	return out
}

// checkQ8Dots fails unless every kernel gives the Go twin's bits.
func checkQ8Dots(t *testing.T, dt DType, sums bool, w []byte, x []float32) {
	t.Helper()
	got := q8Dots(dt, sums, w, x)
	for k, v := range got {
		want, of := got["go"], "go"
		if strings.HasPrefix(k, "changed ") {
			want, of = got["changed go"], "changed go"
		}
		if !sameBits(v, want) {
			t.Errorf("%s kernel: got %v (%08x), want %v (%08x), the bits of %s", k, v, math.Float32bits(v), want, math.Float32bits(want), of)
		}
	}
}

// TestQuantQ8KernelsSameBits: the VNNI, AVX2 and Go kernels of Q8_0 and
// Q4_0 rows give the same bits: block counts odd and even (the VNNI
// kernels take two blocks at a time), extreme weights and activations
// (the offsets the VNNI kernels remove, the saturation VPMADDUBSW could
// hit), and sums that cancel.
func TestQuantQ8KernelsSameBits(t *testing.T) {
	if !useAsm {
		t.Log("no AVX2 kernels here: only the Go twin runs")
	}
	r := rand.New(rand.NewPCG(11, 12))
	type tc struct {
		name   string
		blocks int
		fill   func(w []byte, x []float32)
	}
	extreme := func(wb byte, xv float32) func(w []byte, x []float32) {
		return func(w []byte, x []float32) {
			for i := range x {
				x[i] = xv
				if i%3 == 0 {
					x[i] = -xv
				}
			}
			for i := range w {
				w[i] = wb
			}
		}
	}
	cases := []tc{
		{"1 block", 1, nil}, {"2 blocks", 2, nil}, {"3 blocks", 3, nil},
		{"18 blocks (576 columns)", 18, nil}, {"48 blocks (1536 columns)", 48, nil}, {"49 blocks", 49, nil},
		{"weights all 0x80 (Q8_0 -128, Q4_0 -8 and 0)", 5, extreme(0x80, 3)},
		{"weights all 0x7f", 5, extreme(0x7f, -7)},
		{"weights all 0xff", 4, extreme(0xff, 1)},
		{"activations zero", 3, func(w []byte, x []float32) { clear(x) }},
		{"activations cancel", 6, func(w []byte, x []float32) {
			for i := range x {
				x[i] = float32(1 - 2*(i%2))
			}
		}},
	}
	for _, k := range []struct {
		dt   DType
		sums bool
	}{{Q8_0, false}, {Q4_0, false}, {Q4_0, true}, {Q5_0, false}} {
		dt := k.dt
		name := dt.String()
		if k.sums {
			name += " SumBlocks"
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", name, c.name), func(t *testing.T) {
				w := randomBlocks(r, dt, 1, 32*c.blocks)
				x := make([]float32, 32*c.blocks)
				for i := range x {
					x[i] = float32(r.NormFloat64() * 4)
				}
				if c.fill != nil {
					_, by := dt.Block()
					c.fill(w, x)
					for b := 0; b < c.blocks; b++ { // keep the scales finite
						binary.LittleEndian.PutUint16(w[b*by:], F32ToF16(0.01+float32(b)*1e-3))
					}
				}
				checkQ8Dots(t, dt, k.sums, w, x)
			})
		}
	}
}

// TestFMA32 checks the Go twins' fused multiply-add against cases where
// rounding twice (product, then sum) gives another float32.
func TestFMA32(t *testing.T) {
	eps := float32(math.Nextafter32(1, 2) - 1) // 2^-23
	cases := []struct {
		name    string
		a, b, c float32
		want    float32
	}{
		{"exact", 3, 4, 5, 17},
		{"product rounding hidden by the sum", 1 + eps, 1 + eps, -1, 2*eps + eps*eps},
		// (1+2^-12)² = 1+2^-11+2^-24 lies halfway between two float32s; the
		// tiny c tips it up, but a float64 sum drops c and ties to even.
		{"halfway after a float64 sum", 1 + 0x1p-12, 1 + 0x1p-12, 0x1p-80, 1 + 0x1p-11 + 0x1p-23},
		{"negative", -(1 + eps), 1 + eps, 1, -(2*eps + eps*eps)},
		{"overflow", math.MaxFloat32, 2, 0, float32(math.Inf(1))},
		{"infinity", float32(math.Inf(-1)), 1, 1, float32(math.Inf(-1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FMA32(c.a, c.b, c.c); !sameBits(got, c.want) {
				t.Errorf("FMA32(%v, %v, %v): got %v, want %v", c.a, c.b, c.c, got, c.want)
			}
		})
	}
}

// FuzzQuantQ8Kernels: any bytes as a Q8_0, Q4_0 (either order) or Q5_0
// row (scales included: NaN, infinities, subnormals) against any
// activations.
// Property: no panic, and every kernel gives the Go twin's bits.
func FuzzQuantQ8Kernels(f *testing.F) {
	f.Add(uint8(0), uint8(1), uint64(1), []byte{0x80, 0x7f, 0x00, 0x3c})
	f.Add(uint8(1), uint8(18), uint64(2), []byte{0xff, 0x7c, 0x01})
	f.Add(uint8(1), uint8(3), uint64(3), []byte{})
	f.Add(uint8(2), uint8(17), uint64(4), []byte{0xff, 0xff, 0x00, 0x7c, 0x00, 0xfc})
	f.Add(uint8(2), uint8(9), uint64(5), []byte{0x01, 0x80})
	f.Fuzz(func(t *testing.T, kind uint8, blocks uint8, seed uint64, raw []byte) {
		dt := []DType{Q8_0, Q4_0, Q5_0, Q4_0}[kind%4]
		n := 1 + int(blocks)%64
		r := rand.New(rand.NewPCG(seed, 13))
		w := randomBlocks(r, dt, 1, 32*n)
		for i, v := range raw {
			w[(i*7919)%len(w)] = v
		}
		x := make([]float32, 32*n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()*4))
		}
		checkQ8Dots(t, dt, kind%4 == 3, w, x)
	})
}

// TestQuantMatMulSameBits: a whole quantized product (Q8_0, Q4_0 and Q5_0
// rows four at a time a quarter of the matrix apart by the VNNI kernels,
// the rows left alone; packed quads, in a decode two at a time in two
// streams; K-quant rows by runs; several rows of x, split over a pool),
// Q8_0, Q4_0 and Q5_0 in ggml's layout and packed where the VNNI kernels run,
// gives every output the Go twin's bits; the packed matrix gives back
// ggml's weights.
func TestQuantMatMulSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	pool := NewPool(2)
	defer pool.Close()
	type shape struct{ rows, cols, n int }
	shapes := []shape{{1, 32, 1}, {2, 64, 1}, {3, 96, 2}, {7, 576, 1}, {65, 160, 3}, {131, 64, 2}, {9, 288, 2}, {6, 512, 3}, {13, 1536, 1},
		{16, 288, 1}, {23, 160, 1}, {40, 576, 1}, {200, 800, 1}} // decode: packed quads in two streams, groups and blocks left
	kShapes := []shape{{1, 256, 1}, {7, 512, 3}, {65, 768, 2}, {600, 256, 2}} // K-quants: runs of rows
	for _, dt := range []DType{Q8_0, Q4_0, Q5_0, Q4_K, Q5_K, Q6_K} {
		if elems, _ := dt.Block(); elems == 256 {
			shapes = kShapes
		}
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("%s/%dx%d/n=%d", dt, sh.rows, sh.cols, sh.n), func(t *testing.T) {
				m, err := NewQuantMatrix(randomBlocks(r, dt, sh.rows, sh.cols), dt, sh.rows, sh.cols)
				if err != nil {
					t.Fatal(err)
				}
				x := make([]float32, sh.n*sh.cols)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				var a qActs
				a.quantize(dt, x, sh.n, sh.cols)
				wantOf := func(pm Matrix) []float32 {
					want := make([]float32, sh.n*sh.rows)
					for tk := 0; tk < sh.n; tk++ {
						for i := 0; i < sh.rows; i++ {
							want[tk*sh.rows+i] = twinDotOf(pm, m.quantRow(i), &a, tk, sh.cols)
						}
					}
					return want
				}
				ms := []Matrix{m}
				if PackedLayout(dt) {
					pm := packedCopy(t, m)
					if string(pm.q) == string(m.q) && sh.cols >= 256 {
						t.Fatal("PackQuantRows left the rows as they were")
					}
					ms = append(ms, pm)
					a, b := make([]float32, sh.cols), make([]float32, sh.cols)
					for i := 0; i < sh.rows; i++ {
						m.Row(a, i)
						pm.Row(b, i)
						if !slices.Equal(a, b) {
							t.Fatalf("row %d of the packed matrix gives other weights", i)
						}
					}
					if i, j := sh.rows-1, sh.cols-1; m.quantAt(i, j) != pm.quantAt(i, j) || m.quantAt(0, 40%sh.cols) != pm.quantAt(0, 40%sh.cols) {
						t.Fatal("quantAt differs on the packed matrix")
					}
				}
				if dt == Q4_0 { // llama.cpp's repacked order too, in both layouts
					for _, m := range ms {
						ms = append(ms, m.SumBlocks())
					}
				}
				for _, m := range ms {
					want := wantOf(m)
					for _, p := range []*Pool{nil, pool} {
						got := make([]float32, len(want))
						p.MatMul(got, m, x)
						for i := range got {
							if !sameBits(got[i], want[i]) {
								t.Fatalf("packed %v, sums %v, pool %v, out %d: got %v, want %v, the Go twin's bits", m.packed, m.blockSums, p != nil, i, got[i], want[i])
							}
						}
					}
				}
			})
		}
	}
}

// FuzzFMA32: for any three float32s, FMA32 is the exact a·b + c rounded
// once to float32 (math/big's rounding to nearest even), NaN where the
// result is undefined.
func FuzzFMA32(f *testing.F) {
	f.Add(uint32(0x3f800800), uint32(0x3f800800), uint32(0x17800000)) // (1+2^-12)², + 2^-80
	f.Add(uint32(0x00800000), uint32(0x3f000000), uint32(0x80000001)) // into the subnormals
	f.Add(uint32(0x7f7fffff), uint32(0x40000000), uint32(0xff7fffff))
	f.Fuzz(func(t *testing.T, ab, bb, cb uint32) {
		a, b, c := math.Float32frombits(ab), math.Float32frombits(bb), math.Float32frombits(cb)
		got := FMA32(a, b, c)
		for _, v := range []float32{a, b, c} {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return // the float64 rules are IEEE's; the exact reference needs finite inputs
			}
		}
		x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetFloat64(float64(c)))
		want, _ := x.Float32()
		if !sameBits(got, want) && !(got == 0 && want == 0) {
			t.Errorf("FMA32(%v, %v, %v): got %v (%08x), want %v (%08x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	})
}

// TestQuantizeQ8_0Rounding: the block rounding gives math.RoundToEven's
// values, ties included (x·127/amax exactly halfway, both parities).
func TestQuantizeQ8_0Rounding(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	cases := map[string][]float32{"random": nil, "ties": nil}
	for i := 0; i < 32; i++ {
		cases["random"] = append(cases["random"], float32(r.NormFloat64()))
		// amax 127: x·id = x, so halves are ties: -0.5, 0.5, 1.5, 2.5, ...
		cases["ties"] = append(cases["ties"], float32(i)-15.5)
	}
	cases["ties"][31] = 127
	for name, x := range cases {
		t.Run(name, func(t *testing.T) {
			q := make([]int8, 32)
			quantizeQ8_0(q, x)
			var amax float32
			for _, v := range x {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			id := 127 / amax
			for j, v := range x {
				if want := int8(math.RoundToEven(float64(v * id))); q[j] != want {
					t.Errorf("x[%d] = %v: got %d, want %d", j, v, q[j], want)
				}
			}
		})
	}
}

// TestQuantQ8_0Z: the AVX-512 activation rounding gives quantizeQ8_0's
// values and scales and vnni's layout, bit for bit: ordinary blocks, an
// all-zero block, ties (x·127/amax halfway), scales that overflow binary16
// or fall into its subnormals or to zero, subnormal inputs and -0.
func TestQuantQ8_0Z(t *testing.T) {
	if !useVNNI {
		t.Skip("no AVX-512 VNNI here")
	}
	r := rand.New(rand.NewPCG(71, 72))
	blocks := map[string]func(j int) float32{
		"normal":         func(int) float32 { return float32(r.NormFloat64()) },
		"zero":           func(int) float32 { return 0 },
		"ties":           func(j int) float32 { return []float32{127, float32(j) - 15.5}[min(j, 1)] },
		"f16 overflow":   func(int) float32 { return float32(r.NormFloat64() * 1e9) },
		"f16 subnormal":  func(int) float32 { return float32(r.NormFloat64() * 1e-5) },
		"f16 zero":       func(int) float32 { return float32(r.NormFloat64() * 1e-12) },
		"subnormal x":    func(int) float32 { return float32(r.NormFloat64() * 1e-40) },
		"negative zeros": func(j int) float32 { return float32(math.Copysign(0, -1)) * float32(j%2) },
	}
	for name, f := range blocks {
		for _, dt := range []DType{Q8_0, Q4_0} {
			t.Run(name+"/"+dt.String(), func(t *testing.T) {
				x := make([]float32, 64)
				for j := range x {
					x[j] = f(j % 32)
				}
				var want qActs
				want.qs = make([]int8, len(x))
				want.d = make([]float32, 2)
				for b := range 2 {
					want.d[b] = quantizeQ8_0(want.qs[32*b:], x[32*b:])
				}
				want.vnni(dt)
				var got qActs
				got.quantize(dt, x, 1, len(x))
				for i := range want.qs {
					if got.qs[i] != want.qs[i] {
						t.Fatalf("value %d (x %v): got %d, want %d", i, x[i], got.qs[i], want.qs[i])
					}
				}
				for b := range want.d {
					if math.Float32bits(got.d[b]) != math.Float32bits(want.d[b]) {
						t.Errorf("scale %d: got %v, want %v", b, got.d[b], want.d[b])
					}
				}
				for i := range want.xv {
					if got.xv[i] != want.xv[i] {
						t.Fatalf("VNNI layout byte %d: got %d, want %d", i, got.xv[i], want.xv[i])
					}
				}
			})
		}
	}
}

// FuzzQuantQ8_0Z: any finite float32s (from their bits) as a block of
// activations. Property: no panic, and the AVX-512 rounding gives the Go
// twin's values, scale and VNNI layout.
func FuzzQuantQ8_0Z(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xfe, 0x42}, false)
	f.Add([]byte{1, 0, 0, 0, 0xff, 0xff, 0x7f, 0x7f}, true)
	f.Fuzz(func(t *testing.T, raw []byte, q4 bool) {
		if !useVNNI {
			t.Skip("no AVX-512 VNNI here")
		}
		dt := Q8_0
		if q4 {
			dt = Q4_0
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
		var want qActs
		want.qs, want.d = make([]int8, 32), make([]float32, 1)
		want.d[0] = quantizeQ8_0(want.qs, x)
		want.vnni(dt)
		var got qActs
		got.quantize(dt, x, 1, 32)
		if math.Float32bits(got.d[0]) != math.Float32bits(want.d[0]) || string(got.xv) != string(want.xv) {
			t.Errorf("x %v: got scale %v, layout %v; want %v, %v", x, got.d[0], got.xv, want.d[0], want.xv)
		}
	})
}

// TestPackedDecodeSameBits: a decode (one row of x) of a packed Q8_0,
// Q4_0, Q5_0, Q5_1, Q4_1 or IQ4_NL matrix, quads two at a time in two
// streams and an odd one alone, gives the Go twin's bits at random
// shapes: any number of rows (quads, and rows after the last quad) and of
// blocks (groups of eight and blocks left), alone and split over a pool.
// (Where nothing packs, the same in ggml's layout.)
func TestPackedDecodeSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	pool := NewPool(2)
	defer pool.Close()
	for range 40 {
		for _, dt := range []DType{Q8_0, Q4_0, Q5_0, Q5_1, Q4_1, IQ4_NL} {
			rows, cols := 1+r.IntN(300), 32*(1+r.IntN(40))
			m, err := NewQuantMatrix(randomBlocks(r, dt, rows, cols), dt, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float32, cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			var a qActs
			a.quantize(dt, x, 1, cols)
			pm := m // without the VNNI kernels nothing packs: ggml's layout
			if PackedLayout(dt) {
				pm = packedCopy(t, m)
			}
			pms := []Matrix{pm}
			if dt == Q4_0 {
				pms = append(pms, pm.SumBlocks())
			}
			for _, pm := range pms {
				for _, p := range []*Pool{nil, pool} {
					got := make([]float32, rows)
					p.MatVec(got, pm, x)
					for i := range got {
						if want := twinDotOf(pm, m.quantRow(i), &a, 0, cols); !sameBits(got[i], want) {
							t.Fatalf("%s %dx%d, sums %v, pool %v, row %d: got %v, want %v, the Go twin's bits", dt, rows, cols, pm.blockSums, p != nil, i, got[i], want)
						}
					}
				}
			}
		}
	}
}

// packedCopy returns m's rows in the packed layout, in a copy (packed in
// place there).
func packedCopy(t *testing.T, m Matrix) Matrix {
	t.Helper()
	pk := slices.Clone(m.q)
	if err := PackQuantRows(pk, pk, m.DType, m.Cols); err != nil {
		t.Fatal(err)
	}
	pm, err := NewPackedQuantMatrix(pk, m.DType, m.Rows, m.Cols)
	if err != nil {
		t.Fatal(err)
	}
	return pm
}
