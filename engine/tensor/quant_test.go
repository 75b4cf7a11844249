package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The reference loops below compute each weight on its own from the block
// layouts documented in quant.go (ggml's block_q8_0, block_q4_0,
// block_q4_K, block_q5_K, block_q6_K), index by index.

func refF16(b []byte, off int) float32 { return F16ToF32(binary.LittleEndian.Uint16(b[off:])) }

// refK4Scale returns the 6-bit scale and min of sub-block s of a Q4_K or
// Q5_K block's 12 scale bytes: sub-blocks 0-3 keep them in bits 0-5 of
// bytes s and s+4; 4-7 keep the low four bits in the low and high nibble
// of byte s+4 and the top two in bits 6-7 of bytes s-4 and s.
func refK4Scale(sc []byte, s int) (float32, float32) {
	if s < 4 {
		return float32(sc[s] & 0x3f), float32(sc[s+4] & 0x3f)
	}
	scale := int(sc[s+4]&0x0f) + int(sc[s-4]>>6)*16
	mn := int(sc[s+4]>>4) + int(sc[s]>>6)*16
	return float32(scale), float32(mn)
}

// refWeight returns weight e of one block.
func refWeight(dt DType, blk []byte, e int) float32 {
	switch dt {
	case Q8_0:
		return refF16(blk, 0) * float32(int8(blk[2+e]))
	case Q4_0:
		b := blk[2+e%16]
		q := int(b & 0x0f)
		if e >= 16 {
			q = int(b >> 4)
		}
		return refF16(blk, 0) * float32(q-8)
	case Q4_K, Q5_K:
		sub, pair, in := e/32, e/64, e%32
		qsOff := 16
		if dt == Q5_K {
			qsOff = 48
		}
		b := blk[qsOff+32*pair+in]
		q := int(b & 0x0f)
		if sub%2 == 1 {
			q = int(b >> 4)
		}
		if dt == Q5_K && blk[16+in]&(1<<sub) != 0 {
			q += 16
		}
		sc, mn := refK4Scale(blk[4:16], sub)
		return refF16(blk, 0)*sc*float32(q) - refF16(blk, 2)*mn
	case Q6_K:
		half, r := e/128, e%128
		quarter, l := r/32, r%32 // quarter 0..3: which nibble and qh bit pair
		lb := blk[64*half+l+32*(quarter%2)]
		low := int(lb & 0x0f)
		if quarter >= 2 {
			low = int(lb >> 4)
		}
		high := int(blk[128+32*half+l]>>(2*quarter)) & 3
		scale := float32(int8(blk[192+8*half+2*quarter+l/16]))
		return refF16(blk, 208) * scale * float32(low|high<<4-32)
	case Q4_1, Q5_0, Q5_1:
		q, qs := 0, 4 // the weight's value; where qs starts
		switch dt {
		case Q5_0:
			qs = 6
		case Q5_1:
			qs = 8
		}
		b := blk[qs+e%16]
		if e < 16 {
			q = int(b & 0x0f)
		} else {
			q = int(b >> 4)
		}
		if dt != Q4_1 { // qh: four bytes before qs, bit e
			if binary.LittleEndian.Uint32(blk[qs-4:])&(1<<e) != 0 {
				q += 16
			}
		}
		if dt == Q5_0 {
			return float32(q-16) * refF16(blk, 0)
		}
		return float32(float32(q)*refF16(blk, 0)) + refF16(blk, 2)
	case IQ4_NL:
		b := blk[2+e%16]
		if e >= 16 {
			b >>= 4
		}
		return refF16(blk, 0) * float32(refIQ4NL[b&0x0f])
	case Q2_K:
		half, r := e/128, e%128
		run, l := r/32, r%32
		q := int(blk[16+32*half+l]>>(2*run)) & 3
		sc := blk[8*half+2*run+l/16] // sub-block (e/16): scale low nibble, min high
		dl, ml := refF16(blk, 80)*float32(sc&0x0f), refF16(blk, 82)*float32(sc>>4)
		return float32(dl*float32(q)) - ml
	case Q3_K:
		half, r := e/128, e%128
		run, l := r/32, r%32
		q := int(blk[32+32*half+l]>>(2*run)) & 3
		if blk[l]&(1<<(4*half+run)) == 0 { // hmask
			q -= 4
		}
		sub := e / 16
		sc := blk[96:108]
		var lo, hi byte
		if sub < 8 {
			lo = sc[sub] & 0x0f
		} else {
			lo = sc[sub-8] >> 4
		}
		hi = sc[8+sub%4] >> (2 * (sub / 4)) & 3
		return refF16(blk, 108) * float32(int(lo|hi<<4)-32) * float32(q)
	case IQ4_XS:
		ib, in := e/32, e%32
		b := blk[8+16*ib+in%16]
		if in >= 16 {
			b >>= 4
		}
		sh := binary.LittleEndian.Uint16(blk[2:])
		ls := int(blk[4+ib/2]>>(4*(ib%2)))&0x0f | int(sh>>(2*ib)&3)<<4
		return refF16(blk, 0) * float32(ls-32) * float32(refIQ4NL[b&0x0f])
	}
	panic("not quantized")
}

