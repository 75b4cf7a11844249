package arch

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/engine/gguf"
	"tracer/engine/refdata"
	"tracer/engine/safetensors"
	"tracer/engine/tensor"
	"tracer/engine/tokenizer"
)

// ggufTinyShape is a small llama shape whose widths are whole Q8_0 blocks.
var ggufTinyShape = Shape{Arch: "llama", VocabSize: 96, Hidden: 256, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 288, MaxPositions: 64, Tied: true}

// randomGGUFBytes returns the random GGUF file of shape s at dtype
// (WriteRandomGGUF, seed 7).
func randomGGUFBytes(t *testing.T, name string, s Shape, dtype tensor.DType) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteRandomGGUF(&buf, name, s, dtype, 7); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tinyGGUFFile writes the random GGUF of ggufTinyShape at dtype into a
// temporary folder: its path and bytes.
func tinyGGUFFile(t *testing.T, dtype tensor.DType) (string, []byte) {
	t.Helper()
	data := randomGGUFBytes(t, "tiny", ggufTinyShape, dtype)
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestRandomGGUF: the random GGUF file parses, holds the types it was
// asked for (the head Q6_K in a quantized file, Q8_0 in a Q8_0 one; the
// K-quants' fallbacks where ffn_down's rows of 288 hold no 256-value
// block) and loads as the model NewRandomGGUF builds, with the same
// logits; a decode step allocates nothing, on one thread or two.
func TestRandomGGUF(t *testing.T) {
	for i, c := range []struct {
		dtype     tensor.DType
		wantTypes map[string]int // ggml type: tensors
	}{
		{tensor.Q8_0, map[string]int{"Q8_0": 15, "F32": 5}},
		{tensor.Q4_0, map[string]int{"Q4_0": 14, "Q6_K": 1, "F32": 5}},
		{tensor.Q4_1, map[string]int{"Q4_1": 14, "Q6_K": 1, "F32": 5}},
		{tensor.Q5_0, map[string]int{"Q5_0": 14, "Q6_K": 1, "F32": 5}},
		{tensor.Q5_1, map[string]int{"Q5_1": 14, "Q6_K": 1, "F32": 5}},
		{tensor.Q4_K, map[string]int{"Q4_K": 12, "Q5_0": 2, "Q6_K": 1, "F32": 5}},
		{tensor.Q5_K, map[string]int{"Q5_K": 12, "Q5_1": 2, "Q6_K": 1, "F32": 5}},
		{tensor.Q6_K, map[string]int{"Q6_K": 13, "Q8_0": 2, "F32": 5}},
		{tensor.F16, map[string]int{"F16": 15, "F32": 5}},
		{tensor.BF16, map[string]int{"BF16": 15, "F32": 5}},
		{tensor.F32, map[string]int{"F32": 20}},
	} {
		threads := 1 + i%2
		t.Run(c.dtype.String(), func(t *testing.T) {
			data := randomGGUFBytes(t, "tiny", ggufTinyShape, c.dtype)
			f, err := gguf.Parse("tiny.gguf", data)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, ti := range f.Tensors {
				got[ti.Type.String()]++
			}
			if fmt.Sprint(got) != fmt.Sprint(c.wantTypes) {
				t.Errorf("tensor types: got %v, want %v", got, c.wantTypes)
			}
			fromFile, err := newGGUF(f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewRandomGGUF("tiny", ggufTinyShape, c.dtype, 7)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.SetThreads(threads)
			want, gotLogits := decodeLast(t, fromFile, 3), decodeLast(t, m, 3)
			for i := range want {
				if want[i] != gotLogits[i] {
					t.Fatalf("logit %d: got %v in memory, want %v from the file", i, gotLogits[i], want[i])
				}
			}
			// In memory the matrices of the types with a packed layout are
			// packed where it pays (tensor.PackedLayout): the logits above
			// compare that layout with ggml's, bit for bit.
			f2, err := gguf.Parse("tiny.gguf", bytes.Clone(data))
			if err != nil {
				t.Fatal(err)
			}
			wantPacked := 0
			for _, ti := range f2.Tensors {
				if dt, _ := dtypeOf(ti.Type); dt.Quantized() && tensor.PackedLayout(dt) {
					wantPacked++ // every quantized tensor is a matrix
				}
			}
			if n := len(packQuantized(f2)); n != wantPacked {
				t.Errorf("packQuantized packed %d matrices, want %d", n, wantPacked)
			}
			cache, err := m.NewCache(1, 64)
			if err != nil {
				t.Fatal(err)
			}
			logits := [][]float32{make([]float32, ggufTinyShape.VocabSize)}
			mask := make([]bool, 64)
			for i := range mask {
				mask[i] = true
			}
			b := &engine.Batch{Tokens: [][]int{{1}}, Positions: [][]int{{0}}, Mask: [][]bool{mask[:1]}}
			step := func() {
				n := cache.Len()
				b.Positions[0][0], b.Mask[0] = n, mask[:n+1]
				if err := m.Forward(cache, b, logits); err != nil {
					t.Fatal(err)
				}
			}
			step()
			if allocs := testing.AllocsPerRun(10, step); allocs != 0 {
				t.Errorf("got %v allocations per decode step on %d threads, want 0", allocs, threads)
			}
		})
	}
}

// decodeLast feeds tokens 1..steps one at a time and returns the last logits.
func decodeLast(t *testing.T, m *Model, steps int) []float32 {
	t.Helper()
	c, err := m.NewCache(1, 64)
	if err != nil {
		t.Fatal(err)
	}
	logits := [][]float32{make([]float32, m.d.vocab)}
	for i := 0; i < steps; i++ {
		mask := make([]bool, i+1)
		for j := range mask {
			mask[j] = true
		}
		b := &engine.Batch{Tokens: [][]int{{1 + i}}, Positions: [][]int{{i}}, Mask: [][]bool{mask}}
		if err := m.Forward(c, b, logits); err != nil {
			t.Fatal(err)
		}
	}
	return logits[0]
}

func TestRandomGGUFErrors(t *testing.T) {
	gpt2, _ := KnownShape("gpt2")
	odd := ggufTinyShape
	odd.Hidden, odd.Heads, odd.KVHeads = 48, 4, 2
	cases := []struct {
		name  string
		shape Shape
		dtype tensor.DType
		want  string
	}{
		{"gpt2", gpt2, tensor.Q8_0, `architecture "gpt2", want llama or qwen2`},
		{"q2_k", ggufTinyShape, tensor.Q2_K, "want one of f32, bf16, f16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k"},
		{"width not whole blocks", odd, tensor.Q4_0, "multiples of 32, got hidden 48"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := WriteRandomGGUF(&bytes.Buffer{}, c.name, c.shape, c.dtype, 1)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v, want one containing %q", err, c.want)
			}
			if _, err := NewRandomGGUF(c.name, c.shape, c.dtype, 1); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewRandomGGUF: got error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestGGUFDecodeRowsAlone: a GGUF decode step of two rows (attention in
// ggml's order, split over a pool by row and kv head) gives each row the
// logits it gets alone, bit for bit.
func TestGGUFDecodeRowsAlone(t *testing.T) {
	m, err := NewRandomGGUF("tiny", ggufTinyShape, tensor.Q8_0, 9)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.SetThreads(2)
	prompts := [][]int{{5, 17, 33}, {40, 2, 71}}
	next := []int{8, 90}
	run := func(rows []int) [][]float32 {
		c, err := m.NewCache(len(rows), 16)
		if err != nil {
			t.Fatal(err)
		}
		logits := make([][]float32, len(rows))
		b := &engine.Batch{}
		for _, r := range rows {
			logits[len(b.Tokens)] = make([]float32, ggufTinyShape.VocabSize)
			b.Tokens = append(b.Tokens, prompts[r])
			b.Positions = append(b.Positions, []int{0, 1, 2})
			b.Mask = append(b.Mask, []bool{true, true, true})
		}
		if err := m.Forward(c, b, logits); err != nil {
			t.Fatal(err)
		}
		b = &engine.Batch{}
		for _, r := range rows {
			b.Tokens = append(b.Tokens, []int{next[r]})
			b.Positions = append(b.Positions, []int{3})
			b.Mask = append(b.Mask, []bool{true, true, true, true})
		}
		if err := m.Forward(c, b, logits); err != nil {
			t.Fatal(err)
		}
		return logits
	}
	both := run([]int{0, 1})
	for r := range prompts {
		alone := run([]int{r})[0]
		for i := range alone {
			if both[r][i] != alone[i] {
				t.Fatalf("row %d, logit %d: got %v in a batch of two, want %v as alone", r, i, both[r][i], alone[i])
			}
		}
	}
}

// TestRandomGGUFVocab: a random GGUF carries a SentencePiece vocabulary
// that tracer's GGUF tokenizer reads (llama.cpp reads it too: see
// WriteRandomGGUF): text goes through its byte tokens, after <s>, as
// llama.cpp's llama-server tokenizes it.
func TestRandomGGUFVocab(t *testing.T) {
	s := Shape{Arch: "llama", VocabSize: 300, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 1, Intermediate: 64, MaxPositions: 16, Tied: true}
	f, err := gguf.Parse("vocab.gguf", randomGGUFBytes(t, "vocab", s, tensor.F32))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode("Hi!", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 3 + 0xE2, 3 + 0x96, 3 + 0x81, 3 + 'H', 3 + 'i', 3 + '!'} // <s>, "▁" in UTF-8, "Hi!"
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("Encode(\"Hi!\") = %v, want %v", ids, want)
	}
	if text, err := tok.Decode(ids, true); err != nil || text != "▁Hi!" { // as llama.cpp decodes it
		t.Errorf("Decode = %q, %v; want \"▁Hi!\"", text, err)
	}
	if got := []string{tok.Token(0), tok.Token(2), tok.Token(3), tok.Token(299)}; fmt.Sprint(got) != "[<unk> </s> <0x00> ▁t299]" {
		t.Errorf("tokens 0, 2, 3, 299: %q", got)
	}
}

// kmixShape is a small llama whose rows of 320 hold no 256-value block
// (the K-quants fall back there, and the head is Q8_0) while ffn_down's
// rows of 768 do, as in the quant zoo's kmix model; qwenShape is a small
// qwen2 (q/k/v biases) whose rows all hold 256-value blocks (the head is
// Q6_K).
var (
	kmixShape = Shape{Arch: "llama", VocabSize: 512, Hidden: 320, Layers: 2, Heads: 5, KVHeads: 1, Intermediate: 768, MaxPositions: 256, Tied: true}
	qwenShape = Shape{Arch: "qwen2", VocabSize: 400, Hidden: 256, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 512, MaxPositions: 256, Tied: true, RopeTheta: 1e6, NormEps: 1e-6}
)

// writeRandomGGUFFile writes the random GGUF of s at dtype (seed 7) into
// dir and returns its path.
func writeRandomGGUFFile(t *testing.T, dir, name string, s Shape, dtype tensor.DType) string {
	t.Helper()
	path := filepath.Join(dir, name+"-"+dtype.String()+".gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteRandomGGUF(f, name, s, dtype, 7); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// sameModel requires a and b to have the same weight types and bytes and
// the same logits, bit for bit, after three decode steps.
func sameModel(t *testing.T, a, b *Model) {
	t.Helper()
	ia, ib := a.Info(), b.Info()
	if fmt.Sprint(ia.WeightTypes) != fmt.Sprint(ib.WeightTypes) || ia.WeightBytes != ib.WeightBytes || ia.Params != ib.Params {
		t.Errorf("weights: %v, %d bytes, %d params; want %v, %d bytes, %d params", ia.WeightTypes, ia.WeightBytes, ia.Params, ib.WeightTypes, ib.WeightBytes, ib.Params)
	}
	x, y := decodeLast(t, a, 3), decodeLast(t, b, 3)
	for i := range y {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			t.Fatalf("logit %d: %v, want %v: the same bits", i, x[i], y[i])
		}
	}
}

// TestRandomGGUFFileRoundTrip: the K-quant GGUF WriteRandomGGUF writes
// opens (OpenGGUF, as tracer run --model does) as the model NewRandomGGUF
// builds: the same types per tensor, fallbacks included, and the same
// logits bit for bit, for a llama with fallbacks and a qwen2 with biases.
func TestRandomGGUFFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, sh := range []struct {
		name  string
		shape Shape
		want  map[tensor.DType]string // weight types of the file at each dtype
	}{
		// kmix per layer: 2304 rows of 320 (q 320, k 64, v 64, o 320,
		// gate 768, up 768) at the fallback, 320 rows of 768 (down) at the
		// K-quant; the head 512 rows of 320 in Q8_0 (340 bytes a row); 1600
		// norm weights in F32. Q4_K: 2·2304·220 bytes of Q5_0, 2·320·432
		// of Q4_K.
		{"kmix", kmixShape, map[tensor.DType]string{
			tensor.Q4_K: "map[f32:6400 q4_k:276480 q5_0:1013760 q8_0:174080]",
			tensor.Q5_K: "map[f32:6400 q5_1:1105920 q5_k:337920 q8_0:174080]",
			tensor.Q6_K: "map[f32:6400 q6_k:403200 q8_0:1740800]",
		}},
		{"qwen", qwenShape, nil},
	} {
		for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q5_K, tensor.Q6_K} {
			t.Run(sh.name+"-"+dt.String(), func(t *testing.T) {
				fm, err := OpenGGUF(writeRandomGGUFFile(t, dir, sh.name, sh.shape, dt))
				if err != nil {
					t.Fatal(err)
				}
				file := fm.(*Model)
				defer file.Close()
				mem, err := NewRandomGGUF(sh.name, sh.shape, dt, 7)
				if err != nil {
					t.Fatal(err)
				}
				defer mem.Close()
				if want := sh.want[dt]; want != "" && fmt.Sprint(file.Info().WeightTypes) != want {
					t.Errorf("weight types %v, want %s", file.Info().WeightTypes, want)
				}
				if info := file.Info(); info.Architecture != sh.shape.Arch || info.Hidden != sh.shape.Hidden || info.KVHeads != sh.shape.KVHeads {
					t.Errorf("the file's model: %+v", info)
				}
				sameModel(t, file, mem)
			})
		}
	}
}

// TestRandomGGUFIsTheF32FileQuantized: a random Q8_0 or Q6_K model is its
// F32 file quantized as it loads (Quantized, llama-quantize's blocks and
// fallbacks): the quantized types are drawn from the F32 file's values.
func TestRandomGGUFIsTheF32FileQuantized(t *testing.T) {
	path := writeRandomGGUFFile(t, t.TempDir(), "kmix", kmixShape, tensor.F32)
	for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q6_K} {
		t.Run(dt.String(), func(t *testing.T) {
			q, err := OpenGGUF(path, Quantized(dt))
			if err != nil {
				t.Fatal(err)
			}
			defer q.(*Model).Close()
			mem, err := NewRandomGGUF("kmix", kmixShape, dt, 7)
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			sameModel(t, q.(*Model), mem)
		})
	}
}

// TestRandomGGUFChunks: a matrix made a chunk at a time (rows of 320
// float32 values line up with tensor.FillUniform's 1 MiB blocks every
// 4096 rows) holds the bytes of one fill of the whole matrix, and so does
// its quantized form: the chunk size changes no byte of the file.
func TestRandomGGUFChunks(t *testing.T) {
	s := Shape{Arch: "llama", VocabSize: 9000, Hidden: 320, Layers: 1, Heads: 5, KVHeads: 1, Intermediate: 768, MaxPositions: 64, Tied: true}
	defer func(n int) { chunkBytes = n }(chunkBytes)
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q4_K} {
		chunkBytes = 1 << 20
		_, ts, err := randomGGUF("chunks", s, dt, 7)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		ts[0].chunks(func(r0, r1 int) error { n++; return nil })
		if n != 3 {
			t.Fatalf("%s: token_embd in %d chunks, want 3 (4096, 4096 and 808 rows)", dt, n)
		}
		small := randomGGUFBytes(t, "chunks", s, dt)
		chunkBytes = 1 << 30
		if whole := randomGGUFBytes(t, "chunks", s, dt); !bytes.Equal(small, whole) {
			t.Errorf("%s: the file made in chunks of 1 MiB differs from the one made a tensor at a time", dt)
		}
		if dt == tensor.F32 {
			f, err := gguf.Parse("chunks.gguf", small)
			if err != nil {
				t.Fatal(err)
			}
			emb, _ := f.Tensor("token_embd.weight")
			want := make([]byte, len(emb.Data))
			fillTensor(want, safetensors.Info{Name: emb.Name, Shape: []int{s.VocabSize, s.Hidden}}, tensor.F32, tensorSeed(7, 0))
			if !bytes.Equal(emb.Data, want) {
				t.Error("token_embd made in chunks is not one FillUniform of the whole matrix")
			}
		}
	}
}

// TestRandomGGUFAsLlamaQuantize: the random GGUF at a llama-quantize type
// is llama-quantize's file of the random F32 GGUF (the build in
// ../shared/tools/llama-server, c392e509), tensor for tensor, type and
// bytes: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and Q6_K, with their heads and
// fallbacks. llama-quantize's Q4_K and Q5_K are the mixes Q4_K_M and
// Q5_K_M, which give some attn_v and ffn_down matrices Q6_K (Q8_0 where
// their rows hold no 256-value block): every other tensor is the random
// Q4_K (Q5_K) file's.
func TestRandomGGUFAsLlamaQuantize(t *testing.T) {
	bin := refdata.Need(t, "tools/llama-server/llama-quantize")
	for _, sh := range []struct {
		name  string
		shape Shape
	}{{"kmix", kmixShape}, {"tiny", ggufTinyShape}, {"qwen", qwenShape}} {
		dir := t.TempDir()
		f32 := writeRandomGGUFFile(t, dir, sh.name, sh.shape, tensor.F32)
		for _, c := range []struct {
			dtype tensor.DType
			ftype string
		}{
			{tensor.Q8_0, "Q8_0"}, {tensor.Q4_0, "Q4_0"}, {tensor.Q4_1, "Q4_1"}, {tensor.Q5_0, "Q5_0"}, {tensor.Q5_1, "Q5_1"},
			{tensor.Q6_K, "Q6_K"}, {tensor.Q4_K, "Q4_K_M"}, {tensor.Q5_K, "Q5_K_M"},
		} {
			t.Run(sh.name+"-"+c.ftype, func(t *testing.T) {
				out := filepath.Join(dir, c.ftype+".gguf")
				if msg, err := exec.Command(bin, f32, out, c.ftype, "1").CombinedOutput(); err != nil {
					t.Fatalf("llama-quantize: %v\n%s", err, msg)
				}
				theirs, err := gguf.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				defer theirs.Close()
				ours, err := gguf.Parse("ours.gguf", randomGGUFBytes(t, sh.name, sh.shape, c.dtype))
				if err != nil {
					t.Fatal(err)
				}
				if len(ours.Tensors) != len(theirs.Tensors) {
					t.Fatalf("%d tensors, llama-quantize's file %d", len(ours.Tensors), len(theirs.Tensors))
				}
				same, mixed := 0, 0
				for _, o := range ours.Tensors {
					th, ok := theirs.Tensor(o.Name)
					switch {
					case !ok:
						t.Errorf("%s: not in llama-quantize's file", o.Name)
					case th.Type != o.Type && !strings.HasSuffix(c.ftype, "_M"):
						t.Errorf("%s: %s, llama-quantize wrote %s", o.Name, o.Type, th.Type)
					case th.Type != o.Type:
						if !strings.Contains(o.Name, "attn_v") && !strings.Contains(o.Name, "ffn_down") || th.Type != gguf.Q6_K && th.Type != gguf.Q8_0 {
							t.Errorf("%s: %s, llama-quantize's %s wrote %s, want that only for attn_v and ffn_down (Q6_K, or its fallback Q8_0)", o.Name, o.Type, c.ftype, th.Type)
						}
						mixed++
					case !bytes.Equal(th.Data, o.Data):
						t.Errorf("%s (%s): not llama-quantize's bytes", o.Name, o.Type)
					default:
						same++
					}
				}
				if same < len(ours.Tensors)/2 {
					t.Errorf("%d tensors identical, %d of the mix's other types", same, mixed)
				}
			})
		}
	}
}
