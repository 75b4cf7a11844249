package arch

import (
	"math"
	"slices"
	"testing"

	"tracer/engine"
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