// refIQ4NL is ggml's kvalues_iq4nl.
var refIQ4NL = [16]int{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// allQuant lists every quantized dtype.
var allQuant = []DType{Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, IQ4_XS}

// refRounding is how the products with dt round their activations: block
// 32 (Q8_0, Q8_1) or 256 (Q8_K), and whether the blocks carry Q8_1's s.
func refRounding(dt DType) (block int, q8_1 bool) {
	switch dt {
	case Q8_0, Q4_0, Q5_0, IQ4_NL:
		return 32, false
	case Q4_1, Q5_1:
		return 32, true
	}
	return 256, false
}

// randomBlocks returns rows·cols weights of dt as random bytes with sane
// scales (finite, of order 0.01).
func randomBlocks(r *rand.Rand, dt DType, rows, cols int) []byte {
	elems, bytes := dt.Block()
	b := make([]byte, rows*cols/elems*bytes)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for off := 0; off < len(b); off += bytes {
		scale := func(at int) {
			binary.LittleEndian.PutUint16(b[off+at:], F32ToF16(float32(r.Float64()*0.02+0.001)))
		}
		switch dt {
		case Q8_0, Q4_0, Q4_K, Q5_K, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS:
			scale(0)
			if dt == Q4_K || dt == Q5_K || dt == Q4_1 || dt == Q5_1 {
				scale(2)
			}
		case Q6_K:
			scale(208)
		case Q2_K:
			scale(80)
			scale(82)
		case Q3_K:
			scale(108)
		}
	}
	return b
}

func TestQuantDequantMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range allQuant {
		t.Run(dt.String(), func(t *testing.T) {
			elems, bytes := dt.Block()
			rows, cols := 3, 2*256
			m, err := NewQuantMatrix(randomBlocks(r, dt, rows, cols), dt, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, cols)
			for i := 0; i < rows; i++ {
				m.Row(got, i)
				row := m.q[i*cols/elems*bytes:]
				for j := range got {
					want := refWeight(dt, row[j/elems*bytes:], j%elems)
					if got[j] != want {
						t.Fatalf("row %d weight %d: got %v, want %v", i, j, got[j], want)
					}
					if at := m.At(i, j); at != want {
						t.Fatalf("At(%d, %d): got %v, want %v", i, j, at, want)
					}
				}
			}
			if got, want := m.Bytes(), int64(rows*cols/elems*bytes); got != want {
				t.Errorf("Bytes: got %d, want %d", got, want)
			}
		})
	}
}

// matMulQuantRef is the reference loop of matMulRound for quantized
// weights: the activations rounded as the kernel does (quantizeQ8_0,
// quantizeQ8K), widened back, and every product summed in float64.
func matMulQuantRef(dst []float32, w Matrix, x []float32) {
	matMulQuantRefAbs(dst, nil, w, x)
}

// matMulQuantRefAbs is matMulQuantRef also writing Σ |term| of each sum
// to abs (when not nil): the scale of float32 rounding error. For Q4_1 and
// Q5_1 weights, w = d·q + m, the min's part of each block is m·s with s
// the Q8_1 block's sum as llama.cpp rounds it (d_x·Σq_x in binary16), not
// m·d_x·Σq_x: that is the definition of their product.
func matMulQuantRefAbs(dst, abs []float32, w Matrix, x []float32) {
	n := len(x) / w.Cols
	var a qActs
	a.quantize(w.DType, x, n, w.Cols)
	block, q8_1 := refRounding(w.DType)
	for t := 0; t < n; t++ {
		for i := 0; i < w.Rows; i++ {
			var s, sa float64
			for j := 0; j < w.Cols; j++ {
				k := t*w.Cols + j
				wj := float64(w.At(i, j))
				if q8_1 {
					_, bb := w.DType.Block()
					blk := w.quantRow(i)[j/32*bb:]
					m := float64(refF16(blk, 2))
					wj = float64(refF16(blk, 0)) * float64(refQ(w.DType, blk, j%32))
					if j%32 == 0 {
						v := m * float64(a.s[k/32])
						s += v
						sa += math.Abs(v)
					}
				}
				v := wj * float64(a.d[k/block]) * float64(a.qs[k])
				s += v
				sa += math.Abs(v)
			}
			dst[t*w.Rows+i] = float32(s)
			if abs != nil {
				abs[t*w.Rows+i] = float32(sa)
			}
		}
	}
}

