package arch

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"tracer/engine/gguf"
	"tracer/engine/tensor"
)

// TestExpGGML: ggml_v_expf's lane function is within its documented 1.5
// ulps of exp, overflows to +Inf past 88.7 and underflows to 0 far below,
// as the AVX-512 routine does.
func TestExpGGML(t *testing.T) {
	worst := 0.0
	for x := float32(-87); x < 88; x += 0.0137 {
		got, want := float64(expGGML(x)), math.Exp(float64(x))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want))
		worst = max(worst, math.Abs(got-want)/ulp)
	}
	if worst > 2.5 { // ggml documents 1.45 + 0.5 ulps; an ulp here is the one above exp(x)
		t.Errorf("got errors up to %.2f ulps, want at most 2.5", worst)
	}
	cases := []struct {
		name string
		x    float32
		want float32
	}{
		{"zero", 0, 1},
		{"overflow", 89, float32(math.Inf(1))},
		{"far overflow", 1000, float32(math.Inf(1))},
		{"far underflow", -1000, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := expGGML(c.x); got != c.want {
				t.Errorf("expGGML(%v): got %v, want %v", c.x, got, c.want)
			}
		})
	}
	if got := expGGML(float32(math.NaN())); got == got {
		t.Errorf("expGGML(NaN): got %v, want NaN", got)
	}
}

// TestRMSNormGGML: ggml squares in float32 before summing in float64 and
// takes sqrtf and the reciprocal in float32; for these inputs that gives
// other bits than tensor.RMSNorm's float64 sum and reciprocal, and the
// documented loop's.
func TestRMSNormGGML(t *testing.T) {
	x := make([]float32, 256)
	w := make([]float32, 256)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*1.7+7)) * 3.3
		w[i] = 1 + float32(i%7)*0.01
	}
	got := make([]float32, len(x))
	rmsNormGGML(got, x, w, 1e-5)
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+1e-5)))
	for i, v := range x {
		if want := (v * scale) * w[i]; got[i] != want {
			t.Fatalf("element %d: got %v, want %v", i, got[i], want)
		}
	}
	own := make([]float32, len(x))
	tensor.RMSNorm(own, x, w, 1e-5)
	differ := 0
	for i := range own {
		if own[i] != got[i] {
			differ++
		}
	}
	if differ == 0 {
		t.Error("tensor.RMSNorm gives the same bits: the test input does not tell the two orders apart")
	}
}

// checkSwiGLUTwins fails unless swiGLUGGML (AVX-512 where it runs) gives
// the Go twin's bits for gate and up.
func checkSwiGLUTwins(t *testing.T, gate, up []float32) {
	t.Helper()
	got, want := make([]float32, len(gate)), make([]float32, len(gate))
	swiGLUGGML(got, gate, up)
	swiGLUGGMLGo(want, gate, up, 0)
	for i := range got {
		if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) || math.Signbit(float64(got[i])) != math.Signbit(float64(want[i])) && got[i] == got[i] {
			t.Errorf("gate %v, up %v: got %v, want %v, the Go twin's bits", gate[i], up[i], got[i], want[i])
		}
	}
}

// TestSwiGLUGGMLTwins: the AVX-512 SiLU (llama.cpp's instructions) and
// its Go twin agree bit for bit: ordinary values, the edges of exp's range
// (n = ±126, ±192: the scaling's subnormal and overflow results, the +Inf
// and 0 lanes), signed zeros, infinities and NaN, and a length that leaves
// a tail.
func TestSwiGLUGGMLTwins(t *testing.T) {
	if !useSiLUZ {
		t.Log("no AVX-512 here: only the Go twin runs")
	}
	r := rand.New(rand.NewPCG(41, 42))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	cases := map[string][]float32{
		"ordinary":    nil,
		"exp's edges": {87.3, 88.7, 89, -87.3, -88.7, -89, -103, -104, 133, -133, 150, -150, 200, -200, 1e30, -1e30},
		"specials":    {0, float32(math.Copysign(0, -1)), inf, -inf, nan, 1e-40, -1e-40, 1, -1, 0.5, -0.5, 20, -20, 3e38, -3e38, 7},
		"with a tail": nil,
	}
	for i := 0; i < 64; i++ {
		cases["ordinary"] = append(cases["ordinary"], float32(r.NormFloat64()*8))
	}
	for i := 0; i < 37; i++ {
		cases["with a tail"] = append(cases["with a tail"], float32(r.NormFloat64()*3))
	}
	for name, gate := range cases {
		t.Run(name, func(t *testing.T) {
			up := make([]float32, len(gate))
			for i := range up {
				up[i] = float32(r.NormFloat64())
			}
			checkSwiGLUTwins(t, gate, up)
		})
	}
}

// FuzzSwiGLUGGML: any 16 gate values (any bits) and one up value.
// Property: no panic, and the AVX-512 SiLU gives its Go twin's bits.
func FuzzSwiGLUGGML(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f}, uint32(0x3f800000))
	f.Add([]byte{0xff, 0xff, 0x7f, 0x7f, 0x00, 0x00, 0xc0, 0x7f}, uint32(0xbf000000))
	f.Fuzz(func(t *testing.T, raw []byte, upBits uint32) {
		gate := make([]float32, 16)
		for i := range gate {
			var b [4]byte
			copy(b[:], raw[min(len(raw), 4*i):min(len(raw), 4*i+4)])
			gate[i] = math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		}
		up := make([]float32, 16)
		for i := range up {
			up[i] = math.Float32frombits(upBits)
		}
		checkSwiGLUTwins(t, gate, up)
	})
}

