package arch

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"tracer/engine"
	"tracer/engine/safetensors"
	"tracer/engine/tensor"
)

func TestNewRandom(t *testing.T) {
	small := Shape{Arch: "llama", VocabSize: 64, Hidden: 32, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 48, MaxPositions: 64, Tied: true}
	for _, tt := range []struct {
		name  string
		shape Shape
		dtype tensor.DType
	}{
		{"llama-f32", small, tensor.F32},
		{"llama-bf16", small, tensor.BF16},
		{"gpt2-f16", Shape{Arch: "gpt2", VocabSize: 50, Hidden: 32, Layers: 2, Heads: 4, KVHeads: 4, Intermediate: 64, MaxPositions: 16, Tied: true}, tensor.F16},
		{"untied", Shape{Arch: "llama", VocabSize: 64, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 2, Intermediate: 16, MaxPositions: 8}, tensor.F32},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewRandom(tt.name, tt.shape, tt.dtype, 7)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			info := m.Info()
			if info.Name != "random-"+tt.name || info.DType != tt.dtype.String() || info.Layers != tt.shape.Layers || info.VocabSize != tt.shape.VocabSize {
				t.Errorf("Info() = %+v", info)
			}
			if want := info.Params * int64(tt.dtype.Size()); info.WeightBytes != want {
				t.Errorf("WeightBytes = %d, want %d", info.WeightBytes, want)
			}
			got := run(t, m, []int{3, 4, 5})
			m2, err := NewRandom(tt.name, tt.shape, tt.dtype, 7)
			if err != nil {
				t.Fatal(err)
			}
			defer m2.Close()
			if d := maxDiff(got, run(t, m2, []int{3, 4, 5})); d != 0 {
				t.Errorf("the same seed gave logits %g apart", d)
			}
			for _, v := range got {
				if v != v || v > 1e4 || v < -1e4 {
					t.Fatalf("logit %v: random weights should give tame logits", v)
				}
			}
		})
	}
	if _, err := NewRandom("x", small, tensor.DType(9), 1); err == nil {
		t.Error("NewRandom with an unknown dtype succeeded")
	}
	if _, err := NewRandom("x", Shape{Arch: "llama", VocabSize: 8, Hidden: 6, Layers: 1, Heads: 4, KVHeads: 2, Intermediate: 8, MaxPositions: 8}, tensor.F32, 1); err == nil {
		t.Error("NewRandom with heads not dividing hidden succeeded")
	}
	for _, name := range ShapeNames() {
		if _, ok := KnownShape(name); !ok {
			t.Errorf("KnownShape(%q) = false", name)
		}
	}
}

func TestSetThreads(t *testing.T) {
	m := openTestModel(t, tinyShape("llama"))
	want := run(t, m, []int{4, 5, 6})
	for _, n := range []int{1, 3} {
		m.SetThreads(n)
		if m.Threads() != n {
			t.Errorf("Threads() = %d after SetThreads(%d)", m.Threads(), n)
		}
		if d := maxDiff(run(t, m, []int{4, 5, 6}), want); d != 0 {
			t.Errorf("%d threads: logits differ by %g", n, d)
		}
	}
}

// TestWriteRandomHF opens the folder WriteRandomHF writes as any Hugging
// Face checkpoint and requires the logits of NewRandom's model, bit for
// bit, for each architecture.
func TestWriteRandomHF(t *testing.T) {
	for _, s := range []Shape{
		{Arch: "llama", VocabSize: 64, Hidden: 32, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 48, MaxPositions: 64, Tied: true},
		{Arch: "qwen2", VocabSize: 64, Hidden: 32, Layers: 2, Heads: 4, KVHeads: 2, Intermediate: 48, MaxPositions: 64},
		{Arch: "gpt2", VocabSize: 64, Hidden: 32, Layers: 2, Heads: 4, KVHeads: 4, Intermediate: 128, MaxPositions: 64, Tied: true},
	} {
		t.Run(s.Arch, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteRandomHF(dir, "w", s, tensor.BF16, 3); err != nil {
				t.Fatal(err)
			}
			file, err := OpenHF(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer file.(*Model).Close()
			mem, err := NewRandom("w", s, tensor.BF16, 3)
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			if a, b := file.Info(), mem.Info(); a.BOS != b.BOS || !slices.Equal(a.EOS, b.EOS) || a.Params != b.Params || a.DType != b.DType {
				t.Fatalf("file %+v, in memory %+v", a, b)
			}
			logits := func(m engine.Model) []float32 {
				c, err := m.NewCache(1, 8)
				if err != nil {
					t.Fatal(err)
				}
				out := [][]float32{make([]float32, s.VocabSize)}
				b := &engine.Batch{Tokens: [][]int{{1, 5, 9}}, Positions: [][]int{{0, 1, 2}}, Mask: [][]bool{{true, true, true}}}
				if err := m.Forward(c, b, out); err != nil {
					t.Fatal(err)
				}
				return out[0]
			}
			a, b := logits(file), logits(mem)
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("logit %d: %v from the folder, %v in memory", i, a[i], b[i])
				}
			}
		})
	}
}