// refQ is the integer value of weight e of a Q4_1 or Q5_1 block.
func refQ(dt DType, blk []byte, e int) int {
	qs := 4
	if dt == Q5_1 {
		qs = 8
	}
	b := blk[qs+e%16]
	q := int(b & 0x0f)
	if e >= 16 {
		q = int(b >> 4)
	}
	if dt == Q5_1 && binary.LittleEndian.Uint32(blk[4:])&(1<<e) != 0 {
		q += 16
	}
	return q
}

func TestQuantMatMulMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dt := range allQuant {
		for _, n := range []int{1, 2, 5} {
			t.Run(dt.String()+"/"+string(rune('0'+n)), func(t *testing.T) {
				rows, cols := 7, 512
				m, err := NewQuantMatrix(randomBlocks(r, dt, rows, cols), dt, rows, cols)
				if err != nil {
					t.Fatal(err)
				}
				x := make([]float32, n*cols)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				got, want := make([]float32, n*rows), make([]float32, n*rows)
				pool := NewPool(2)
				defer pool.Close()
				pool.MatMul(got, m, x)
				matMulQuantRef(want, m, x)
				for i := range got {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
						t.Errorf("out %d: got %v, want %v", i, got[i], want[i])
					}
				}
				alone := make([]float32, n*rows)
				MatMul(alone, m, x)
				for i := range got {
					if alone[i] != got[i] {
						t.Fatalf("out %d: MatMul gives %v, the pool %v: want the same bits", i, alone[i], got[i])
					}
				}
			})
		}
	}
}

func TestQuantizeActivations(t *testing.T) {
	cases := []struct {
		name   string
		x      float32 // x[0]; the rest of the block is x[0]·(j+1)/32 or /256
		q8_0   int8    // x[0]'s Q8_0 value
		q8kMax int8    // the block maximum's Q8_K value
	}{
		{"positive", 1, 4, -127},   // 127/32 = 3.97 → 4; Q8_K scales by -127/max
		{"negative", -2, -4, -127}, // the largest magnitude always maps to -127
		{"zero", 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := make([]float32, 256)
			for j := range x {
				x[j] = c.x * float32(j+1) / 32
			}
			q := make([]int8, 256)
			quantizeQ8_0(q[:32], x[:32])
			if q[0] != c.q8_0 || (c.x != 0 && q[31] != int8(127*sign(c.x))) {
				t.Errorf("Q8_0: got q[0] %d, q[31] %d, want %d, ±127", q[0], q[31], c.q8_0)
			}
			var bs [16]int32
			d := quantizeQ8K(q, bs[:], x)
			if q[255] != c.q8kMax {
				t.Errorf("Q8_K: got q[255] %d, want %d", q[255], c.q8kMax)
			}
			if c.x != 0 && math.Abs(float64(d*float32(q[255])-x[255])) > 1e-6*math.Abs(float64(x[255])) {
				t.Errorf("Q8_K: got d·q %v, want %v", d*float32(q[255]), x[255])
			}
		})
	}
}

func sign(x float32) float32 {
	if x < 0 {
		return -1
	}
	return 1
}

// FuzzQuantMatMul multiplies random quantized blocks (any bytes, scales
// included: NaN and infinities too) with random activations. Property: no
// panic; where the reference is finite, MatMul equals it within float32
// rounding: 1e-5 of the sum of the terms' magnitudes (hostile scales make
// large terms that cancel); Q8_0 and Q4_0 rows packed give the same bits.
func FuzzQuantMatMul(f *testing.F) {
	f.Add(uint8(0), uint64(1), []byte{1, 2, 3})
	f.Add(uint8(3), uint64(7), []byte{0xff, 0x7c})
	f.Fuzz(func(t *testing.T, kind uint8, seed uint64, raw []byte) {
		dt := allQuant[int(kind)%len(allQuant)]
		r := rand.New(rand.NewPCG(seed, 9))
		rows, cols := 5, 288 // a quad of rows and one more; a group of 8 blocks and one more
		if elems, _ := dt.Block(); elems == 256 {
			cols = 256
		}
		b := randomBlocks(r, dt, rows, cols)
		for i, v := range raw {
			b[(i*7919)%len(b)] = v
		}
		m, err := NewQuantMatrix(b, dt, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 2*cols)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 3)
		}
		got, want, abs := make([]float32, 2*rows), make([]float32, 2*rows), make([]float32, 2*rows)
		MatMul(got, m, x)
		matMulQuantRefAbs(want, abs, m, x)
		for i := range got {
			if math.IsNaN(float64(abs[i])) || math.IsInf(float64(abs[i]), 0) {
				continue
			}
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+float64(abs[i])) {
				t.Errorf("out %d: got %v, want %v", i, got[i], want[i])
			}
		}
		if PackedLayout(dt) { // the same bits from the packed layout
			pb := make([]byte, len(b))
			if err := PackQuantRows(pb, b, dt, cols); err != nil {
				t.Fatal(err)
			}
			pm, err := NewPackedQuantMatrix(pb, dt, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			packed := make([]float32, 2*rows)
			MatMul(packed, pm, x)
			for i := range got {
				if !sameBits(packed[i], got[i]) {
					t.Errorf("packed, out %d: got %v, want %v as from ggml's layout", i, packed[i], got[i])
				}
			}
		}
	})
}

