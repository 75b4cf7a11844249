package tensor

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/gguf"
	"tracer/engine/refdata"
)

// quantZoo pairs the F32 GGUF files of the two random Llamas with the
// files llama-quantize made of them (../shared/models/quant-zoo/SOURCE.md:
// k256's Q4_K_M, Q4_K_S and Q6_K live beside its F32 file).
var quantZoo = []struct {
	f32    string
	quants []string
}{
	{"models/k256-random-llama/gguf/model-f32.gguf", []string{
		"models/k256-random-llama/gguf/model-q4_k_m.gguf",
		"models/k256-random-llama/gguf/model-q4_k_s.gguf",
		"models/k256-random-llama/gguf/model-q6_k.gguf",
		"models/quant-zoo/k256/model-q2_k.gguf",
		"models/quant-zoo/k256/model-q3_k_s.gguf",
		"models/quant-zoo/k256/model-q3_k_m.gguf",
		"models/quant-zoo/k256/model-q3_k_l.gguf",
		"models/quant-zoo/k256/model-q4_0.gguf",
		"models/quant-zoo/k256/model-q4_1.gguf",
		"models/quant-zoo/k256/model-q5_0.gguf",
		"models/quant-zoo/k256/model-q5_1.gguf",
		"models/quant-zoo/k256/model-q5_k_s.gguf",
		"models/quant-zoo/k256/model-q5_k_m.gguf",
		"models/quant-zoo/k256/model-q8_0.gguf",
		"models/quant-zoo/k256/model-iq4_nl.gguf",
		"models/quant-zoo/k256/model-iq4_xs.gguf",
	}},
	{"models/quant-zoo/kmix/model-f32.gguf", []string{
		"models/quant-zoo/kmix/model-q2_k.gguf",
		"models/quant-zoo/kmix/model-q3_k_s.gguf",
		"models/quant-zoo/kmix/model-q3_k_m.gguf",
		"models/quant-zoo/kmix/model-q3_k_l.gguf",
		"models/quant-zoo/kmix/model-q4_k_s.gguf",
		"models/quant-zoo/kmix/model-q4_k_m.gguf",
		"models/quant-zoo/kmix/model-q5_k_s.gguf",
		"models/quant-zoo/kmix/model-q5_k_m.gguf",
		"models/quant-zoo/kmix/model-q6_k.gguf",
		"models/quant-zoo/kmix/model-iq4_xs.gguf",
	}},
}

// quantizeTypes are the types QuantizeRow makes, by their ggml type.
var quantizeTypes = map[gguf.Type]DType{
	gguf.Q8_0: Q8_0, gguf.Q4_0: Q4_0, gguf.Q4_1: Q4_1, gguf.Q5_0: Q5_0, gguf.Q5_1: Q5_1,
	gguf.Q4_K: Q4_K, gguf.Q5_K: Q5_K, gguf.Q6_K: Q6_K,
}

// needRef returns where the reference file rel (a path under shared/)
// is, or fails the test, on any machine: the comparisons with llama.cpp
// must run.
func needRef(t *testing.T, rel string) string {
	t.Helper()
	p, err := refdata.Path(rel)
	if err != nil {
		t.Fatalf("%v: the quantizer's comparison with llama.cpp needs it", err)
	}
	return p
}

