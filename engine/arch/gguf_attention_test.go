package arch

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"tracer/engine/tensor"
)

// sameF32s reports the first index where a and b differ in bits (NaNs
// alike), or -1.
func sameF32s(a, b []float32) int {
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) || a[i] == a[i] && math.Signbit(float64(a[i])) != math.Signbit(float64(b[i])) {
			return i
		}
	}
	return -1
}

// checkAttentionTwins fails unless the AVX-512 attention sums give their
// Go twins' bits for keys (keys, hd), a query and weights: the scores
// (heads of a multiple of 32) and the weighted values of a decode step
// (32 lanes) and of a prompt (8 lanes).
func checkAttentionTwins(t *testing.T, K, q, w []float32, hd, keys int) {
	t.Helper()
	if !useSiLUZ {
		return
	}
	if hd%32 == 0 {
		got, want := make([]float32, keys), make([]float32, keys)
		scoresGGMLZ(&got[0], &K[0], &q[0], hd, keys)
		for j := range want {
			want[j] = dotGGML(K[j*hd:(j+1)*hd], q)
		}
		if i := sameF32s(got, want); i >= 0 {
			t.Errorf("score %d: got %v, want %v, the Go twin's bits", i, got[i], want[i])
		}
	}
	for _, prompt := range []bool{false, true} {
		lanes := map[bool]int{false: 32, true: 8}[prompt]
		gotO, wantO := make([]float32, hd), make([]float32, hd)
		kqvLanesZ(&gotO[0], &K[0], &w[0], hd, keys, lanes)
		kqvGGML(wantO, K, w, hd, keys, prompt)
		if i := sameF32s(gotO, wantO); i >= 0 {
			t.Errorf("%d lanes, output %d: got %v, want %v, the Go twin's bits", lanes, i, gotO[i], wantO[i])
		}
	}
}

// randomAttention returns random keys (keys, hd), a query (hd) and
// weights in [0, 1) (keys).
func randomAttention(r *rand.Rand, hd, keys int) (K, q, w []float32) {
	K, q, w = make([]float32, keys*hd), make([]float32, hd), make([]float32, keys)
	for i := range K {
		K[i] = float32(r.NormFloat64() * 3)
	}
	for i := range q {
		q[i] = float32(r.NormFloat64() * 3)
	}
	for i := range w {
		w[i] = float32(r.Float64())
	}
	return K, q, w
}

// TestAttentionGGMLTwins: llama.cpp's score and value sums in AVX-512 and
// in Go agree bit for bit, for fewer keys than lanes, partial last runs
// of 8 and 32, and heads of 16 to 256 dims.
func TestAttentionGGMLTwins(t *testing.T) {
	if !useSiLUZ {
		t.Skip("no AVX-512 here: only the Go twins run")
	}
	r := rand.New(rand.NewPCG(51, 52))
	for _, hd := range []int{16, 32, 64, 80, 128, 256} {
		for _, keys := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 63, 64, 65, 100} {
			t.Run(fmt.Sprintf("head %d, %d keys", hd, keys), func(t *testing.T) {
				K, q, w := randomAttention(r, hd, keys)
				checkAttentionTwins(t, K, q, w, hd, keys)
			})
		}
	}
}

// TestAttentionSumOrders: the three sums differ from one another, so that
// picking the wrong one for a decode step or a prompt fails the zoo's
// bit-exact comparison: for random keys and weights, dotGGML and a plain
// left-to-right float32 sum, and kqvGGML's two lane counts, give other
// bits somewhere.
func TestAttentionSumOrders(t *testing.T) {
	r := rand.New(rand.NewPCG(57, 58))
	const hd, keys = 64, 100
	K, q, w := randomAttention(r, hd, keys)
	plain := 0
	for j := 0; j < keys; j++ {
		var s float32
		for i := range q {
			s += K[j*hd+i] * q[i]
		}
		if s != dotGGML(K[j*hd:(j+1)*hd], q) {
			plain++
		}
	}
	a, b := make([]float32, hd), make([]float32, hd)
	kqvGGML(a, K, w, hd, keys, false)
	kqvGGML(b, K, w, hd, keys, true)
	if plain == 0 || sameF32s(a, b) < 0 {
		t.Errorf("the orders agree (%d scores differ from a plain sum; decode and prompt sums alike: %v): the test does not tell them apart", plain, sameF32s(a, b) < 0)
	}
}