// twinDot is the Go twin's product of the quantized row w with row t of
// the activations a, rounded for w's dtype (rows of cols values).
// twinDotOf is twinDot for a row of m: dotQ4_0Blocks where m is marked
// SumBlocks.
func twinDotOf(m Matrix, w []byte, a *qActs, t, cols int) float32 {
	if m.blockSums {
		nb := cols / 32
		return dotQ4_0Blocks(w, a.d[t*nb:(t+1)*nb], a.qs[t*cols:(t+1)*cols])
	}
	return twinDot(m.DType, w, a, t, cols)
}

func twinDot(dt DType, w []byte, a *qActs, t, cols int) float32 {
	elems, _ := dt.Block()
	nb := cols / 32
	if elems == 256 {
		nb = cols / 256
	}
	xd, xq := a.d[t*nb:(t+1)*nb], a.qs[t*cols:(t+1)*cols]
	bs := a.bsums[min(len(a.bsums), t*cols/16):min(len(a.bsums), (t+1)*cols/16)]
	switch dt {
	case Q8_0:
		return dotQ8_0(w, xd, xq)
	case Q4_0:
		return dotQ4_0(w, xd, xq)
	case Q5_0:
		return dotQ5_0(w, xd, xq)
	case IQ4_NL:
		return dotIQ4NL(w, xd, xq)
	case Q4_1:
		return dotQ4_1(w, xd, a.s[t*nb:(t+1)*nb], xq)
	case Q5_1:
		return dotQ5_1(w, xd, a.s[t*nb:(t+1)*nb], xq)
	case Q4_K:
		return dotQ4K(w, xd, xq, bs)
	case Q5_K:
		return dotQ5K(w, xd, xq, bs)
	}
	return dotQ6K(w, xd, xq)
}

