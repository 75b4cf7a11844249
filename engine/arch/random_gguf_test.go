package arch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"tracer/engine"
	"tracer/engine/gguf"
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

// TestRandomGGUF: the random GGUF file parses, holds the dtype it was
// asked for (a Q4_0 file its embedding in Q8_0) and loads as the model
// NewRandomGGUF builds, with the same logits; a decode step allocates
// nothing, on one thread or two.
func TestRandomGGUF(t *testing.T) {
	for _, c := range []struct {
		dtype     tensor.DType
		wantTypes map[string]int // ggml type: tensors
		threads   int
	}{
		{tensor.Q8_0, map[string]int{"Q8_0": 15, "F32": 5}, 1},
		{tensor.Q4_0, map[string]int{"Q4_0": 14, "Q8_0": 1, "F32": 5}, 2},
		{tensor.F16, map[string]int{"F16": 15, "F32": 5}, 1},
		{tensor.F32, map[string]int{"F32": 20}, 1},
	} {
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
			m.SetThreads(c.threads)
			want, gotLogits := decodeLast(t, fromFile, 3), decodeLast(t, m, 3)
			for i := range want {
				if want[i] != gotLogits[i] {
					t.Fatalf("logit %d: got %v in memory, want %v from the file", i, gotLogits[i], want[i])
				}
			}
			// In memory the Q8_0 and Q4_0 matrices are packed where the
			// VNNI kernels run: the logits above compare that layout with
			// ggml's, bit for bit.
			f2, err := gguf.Parse("tiny.gguf", bytes.Clone(data))
			if err != nil {
				t.Fatal(err)
			}
			wantPacked := 0
			if tensor.PackedLayout(c.dtype) {
				wantPacked = c.wantTypes["Q8_0"] + c.wantTypes["Q4_0"] // every quantized tensor is a matrix
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
				t.Errorf("got %v allocations per decode step on %d threads, want 0", allocs, c.threads)
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
		{"gpt2", gpt2, tensor.Q8_0, `architecture "gpt2", want llama`},
		{"bf16", ggufTinyShape, tensor.BF16, "want f32, f16, q8_0 or q4_0"},
		{"width not whole blocks", odd, tensor.Q4_0, "multiples of 32, got hidden 48"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := WriteRandomGGUF(&bytes.Buffer{}, c.name, c.shape, c.dtype, 1)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
				t.Errorf("got error %v, want one containing %q", err, c.want)
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