// FuzzAttentionGGMLTwins: any bits as keys, query and weights (NaN and
// infinities too). Property: no panic, and the AVX-512 sums give the Go
// twins' bits.
func FuzzAttentionGGMLTwins(f *testing.F) {
	f.Add(uint8(1), uint8(3), uint64(1), []byte{0, 0, 0x80, 0x7f})
	f.Add(uint8(3), uint8(33), uint64(2), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, heads16, keysRaw uint8, seed uint64, raw []byte) {
		hd, keys := 16*(1+int(heads16)%8), 1+int(keysRaw)%80
		r := rand.New(rand.NewPCG(seed, 53))
		all := make([]float32, keys*hd+hd+keys)
		for i := range all {
			all[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()*3))
		}
		for i := 0; i+4 <= len(raw); i += 4 {
			all[(i/4*7919)%len(all)] = math.Float32frombits(uint32(raw[i]) | uint32(raw[i+1])<<8 | uint32(raw[i+2])<<16 | uint32(raw[i+3])<<24)
		}
		checkAttentionTwins(t, all[:keys*hd], all[keys*hd:keys*hd+hd], all[keys*hd+hd:], hd, keys)
	})
}

// TestRopeGGML: ggml's rotary cache multiplies theta pair after pair in
// float32 (theta_i = pos·scale^i rounded at every step), which gives other
// angles than pos·invFreq[i] (tensor.RopeCosSin) in some pairs, and takes
// their sines and cosines from the C library (sincosfGlibc).
func TestRopeGGML(t *testing.T) {
	const hd, pos = 64, 37
	scale := float32(math.Pow(10000, -2.0/hd))
	cos, sin := make([]float32, hd/2), make([]float32, hd/2)
	ropeCosSinGGML(cos, sin, scale, pos)
	theta := float32(pos)
	for i := range cos {
		if s, c := sincosfGlibc(theta); cos[i] != c || sin[i] != s {
			t.Fatalf("pair %d: got %v, %v, want sincosfGlibc's %v, %v", i, cos[i], sin[i], c, s)
		}
		theta *= scale
	}
	inv := make([]float32, hd/2)
	tensor.RopeInvFreq(inv, hd, 10000)
	own, ownSin := make([]float32, hd/2), make([]float32, hd/2)
	tensor.RopeCosSin(own, ownSin, inv, pos)
	if sameF32s(own, cos) < 0 && sameF32s(ownSin, sin) < 0 {
		t.Error("tensor.RopeCosSin gives the same bits: the test does not tell the two orders apart")
	}
}

