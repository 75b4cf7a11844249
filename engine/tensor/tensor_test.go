package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// randMatrix returns a (rows, cols) matrix of dtype with values in [-1, 1),
// rounded to the dtype, and its float32 values.
func randMatrix(r *rand.Rand, dtype DType, rows, cols int) (Matrix, []float32) {
	vals := make([]float32, rows*cols)
	data := make([]byte, rows*cols*dtype.Size())
	for i := range vals {
		v := float32(r.Float64()*2 - 1)
		switch dtype {
		case F32:
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		case BF16:
			b := F32ToBF16(v)
			v = BF16ToF32(b)
			binary.LittleEndian.PutUint16(data[2*i:], b)
		case F16:
			h := F32ToF16(v)
			v = F16ToF32(h)
			binary.LittleEndian.PutUint16(data[2*i:], h)
		}
		vals[i] = v
	}
	m, err := NewMatrix(data, dtype, rows, cols)
	if err != nil {
		panic(err)
	}
	return m, vals
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// closeRel reports whether got is within rel of want, relative to scale.
func closeRel(got, want, scale, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(scale, 1)
}

func TestBF16(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie: to even
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie: to even
		{math.Float32frombits(0x3f808001), 0x3f81},
		{float32(math.Inf(1)), 0x7f80},
	}
	for _, tt := range tests {
		if got := F32ToBF16(tt.f); got != tt.want {
			t.Errorf("F32ToBF16(%v) = %#04x, want %#04x", tt.f, got, tt.want)
		}
	}
	if got := BF16ToF32(0x3f80); got != 1 {
		t.Errorf("BF16ToF32(0x3f80) = %v, want 1", got)
	}
	if got := F32ToBF16(float32(math.NaN())); !math.IsNaN(float64(BF16ToF32(got))) {
		t.Errorf("NaN became %#04x", got)
	}
}

func TestF16(t *testing.T) {
	tests := []struct {
		h    uint16
		want float32
	}{
		{0x3c00, 1},
		{0xc000, -2},
		{0x7bff, 65504},
		{0x0001, 1.0 / (1 << 24)},
		{0x0400, 1.0 / (1 << 14)},
		{0x8000, float32(math.Copysign(0, -1))},
		{0x7c00, float32(math.Inf(1))},
	}
	for _, tt := range tests {
		if got := F16ToF32(tt.h); got != tt.want {
			t.Errorf("F16ToF32(%#04x) = %v, want %v", tt.h, got, tt.want)
		}
	}
	// Every half survives the round trip.
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if got := F32ToF16(f); got != uint16(h) {
			t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x", h, got)
		}
	}
	if got := F32ToF16(1e6); got != 0x7c00 {
		t.Errorf("F32ToF16(1e6) = %#04x, want +Inf", got)
	}
	// Halfway cases round to even, subnormals included.
	for _, tt := range []struct {
		f    float32
		want uint16
	}{
		{1.5 / (1 << 24), 0x0002},
		{2.5 / (1 << 24), 0x0002},
		{1.0 / (1 << 25), 0x0000},
		{1.25 / (1 << 25), 0x0001},
		{65520, 0x7c00}, // halfway between 65504 and 65536: rounds up to +Inf
	} {
		if got := F32ToF16(tt.f); got != tt.want {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tt.f, got, tt.want)
		}
	}
	// 1 + 2^-11 is halfway between 1 and the next half: ties to even (1).
	if got := F32ToF16(1 + 1.0/(1<<11)); got != 0x3c00 {
		t.Errorf("F32ToF16(1+2^-11) = %#04x, want 0x3c00", got)
	}
}

func TestNewMatrix(t *testing.T) {
	buf := make([]byte, 4*6+1)
	for i := range 6 {
		binary.LittleEndian.PutUint32(buf[1+4*i:], math.Float32bits(float32(i)))
	}
	m, err := NewMatrix(buf[1:], F32, 2, 3) // misaligned on purpose
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float32, 3)
	m.Row(row, 1)
	if row[0] != 3 || row[2] != 5 || m.At(0, 1) != 1 {
		t.Errorf("row 1 = %v, At(0,1) = %v", row, m.At(0, 1))
	}
	if m.Bytes() != 24 {
		t.Errorf("Bytes() = %d, want 24", m.Bytes())
	}
	if _, err := NewMatrix(buf[:10], F32, 2, 3); err == nil {
		t.Error("NewMatrix with 10 bytes for (2, 3) F32 succeeded")
	}
	if _, err := NewMatrix(nil, DType(9), 0, 0); err == nil {
		t.Error("NewMatrix with an unknown dtype succeeded")
	}
	dst := make([]float32, 2)
	Decode(dst, []byte{0x80, 0x3f, 0x00, 0xc0}, BF16)
	if dst[0] != 1 || dst[1] != -2 {
		t.Errorf("Decode bf16 = %v, want [1 -2]", dst)
	}
}