// TestKnownShapes holds the shapes to the releases' config.json files
// (knownShapes says where each was read: meta-llama/Llama-3.2-1B,
// Qwen/Qwen2.5-0.5B, HuggingFaceTB/SmolLM2-135M), checks that each is a
// config tracer loads, and counts its parameters as a tied checkpoint
// holds them: 1,235,814,400 for Llama 3.2 1B, 494,032,768 for Qwen2.5
// 0.5B, 134,515,008 for SmolLM2-135M, the counts of the released weights.
// Nothing is allocated but the GGUF layouts' metadata.
func TestKnownShapes(t *testing.T) {
	for _, c := range []struct {
		name                                               string
		arch                                               string
		hidden, layers, heads, kvHeads, ffn, vocab, maxPos int
		theta, eps                                         float64
		params                                             int64
		q4k                                                map[string]int // GGUF tensors per type at --dtype q4_k
	}{
		{"llama-3.2-1b", "llama", 2048, 16, 32, 8, 8192, 128256, 131072, 500000, 1e-5, 1_235_814_400,
			map[string]int{"Q4_K": 7 * 16, "Q6_K": 1, "F32": 2*16 + 1}},
		{"qwen2.5-0.5b", "qwen2", 896, 24, 14, 2, 4864, 151936, 32768, 1e6, 1e-6, 494_032_768,
			// rows of 896 hold no 256-value block: Q5_0, and the head Q8_0;
			// ffn_down's rows of 4864 (19·256) stay Q4_K.
			map[string]int{"Q5_0": 6 * 24, "Q4_K": 24, "Q8_0": 1, "F32": 5*24 + 1}},
		{"smollm2-135m", "llama", 576, 30, 9, 3, 1536, 49152, 8192, 100000, 1e-5, 134_515_008,
			map[string]int{"Q5_0": 6 * 30, "Q4_K": 30, "Q8_0": 1, "F32": 2*30 + 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, ok := KnownShape(c.name)
			if !ok {
				t.Fatalf("KnownShape(%q) = false", c.name)
			}
			got := []any{s.Arch, s.Hidden, s.Layers, s.Heads, s.KVHeads, s.Hidden / s.Heads, s.Intermediate, s.VocabSize, s.MaxPositions, s.Tied, s.ropeTheta(), s.normEps()}
			want := []any{c.arch, c.hidden, c.layers, c.heads, c.kvHeads, 64, c.ffn, c.vocab, c.maxPos, true, c.theta, c.eps}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("arch, hidden, layers, heads, kv heads, head dim, MLP, vocab, positions, tied, rope theta, eps: got %v, want %v", got, want)
			}
			spec, err := checkConfig(s.config(), s.Arch, c.name)
			if err != nil {
				t.Fatal(err)
			}
			if d := spec.d; d.hidden != c.hidden || d.headDim != 64 || d.kvHeads != c.kvHeads || d.ffn != c.ffn || d.maxPos != c.maxPos || !spec.tied || spec.llama.theta != c.theta {
				t.Errorf("config.json as tracer reads it: %+v, %+v", d, spec.llama)
			}
			var params int64
			for _, in := range s.tensors(safetensors.F32) {
				params += int64(elements(in.Shape))
			}
			_, ts, err := randomGGUF(c.name, s, tensor.Q4_K, 1)
			if err != nil {
				t.Fatal(err)
			}
			var ggufParams int64
			types := map[string]int{}
			for _, rt := range ts {
				ggufParams += int64(rt.rows * rt.cols)
				types[rt.Type.String()]++
			}
			if params != c.params || ggufParams != c.params {
				t.Errorf("%d parameters in the Hugging Face layout, %d in the GGUF one; want %d", params, ggufParams, c.params)
			}
			if fmt.Sprint(types) != fmt.Sprint(c.q4k) {
				t.Errorf("q4_k GGUF tensors per type: %v, want %v", types, c.q4k)
			}
		})
	}
}

// TestNewRandomGGUFSmolLM2Q4K builds SmolLM2-135M's shape at q4_k: the
// rows of 576 (attention, gate, up) fall back to q5_0, ffn_down's rows of
// 1536 (6·256) stay q4_k, the tied head (rows of 576) is q8_0, as
// llama-quantize writes them; the bytes of each type follow from the
// shape.
func TestNewRandomGGUFSmolLM2Q4K(t *testing.T) {
	s, _ := KnownShape("smollm2-135m")
	m, err := NewRandomGGUF("smollm2-135m", s, tensor.Q4_K, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const layers = 30
	want := map[string]int64{
		"q5_0": layers * (576 + 192 + 192 + 576 + 1536 + 1536) * (576 / 32 * 22), // rows of q, k, v, o, gate, up
		"q4_k": layers * 576 * (1536 / 256 * 144),                                // rows of down
		"q8_0": 49152 * (576 / 32 * 34),                                          // the head
		"f32":  (2*layers + 1) * 576 * 4,                                         // norms
	}
	info := m.Info()
	if fmt.Sprint(info.WeightTypes) != fmt.Sprint(want) || info.Params != 134_515_008 || info.Architecture != "llama" {
		t.Errorf("weight types %v, %d params (%s); want %v, 134515008 (llama)", info.WeightTypes, info.Params, info.Architecture, want)
	}
	for _, v := range decodeLast(t, m, 2) {
		if v != v || v > 1e4 || v < -1e4 {
			t.Fatalf("logit %v: random weights should give tame logits", v)
		}
	}
}
