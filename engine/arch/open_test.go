package arch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tracer/engine/safetensors"
)

func TestOpenHFInfo(t *testing.T) {
	skipWithoutGolden(t)
	tests := []struct {
		model        string
		arch, dtype  string
		params       int64
		weightBytes  int64
		bos, pad     int
		eos          []int
		maxPositions int
	}{
		// tiny-gpt2: wte 50257·64 + wpe 128·64 + 2 layers + ln_f.
		{"tiny-gpt2", "gpt2", "f32", 50257*64 + 128*64 + 2*(4*64+64*192+192+64*64+64+64*256+256+256*64+64) + 128, 0, 50256, -1, []int{50256}, 128},
		// tiny-llama: embed 49152·64 + 3 layers + norm.
		{"tiny-llama", "llama", "f32", 49152*64 + 3*(64+64*64+2*32*64+64*64+64+3*176*64) + 64, 0, 1, 2, []int{2}, 256},
		{"tiny-llama-bf16", "llama", "bf16", 49152*64 + 3*(64+64*64+2*32*64+64*64+64+3*176*64) + 64, 0, 1, 2, []int{2}, 256},
		// tiny-qwen2: embed + untied head + biases; eos from generation_config.json.
		{"tiny-qwen2", "qwen2", "f32", 2*512*64 + 2*(64+64*64+64+2*(32*64+32)+64*64+64+3*160*64) + 64, 0, 509, 509, []int{510, 509}, 512},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			m, err := OpenHF(goldenDir(t, tt.model))
			if err != nil {
				t.Fatal(err)
			}
			defer m.(*Model).Close()
			info := m.Info()
			if info.Name != tt.model || info.Kind != "hf" || info.Architecture != tt.arch || info.DType != tt.dtype {
				t.Errorf("Name, Kind, Architecture, DType = %q %q %q %q", info.Name, info.Kind, info.Architecture, info.DType)
			}
			if info.Params != tt.params {
				t.Errorf("Params = %d, want %d", info.Params, tt.params)
			}
			size := int64(4)
			if tt.dtype == "bf16" {
				size = 2
			}
			if info.WeightBytes != tt.params*size {
				t.Errorf("WeightBytes = %d, want %d", info.WeightBytes, tt.params*size)
			}
			if info.BOS != tt.bos || info.PAD != tt.pad || !slices.Equal(info.EOS, tt.eos) {
				t.Errorf("BOS %d EOS %v PAD %d, want %d %v %d", info.BOS, info.EOS, info.PAD, tt.bos, tt.eos, tt.pad)
			}
			if info.MaxPositions != tt.maxPositions {
				t.Errorf("MaxPositions = %d, want %d", info.MaxPositions, tt.maxPositions)
			}
			want := int64(info.Layers) * 2 * int64(info.KVHeads*info.HeadDim) * 4
			if info.KVBytesPerToken != want || info.HeadDim != 16 || info.Hidden != 64 {
				t.Errorf("KVBytesPerToken %d (want %d), HeadDim %d, Hidden %d", info.KVBytesPerToken, want, info.HeadDim, info.Hidden)
			}
		})
	}
}

// badModel writes a tiny model and lets the test break it.
func badModel(t *testing.T, s testShape, edit func(dir string)) string {
	t.Helper()
	dir := t.TempDir()
	writeTestModel(t, dir, s, 1)
	if edit != nil {
		edit(dir)
	}
	return dir
}