// TestQuantAsmMatchesGo: the AVX2 dot products (and the AVX-512 ones of
// Q4_K, Q5_K and Q6_K) give their pure-Go twins' bits.
func TestQuantAsmMatchesGo(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2 kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, dt := range []DType{Q4_K, Q5_K, Q6_K} {
		for _, blocks := range []int{1, 3, 16, 17, 40} {
			t.Run(fmt.Sprintf("%s/%d blocks", dt, blocks), func(t *testing.T) {
				w := randomBlocks(r, dt, 1, 256*blocks)
				x := make([]float32, 256*blocks)
				for i := range x {
					x[i] = float32(r.NormFloat64() * 4)
				}
				var a qActs
				a.quantize(dt, x, 1, len(x))
				var got, want float32
				switch dt {
				case Q4_K:
					dotQ4KAVX2(&got, &w[0], len(w), 1, &a.s32[0], &a.d[0], &a.qs[0], len(a.d))
					want = dotQ4K(w, a.d, a.qs, a.bsums)
					if useAVX512 {
						var z float32
						dotQ4KAVX512(&z, &w[0], len(w), 1, &a.s32[0], &a.d[0], &a.qs[0], len(a.d))
						if !sameBits(z, want) {
							t.Errorf("AVX-512: got %v, want %v (Go twin)", z, want)
						}
					}
				case Q5_K:
					dotQ5KAVX2(&got, &w[0], len(w), 1, &a.s32[0], &a.d[0], &a.qs[0], len(a.d))
					want = dotQ5K(w, a.d, a.qs, a.bsums)
					if useAVX512 {
						var z float32
						dotQ5KAVX512(&z, &w[0], len(w), 1, &a.s32[0], &a.d[0], &a.qs[0], len(a.d))
						if !sameBits(z, want) {
							t.Errorf("AVX-512: got %v, want %v (Go twin)", z, want)
						}
					}
				default:
					dotQ6KAVX2(&got, &w[0], len(w), 1, &a.d[0], &a.qs[0], len(a.d))
					want = dotQ6K(w, a.d, a.qs)
					if useAVX512 {
						var z float32
						dotQ6KAVX512(&z, &w[0], len(w), 1, &a.d[0], &a.qs[0], len(a.d))
						if !sameBits(z, want) {
							t.Errorf("AVX-512: got %v, want %v (Go twin)", z, want)
						}
					}
				}
				if got != want { // the same integers, combined in the same order
					t.Errorf("got %v, want %v (Go twin)", got, want)
				}
			})
		}
	}
	for _, dt := range []DType{Q8_0, Q4_0} {
		for _, blocks := range []int{1, 2, 18, 48} {
			t.Run(fmt.Sprintf("%s/%d blocks", dt, blocks), func(t *testing.T) {
				w := randomBlocks(r, dt, 1, 32*blocks)
				x := make([]float32, 32*blocks)
				for i := range x {
					x[i] = float32(r.NormFloat64() * 4)
				}
				var a qActs
				a.quantize(dt, x, 1, len(x))
				var got, want float32
				if dt == Q8_0 {
					got, want = dotQ8_0AVX2(&w[0], &a.d[0], &a.qs[0], blocks), dotQ8_0(w, a.d, a.qs)
				} else {
					got, want = dotQ4_0AVX2(&w[0], &a.d[0], &a.qs[0], blocks), dotQ4_0(w, a.d, a.qs)
				}
				if !sameBits(got, want) { // the Go twins keep the AVX2 kernels' lanes and order
					t.Errorf("got %v, want %v (Go twin)", got, want)
				}
			})
		}
	}
}

// TestKAVX512Rows: the AVX-512 Q4_K, Q5_K and Q6_K kernels over several rows of
// a matrix, rb bytes apart, give each row the Go twin's bits, also for
// blocks of extreme scales, mins and values, and activations at ±127.
func TestKAVX512Rows(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(7, 8))
	const rows, blocks = 5, 9
	for _, dt := range []DType{Q4_K, Q5_K, Q6_K} {
		w := randomBlocks(r, dt, rows, 256*blocks)
		rb := len(w) / rows
		_, bs := dt.Block()
		for b := range blocks { // row 0: every scale, min and value at its top (Q6_K: scales -1)
			for j := range bs - 2 {
				if j >= 4 || dt == Q6_K {
					w[b*bs+j] = 0xff
				}
			}
		}
		for k, xs := range []func(i int) float32{
			func(i int) float32 { return float32(r.NormFloat64() * 4) },
			func(i int) float32 { return float32(1 - 2*(i%2)) },  // ±1: every value at ±127
			func(i int) float32 { return float32(-1 - (i % 3)) }, // at most -1: -127 where largest
		} {
			x := make([]float32, 256*blocks)
			for i := range x {
				x[i] = xs(i)
			}
			var a qActs
			a.quantize(dt, x, 1, len(x))
			got := make([]float32, rows)
			switch dt {
			case Q4_K:
				dotQ4KAVX512(&got[0], &w[0], rb, rows, &a.s32[0], &a.d[0], &a.qs[0], blocks)
			case Q5_K:
				dotQ5KAVX512(&got[0], &w[0], rb, rows, &a.s32[0], &a.d[0], &a.qs[0], blocks)
			default:
				dotQ6KAVX512(&got[0], &w[0], rb, rows, &a.d[0], &a.qs[0], blocks)
			}
			for i := range rows {
				var want float32
				switch row := w[i*rb : (i+1)*rb]; dt {
				case Q4_K:
					want = dotQ4K(row, a.d, a.qs, a.bsums)
				case Q5_K:
					want = dotQ5K(row, a.d, a.qs, a.bsums)
				default:
					want = dotQ6K(row, a.d, a.qs)
				}
				if !sameBits(got[i], want) {
					t.Errorf("%s, activations %d, row %d: got %v, want %v (Go twin)", dt, k, i, got[i], want)
				}
			}
		}
	}
}