// TestRMSNormMatchesSequential checks RMSNorm, which sums the squares in
// four partial sums, against the sequential float64 sum of its doc comment
// on random vectors of many lengths and scales: every output the same bits
// (the two sums, each within a few float64 units of the exact one, round to
// the same float32 mean square unless it lies on a rounding boundary).
func TestRMSNormMatchesSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := range 5000 {
		n := 1 + r.IntN(3000)
		x, w := make([]float32, n), make([]float32, n)
		scale := math.Pow(10, float64(r.IntN(12)-6))
		for i := range x {
			x[i] = float32(r.NormFloat64() * scale)
			w[i] = float32(1 + r.NormFloat64()*0.1)
		}
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		ms := float32(ss / float64(n))
		rs := float32(1 / math.Sqrt(float64(ms+1e-5)))
		got := make([]float32, n)
		RMSNorm(got, x, w, 1e-5)
		for i, v := range x {
			if want := w[i] * (v * rs); got[i] != want {
				t.Fatalf("trial %d (%d values): RMSNorm[%d] = %v, want %v", trial, n, i, got[i], want)
			}
		}
	}
}

func BenchmarkRMSNorm(b *testing.B) {
	x, w := make([]float32, 576), make([]float32, 576)
	for i := range x {
		x[i], w[i] = float32(i%13)-6, 1
	}
	for b.Loop() {
		RMSNorm(x, x, w, 1e-5)
	}
}

func TestNorms(t *testing.T) {
	x := []float32{1, -2, 3, 0.5}
	w := []float32{1, 2, 0.5, -1}
	b := []float32{0, 1, -1, 0.25}

	got := make([]float32, 4)
	RMSNorm(got, x, w, 1e-5)
	ms := (1 + 4 + 9 + 0.25) / 4.0
	for i := range x {
		want := float64(w[i]) * float64(x[i]) / math.Sqrt(ms+1e-5)
		if math.Abs(float64(got[i])-want) > 1e-6 {
			t.Errorf("RMSNorm[%d] = %v, want %v", i, got[i], want)
		}
	}

	LayerNorm(got, x, w, b, 1e-5)
	mean := (1 - 2 + 3 + 0.5) / 4.0
	var v float64
	for _, e := range x {
		v += (float64(e) - mean) * (float64(e) - mean)
	}
	v /= 4
	for i := range x {
		want := (float64(x[i])-mean)/math.Sqrt(v+1e-5)*float64(w[i]) + float64(b[i])
		if math.Abs(float64(got[i])-want) > 1e-6 {
			t.Errorf("LayerNorm[%d] = %v, want %v", i, got[i], want)
		}
	}
}

func TestSoftmax(t *testing.T) {
	x := []float32{1, 2, 3, float32(math.Inf(-1))}
	got := make([]float32, 4)
	Softmax(got, x)
	z := math.Exp(1) + math.Exp(2) + math.Exp(3)
	want := []float64{math.Exp(1) / z, math.Exp(2) / z, math.Exp(3) / z, 0}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-7 {
			t.Errorf("Softmax[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	// Large scores do not overflow.
	Softmax(got[:2], []float32{1e30, 1e30})
	if got[0] != 0.5 || got[1] != 0.5 {
		t.Errorf("Softmax of equal huge scores = %v", got[:2])
	}
}

func TestActivations(t *testing.T) {
	tests := []struct {
		name string
		f    func(dst, x []float32)
		x    float32
		want float64
	}{
		{"SiLU(1)", SiLU, 1, 1 / (1 + math.Exp(-1))},
		{"SiLU(-3)", SiLU, -3, -3 / (1 + math.Exp(3))},
		{"GeluNew(1)", GeluNew, 1, 0.8411919906082768},
		{"GeluNew(-0.5)", GeluNew, -0.5, -0.15428599017532272},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []float32{0}
			tt.f(got, []float32{tt.x})
			if math.Abs(float64(got[0])-tt.want) > 1e-7 {
				t.Errorf("got %v, want %v", got[0], tt.want)
			}
		})
	}
	got := []float32{0}
	SwiGLU(got, []float32{1}, []float32{2})
	if want := 2 / (1 + math.Exp(-1)); math.Abs(float64(got[0])-want) > 1e-6 {
		t.Errorf("SwiGLU(1, 2) = %v, want %v", got[0], want)
	}
}

func TestAddAndArgmax(t *testing.T) {
	x := []float32{1, 2, 3, 4}
	AddRows(x, []float32{10, 20})
	if x[0] != 11 || x[1] != 22 || x[2] != 13 || x[3] != 24 {
		t.Errorf("AddRows = %v", x)
	}
	Add(x, x, []float32{1, 1, 1, 1})
	if x[3] != 25 {
		t.Errorf("Add = %v", x)
	}
	tests := []struct {
		x    []float32
		want int
	}{
		{nil, -1},
		{[]float32{1, 3, 3}, 1},
		{[]float32{float32(math.NaN()), -1}, 1},
		{[]float32{-5}, 0},
	}
	for _, tt := range tests {
		if got := Argmax(tt.x); got != tt.want {
			t.Errorf("Argmax(%v) = %d, want %d", tt.x, got, tt.want)
		}
	}
}