// TestSincosfGlibc: the C library's sinf and cosf, as glibc 2.36 on x86-64
// with FMA returned them (read from a C program, sincosf, sinf and cosf
// alike), where they are not the float32 nearest the true value: every
// path (no reduction below 0.75, one step below 120, the 4/π product
// beyond, negative arguments). Over 2,000,000 arguments of every range
// the C library and sincosfGlibc gave the same bits (a check made once,
// outside the tests); here, besides, both results stay within an ulp of
// the true values, and the specials behave as sinf and cosf.
func TestSincosfGlibc(t *testing.T) {
	cases := [][3]uint32{ // argument, sinf, cosf
		{0x4288f679, 0xbf179308, 0x3f4e4dc0}, // 68.48139
		{0x4207e994, 0x3f0c2b40, 0xbf563766}, // 33.978104
		{0xbfe39369, 0xbf7a870c, 0xbe5298f9}, // -1.7779361
		{0xbfeb001b, 0xbf770dd3, 0xbe862b3d}, // -1.8359407
		{0x78c2f28f, 0x3f7b18e5, 0xbe477243}, // 3.163204e+34
		{0x742101df, 0xbe4a346c, 0xbf7af596}, // 5.1025253e+31
		{0xc9253384, 0xbe7d67bc, 0xbf78099b}, // -676664.25
		{0xbe63b3d1, 0xbe61d49e, 0x3f79b267}, // -0.22236563
		{0xda1bce40, 0xbea4b8d7, 0xbf7263b5}, // -1.0963849e+16
		{0x3d5e760e, 0x3d5e5a10, 0x3f7f9f5e}, // 0.054311804
		{0x3f1edaf1, 0x3f14dae4, 0x3f504637}, // 0.6205283
	}
	for _, c := range cases {
		y := math.Float32frombits(c[0])
		s, co := sincosfGlibc(y)
		if math.Float32bits(s) != c[1] || math.Float32bits(co) != c[2] {
			t.Errorf("sincosfGlibc(%v): got %08x %08x, want glibc's %08x %08x", y, math.Float32bits(s), math.Float32bits(co), c[1], c[2])
		}
		if float32(math.Sin(float64(y))) == s && float32(math.Cos(float64(y))) == co {
			t.Errorf("sincosfGlibc(%v): the rounded float64 results are the same: the case does not tell them apart", y)
		}
	}
	r := rand.New(rand.NewPCG(71, 72))
	for i := 0; i < 200000; i++ {
		y := math.Float32frombits(r.Uint32())
		if i%2 == 0 {
			y = float32(r.NormFloat64() * math.Exp(r.Float64()*12))
		}
		if y != y || math.IsInf(float64(y), 0) {
			continue
		}
		s, c := sincosfGlibc(y)
		for _, p := range [][2]float64{{float64(s), math.Sin(float64(y))}, {float64(c), math.Cos(float64(y))}} {
			ulp := math.Abs(float64(math.Nextafter32(float32(p[1]), float32(math.Inf(1)))) - float64(float32(p[1])))
			if math.Abs(p[0]-p[1]) > ulp {
				t.Fatalf("sincosfGlibc(%v) = %v, %v: more than an ulp from %v, %v", y, s, c, math.Sin(float64(y)), math.Cos(float64(y)))
			}
		}
	}
	if s, c := sincosfGlibc(0x1p-20); s != 0x1p-20 || c != 1 {
		t.Errorf("tiny argument: got %v, %v, want the argument and 1", s, c)
	}
	if s, c := sincosfGlibc(float32(math.Inf(1))); s == s || c == c {
		t.Errorf("infinity: got %v, %v, want NaN", s, c)
	}
}

// TestInvPio4 checks invPio4's 192 bits against 4/π computed here
// (Machin's formula in math/big).
func TestInvPio4(t *testing.T) {
	const prec = 300
	atanInv := func(n int64) *big.Float { // arctan(1/n) = Σ (-1)^k / ((2k+1)·n^(2k+1))
		sum := new(big.Float).SetPrec(prec)
		pow := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), big.NewFloat(float64(n)).SetPrec(prec))
		n2 := big.NewFloat(float64(n * n)).SetPrec(prec)
		for k := int64(0); k < 200; k++ {
			term := new(big.Float).SetPrec(prec).Quo(pow, big.NewFloat(float64(2*k+1)).SetPrec(prec))
			if k%2 == 0 {
				sum.Add(sum, term)
			} else {
				sum.Sub(sum, term)
			}
			pow.Quo(pow, n2)
		}
		return sum
	}
	pi := new(big.Float).SetPrec(prec).Sub(new(big.Float).SetPrec(prec).Mul(big.NewFloat(16).SetPrec(prec), atanInv(5)), new(big.Float).SetPrec(prec).Mul(big.NewFloat(4).SetPrec(prec), atanInv(239)))
	frac := new(big.Float).SetPrec(prec).Quo(big.NewFloat(2).SetPrec(prec), pi) // 4/π halved: its bits from the leading one
	for i, b := range invPio4 {
		frac.Mul(frac, big.NewFloat(256))
		whole, _ := frac.Int64()
		if byte(whole) != b {
			t.Fatalf("byte %d of 4/π: got %#02x, want %#02x", i, b, whole)
		}
		frac.Sub(frac, big.NewFloat(float64(whole)))
	}
}