// editConfig rewrites config.json with some keys changed (nil deletes).
func editConfig(t *testing.T, changes map[string]any) func(dir string) {
	return func(dir string) {
		path := filepath.Join(dir, "config.json")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]any
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		for k, v := range changes {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		b, _ = json.Marshal(c)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rawWeights replaces model.safetensors with a literal header and data.
func rawWeights(t *testing.T, header string, dataLen int) func(dir string) {
	return func(dir string) {
		b := make([]byte, 8, 8+len(header)+dataLen)
		b[0] = byte(len(header))
		b[1] = byte(len(header) >> 8)
		b = append(b, header...)
		b = append(b, make([]byte, dataLen)...)
		if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenHFErrors(t *testing.T) {
	llama := tinyShape("llama")
	omit := func(s testShape, name string) testShape { s.omit = name; return s }
	asInt := func(s testShape, name string) testShape { s.intTensor = name; return s }
	untied := llama
	untied.tied = false
	tests := []struct {
		name  string
		shape testShape
		edit  func(dir string)
		want  []string // substrings: the file and the tensor or field
	}{
		{"missing config", llama, func(dir string) { os.Remove(filepath.Join(dir, "config.json")) }, []string{"config.json", "no such file"}},
		{"bad config JSON", llama, func(dir string) { os.WriteFile(filepath.Join(dir, "config.json"), []byte("{"), 0o644) }, []string{"config.json", "unexpected end"}},
		{"unknown architecture", llama, editConfig(t, map[string]any{"model_type": "mistral", "architectures": []string{"MistralForCausalLM"}}), []string{"config.json", `"MistralForCausalLM"`, `"mistral"`, "not supported"}},
		{"unknown class without model_type", llama, editConfig(t, map[string]any{"model_type": nil, "architectures": []string{"PhiForCausalLM"}}), []string{"config.json", `"PhiForCausalLM"`}},
		{"class without model_type", llama, editConfig(t, map[string]any{"model_type": nil}), nil},
		{"kv heads do not divide heads", llama, editConfig(t, map[string]any{"num_key_value_heads": 3}), []string{"config.json", "num_key_value_heads 3"}},
		{"rope scaling", llama, editConfig(t, map[string]any{"rope_scaling": map[string]any{"rope_type": "llama3"}}), []string{"config.json", "rope_scaling", "llama3"}},
		{"activation", llama, editConfig(t, map[string]any{"hidden_act": "gelu"}), []string{"config.json", `hidden_act "gelu"`}},
		{"gpt2 activation", tinyShape("gpt2"), editConfig(t, map[string]any{"activation_function": "relu"}), []string{"config.json", `"relu"`}},
		{"qwen2 sliding window", tinyShape("qwen2"), editConfig(t, map[string]any{"use_sliding_window": true}), []string{"config.json", "use_sliding_window"}},
		{"zero layers", llama, editConfig(t, map[string]any{"num_hidden_layers": 0}), []string{"config.json", "num_hidden_layers 0"}},
		{"no weights", llama, func(dir string) { os.Remove(filepath.Join(dir, "model.safetensors")) }, []string{"no model.safetensors"}},
		{"shape disagrees with config", llama, editConfig(t, map[string]any{"intermediate_size": 32}), []string{"model.safetensors", `tensor "model.layers.0.mlp.gate_proj.weight" has shape [24 16]`, "config.json says [32 16]"}},
		{"vocab disagrees with config", tinyShape("gpt2"), editConfig(t, map[string]any{"vocab_size": 50}), []string{"model.safetensors", `"transformer.wte.weight" has shape [40 16]`, "[50 16]"}},
		{"missing tensor", omit(llama, "model.layers.1.post_attention_layernorm.weight"), nil, []string{"model.safetensors", `tensor "model.layers.1.post_attention_layernorm.weight" is missing`}},
		{"missing head", omit(untied, "lm_head.weight"), nil, []string{`tensor "lm_head.weight" is missing`, "tie_word_embeddings is false"}},
		{"missing qwen2 bias", omit(tinyShape("qwen2"), "model.layers.0.self_attn.k_proj.bias"), nil, []string{`"model.layers.0.self_attn.k_proj.bias" is missing`}},
		{"integer weights", asInt(llama, "model.layers.0.self_attn.q_proj.weight"), nil, []string{"model.safetensors", `"model.layers.0.self_attn.q_proj.weight" has dtype I64`}},
		{"truncated weights", llama, func(dir string) {
			path := filepath.Join(dir, "model.safetensors")
			st, _ := os.Stat(path)
			os.Truncate(path, st.Size()-10)
		}, []string{"model.safetensors", `tensor "model.norm.weight"`, "run past the end"}},
		{"offsets past the end", llama, rawWeights(t, `{"model.embed_tokens.weight":{"dtype":"F32","shape":[40,16],"data_offsets":[0,2560]}}`, 1000), []string{"model.safetensors", `tensor "model.embed_tokens.weight"`, "data_offsets [0 2560] run past the end of the file (1000 bytes of data"}},
		{"overlapping offsets", llama, rawWeights(t, `{"a":{"dtype":"F32","shape":[40,16],"data_offsets":[0,2560]},"b":{"dtype":"F32","shape":[16],"data_offsets":[64,128]}}`, 2560), []string{"model.safetensors", `tensor "b"`, `overlap tensor "a"`}},
		{"bad generation config", llama, func(dir string) {
			os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"eos_token_id": "x"}`), 0o644)
		}, []string{"eos_token_id", "want an id or a list of ids"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := badModel(t, tt.shape, tt.edit)
			m, err := OpenHF(dir)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("OpenHF: %v", err)
				}
				m.(*Model).Close()
				return
			}
			if err == nil {
				m.(*Model).Close()
				t.Fatal("OpenHF succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestGenerationConfigOverrides(t *testing.T) {
	dir := badModel(t, tinyShape("llama"), func(dir string) {
		os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"eos_token_id": [2, 7], "pad_token_id": null}`), 0o644)
	})
	editConfig(t, map[string]any{"pad_token_id": 2})(dir)
	m, err := OpenHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.(*Model).Close()
	info := m.Info()
	if !slices.Equal(info.EOS, []int{2, 7}) || info.PAD != -1 || info.BOS != 1 {
		t.Errorf("BOS %d EOS %v PAD %d, want 1 [2 7] -1 (generation_config.json wins key by key)", info.BOS, info.EOS, info.PAD)
	}
}

func TestOpenHFDTypes(t *testing.T) {
	// The same random weights stored as F32, BF16 and F16 load and agree to
	// the precision of the narrower types.
	logits := map[safetensors.DType][]float32{}
	for _, dt := range []safetensors.DType{safetensors.F32, safetensors.BF16, safetensors.F16} {
		s := tinyShape("llama")
		s.dtype = dt
		m := openTestModel(t, s)
		if got, want := m.Info().DType, map[safetensors.DType]string{"F32": "f32", "BF16": "bf16", "F16": "f16"}[dt]; got != want {
			t.Errorf("DType = %q, want %q", got, want)
		}
		c, _ := m.NewCache(1, 8)
		out := [][]float32{make([]float32, s.vocab)}
		if err := m.Forward(c, prompt([]int{1, 2, 3}), out); err != nil {
			t.Fatal(err)
		}
		logits[dt] = out[0]
	}
	if d := maxDiff(logits["F16"], logits["F32"]); d > 0.05 {
		t.Errorf("f16 logits differ from f32 by %g", d)
	}
	if d := maxDiff(logits["BF16"], logits["F32"]); d > 0.3 {
		t.Errorf("bf16 logits differ from f32 by %g", d)
	}
}
