package arch

import (
	"fmt"
	"math"
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

// checkTinyTwins fails unless the AVX-512 attention sums give their Go
// twins' bits for keys (keys, hd), a query and weights.
func checkTinyTwins(t *testing.T, K, q, w []float32, hd, keys int) {
	t.Helper()
	if !useSiLUZ {
		return
	}
	got, want := make([]float32, keys), make([]float32, keys)
	scoresTinyZ(&got[0], &K[0], &q[0], hd, keys)
	for j := range want {
		want[j] = dotTiny(K[j*hd:(j+1)*hd], q)
	}
	if i := sameF32s(got, want); i >= 0 {
		t.Errorf("score %d: got %v, want %v, the Go twin's bits", i, got[i], want[i])
	}
	gotO, wantO := make([]float32, hd), make([]float32, hd)
	kqvTinyZ(&gotO[0], &K[0], &w[0], hd, keys)
	kqvTinyGo(wantO, K, w, hd, keys)
	if i := sameF32s(gotO, wantO); i >= 0 {
		t.Errorf("output %d: got %v, want %v, the Go twin's bits", i, gotO[i], wantO[i])
	}
}

// TestAttentionTinyTwins: tinyBLAS's score and value sums in AVX-512 and
// in Go agree bit for bit, for fewer keys than lanes, a partial last
// group, and heads of 16 to 256 dims.
func TestAttentionTinyTwins(t *testing.T) {
	if !useSiLUZ {
		t.Skip("no AVX-512 here: only the Go twins run")
	}
	r := rand.New(rand.NewPCG(51, 52))
	for _, hd := range []int{16, 64, 256} {
		for _, keys := range []int{1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 32, 33, 40, 100} {
			t.Run(fmt.Sprintf("head %d, %d keys", hd, keys), func(t *testing.T) {
				K, q, w := make([]float32, keys*hd), make([]float32, hd), make([]float32, keys)
				for i := range K {
					K[i] = float32(r.NormFloat64() * 3)
				}
				for i := range q {
					q[i] = float32(r.NormFloat64() * 3)
				}
				for i := range w {
					w[i] = float32(r.Float64())
				}
				checkTinyTwins(t, K, q, w, hd, keys)
			})
		}
	}
}

// FuzzAttentionTinyTwins: any bits as keys, query and weights (NaN and
// infinities too). Property: no panic, and the AVX-512 sums give the Go
// twins' bits.
func FuzzAttentionTinyTwins(f *testing.F) {
	f.Add(uint8(1), uint8(3), uint64(1), []byte{0, 0, 0x80, 0x7f})
	f.Add(uint8(4), uint8(33), uint64(2), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, heads16, keysRaw uint8, seed uint64, raw []byte) {
		hd, keys := 16*(1+int(heads16)%4), 1+int(keysRaw)%48
		r := rand.New(rand.NewPCG(seed, 53))
		all := make([]float32, keys*hd+hd+keys)
		for i := range all {
			all[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()*3))
		}
		for i := 0; i+4 <= len(raw); i += 4 {
			all[(i/4*7919)%len(all)] = math.Float32frombits(uint32(raw[i]) | uint32(raw[i+1])<<8 | uint32(raw[i+2])<<16 | uint32(raw[i+3])<<24)
		}
		checkTinyTwins(t, all[:keys*hd], all[keys*hd:keys*hd+hd], all[keys*hd+hd:], hd, keys)
	})
}

// TestRopeGGML: ggml's rotary cache multiplies theta pair after pair in
// float32 (theta_i = pos·scale^i rounded at every step), which gives other
// angles than pos·invFreq[i] (tensor.RopeCosSin) in some pairs.
func TestRopeGGML(t *testing.T) {
	const hd, pos = 64, 37
	scale := float32(math.Pow(10000, -2.0/hd))
	cos, sin := make([]float32, hd/2), make([]float32, hd/2)
	ropeCosSinGGML(cos, sin, scale, pos)
	theta := float32(pos)
	for i := range cos {
		if want := float32(math.Cos(float64(theta))); cos[i] != want {
			t.Fatalf("cos %d: got %v, want %v", i, cos[i], want)
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
