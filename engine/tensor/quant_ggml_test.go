package tensor

import (
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

	"tracer/engine/refdata"
)

// llama.cpp's own answers for the kernels of quant_more.go: the AVX2 build
// of ../shared/tools/llama-server (b4748, the build whose answers the
// quant zoo's reference holds), its quantize_row_q8_0/q8_1/q8_K and
// ggml_vec_dot_* called on the inputs ggmlKernelInputs makes, through gdb
// (TestGGMLKernelsWrite says how), and its dequantize_row_*.
// testdata/ggml/quant-dots.json holds, per case, the bits of the dot
// product and the SHA-256 of the rounded activations as ggml lays them out
// and of the dequantized weights.

// ggmlKernelCase is one row of quant-dots.json.
type ggmlKernelCase struct {
	Type   string `json:"type"`   // tensor's name of the weight type: "q4_1"
	Blocks int    `json:"blocks"` // weight blocks in the row
	Scale  int    `json:"scale"`  // ggmlScales index: the activations' spread
	Seed   uint64 `json:"seed"`
	Dot    string `json:"dot"`    // the product's float32 bits, hex
	Rounds string `json:"rounds"` // SHA-256 of the rounded activations in ggml's blocks (block_q8_0, block_q8_1, block_q8_K)
	Row    string `json:"row"`    // SHA-256 of the weights dequantized (dequantize_row_*), little-endian float32
}

// ggmlScales are the activations' standard deviations; the last also
// zeroes every seventh value and makes Q8_0 scales binary16 subnormals.
var ggmlScales = []float64{0.5, 3, 40, 1e-3}

var ggmlKernelTypes = []DType{Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, IQ4_XS}

// ggmlKernelCases lists the cases: every type, rows of 1 to 11 blocks of
// 32 (odd counts for IQ4_NL's tail) or 1 to 3 of 256, every scale.
func ggmlKernelCases() []ggmlKernelCase {
	var out []ggmlKernelCase
	for ti, dt := range ggmlKernelTypes {
		blocks := []int{1, 2, 3, 8, 10, 11}
		if elems, _ := dt.Block(); elems == 256 {
			blocks = []int{1, 2, 3}
		}
		for _, b := range blocks {
			for s := range ggmlScales {
				out = append(out, ggmlKernelCase{Type: dt.String(), Blocks: b, Scale: s, Seed: uint64(1000*ti + 10*b + s)})
			}
		}
	}
	return out
}

func dtypeNamed(name string) DType {
	for _, dt := range ggmlKernelTypes {
		if dt.String() == name {
			return dt
		}
	}
	panic("tensor: no type " + name)
}

// ggmlKernelInputs makes a case's weights (randomBlocks: any bits, sane
// scales) and activations.
func ggmlKernelInputs(c ggmlKernelCase) (DType, []byte, []float32) {
	dt := dtypeNamed(c.Type)
	elems, _ := dt.Block()
	r := rand.New(rand.NewPCG(c.Seed, 36))
	w := randomBlocks(r, dt, 1, elems*c.Blocks)
	x := make([]float32, elems*c.Blocks)
	for i := range x {
		x[i] = float32(r.NormFloat64() * ggmlScales[c.Scale])
		if c.Scale == len(ggmlScales)-1 && i%7 == 0 {
			x[i] = 0
		}
	}
	return dt, w, x
}