// TestExpSumZ: the AVX-512 exponentials of the softmax give expGGML's
// bits, the edges of its range and -Inf (a masked score) included, and
// their sum is softmaxGGML's: each eight by tensor.HSum8, in float64 in order.
func TestExpSumZ(t *testing.T) {
	if !useSiLUZ {
		t.Skip("no AVX-512 here")
	}
	r := rand.New(rand.NewPCG(61, 62))
	src := []float32{0, -1e-30, -87.3, -88.7, -103, -104, -150, -200, float32(math.Inf(-1)), 1, 88, 89, 200, float32(math.NaN()), -0.5, 3}
	for i := 0; i < 48; i++ {
		src = append(src, float32(r.NormFloat64()*20))
	}
	for _, sub := range []float32{0, 2.5, -7} {
		got := make([]float32, len(src))
		sum := expSumZ(&got[0], &src[0], sub, len(src))
		var want64 float64
		for i, x := range src {
			want := expGGML(x - sub)
			if got[i] != want && !(got[i] != got[i] && want != want) {
				t.Errorf("exp(%v - %v): got %v, want %v, the Go twin's bits", x, sub, got[i], want)
			}
			if i%8 == 7 {
				var lanes [8]float32
				for l := range lanes {
					lanes[l] = expGGML(src[i-7+l] - sub)
				}
				want64 += float64(tensor.HSum8(&lanes))
			}
		}
		if sum != want64 && !(sum != sum && want64 != want64) {
			t.Errorf("sub %v: sum %v, want %v", sub, sum, want64)
		}
	}
}

// TestRotatePairsGGML: the rotation, four pairs at a time in assembly
// where it runs and the rest in Go, gives the bits of ggml's contracted
// rope_f32 written out pair by pair, for every number of pairs up to 70
// and values from 1e-30 to 1e30, zeros and infinities included.
func TestRotatePairsGGML(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	val := func() float32 {
		switch r.IntN(20) {
		case 0:
			return 0
		case 1:
			return float32(math.Inf(1 - 2*r.IntN(2)))
		}
		return float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(61)-30)))
	}
	for n := 1; n <= 70; n++ {
		x, cos, sin := make([]float32, 2*n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = val()
		}
		for i := range cos {
			th := r.Float64() * 100
			cos[i], sin[i] = float32(math.Cos(th)), float32(math.Sin(th))
			if i%7 == 3 {
				cos[i], sin[i] = val(), val()
			}
		}
		want := make([]float32, len(x))
		for i := range cos {
			a, b := x[2*i], x[2*i+1]
			want[2*i] = tensor.FMA32(a, cos[i], -(b * sin[i]))
			want[2*i+1] = tensor.FMA32(a, sin[i], b*cos[i])
		}
		rotatePairsGGML(x, cos, sin)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(want[i]) && !(x[i] != x[i] && want[i] != want[i]) {
				t.Fatalf("%d pairs, value %d: got %v (%08x), want %v (%08x)", n, i, x[i], math.Float32bits(x[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// TestQ4_0MarkedAsRepacked: a Q4_0 GGUF's matrices of a multiple of 8
// rows sum as llama.cpp's repacked kernels do, other Q4_0 matrices and
// the embedding (which, tied, is also the output matrix: llama.cpp leaves
// it in the file's layout) as ggml_vec_dot_q4_0_q8_0 does, and no other
// type is marked.
func TestQ4_0MarkedAsRepacked(t *testing.T) {
	q4 := func(rows int) []byte { return make([]byte, rows*2*18) } // 64 columns
	ts := []gguf.TensorInfo{
		{Name: "token_embd.weight", Dims: []uint64{64, 16}, Type: gguf.Q4_0, Data: q4(16)},
		{Name: "blk.0.attn_q.weight", Dims: []uint64{64, 16}, Type: gguf.Q4_0, Data: q4(16)},
		{Name: "blk.0.attn_k.weight", Dims: []uint64{64, 12}, Type: gguf.Q4_0, Data: q4(12)},
		{Name: "blk.0.attn_v.weight", Dims: []uint64{64, 16}, Type: gguf.Q8_0, Data: make([]byte, 16*2*34)},
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, nil, ts, 32); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse("q4.gguf", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	ld := &ggufLoader{f: f, used: map[string]bool{}, byDType: map[tensor.DType]int64{}}
	for _, c := range []struct {
		name string
		rows int
		want bool
	}{{"token_embd.weight", 16, false}, {"blk.0.attn_q.weight", 16, true}, {"blk.0.attn_k.weight", 12, false}, {"blk.0.attn_v.weight", 16, false}} {
		m, err := ld.matrix(c.name, c.rows, 64)
		if err != nil {
			t.Fatal(err)
		}
		if m.BlockSums() != c.want {
			t.Errorf("%s (%s, %d rows): marked %v, want %v", c.name, m.DType, c.rows, m.BlockSums(), c.want)
		}
	}
}