// k23Dots returns the products of rows rows of dt (Q2_K or Q3_K) weights,
// the rows at w + r·rb, with one row of Q8_K activations a: by each
// kernel of k23Kernels (one call for all the rows; got[k] kernel k's) and
// by the Go twin, row by row.
func k23Dots(dt DType, w []byte, rb, rows int, a *qActs) (got [][]float32, want []float32) {
	n := len(a.d)
	_, bs := dt.Block()
	want = make([]float32, rows)
	for r := range rows {
		row := w[r*rb : r*rb+n*bs]
		if dt == Q2_K {
			want[r] = dotQ2K(row, a.d, a.qs, a.bsums)
		} else {
			want[r] = dotQ3K(row, a.d, a.qs)
		}
	}
	for _, k := range k23Kernels() {
		g := make([]float32, rows)
		switch {
		case dt == Q2_K && k == "AVX2":
			dotQ2KAVX2(&g[0], &w[0], rb, rows, &a.bsums[0], &a.d[0], &a.qs[0], n)
		case dt == Q2_K:
			dotQ2KAVX512(&g[0], &w[0], rb, rows, &a.bsums[0], &a.d[0], &a.qs[0], n)
		case k == "AVX2":
			dotQ3KAVX2(&g[0], &w[0], rb, rows, &a.d[0], &a.qs[0], n)
		default:
			dotQ3KAVX512(&g[0], &w[0], rb, rows, &a.d[0], &a.qs[0], n)
		}
		got = append(got, g)
	}
	return got, want
}

// k23Kernels names the Q2_K and Q3_K kernels that run here: AVX2, and
// AVX-512 where present.
func k23Kernels() []string {
	if useAVX512 {
		return []string{"AVX2", "AVX-512"}
	}
	return []string{"AVX2"}
}

// k23AdversarialBlock writes a Q2_K or Q3_K block to blk whose scales,
// values and binary16 scales are each, at random, random or one of their
// extremes: all scales at their maximum (Q3_K: 31) or minimum (0, -32),
// all values at their maximum (3) or minimum (0, Q3_K -4), d and dmin
// ±0, the smallest subnormal, the smallest normal, ±65504, ±1, and
// rarely ±Inf or NaN (sameBits takes any NaN for any other: were NaNs
// frequent, most results would match whatever the order).
func k23AdversarialBlock(r *rand.Rand, dt DType, blk []byte) {
	for i := range blk {
		blk[i] = byte(r.Uint32())
	}
	f16s := []uint16{0x0000, 0x8000, 0x0001, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00}
	f16 := func(at int) {
		v := F32ToF16(float32(r.Float64()*0.02 + 0.001))
		switch r.IntN(32) {
		case 0:
			v = []uint16{0x7c00, 0xfc00, 0x7e00}[r.IntN(3)] // ±Inf, NaN: rare, or NaN would be most results
		case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10:
			v = f16s[r.IntN(len(f16s))]
		}
		binary.LittleEndian.PutUint16(blk[at:], v)
	}
	fill := func(b []byte) { // all ones, all zeros or left random
		switch r.IntN(3) {
		case 0:
			for i := range b {
				b[i] = 0xff
			}
		case 1:
			clear(b)
		}
	}
	if dt == Q2_K {
		fill(blk[0:16])  // scales and mins: 15 or 0
		fill(blk[16:80]) // values: 3 or 0
		f16(80)
		f16(82)
		return
	}
	fill(blk[0:32])   // hmask: high bits all set or all clear
	fill(blk[32:96])  // low bits
	fill(blk[96:108]) // scales: 31 or -32
	f16(108)
}

// k23AdversarialActs fills a with n blocks of Q8_K activations: values
// random, all 127, all -127, all -128 (which quantizeQ8K never gives, but
// the kernels take), alternating ±127 or ±128; scales random (of either
// sign, as quantizeQ8K's -max/127 is, max the block's value of largest
// magnitude), ±0, or extreme; bsums the values' sums of 16.
func k23AdversarialActs(r *rand.Rand, a *qActs, n int) {
	a.d, a.qs, a.bsums = make([]float32, n), make([]int8, 256*n), make([]int32, 16*n)
	for b := range n {
		q := a.qs[256*b : 256*b+256]
		switch r.IntN(6) {
		case 0:
			for i := range q {
				q[i] = int8(r.Uint32())
			}
		case 1:
			for i := range q {
				q[i] = 127
			}
		case 2:
			for i := range q {
				q[i] = -127
			}
		case 3:
			for i := range q {
				q[i] = -128
			}
		case 4:
			for i := range q {
				q[i] = int8(127 - 254*(i%2))
			}
		default:
			for i := range q {
				q[i] = int8(-128 + 255*(i%2))
			}
		}
		for g := range 16 {
			var s int32
			for _, v := range q[16*g : 16*g+16] {
				s += int32(v)
			}
			a.bsums[16*b+g] = s
		}
		ds := []float32{0, float32(math.Copysign(0, -1)), 1e30, -1e30, 1e-30, 3e38, 1e-45}
		a.d[b] = float32(r.NormFloat64() * 0.05)
		if r.IntN(8) == 0 {
			a.d[b] = ds[r.IntN(len(ds))]
		}
	}
}