// ggmlRounds lays out the activations a holds for weights of dt as ggml's
// blocks: block_q8_0 (f16 d, int8 qs[32]), block_q8_1 (f16 d, f16 s,
// qs[32]) or block_q8_K (float d, qs[256], int16 bsums[16]).
func ggmlRounds(dt DType, a *qActs, n int) []byte {
	var out []byte
	f16 := func(v float32) { out = binary.LittleEndian.AppendUint16(out, F32ToF16(v)) }
	qs := func(q []int8) {
		for _, v := range q {
			out = append(out, byte(v))
		}
	}
	switch block, q8_1 := refRounding(dt); {
	case block == 32:
		for b := range n / 32 {
			f16(a.d[b])
			if q8_1 {
				f16(a.s[b])
			}
			qs(a.qs[32*b : 32*b+32])
		}
	default:
		for b := range n / 256 {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(a.d[b]))
			qs(a.qs[256*b : 256*b+256])
			for _, s := range a.bsums[16*b : 16*b+16] {
				out = binary.LittleEndian.AppendUint16(out, uint16(int16(s)))
			}
		}
	}
	return out
}

// TestGGMLKernels: for every case of quant-dots.json, the weights
// dequantize to llama.cpp's float32s, the activations round to llama.cpp's
// blocks byte for byte, and the product of the row with them has
// llama.cpp's bits (its AVX2 ggml_vec_dot_*, called on the same inputs).
func TestGGMLKernels(t *testing.T) {
	var want []ggmlKernelCase
	raw, err := os.ReadFile(refdata.Need(t, "ggml/quant-dots.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(ggmlKernelCases()) {
		t.Errorf("quant-dots.json holds %d cases, want %d", len(want), len(ggmlKernelCases()))
	}
	for _, c := range want {
		dt, w, x := ggmlKernelInputs(c)
		var a qActs
		a.quantize(dt, x, 1, len(x))
		sum := sha256.Sum256(ggmlRounds(dt, &a, len(x)))
		if got := hex.EncodeToString(sum[:]); got != c.Rounds {
			t.Errorf("%s, %d blocks, scale %g: the rounded activations differ from llama.cpp's", c.Type, c.Blocks, ggmlScales[c.Scale])
		}
		m, err := NewQuantMatrix(w, dt, 1, len(x))
		if err != nil {
			t.Fatal(err)
		}
		if got := rowSum(m); got != c.Row {
			t.Errorf("%s, %d blocks: the dequantized weights differ from llama.cpp's", c.Type, c.Blocks)
		}
		got := make([]float32, 1)
		MatMul(got, m, x)
		if bits := fmt.Sprintf("%08x", math.Float32bits(got[0])); bits != c.Dot {
			wb, _ := hex.DecodeString(c.Dot)
			t.Errorf("%s, %d blocks, scale %g: product %v (%s), llama.cpp's %v (%s)", c.Type, c.Blocks, ggmlScales[c.Scale],
				got[0], bits, math.Float32frombits(binary.BigEndian.Uint32(wb)), c.Dot)
		}
	}
}

// rowSum is the SHA-256 of row 0 of m as little-endian float32s.
func rowSum(m Matrix) string {
	row := make([]float32, m.Cols)
	m.Row(row, 0)
	b := make([]byte, 0, 4*len(row))
	for _, v := range row {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestGGMLKernelsWrite remakes testdata/ggml/quant-dots.json in two steps,
// with TRACER_GGML_KERNELS naming an empty folder:
//
//  1. go test ./engine/tensor -run TestGGMLKernelsWrite writes each case's
//     inputs (NAME.w, NAME.x) and a gdb script, cmds.gdb, there;
//  2. gdb -batch -x DIR/cmds.gdb --args ../shared/tools/llama-server/llama-server
//     runs llama.cpp's kernels on them (after ggml_cpu_init, which fills
//     its binary16 table), writing NAME.y (the rounded activations) and
//     NAME.s (the product);
//  3. the same go test again reads those and writes quant-dots.json to
//     the folder, to be copied to testdata/ggml/.
func TestGGMLKernelsWrite(t *testing.T) {
	dir := os.Getenv("TRACER_GGML_KERNELS")
	if dir == "" {
		t.Skip("TRACER_GGML_KERNELS is not set")
	}
	cases := ggmlKernelCases()
	name := func(c ggmlKernelCase) string { return fmt.Sprintf("%s-%d-%d", c.Type, c.Blocks, c.Scale) }
	if _, err := os.Stat(filepath.Join(dir, name(cases[0])+".s")); err != nil { // step 1
		gdb := []string{"set pagination off", "set confirm off", "break main", "run", "call ((void(*)(void))ggml_cpu_init)()"}
		for _, c := range cases {
			dt, w, x := ggmlKernelInputs(c)
			xb := make([]byte, 4*len(x))
			for i, v := range x {
				binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(v))
			}
			p := filepath.Join(dir, name(c))
			if err := os.WriteFile(p+".w", w, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p+".x", xb, 0o644); err != nil {
				t.Fatal(err)
			}
			quant, dot := "q8_K", "ggml_vec_dot_"+strings.Replace(c.Type, "_k", "_K", 1)+"_q8_K"
			switch block, q8_1 := refRounding(dt); {
			case q8_1:
				quant, dot = "q8_1", "ggml_vec_dot_"+c.Type+"_q8_1"
			case block == 32:
				quant, dot = "q8_0", "ggml_vec_dot_"+c.Type+"_q8_0"
			}
			var a qActs
			a.quantize(dt, x, 1, len(x))
			ny := len(ggmlRounds(dt, &a, len(x)))
			gdb = append(gdb,
				fmt.Sprintf("set $w = (char*)malloc(%d)", len(w)), fmt.Sprintf("restore %s.w binary $w", p),
				fmt.Sprintf("set $x = (float*)malloc(%d)", len(xb)), fmt.Sprintf("restore %s.x binary $x", p),
				fmt.Sprintf("set $y = (char*)malloc(%d)", ny), "set $s = (float*)malloc(4)",
				fmt.Sprintf("call ((void(*)(const float*, void*, long))quantize_row_%s)($x, $y, %d)", quant, len(x)),
				fmt.Sprintf("call ((void(*)(int, float*, unsigned long, const void*, unsigned long, const void*, unsigned long, int))%s)(%d, $s, 0, $w, 0, $y, 0, 1)", dot, len(x)),
				fmt.Sprintf("dump binary memory %s.y $y $y+%d", p, ny), fmt.Sprintf("dump binary memory %s.s $s $s+1", p),
				fmt.Sprintf("set $o = (float*)malloc(%d)", len(xb)),
				fmt.Sprintf("call ((void(*)(const void*, float*, long))dequantize_row_%s)($w, $o, %d)", strings.Replace(c.Type, "_k", "_K", 1), len(x)),
				fmt.Sprintf("dump binary memory %s.deq $o $o+%d", p, len(x)))
		}
		gdb = append(gdb, "kill", "quit")
		if err := os.WriteFile(filepath.Join(dir, "cmds.gdb"), []byte(strings.Join(gdb, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d cases' inputs and %s: run gdb on it, then this test again", len(cases), filepath.Join(dir, "cmds.gdb"))
		return
	}
	for i, c := range cases { // step 3
		p := filepath.Join(dir, name(c))
		y, err := os.ReadFile(p + ".y")
		if err != nil {
			t.Fatal(err)
		}
		s, err := os.ReadFile(p + ".s")
		if err != nil || len(s) != 4 {
			t.Fatalf("%s.s: %v (%d bytes)", p, err, len(s))
		}
		sum := sha256.Sum256(y)
		cases[i].Rounds = hex.EncodeToString(sum[:])
		deq, err := os.ReadFile(p + ".deq")
		if err != nil {
			t.Fatal(err)
		}
		sum = sha256.Sum256(deq)
		cases[i].Row = hex.EncodeToString(sum[:])
		cases[i].Dot = fmt.Sprintf("%08x", binary.LittleEndian.Uint32(s))
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, c := range cases {
		line, _ := json.Marshal(c)
		b.Write(line)
		if i < len(cases)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	if err := os.WriteFile(filepath.Join(dir, "quant-dots.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
