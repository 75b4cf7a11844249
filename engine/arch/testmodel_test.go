package arch

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"tracer/engine/safetensors"
	"tracer/engine/tensor"
)

// testShape describes a random-weight Hugging Face model for tests.
type testShape struct {
	arch                                  string // "gpt2", "llama" or "qwen2"
	vocab, hidden, layers, heads, kvHeads int
	ffn, maxPos                           int
	tied                                  bool
	dtype                                 safetensors.DType // F32, BF16 or F16
	omit                                  string            // a tensor to leave out
	intTensor                             string            // a tensor to store as I64
	nan                                   map[string]int    // tensor name -> the element written as NaN
}

// smolLM2 is the shape of SmolLM2-135M, stored in bf16 like the release.
var smolLM2 = testShape{arch: "llama", vocab: 49152, hidden: 576, layers: 30, heads: 9, kvHeads: 3, ffn: 1536, maxPos: 8192, tied: true, dtype: safetensors.BF16}

// tinyShape is a small model of each architecture.
func tinyShape(arch string) testShape {
	s := testShape{arch: arch, vocab: 40, hidden: 16, layers: 2, heads: 4, kvHeads: 2, ffn: 24, maxPos: 32, tied: true, dtype: safetensors.F32}
	if arch == "gpt2" {
		s.kvHeads, s.ffn = 4, 64
	}
	if arch == "qwen2" {
		s.tied = false
	}
	return s
}

// config returns the model's config.json.
func (s testShape) config() map[string]any {
	if s.arch == "gpt2" {
		return map[string]any{
			"architectures": []string{"GPT2LMHeadModel"}, "model_type": "gpt2",
			"vocab_size": s.vocab, "n_embd": s.hidden, "n_layer": s.layers, "n_head": s.heads,
			"n_positions": s.maxPos, "n_inner": nil, "activation_function": "gelu_new",
			"layer_norm_epsilon": 1e-5, "bos_token_id": s.vocab - 1, "eos_token_id": s.vocab - 1,
			"tie_word_embeddings": s.tied,
		}
	}
	class := map[string]string{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}[s.arch]
	return map[string]any{
		"architectures": []string{class}, "model_type": s.arch,
		"vocab_size": s.vocab, "hidden_size": s.hidden, "num_hidden_layers": s.layers,
		"num_attention_heads": s.heads, "num_key_value_heads": s.kvHeads, "intermediate_size": s.ffn,
		"max_position_embeddings": s.maxPos, "rms_norm_eps": 1e-5, "rope_theta": 100000.0,
		"hidden_act": "silu", "tie_word_embeddings": s.tied, "bos_token_id": 1, "eos_token_id": 2,
	}
}

// tensors lists the checkpoint's tensors in transformers' names (those of
// Shape, the shape NewRandom builds), less the one to omit and with the
// one to store as I64.
func (s testShape) tensors() []safetensors.Info {
	sh := Shape{Arch: s.arch, VocabSize: s.vocab, Hidden: s.hidden, Layers: s.layers, Heads: s.heads,
		KVHeads: s.kvHeads, Intermediate: s.ffn, MaxPositions: s.maxPos, Tied: s.tied}
	var out []safetensors.Info
	for _, in := range sh.tensors(s.dtype) {
		switch in.Name {
		case s.omit:
			continue
		case s.intTensor:
			in.DType = "I64"
		}
		out = append(out, in)
	}
	return out
}

// writeTestModel writes config.json and a random model.safetensors for s
// into dir, streaming the weights so that memory stays flat. Norm weights
// are near 1, everything else N(0, 1/sqrt(fan-in)).
func writeTestModel(t testing.TB, dir string, s testShape, seed uint64) {
	t.Helper()
	cfg, err := json.MarshalIndent(s.config(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	infos := s.tensors()
	if err := safetensors.WriteHeader(w, infos, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	var buf [8]byte
	for _, in := range infos {
		n := 1
		for _, d := range in.Shape {
			n *= d
		}
		scale := 1 / math.Sqrt(float64(in.Shape[len(in.Shape)-1]))
		isNorm := len(in.Shape) == 1
		nanAt, poisoned := s.nan[in.Name]
		for i := 0; i < n; i++ {
			v := float32(r.NormFloat64() * scale)
			if isNorm {
				v = 1 + float32(r.NormFloat64()*0.1)
			}
			if poisoned && i == nanAt {
				v = float32(math.NaN())
			}
			switch in.DType {
			case safetensors.F32:
				binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
				w.Write(buf[:4])
			case safetensors.BF16:
				binary.LittleEndian.PutUint16(buf[:], tensor.F32ToBF16(v))
				w.Write(buf[:2])
			case safetensors.F16:
				binary.LittleEndian.PutUint16(buf[:], tensor.F32ToF16(v))
				w.Write(buf[:2])
			default:
				w.Write(buf[:in.DType.Size()])
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// openTestModel writes s to a temporary folder and opens it.
func openTestModel(t *testing.T, s testShape) *Model {
	t.Helper()
	dir := t.TempDir()
	writeTestModel(t, dir, s, 1)
	m, err := OpenHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.(*Model).Close() })
	return m.(*Model)
}