// TestQuantAsmMatchesGoK23: the Q2_K and Q3_K AVX2 kernels (and the
// AVX-512 ones where they run) give dotQ2K's and dotQ3K's bits: random
// blocks against rounded random activations, several rows a call at a
// stride past the row's end (the bytes between random), and blocks and
// activations at their extremes.
func TestQuantAsmMatchesGoK23(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2 kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(23, 32))
	for _, dt := range []DType{Q2_K, Q3_K} {
		_, bs := dt.Block()
		for _, blocks := range []int{1, 2, 3, 8} {
			t.Run(fmt.Sprintf("%s/%d blocks", dt, blocks), func(t *testing.T) {
				const rows, pad = 5, 13
				rb := blocks*bs + pad
				w := make([]byte, rows*rb)
				for i := range w {
					w[i] = byte(r.Uint32())
				}
				for row := range rows {
					copy(w[row*rb:], randomBlocks(r, dt, 1, 256*blocks))
				}
				x := make([]float32, 256*blocks)
				for i := range x {
					x[i] = float32(r.NormFloat64() * 4)
				}
				var a qActs
				a.quantize(dt, x, 1, len(x))
				got, want := k23Dots(dt, w, rb, rows, &a)
				for k, name := range k23Kernels() {
					for row := range rows {
						if !sameBits(got[k][row], want[row]) {
							t.Errorf("%s, row %d: got %v, want %v (Go twin)", name, row, got[k][row], want[row])
						}
					}
				}
			})
		}
		t.Run(fmt.Sprintf("%s/extremes", dt), func(t *testing.T) {
			var a qActs
			for trial := range 2000 {
				blocks, rows := 1+r.IntN(4), 1+r.IntN(3)
				w := make([]byte, rows*blocks*bs)
				for b := 0; b < len(w); b += bs {
					k23AdversarialBlock(r, dt, w[b:b+bs])
				}
				k23AdversarialActs(r, &a, blocks)
				got, want := k23Dots(dt, w, blocks*bs, rows, &a)
				for k, name := range k23Kernels() {
					for row := range rows {
						if !sameBits(got[k][row], want[row]) {
							t.Fatalf("%s, trial %d, row %d of %d blocks: got %v, want %v (Go twin)", name, trial, row, blocks, got[k][row], want[row])
						}
					}
				}
			}
		})
	}
}

