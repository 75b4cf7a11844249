package arch

import (
	"math"
	"testing"

	"tracer/engine/refdata"
	"tracer/engine/tensor"
)

// TestQuantizedAsLlamaQuantize (issue 36): an F32 model quantized as it
// loads is llama-quantize's file of the same weights. Where the file holds
// every matrix in the asked type or its fallback (k256's Q8_0 and Q6_K,
// kmix's Q6_K with Q8_0 where rows of 320 hold no 256-value block), the
// weight types and bytes are the file's and the logits are the file's bit
// for bit over a teacher-forced run; where the file mixes in other types
// (Q4_K_M), the types that agree are counted alike.
func TestQuantizedAsLlamaQuantize(t *testing.T) {
	prompt, forced := []int{1, 260, 262, 264, 266}, []int{268, 270, 272, 274}
	for _, tc := range []struct {
		name, f32, file string
		q               tensor.DType
		exact           bool
	}{
		{"k256 q8_0", "models/k256-random-llama/gguf/model-f32.gguf", "models/quant-zoo/k256/model-q8_0.gguf", tensor.Q8_0, true},
		{"k256 q6_k", "models/k256-random-llama/gguf/model-f32.gguf", "models/k256-random-llama/gguf/model-q6_k.gguf", tensor.Q6_K, true},
		{"kmix q6_k (fallback q8_0)", "models/quant-zoo/kmix/model-f32.gguf", "models/quant-zoo/kmix/model-q6_k.gguf", tensor.Q6_K, true},
		{"k256 q4_k against q4_k_m", "models/k256-random-llama/gguf/model-f32.gguf", "models/k256-random-llama/gguf/model-q4_k_m.gguf", tensor.Q4_K, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := OpenGGUF(refdata.Need(t, tc.f32), Quantized(tc.q))
			if err != nil {
				t.Fatal(err)
			}
			defer m.(*Model).Close()
			file := openGGUF(t, tc.file)
			got, want := m.Info(), file.Info()
			if !tc.exact {
				if got.WeightTypes["q4_k"] == 0 || got.WeightTypes["q4_k"] < want.WeightTypes["q4_k"] {
					t.Errorf("weight types %v, want at least the file's %d bytes of q4_k (%v)", got.WeightTypes, want.WeightTypes["q4_k"], want.WeightTypes)
				}
				return
			}
			if len(got.WeightTypes) != len(want.WeightTypes) || got.WeightBytes != want.WeightBytes || got.DType != want.DType {
				t.Errorf("quantized: %s, %d bytes, types %v; llama-quantize's file: %s, %d bytes, types %v", got.DType, got.WeightBytes, got.WeightTypes, want.DType, want.WeightBytes, want.WeightTypes)
			}
			for k, b := range want.WeightTypes {
				if got.WeightTypes[k] != b {
					t.Errorf("%s: %d bytes, the file %d", k, got.WeightTypes[k], b)
				}
			}
			a, b := stepLogits(t, m.(*Model), prompt, forced), stepLogits(t, file, prompt, forced)
			for i := range a {
				for j := range a[i] {
					if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
						t.Fatalf("step %d, id %d: logit %v, the file's %v: want the same bits", i, j, a[i][j], b[i][j])
					}
				}
			}
		})
	}
}

func TestParseQuantize(t *testing.T) {
	for in, want := range map[string]tensor.DType{"": 0, "q4_k": tensor.Q4_K, "Q8_0": tensor.Q8_0, "q6_k": tensor.Q6_K} {
		if got, err := ParseQuantize(in); err != nil || got != want {
			t.Errorf("ParseQuantize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"q3_k", "f16", "int4"} {
		if _, err := ParseQuantize(bad); err == nil {
			t.Errorf("ParseQuantize(%q): no error", bad)
		}
	}
}

// TestQuantizedEveryForm: a llama2.c .bin and a Hugging Face folder
// quantize as they load too (rows of 64 fall back from Q4_K to Q5_0,
// rows of 172 fit no block and stay F32), their weight types and
// activation rounding say so, and their greedy choice at the first step is
// the F32 model's; GPT-2's folder is refused with what to do instead.
func TestQuantizedEveryForm(t *testing.T) {
	stories := refdata.Need(t, "models/stories260K/stories260K.bin")
	f32, err := OpenLlama2c(stories)
	if err != nil {
		t.Fatal(err)
	}
	defer f32.(*Model).Close()
	q, err := OpenLlama2c(stories, Quantized(tensor.Q4_K))
	if err != nil {
		t.Fatal(err)
	}
	defer q.(*Model).Close()
	info := q.Info()
	if info.WeightTypes["q5_0"] == 0 || info.WeightTypes["f32"] == 0 || info.WeightBytes >= f32.Info().WeightBytes {
		t.Errorf("stories260K as q4_k: types %v, %d bytes (f32 %d): want q5_0 where rows of 64 hold no 256-value block, f32 where 172 hold no 32, fewer bytes", info.WeightTypes, info.WeightBytes, f32.Info().WeightBytes)
	}
	if len(info.ActivationRounding) == 0 {
		t.Errorf("stories260K as q4_k: no activation rounding, want q8_0 (Q5_0's)")
	}
	ids := []int{1, 403, 407, 261}
	a, b := stepLogits(t, q.(*Model), ids, nil)[0], stepLogits(t, f32.(*Model), ids, nil)[0]
	if argmax(a) != argmax(b) {
		t.Errorf("stories260K as q4_k picks %d first, f32 %d", argmax(a), argmax(b))
	}

	hf, err := OpenHF(refdata.Need(t, "models/tiny-random-llama/hf-f32"), Quantized(tensor.Q8_0))
	if err != nil {
		t.Fatal(err)
	}
	defer hf.(*Model).Close()
	if hf.Info().WeightTypes["q8_0"] == 0 {
		t.Errorf("tiny-random-llama as q8_0: types %v", hf.Info().WeightTypes)
	}
	if _, err := OpenHF(refdata.Need(t, "golden/tiny-gpt2"), Quantized(tensor.Q8_0)); err == nil {
		t.Error("GPT-2 quantized as it loads: no error, want one naming what to quantize instead")
	}
}
