package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantMoreHandBuilt dequantizes blocks of Q4_1, Q5_0, Q5_1, IQ4_NL,
// Q2_K, Q3_K and IQ4_XS built by hand, with scales and values chosen so
// that every weight is exact, against weights worked out by hand from
// ggml's block layouts (quant.go's table).
func TestQuantMoreHandBuilt(t *testing.T) {
	f16 := func(b []byte, v float32) { binary.LittleEndian.PutUint16(b, F32ToF16(v)) }
	ramp := func(qs []byte) { // nibbles j (low) and 15-j (high)
		for j := range qs {
			qs[j] = byte(j%16) | byte(15-j%16)<<4
		}
	}
	cases := []struct {
		dt    DType
		build func(b []byte)
		want  map[int]float32 // weight index → value
	}{
		{Q4_1, func(b []byte) { f16(b, 0.5); f16(b[2:], -2); ramp(b[4:20]) },
			map[int]float32{0: -2, 1: -1.5, 15: 5.5, 16: 5.5, 31: -2}},
		{Q5_0, func(b []byte) {
			f16(b, 0.25)
			binary.LittleEndian.PutUint32(b[2:], 1|1<<31) // fifth bit of weights 0 and 31
			for j := range 16 {
				b[6+j] = 0xf0 | byte(j)
			}
		}, map[int]float32{0: 0, 1: -3.75, 15: -0.25, 16: -0.25, 31: 3.75}},
		{Q5_1, func(b []byte) {
			f16(b, 1)
			f16(b[2:], 0.5)
			binary.LittleEndian.PutUint32(b[4:], 1<<16) // fifth bit of weight 16
			for j := range 16 {
				b[8+j] = 0x73
			}
		}, map[int]float32{0: 3.5, 15: 3.5, 16: 23.5, 17: 7.5, 31: 7.5}},
		{IQ4_NL, func(b []byte) { f16(b, 2); ramp(b[2:18]) },
			map[int]float32{0: -254, 7: -20, 8: 2, 15: 226, 16: 226, 31: -254}},
		{Q2_K, func(b []byte) {
			for s := range 16 {
				b[s] = 0x21 // scale 1, min 2
			}
			b[5] = 0x73 // sub-block 5: scale 3, min 7
			for j := range 64 {
				b[16+j] = 0xe4 // runs 0, 1, 2, 3 hold 0, 1, 2, 3
			}
			f16(b[80:], 0.5)
			f16(b[82:], 0.25)
		}, map[int]float32{0: -0.5, 40: 0, 80: 1.25, 95: 1.25, 96: 1, 255: 1}},
		{Q3_K, func(b []byte) {
			for l := range 32 {
				b[l] = 0xff // hmask: no weight less 4 ...
			}
			b[0] = 0xfe // ... but weight 0
			for j := range 64 {
				b[32+j] = 0xe4
			}
			b[96] = 0x21 // sub-block 0: scale 33 (1 after -32); 8: 34
			for s := 1; s < 8; s++ {
				b[96+s] = 0x22 // sub-blocks 1..7 and 9..15: 34 (2)
			}
			for s := 8; s < 12; s++ {
				b[96+s] = 0xaa // the top two bits of every scale: 2
			}
			f16(b[108:], 0.5)
		}, map[int]float32{0: -2, 1: 0, 33: 1, 200: 2, 255: 3}},
		{IQ4_XS, func(b []byte) {
			f16(b, 0.5)
			binary.LittleEndian.PutUint16(b[2:], 0xaaaa) // top bits of every scale: 2
			b[4] = 0x31                                  // sub-block 0: 33 (1), 1: 35 (3); the rest 32 (0)
			for ib := range 8 {
				ramp(b[8+16*ib : 24+16*ib])
			}
		}, map[int]float32{0: -63.5, 16: 56.5, 40: 1.5, 63: -190.5, 100: 0}},
	}
	for _, c := range cases {
		t.Run(c.dt.String(), func(t *testing.T) {
			elems, bytes := c.dt.Block()
			b := make([]byte, bytes)
			c.build(b)
			m, err := NewQuantMatrix(b, c.dt, 1, elems)
			if err != nil {
				t.Fatal(err)
			}
			row := make([]float32, elems)
			m.Row(row, 0)
			for j, want := range c.want {
				if row[j] != want || m.At(0, j) != want {
					t.Errorf("weight %d: Row gives %v, At %v, want %v", j, row[j], m.At(0, j), want)
				}
			}
			for j := range row {
				if ref := refWeight(c.dt, b, j); row[j] != ref {
					t.Errorf("weight %d: %v, the reference loop %v", j, row[j], ref)
				}
			}
		})
	}
}