// TestQuantAsmIQ4XSMatchesGo holds dotIQ4XSAVX2 (and dotIQ4XSAVX512 where
// it runs) to dotIQ4XS bit for bit: random blocks of 1, 2, 3 and 8
// blocks a row in runs of 1 to 5 rows laid out with padding between them (rb longer than a row), and blocks at the edges of
// every part of the arithmetic: every scale -32 or 31, every nibble 0
// (-127) or 15 (113), activations all -128 (not a value quantizeQ8K
// gives, but the kernel takes it exactly) or 127, and f16 d at its
// largest, subnormal, zero and negative. It also checks that the kernel
// writes dst[r] for r < rows and nothing past.
func TestQuantAsmIQ4XSMatchesGo(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2 kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(7, 8))
	const pad = 40
	kernels := []struct {
		name string
		f    func(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
	}{{"AVX2", dotIQ4XSAVX2}}
	if useAVX512 {
		kernels = append(kernels, struct {
			name string
			f    func(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
		}{"AVX-512", dotIQ4XSAVX512})
	}
	// check lays out the rows of w (rows of blocks blocks) rb = row+pad
	// bytes apart, the padding random, and compares the kernel with the
	// Go twin row by row.
	check := func(t *testing.T, what string, w []byte, rows, blocks int, xd []float32, xq []int8) {
		t.Helper()
		row := 136 * blocks
		rb := row + pad
		buf := make([]byte, rows*rb+1)
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		for i := range rows {
			copy(buf[i*rb:], w[i*row:(i+1)*row])
		}
		const canary = float32(-12345.5)
		for _, k := range kernels {
			dst := make([]float32, rows+1)
			for i := range dst {
				dst[i] = canary
			}
			k.f(&dst[0], &buf[0], rb, rows, &xd[0], &xq[0], blocks)
			for i := range rows {
				if want := dotIQ4XS(w[i*row:(i+1)*row], xd, xq); !sameBits(dst[i], want) {
					t.Errorf("%s, %s: row %d of %d: got %v (%#x), want %v (%#x, Go twin)", k.name, what, i, rows, dst[i], math.Float32bits(dst[i]), want, math.Float32bits(want))
				}
			}
			if dst[rows] != canary {
				t.Errorf("%s, %s: dst[%d] (past the %d rows) written: %v", k.name, what, rows, rows, dst[rows])
			}
		}
	}
	for _, blocks := range []int{1, 2, 3, 8} {
		for _, rows := range []int{1, 2, 3, 4, 5} {
			t.Run(fmt.Sprintf("random/%d blocks/%d rows", blocks, rows), func(t *testing.T) {
				w := randomBlocks(r, IQ4_XS, rows, 256*blocks)
				x := make([]float32, 256*blocks)
				for i := range x {
					x[i] = float32(r.NormFloat64() * 4)
				}
				var a qActs
				a.quantize(IQ4_XS, x, 1, len(x))
				check(t, "random", w, rows, blocks, a.d, a.qs)
			})
		}
	}
	t.Run("no rows", func(t *testing.T) {
		xd, xq := []float32{1}, make([]int8, 256)
		check(t, "no rows", make([]byte, 136), 0, 1, xd, xq)
	})

	// The edges: each block of 3 rows of 2 blocks takes a scale pattern
	// (scales_h, scales_l), a nibble pattern and an f16 d, each row a
	// different d; the activations take a pattern too.
	type scales struct {
		name string
		h    uint16
		l    uint32
	}
	scaleCases := []scales{{"scales -32", 0, 0}, {"scales 31", 0xffff, 0xffffffff}, {"scales mixed", 0x9c36, 0xf00f5aa5}}
	nibbleCases := []struct {
		name string
		fill func(qs []byte)
	}{
		{"nibbles 0", func(qs []byte) { clear(qs) }},
		{"nibbles 15", func(qs []byte) {
			for i := range qs {
				qs[i] = 0xff
			}
		}},
		{"nibbles 0/15", func(qs []byte) {
			for i := range qs {
				qs[i] = byte(0x0f << (4 * (i % 2)))
			}
		}},
		{"nibbles random", func(qs []byte) {
			for i := range qs {
				qs[i] = byte(r.Uint32())
			}
		}},
	}
	actCases := []struct {
		name string
		q    func(i int) int8
	}{
		{"x -128", func(int) int8 { return -128 }},
		{"x 127", func(int) int8 { return 127 }},
		{"x -128/127", func(i int) int8 { return []int8{-128, 127}[i/3%2] }},
		{"x -127", func(int) int8 { return -127 }},
		{"x random", func(int) int8 { return int8(r.Uint32()) }},
	}
	// binary16: the largest, the largest negative, the smallest subnormal
	// (both signs), +0, -0, a negative normal, a typical scale.
	ds := []uint16{0x7bff, 0xfbff, 0x0001, 0x8001, 0x0000, 0x8000, 0xb555, F32ToF16(0.0123)}
	const rows, blocks = 3, 2
	for _, sc := range scaleCases {
		for _, nb := range nibbleCases {
			for _, ac := range actCases {
				for k := range ds {
					what := fmt.Sprintf("%s/%s/%s/d %#04x", sc.name, nb.name, ac.name, ds[k])
					w := make([]byte, rows*blocks*136)
					for b := range rows * blocks {
						blk := w[136*b : 136*b+136]
						binary.LittleEndian.PutUint16(blk, ds[(k+b/blocks)%len(ds)])
						binary.LittleEndian.PutUint16(blk[2:], sc.h)
						binary.LittleEndian.PutUint32(blk[4:], sc.l)
						nb.fill(blk[8:])
					}
					xq := make([]int8, 256*blocks)
					for i := range xq {
						xq[i] = ac.q(i)
					}
					// activation scales: ordinary, negative, and one tiny
					// enough that d_w·d_x falls among the subnormals.
					for _, xd := range [][]float32{{0.75, -1.5e-3}, {1e-33, 3}} {
						check(t, what, w, rows, blocks, xd, xq)
					}
				}
			}
		}
	}
}

func TestQuantMatMulTPanics(t *testing.T) {
	m, err := NewQuantMatrix(make([]byte, 34), Q8_0, 1, 32)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"MatMulT":      func() { MatMulT(make([]float32, 32), m, make([]float32, 1)) },
		"Pool.MatMulT": func() { (*Pool)(nil).MatMulT(make([]float32, 32), m, make([]float32, 1)) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "use MatMul") {
					t.Errorf("got panic %v, want one saying to use MatMul", r)
				}
			}()
			f()
		})
	}
}