// openRef opens the reference GGUF file rel (needRef).
func openRef(t *testing.T, rel string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(needRef(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// f32Tensor returns the F32 tensor called name of f as a (rows, cols)
// matrix, cols its ggml ne[0].
func f32Tensor(t *testing.T, f *gguf.File, name string) Matrix {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok || ti.Type != gguf.F32 {
		t.Fatalf("%s: no F32 tensor %q", f.Name, name)
	}
	cols := int(ti.Dims[0])
	m, err := NewMatrix(ti.Data, F32, int(ti.Elements())/cols, cols)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// quantizeRows quantizes every row of m with QuantizeRow.
func quantizeRows(t *testing.T, m Matrix, dt DType) []byte {
	t.Helper()
	elems, bs := dt.Block()
	rb := m.Cols / elems * bs
	out := make([]byte, m.Rows*rb)
	row := make([]float32, m.Cols)
	for i := range m.Rows {
		m.Row(row, i)
		if err := QuantizeRow(out[i*rb:(i+1)*rb], row, dt); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// firstDiff describes where got and want (rows of rb bytes of dt blocks)
// first differ.
func firstDiff(got, want []byte, dt DType, rb int) string {
	_, bs := dt.Block()
	for i := range got {
		if got[i] != want[i] {
			row, b := i/rb, i%rb/bs
			at := row*rb + b*bs
			return fmt.Sprintf("row %d block %d (byte %d of it):\n got  %x\n want %x", row, b, i-at, got[at:at+bs], want[at:at+bs])
		}
	}
	return "no difference"
}

// TestQuantizeRowMatchesLlamaQuantize quantizes the F32 weights of the two
// random Llamas and compares every tensor of llama-quantize's files of
// them whose type QuantizeRow makes, byte for byte. Matrix.Quantize is
// held to the same bytes, in the layout the GGUF loader gives, for the
// first tensor of each type.
func TestQuantizeRowMatchesLlamaQuantize(t *testing.T) {
	counts := map[DType]int{}
	unique := map[DType]int{}
	viaMatrix := map[DType]bool{}
	for _, set := range quantZoo {
		src := openRef(t, set.f32)
		made := map[string][]byte{} // name/type → QuantizeRow's bytes
		for _, rel := range set.quants {
			f := openRef(t, rel)
			for _, ti := range f.Tensors {
				dt, ok := quantizeTypes[ti.Type]
				if !ok {
					continue
				}
				m := f32Tensor(t, src, ti.Name)
				key := ti.Name + "/" + dt.String()
				got, ok := made[key]
				if !ok {
					got = quantizeRows(t, m, dt)
					made[key] = got
					unique[dt]++
				}
				elems, bs := dt.Block()
				rb := m.Cols / elems * bs
				if !bytes.Equal(got, ti.Data) {
					if len(got) != len(ti.Data) {
						t.Fatalf("%s %s (%s): %d bytes, llama-quantize wrote %d", rel, ti.Name, dt, len(got), len(ti.Data))
					}
					t.Errorf("%s %s (%s, rows of %d): differs from llama-quantize at %s", rel, ti.Name, dt, m.Cols, firstDiff(got, ti.Data, dt, rb))
					continue
				}
				counts[dt]++
				if !viaMatrix[dt] {
					viaMatrix[dt] = true
					checkMatrixQuantize(t, m, dt, ti.Data)
				}
			}
		}
	}
	for _, dt := range []DType{Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K} {
		t.Logf("%s: %d tensors identical to llama-quantize's (%d distinct)", dt, counts[dt], unique[dt])
		if counts[dt] == 0 {
			t.Errorf("%s: no tensor compared", dt)
		}
	}
}

// checkMatrixQuantize holds m.Quantize(dt) to want, llama-quantize's bytes
// of m, in the layout NewQuantMatrix or NewPackedQuantMatrix gives them.
func checkMatrixQuantize(t *testing.T, m Matrix, dt DType, want []byte) {
	t.Helper()
	q, err := m.Quantize(dt)
	if err != nil {
		t.Fatalf("Quantize(%s): %v", dt, err)
	}
	ref, err := NewQuantMatrix(want, dt, m.Rows, m.Cols)
	if PackedLayout(dt) {
		packed := make([]byte, len(want))
		if err := PackQuantRows(packed, want, dt, m.Cols); err != nil {
			t.Fatal(err)
		}
		ref, err = NewPackedQuantMatrix(packed, dt, m.Rows, m.Cols)
	}
	if err != nil {
		t.Fatal(err)
	}
	if q.Rows != ref.Rows || q.Cols != ref.Cols || q.DType != dt || q.packed != ref.packed || !bytes.Equal(q.q, ref.q) {
		t.Errorf("Quantize(%s) of (%d, %d): not the loader's matrix of llama-quantize's bytes (packed %v, want %v)", dt, m.Rows, m.Cols, q.packed, ref.packed)
	}
	row := make([]float32, m.Cols)
	wantRow := make([]float32, m.Cols)
	for _, i := range []int{0, m.Rows - 1} {
		q.Row(row, i)
		ref.Row(wantRow, i)
		for j := range row {
			if math.Float32bits(row[j]) != math.Float32bits(wantRow[j]) {
				t.Fatalf("Quantize(%s) row %d weight %d: %g, want %g", dt, i, j, row[j], wantRow[j])
			}
		}
	}
}

// TestMatrixQuantizeHalf quantizes F16 and BF16 matrices: their rows
// widened to float32, as llama-quantize quantizes an F16 or BF16 file.
func TestMatrixQuantizeHalf(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const rows, cols = 5, 512
	for _, half := range []DType{F16, BF16} {
		raw := make([]byte, 2*rows*cols)
		wide := make([]float32, rows*cols)
		for i := range wide {
			v := float32(r.NormFloat64())
			h := F32ToF16(v)
			wide[i] = F16ToF32(h)
			if half == BF16 {
				h = F32ToBF16(v)
				wide[i] = BF16ToF32(h)
			}
			binary.LittleEndian.PutUint16(raw[2*i:], h)
		}
		m, err := NewMatrix(raw, half, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range []DType{Q8_0, Q4_1, Q5_0, Q4_K, Q6_K} {
			q, err := m.Quantize(dt)
			if err != nil {
				t.Fatal(err)
			}
			want := quantizeRows(t, F32Matrix(wide, rows, cols), dt)
			got := make([]byte, len(want))
			if q.packed {
				// Unpack the quads through ggmlBlock, block by block.
				elems, bs := dt.Block()
				var tmp [256]byte
				for i := range rows {
					for b := range cols / elems {
						copy(got[(i*cols/elems+b)*bs:], q.ggmlBlock(i, b, tmp[:]))
					}
				}
			} else {
				copy(got, q.q)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s matrix to %s: not QuantizeRow's bytes of its widened rows", half, dt)
			}
		}
	}
}

// TestQuantizeErrors: whole blocks, room for them and a type QuantizeRow
// makes, or an error that says so; rows that need a K-quant's fallback
// name it.
func TestQuantizeErrors(t *testing.T) {
	x := make([]float32, 256)
	for _, c := range []struct {
		dst  int
		n    int
		dt   DType
		want string
	}{
		{34, 33, Q8_0, "not whole 32-value q8_0 blocks"},
		{144, 288, Q4_K, "writes such rows as q5_0 (KFallback)"},
		{144, 260, Q4_K, "keeps such rows as F16"},
		{34, 40, Q8_0, "keeps such rows as F16"},
		{33, 32, Q8_0, "want at least 34"},
		{1000, 256, Q2_K, "cannot quantize to q2_k"},
		{1000, 256, IQ4_NL, "cannot quantize to iq4_nl"},
		{1000, 256, F32, "cannot quantize to f32"},
		{1000, 256, DType(99), "q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k and q6_k"},
	} {
		err := QuantizeRow(make([]byte, c.dst), make([]float32, c.n), c.dt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("QuantizeRow(%d bytes, %d values, %s): %v, want an error containing %q", c.dst, c.n, c.dt, err, c.want)
		}
	}
	if err := QuantizeRow(nil, nil, Q4_K); err != nil {
		t.Errorf("QuantizeRow of no values: %v", err)
	}
	long := bytes.Repeat([]byte{0xee}, 40)
	if err := QuantizeRow(long, x[:32], Q8_0); err != nil || !bytes.Equal(long[34:], bytes.Repeat([]byte{0xee}, 6)) {
		t.Errorf("QuantizeRow into a longer dst: %v, or it wrote past the blocks: %x", err, long)
	}

	for dt, fb := range map[DType]DType{Q4_K: Q5_0, Q5_K: Q5_1, Q6_K: Q8_0, Q2_K: IQ4_NL, Q3_K: IQ4_NL, IQ4_XS: IQ4_NL, Q8_0: Q8_0, Q4_0: Q4_0, Q5_1: Q5_1} {
		if got := KFallback(dt); got != fb {
			t.Errorf("KFallback(%s) = %s, want %s", dt, got, fb)
		}
	}
	m320 := F32Matrix(make([]float32, 2*320), 2, 320)
	for dt, fb := range map[DType]string{Q4_K: "as q5_0", Q5_K: "as q5_1", Q6_K: "as q8_0"} {
		if _, err := m320.Quantize(dt); err == nil || !strings.Contains(err.Error(), fb) || !strings.Contains(err.Error(), "KFallback") {
			t.Errorf("Quantize(%s) of rows of 320: %v, want an error naming %q", dt, err, fb)
		}
	}
	if q, err := m320.Quantize(Q5_0); err != nil || q.DType != Q5_0 || q.Cols != 320 {
		t.Errorf("Quantize(q5_0) of rows of 320: %v", err)
	}
	m40 := F32Matrix(make([]float32, 40), 1, 40)
	if _, err := m40.Quantize(Q6_K); err == nil || !strings.Contains(err.Error(), "F16") {
		t.Errorf("Quantize(q6_k) of rows of 40: %v, want an error naming F16", err)
	}
	q, err := F32Matrix(x, 1, 256).Quantize(Q4_K)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Quantize(Q8_0); err == nil || !strings.Contains(err.Error(), "F32, F16 or BF16") {
		t.Errorf("Quantize of a quantized matrix: %v, want an error", err)
	}
	if _, err := F32Matrix(x, 1, 256).Quantize(IQ4_XS); err == nil || !strings.Contains(err.Error(), "cannot quantize to iq4_xs") {
		t.Errorf("Quantize(iq4_xs): %v, want an error", err)
	}
}

// quantizeBound is the largest error of a dequantized weight that
// QuantizeRow's blocks of dtype allow, as a fraction of the largest
// magnitude in the weight's block (of 32 or 256): half a step of the
// type's scale (levels over the largest magnitude or over the range, at
// most twice it), a whole step where the top level clips (Q4_0 and Q5_0
// fit the scale to one sign; the K-quants try scales a little finer than
// the range), the binary16 rounding of the scales and mins, and for the
// K-quants the 6-bit (Q4_K, Q5_K) or 8-bit (Q6_K) rounding of each
// sub-block's scale and min against the largest. Seen on random and
// quantizeEdgeRow rows: 0.0044, 0.125, 0.067, 0.063, 0.033, 0.11, 0.063,
// 0.021.
var quantizeBound = map[DType]float32{
	Q8_0: 0.6 / 127, // d/2 + 127·d·2^-11
	Q4_0: 1.05 / 8,  // a value as large as the extreme, of the other sign, clips to 7: a step
	Q5_0: 1.05 / 16,
	Q4_1: 1.2 / 15, // step (max-min)/15 ≤ 2·amax/15, half of it, plus binary16 scale and min
	Q5_1: 1.2 / 31,
	Q4_K: 0.2,  // a step of range/16 where the top clips, + 15·(max scale)/126 + (max min)/126
	Q5_K: 0.12, // range/32 + 31·(max scale)/126 + (max min)/126 ≈ 0.087
	Q6_K: 0.05, // a step of amax/32 where +amax clips to 31, + 32·(max scale)/256
}

// FuzzQuantizeRow quantizes rows of arbitrary values: no panic; where a
// block's largest magnitude lies in [2^-2, 2^10] (its scales then normal
// binary16 numbers), every dequantized weight within quantizeBound of its
// value, relative to that magnitude; an all-zero block dequantizes to
// zeros. which picks the type (low 3 bits) and how raw becomes values:
// float32 bits (NaN and infinities made zero: any magnitude, tiny and
// huge), or with bit 3 set int16s/1024 (magnitudes up to 32, where the
// bounds are checked).
func FuzzQuantizeRow(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := range 8 {
		for _, scale := range []float64{1, 1e-3, 300, 1e-30, 1e30} {
			b := make([]byte, 4*512)
			for i := 0; i < 512; i++ {
				v := float32(r.NormFloat64() * scale)
				if i%37 == k {
					v = 0
				}
				if i >= 256 && i < 288 { // a block of zeros in the second half
					v = 0
				}
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
			}
			f.Add(b, uint8(k))
		}
		b := make([]byte, 2*512)
		for i := range 512 {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(r.NormFloat64()*3000)))
		}
		f.Add(b, uint8(8+k))
	}
	f.Add([]byte{}, uint8(5))
	f.Add(bytes.Repeat([]byte{0, 0, 0x80, 0x3f}, 256), uint8(7))       // all 1
	f.Add(bytes.Repeat([]byte{0xff, 0xff, 0x7f, 0x7f}, 256), uint8(2)) // all MaxFloat32
	f.Add(bytes.Repeat([]byte{1, 0, 0, 0}, 256), uint8(6))             // all the least subnormal
	types := []DType{Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K}
	f.Fuzz(func(t *testing.T, raw []byte, which uint8) {
		dt := types[which%8]
		var vals []float32
		if which&8 == 0 {
			for i := 0; i+4 <= len(raw); i += 4 {
				v := math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					v = 0
				}
				vals = append(vals, v)
			}
		} else {
			for i := 0; i+2 <= len(raw); i += 2 {
				vals = append(vals, float32(int16(binary.LittleEndian.Uint16(raw[i:])))/1024)
			}
		}
		elems, bs := dt.Block()
		n := (len(vals) + elems - 1) / elems * elems
		x := make([]float32, n)
		copy(x, vals)
		y := make([]byte, n/elems*bs)
		if err := QuantizeRow(y, x, dt); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		m, err := NewQuantMatrix(y, dt, 1, n)
		if err != nil {
			t.Fatal(err)
		}
		back := make([]float32, n)
		m.Row(back, 0)
		for b := 0; b < n; b += elems {
			var amax float32
			for _, v := range x[b : b+elems] {
				amax = max(amax, abs32(v))
			}
			if amax == 0 {
				for j, v := range back[b : b+elems] {
					if v != 0 {
						t.Fatalf("%s: weight %d of an all-zero block dequantizes to %g", dt, b+j, v)
					}
				}
				continue
			}
			if amax < 0.25 || amax > 1024 {
				continue
			}
			bound := quantizeBound[dt] * amax
			for j := b; j < b+elems; j++ {
				if e := abs32(back[j] - x[j]); !(e <= bound) {
					t.Fatalf("%s: weight %d is %g, dequantized %g: error %g > %g (block max |x| %g)", dt, j, x[j], back[j], e, bound, amax)
				}
			}
		}
	})
}

// quantizeEdgeCase is one line of testdata/ggml/quantize-edge.json: the
// SHA-256 of the blocks llama.cpp's ggml_quantize_chunk (no importance
// matrix, as llama-quantize calls it) writes for the row quantizeEdgeRow
// makes of Kind.
type quantizeEdgeCase struct {
	Type   string `json:"type"` // DType.String of the type: "q4_k"
	Kind   int    `json:"kind"`
	SHA256 string `json:"sha256"`
}

// quantizeEdgeKinds is how many rows quantizeEdgeRow makes.
const quantizeEdgeKinds = 32

// quantizeEdgeRow returns a row of 512 values of the given kind, the
// corners of the quantizers that the random Llamas' weights do not reach:
// zeros (whole rows, sub-blocks of 16 and 32, single values), constants,
// binary16 and float32 subnormals, groups below ggml's GROUP_MAX_EPS,
// exact levels and ties, one-signed rows, wide ranges of magnitude,
// values at binary16's overflow and (kinds 26 and up) magnitudes whose
// scales overflow binary16 or float32 (llama-quantize refuses to write
// those blocks, but its quantizers make them).
func quantizeEdgeRow(kind int) []float32 {
	r := rand.New(rand.NewPCG(uint64(kind), 77))
	x := make([]float32, 512)
	norm := func(s float64) float32 { return float32(r.NormFloat64() * s) }
	for i := range x {
		var v float32
		switch kind {
		case 0: // zeros
		case 1: // one value among zeros
			if i == 171 {
				v = -0.37
			}
		case 2:
			v = 0.75
		case 3:
			v = -1.25
		case 4: // float32 subnormals
			v = math.Float32frombits(uint32(1 + r.IntN(1000)))
			if i%2 == 1 {
				v = -v
			}
		case 5:
			v = norm(1e-20)
		case 6: // around GROUP_MAX_EPS
			v = norm(1e-15)
		case 7: // binary16 subnormal scales
			v = norm(1e-6)
		case 8: // Q4_0's levels and ties
			v = float32(i%17) - 8
		case 9:
			v = float32(i%33)/2 - 8
		case 10: // Q8_0's ties
			v = float32(r.IntN(255)-127) / 2
		case 11: // positive: the min is 0
			v = float32(math.Abs(r.NormFloat64())) + 3
		case 12:
			v = -float32(math.Abs(r.NormFloat64())) - 3
		case 13: // magnitudes 1e-6 to 1e3 side by side
			v = norm(math.Pow(10, float64(r.IntN(10)-6)))
		case 14:
			v = norm(6000)
		case 15: // binary16's largest, clipped
			v = float32(max(-65000, min(65000, r.NormFloat64()*1e5)))
		case 16: // every other value zero
			if i%2 == 1 {
				v = norm(1)
			}
		case 17: // exact eighths
			v = float32(r.IntN(31)-15) * 0.125
		case 18: // zero sub-blocks of 16
			if i%32 >= 16 {
				v = norm(1)
			}
		case 19: // sub-blocks below GROUP_MAX_EPS beside small ones
			v = 1e-17
			if i%16 >= 8 {
				v = norm(1e-3)
			}
		case 20: // one-sided, skewed
			v = float32(r.ExpFloat64())
		case 21:
			v = 65000 * float32(r.Float64()*2-1)
		case 22: // zero sub-blocks of 32
			if i/32%2 == 1 {
				v = norm(2)
			}
		case 23: // any bits, exponents up to 2^-112
			v = math.Float32frombits(r.Uint32() & 0x87ffffff)
		case 24: // one large value among small ones
			v = norm(0.01)
			if i%64 == 5 {
				v = 40
			}
		case 25: // the largest values whose scales binary16 holds
			v = 65504 * float32(r.Float64()*2-1)
		case 26:
			v = norm(1e30)
		case 27:
			v = 65504 * 127 * float32(r.Float64()*2-1)
		case 28: // any finite bits
			for {
				v = math.Float32frombits(r.Uint32())
				if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
					break
				}
			}
		case 29:
			v = math.MaxFloat32
			if i%3 == 0 {
				v = -v
			}
		case 30: // one float32 overflow among normal values
			v = norm(1)
			if i%100 == 7 {
				v = 3e38
			}
		case 31:
			v = norm(1e6)
		}
		x[i] = v
	}
	return x
}

// TestQuantizeRowEdges holds QuantizeRow to llama.cpp's own quantizers on
// quantizeEdgeRow's rows (testdata/ggml/quantize-edge.json, made by
// TestQuantizeRowEdgesWrite).
func TestQuantizeRowEdges(t *testing.T) {
	raw, err := os.ReadFile(needRef(t, "ggml/quantize-edge.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []quantizeEdgeCase
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(quantizeEdgeCases()) {
		t.Errorf("quantize-edge.json holds %d cases, want %d", len(want), len(quantizeEdgeCases()))
	}
	for _, c := range want {
		dt := edgeType(c.Type)
		x := quantizeEdgeRow(c.Kind)
		elems, bs := dt.Block()
		y := make([]byte, len(x)/elems*bs)
		if err := QuantizeRow(y, x, dt); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(y)
		if got := hex.EncodeToString(sum[:]); got != c.SHA256 {
			t.Errorf("%s, edge row %d: not llama.cpp's blocks", c.Type, c.Kind)
		}
	}
}

// quantizeEdgeCases lists every type with every edge row, hashes blank.
func quantizeEdgeCases() []quantizeEdgeCase {
	var out []quantizeEdgeCase
	for _, dt := range []DType{Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K} {
		for k := range quantizeEdgeKinds {
			out = append(out, quantizeEdgeCase{Type: dt.String(), Kind: k})
		}
	}
	return out
}

// edgeType is the DType called name.
func edgeType(name string) DType {
	for _, dt := range []DType{Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K} {
		if dt.String() == name {
			return dt
		}
	}
	panic("tensor: no type " + name)
}

// ggmlTypeIDs are ggml's enum ggml_type values of the types QuantizeRow
// makes.
var ggmlTypeIDs = map[DType]int{Q4_0: 2, Q4_1: 3, Q5_0: 6, Q5_1: 7, Q8_0: 8, Q4_K: 12, Q5_K: 13, Q6_K: 14}

// TestQuantizeRowEdgesWrite remakes testdata/ggml/quantize-edge.json, with
// TRACER_GGML_QUANTIZE naming an empty folder:
//
//  1. go test ./engine/tensor -run TestQuantizeRowEdgesWrite writes each
//     edge row (kind-K.x) and a gdb script, cmds.gdb, there;
//  2. gdb -batch -x DIR/cmds.gdb --args ../shared/tools/llama-server/llama-quantize
//     calls ggml_quantize_chunk (imatrix NULL, as llama-quantize does
//     without --imatrix) on each row for each type, writing TYPE-K.y,
//     after ggml_cpu_init (which fills the binary16 table that the
//     K-quants read their rounded scales back through);
//  3. the same go test again reads those and writes quantize-edge.json
//     to the folder, to be copied to testdata/ggml/.
func TestQuantizeRowEdgesWrite(t *testing.T) {
	dir := os.Getenv("TRACER_GGML_QUANTIZE")
	if dir == "" {
		t.Skip("TRACER_GGML_QUANTIZE is not set")
	}
	cases := quantizeEdgeCases()
	out := func(c quantizeEdgeCase) string { return filepath.Join(dir, fmt.Sprintf("%s-%d.y", c.Type, c.Kind)) }
	if _, err := os.Stat(out(cases[0])); err != nil { // step 1
		gdb := []string{"set pagination off", "set confirm off", "break main", "run", "call ((void(*)(void))ggml_cpu_init)()"}
		for k := range quantizeEdgeKinds {
			x := quantizeEdgeRow(k)
			b := make([]byte, 4*len(x))
			for i, v := range x {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
			}
			p := filepath.Join(dir, fmt.Sprintf("kind-%d.x", k))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			gdb = append(gdb, fmt.Sprintf("set $x%d = (float*)malloc(%d)", k, len(b)), fmt.Sprintf("restore %s binary $x%d", p, k))
		}
		for _, c := range cases {
			dt := edgeType(c.Type)
			elems, bs := dt.Block()
			n := 512 / elems * bs
			gdb = append(gdb, fmt.Sprintf("set $y = (char*)malloc(%d)", n),
				fmt.Sprintf("call ((unsigned long(*)(int, const float*, void*, long, long, long, const float*))ggml_quantize_chunk)(%d, $x%d, $y, 0, 1, 512, 0)", ggmlTypeIDs[dt], c.Kind),
				fmt.Sprintf("dump binary memory %s $y $y+%d", out(c), n))
		}
		gdb = append(gdb, "kill", "quit")
		if err := os.WriteFile(filepath.Join(dir, "cmds.gdb"), []byte(strings.Join(gdb, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d rows and %s: run gdb on it, then this test again", quantizeEdgeKinds, filepath.Join(dir, "cmds.gdb"))
		return
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, c := range cases { // step 3
		y, err := os.ReadFile(out(c))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(y)
		c.SHA256 = hex.EncodeToString(sum[:])
		line, _ := json.Marshal(c)
		b.Write(line)
		if i < len(cases)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	if err := os.WriteFile(filepath.Join(dir, "quantize-edge.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