// TestQuantizeQ8_1 checks the Q8_1 rounding of Q4_1 and Q5_1 products
// against its definition (ggml's quantize_row_q8_1): Q8_0's values and
// binary16 scale, and s = (amax/127)·Σq rounded to binary16; and the round
// trip, d·q within half a step (and d's own binary16 rounding) of x.
func TestQuantizeQ8_1(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	for i := range 200 {
		x := make([]float32, 32)
		scale := math.Pow(10, float64(i%7-3))
		for j := range x {
			x[j] = float32(r.NormFloat64() * scale)
		}
		if i%10 == 0 {
			clear(x[:16]) // half zeros
		}
		if i == 1 {
			clear(x) // all zeros: d = s = 0
		}
		q, q0 := make([]int8, 32), make([]int8, 32)
		d, s := quantizeQ8_1(q, x)
		d0 := quantizeQ8_0(q0, x)
		if d != d0 || fmt.Sprint(q) != fmt.Sprint(q0) {
			t.Fatalf("case %d: Q8_1 values %v scale %v, want Q8_0's %v %v", i, q, d, q0, d0)
		}
		var amax float32
		var sum int32
		for j, v := range x {
			amax = max(amax, float32(math.Abs(float64(v))))
			sum += int32(q[j])
		}
		if want := F16ToF32(F32ToF16(amax / 127 * float32(sum))); s != want {
			t.Errorf("case %d: s %v, want %v", i, s, want)
		}
		// binary16 rounds to half an ulp: 2^-11 relative, 2^-25 absolute
		// among its subnormals (below 2^-14).
		half16 := func(v float64) float64 { return max(math.Abs(v)/2048, 0x1p-25) }
		if ds := float64(amax) / 127 * float64(sum); math.Abs(float64(s)-ds) > half16(ds) {
			t.Errorf("case %d: s %v far from (amax/127)·Σq %v", i, s, ds)
		}
		for j, v := range x {
			step := float64(amax) / 127
			if e := math.Abs(float64(d)*float64(q[j]) - float64(v)); e > step/2*1.0001+127*half16(step) {
				t.Errorf("case %d, value %d: d·q %v is %.3g from x %v", i, j, d*float32(q[j]), e, v)
			}
		}
	}
	var a qActs // through qActs, as a product rounds a row: the same per block
	x := make([]float32, 96)
	for j := range x {
		x[j] = float32(r.NormFloat64())
	}
	a.quantize(Q5_1, x, 1, 96)
	for b := range 3 {
		q := make([]int8, 32)
		d, s := quantizeQ8_1(q, x[32*b:32*b+32])
		if a.d[b] != d || a.s[b] != s {
			t.Errorf("block %d: qActs holds d %v s %v, want %v %v", b, a.d[b], a.s[b], d, s)
		}
	}
}

// TestIQ4NLOddBlocks: an IQ4_NL row of an odd number of blocks ends in
// ggml's one-integer tail; the product still equals the float64
// reference within float32 rounding.
func TestIQ4NLOddBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, blocks := range []int{1, 2, 3, 5, 9} {
		cols := 32 * blocks
		m, err := NewQuantMatrix(randomBlocks(r, IQ4_NL, 3, cols), IQ4_NL, 3, cols)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, cols)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		got, want, abs := make([]float32, 3), make([]float32, 3), make([]float32, 3)
		MatMul(got, m, x)
		matMulQuantRefAbs(want, abs, m, x)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-6*float64(abs[i]) {
				t.Errorf("%d blocks, row %d: got %v, want %v", blocks, i, got[i], want[i])
			}
		}
	}
}