func TestRope(t *testing.T) {
	inv := make([]float32, 4)
	RopeInvFreq(inv, 8, 10000)
	for i, want := range []float64{1, 0.1, 0.01, 0.001} {
		if math.Abs(float64(inv[i])-want) > 1e-7*want {
			t.Errorf("inv_freq[%d] = %v, want %v", i, inv[i], want)
		}
	}
	cos, sin := make([]float32, 4), make([]float32, 4)
	RopeCosSin(cos, sin, inv, 3)
	if math.Abs(float64(cos[0])-math.Cos(3)) > 1e-7 || math.Abs(float64(sin[1])-math.Sin(0.3)) > 1e-7 {
		t.Errorf("cos = %v, sin = %v", cos, sin)
	}

	// The two layouts are the same rotation of differently ordered pairs.
	half := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	pairs := make([]float32, 8)
	for i := range 4 {
		pairs[2*i], pairs[2*i+1] = half[i], half[i+4]
	}
	RotateHalf(half, cos, sin)
	RotatePairs(pairs, cos, sin)
	for i := range 4 {
		if half[i] != pairs[2*i] || half[i+4] != pairs[2*i+1] {
			t.Errorf("pair %d: rotate-half (%v, %v), interleaved (%v, %v)", i, half[i], half[i+4], pairs[2*i], pairs[2*i+1])
		}
	}
	// Position 0 is the identity.
	RopeCosSin(cos, sin, inv, 0)
	v := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	RotateHalf(v, cos, sin)
	for i, want := range []float32{1, 2, 3, 4, 5, 6, 7, 8} {
		if v[i] != want {
			t.Errorf("position 0 changed dim %d to %v", i, v[i])
		}
	}
}

func TestDotAxpy(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if got := Dot(x, x); got != 385 {
		t.Errorf("Dot = %v, want 385", got)
	}
	d := make([]float32, 10)
	Axpy(d, 2, x)
	if d[9] != 20 || d[0] != 2 {
		t.Errorf("Axpy = %v", d)
	}
}

// TestRoundF16: the AVX rounding to binary16 and back gives
// F16ToF32(F32ToF16)'s bits for normal, subnormal, overflowing, halfway
// and special values (a NaN stays a NaN), at every length (the tail in Go).
func TestRoundF16(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	x := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 65504, 65519, 65520, -65520, 1e9,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 6e-8, 2.98e-8, 2.99e-8, 1e-40,
		1 + 1.0/2048, 1 + 3.0/2048, 1 + 1.0/4096}
	for len(x) < 203 {
		x = append(x, float32(r.NormFloat64()*math.Exp(r.NormFloat64()*6)))
	}
	for n := 0; n <= len(x); n++ {
		got := make([]float32, n)
		roundToF16(got, x[:n])
		for i, v := range x[:n] {
			want := F16ToF32(F32ToF16(v))
			if math.Float32bits(got[i]) != math.Float32bits(want) && !(got[i] != got[i] && want != want) {
				t.Fatalf("n %d, x[%d] = %v (%08x): got %v (%08x), want %v (%08x)", n, i, v, math.Float32bits(v), got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
	}
}

// TestElementwiseSameBits: Add (and AddRows), SwiGLU and RotateHalf,
// whose AVX2 loops take whole runs of eight, give the bits of one rounded
// operation at a time (the Go loops, written here again) at every length
// around those runs, tails included.
func TestElementwiseSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 3)
		}
		return v
	}
	same := func(op string, n int, got, want []float32) {
		t.Helper()
		for i := range want {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("%s, n=%d, [%d]: got %v, want %v", op, n, i, got[i], want[i])
			}
		}
	}
	for _, n := range []int{1, 7, 8, 9, 16, 31, 32, 33, 40, 63, 64, 100, 576, 1537} {
		a, b := vec(n), vec(n)
		want := make([]float32, n)
		for i := range want {
			want[i] = a[i] + b[i]
		}
		got := make([]float32, n)
		Add(got, a, b)
		same("Add", n, got, want)
		Add(a, a, b) // in place
		same("Add in place", n, a, want)

		rows, bias := vec(3*n), vec(n)
		wantRows := make([]float32, 3*n)
		for i := range wantRows {
			wantRows[i] = rows[i] + bias[i%n]
		}
		AddRows(rows, bias)
		same("AddRows", n, rows, wantRows)

		gate, up := vec(n), vec(n)
		for i := range want {
			want[i] = silu(gate[i]) * up[i]
		}
		SwiGLU(got, gate, up)
		same("SwiGLU", n, got, want)
	}
	for _, half := range []int{4, 8, 12, 16, 32, 64, 128} {
		x, cos, sin := vec(2*half), vec(half), vec(half)
		want := make([]float32, 2*half)
		for i := range half {
			a, b := x[i], x[i+half]
			want[i] = float32(a*cos[i]) - float32(b*sin[i])
			want[i+half] = float32(b*cos[i]) + float32(a*sin[i])
		}
		RotateHalf(x, cos, sin)
		same("RotateHalf", half, x, want)
	}
}
