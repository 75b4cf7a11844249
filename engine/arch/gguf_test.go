package arch

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/engine/refdata"
	"tracer/engine/tensor"
)

func openGGUF(t *testing.T, rel string) *Model {
	t.Helper()
	m, err := OpenGGUF(refdata.Need(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.(*Model).Close() })
	return m.(*Model)
}

// stepLogits teacher-forces ids after a prefill of prompt and returns the
// logits before each of them and after the last: len(ids)+1 rows.
func stepLogits(t *testing.T, m *Model, promptIDs, ids []int) [][]float32 {
	t.Helper()
	c, err := m.NewCache(1, len(promptIDs)+len(ids)+1)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	b := prompt(promptIDs)
	for i := 0; ; i++ {
		logits := [][]float32{make([]float32, m.d.vocab)}
		if err := m.Forward(c, b, logits); err != nil {
			t.Fatal(err)
		}
		out = append(out, logits[0])
		if i == len(ids) {
			return out
		}
		past := c.Len()
		mask := make([]bool, past+1)
		for j := range mask {
			mask[j] = true
		}
		b = &engine.Batch{Tokens: [][]int{{ids[i]}}, Positions: [][]int{{past}}, Mask: [][]bool{mask}}
	}
}

// TestGGUFSameLogitsAsOtherForms: the F32 GGUFs hold the same weights as
// the llama2.c and Hugging Face forms, so the logits agree within 1e-5.
func TestGGUFSameLogitsAsOtherForms(t *testing.T) {
	ids := []int{1, 403, 407, 261, 378, 432, 383}
	cases := []struct {
		name, gguf string
		other      func(t *testing.T) *Model
	}{
		{"stories260K vs llama2.c", "models/stories260K/stories260K-f32.gguf", openStories},
		{"tiny-random-llama vs llama2.c", "models/tiny-random-llama/gguf/model-f32.gguf", func(t *testing.T) *Model {
			m, err := OpenLlama2c(refdata.Need(t, "models/tiny-random-llama/llama2c/model.bin"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.(*Model).Close() })
			return m.(*Model)
		}},
		{"tiny-random-llama vs hf", "models/tiny-random-llama/gguf/model-f32.gguf", func(t *testing.T) *Model {
			m, err := OpenHF(refdata.Need(t, "models/tiny-random-llama/hf-f32"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.(*Model).Close() })
			return m.(*Model)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, o := openGGUF(t, c.gguf), c.other(t)
			got, want := stepLogits(t, g, ids[:3], ids[3:]), stepLogits(t, o, ids[:3], ids[3:])
			for i := range got {
				if d := maxDiff(got[i], want[i]); d > 1e-5 {
					t.Errorf("step %d: logits differ by %g, want ≤ 1e-5", i, d)
				}
			}
		})
	}
}

// llamaCppRef is llama-cpp-reference.json: llama-server's greedy tokens
// and top-10 probabilities.
type llamaCppRef struct {
	Models map[string]struct {
		File  string `json:"file"`
		Cases []struct {
			Prompt    string `json:"prompt"`
			PromptIDs []int  `json:"prompt_ids"`
			NewIDs    []int  `json:"new_ids"`
			Steps     []struct {
				ID  int `json:"id"`
				Top []struct {
					ID   int     `json:"id"`
					Prob float64 `json:"prob"`
				} `json:"top"`
			} `json:"steps"`
		} `json:"cases_kv_f32"`
	} `json:"models"`
}

// TestGGUFLlamaCppReference teacher-forces every cases_kv_f32 case of
// llama-cpp-reference.json: greedy ids identical at every step, top-10
// probabilities within 1e-4 (F32), 2e-3 (F16), and for quantized files
// within 1e-5 at every step: their logits are llama.cpp's bit for bit
// (gguf_ggml.go), in the assembly kernels and their Go twins alike. (F16
// products sum in tracer's order, not ggml_vec_dot_f16's.)
func TestGGUFLlamaCppReference(t *testing.T) {
	dir := refdata.Need(t, "models")
	var ref llamaCppRef
	readJSON(t, filepath.Join(dir, "llama-cpp-reference.json"), &ref)
	for _, name := range []string{"stories260K-f32", "stories260K-f16", "tiny-random-llama-f32", "tiny-random-llama-f16",
		"tiny-random-llama-q8_0", "tiny-random-llama-q4_0", "k256-random-llama-f32", "k256-random-llama-q4_k_m",
		"k256-random-llama-q6_k", "k256-random-llama-q4_k_s"} {
		t.Run(name, func(t *testing.T) {
			mr, ok := ref.Models[name]
			if !ok {
				t.Fatalf("no model %q in the reference", name)
			}
			m := openGGUF(t, "models/"+mr.File)
			if r, ok := wantRounding[name]; ok && !slices.Equal(m.Info().ActivationRounding, r) {
				t.Errorf("got activation rounding %v, want %v", m.Info().ActivationRounding, r)
			}
			tol, loose := 1e-4, 1e-4
			switch {
			case strings.HasSuffix(name, "f16"):
				tol, loose = 2e-3, 2e-3
			case !strings.HasSuffix(name, "f32"):
				tol, loose = 5e-3, 5e-2
			}
			steps, over, worst := 0, 0, 0.0
			for _, c := range mr.Cases {
				all := stepLogits(t, m, c.PromptIDs, c.NewIDs[:len(c.NewIDs)-1])
				for i, s := range c.Steps {
					probs := softmax64(all[i])
					if got := argmax(all[i]); got != s.ID {
						t.Errorf("%q step %d: got greedy id %d (p %.6f), want %d (p %.6f)", c.Prompt, i, got, probs[got], s.ID, probs[s.ID])
					}
					d := 0.0
					for _, e := range s.Top {
						d = max(d, math.Abs(probs[e.ID]-e.Prob))
					}
					steps++
					worst = max(worst, d)
					if d > tol {
						over++
					}
					if d > loose {
						t.Errorf("%q step %d: top-10 probabilities differ by %.3g, want ≤ %g", c.Prompt, i, d, loose)
					}
				}
			}
			if float64(over) > 0.05*float64(steps) {
				t.Errorf("%d of %d steps differ by more than %g, want at most 5 %%", over, steps, tol)
			}
			if quantized := len(wantRounding[name]) > 0 && wantRounding[name][0] != "f16"; quantized && worst > 1e-5 {
				t.Errorf("worst top-10 |Δp| %.3g, want ≤ 1e-5 (llama.cpp's logits, bit for bit)", worst)
			}
			t.Logf("%s: worst top-10 |Δp| %.3g over %d steps, %d over %g", name, worst, steps, over, tol)
		})
	}
}

// wantRounding is how each file's products round their inputs.
var wantRounding = map[string][]string{
	"stories260K-f32": nil, "stories260K-f16": {"f16"}, "tiny-random-llama-q8_0": {"q8_0"}, "tiny-random-llama-q4_0": {"q8_0"},
	"k256-random-llama-q4_k_s": {"q8_k"}, "k256-random-llama-q4_k_m": {"q8_k"}, "k256-random-llama-q6_k": {"q8_k"},
}

func softmax64(logits []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	p := make([]float64, len(logits))
	var s float64
	for i, v := range logits {
		p[i] = math.Exp(float64(v) - mx)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// TestGGUFDequantizedNearF32: the quantized files were made by
// llama-quantize from the F32 files beside them, so every weight read back
// through tensor's block layouts lies near the F32 one: the RMS error of
// each matrix, relative to its RMS, stays within the type's bound. A
// layout mistake (a swapped nibble, a misread scale) gives errors near 1.
func TestGGUFDequantizedNearF32(t *testing.T) {
	cases := []struct {
		file, f32 string
		bound     float64
	}{
		{"models/tiny-random-llama/gguf/model-q8_0.gguf", "models/tiny-random-llama/gguf/model-f32.gguf", 0.01},
		{"models/tiny-random-llama/gguf/model-q4_0.gguf", "models/tiny-random-llama/gguf/model-f32.gguf", 0.15},
		{"models/k256-random-llama/gguf/model-q6_k.gguf", "models/k256-random-llama/gguf/model-f32.gguf", 0.03},
		{"models/k256-random-llama/gguf/model-q4_k_s.gguf", "models/k256-random-llama/gguf/model-f32.gguf", 0.15},
		{"models/k256-random-llama/gguf/model-q4_k_m.gguf", "models/k256-random-llama/gguf/model-f32.gguf", 0.15},
	}
	// The quant zoo: every type llama-quantize writes, at rows of 256 and
	// 768 (k256) and of 320, with its fallback types (kmix).
	zoo := map[string]float64{"q2_k": 0.4, "q3_k_s": 0.25, "q3_k_m": 0.25, "q3_k_l": 0.25, "q4_0": 0.15, "q4_1": 0.15,
		"q5_0": 0.08, "q5_1": 0.08, "q5_k_s": 0.08, "q5_k_m": 0.08, "q8_0": 0.01, "iq4_nl": 0.15, "iq4_xs": 0.15,
		"q4_k_s": 0.15, "q4_k_m": 0.15, "q6_k": 0.03}
	for _, typ := range slices.Sorted(maps.Keys(zoo)) {
		if file := "models/quant-zoo/k256/model-" + typ + ".gguf"; !strings.Contains("q4_k_s q4_k_m q6_k", typ) {
			cases = append(cases, struct {
				file, f32 string
				bound     float64
			}{file, "models/k256-random-llama/gguf/model-f32.gguf", zoo[typ]})
		}
		if !strings.Contains("q4_0 q4_1 q5_0 q5_1 q8_0 iq4_nl", typ) {
			cases = append(cases, struct {
				file, f32 string
				bound     float64
			}{"models/quant-zoo/kmix/model-" + typ + ".gguf", "models/quant-zoo/kmix/model-f32.gguf", zoo[typ]})
		}
	}
	for _, c := range cases {
		t.Run(strings.TrimPrefix(c.file, "models/"), func(t *testing.T) {
			q, f := openGGUF(t, c.file).net.(*llama), openGGUF(t, c.f32).net.(*llama)
			pairs := map[string][2]tensor.Matrix{"token_embd": {q.embedW, f.embedW}}
			for l := range q.layers {
				for name, m := range map[string][2]tensor.Matrix{"attn_q": {q.layers[l].wq, f.layers[l].wq}, "attn_v": {q.layers[l].wv, f.layers[l].wv},
					"ffn_down": {q.layers[l].down, f.layers[l].down}, "ffn_gate": {q.layers[l].gate, f.layers[l].gate}} {
					pairs[fmt.Sprintf("blk.%d.%s", l, name)] = m
				}
			}
			for name, p := range pairs {
				var se, ss float64
				a, b := make([]float32, p[0].Cols), make([]float32, p[1].Cols)
				for i := 0; i < p[0].Rows; i++ {
					p[0].Row(a, i)
					p[1].Row(b, i)
					for j := range a {
						se += float64(a[j]-b[j]) * float64(a[j]-b[j])
						ss += float64(b[j]) * float64(b[j])
					}
				}
				if rel := math.Sqrt(se / ss); rel > c.bound {
					t.Errorf("%s (%s): relative RMS error %.3g, want ≤ %g", name, p[0].DType, rel, c.bound)
				} else if testing.Verbose() {
					t.Logf("%s (%s): relative RMS error %.3g", name, p[0].DType, rel)
				}
			}
		})
	}
}

// TestGGUFTrafficCountsRealBytes: a decode step reads every weight once at
// its stored size (quantized blocks included) and one embedding row.
func TestGGUFTrafficCountsRealBytes(t *testing.T) {
	cases := []struct {
		file   string
		rowLen int64 // bytes of one embedding row
	}{
		{"models/tiny-random-llama/gguf/model-f16.gguf", 64 * 2},
		{"models/tiny-random-llama/gguf/model-q8_0.gguf", 64 / 32 * 34},
		{"models/tiny-random-llama/gguf/model-q4_0.gguf", 64 / 32 * 34}, // token_embd is Q8_0 there
		{"models/k256-random-llama/gguf/model-q4_k_m.gguf", 210},        // token_embd is Q6_K
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			m := openGGUF(t, c.file)
			info := m.Info()
			var sum int64
			for _, b := range info.WeightTypes {
				sum += b
			}
			// The tied head is read besides the row, so every weight counts once.
			if got, want := m.Cost(1, 0, 1).WeightBytes, info.WeightBytes+c.rowLen; got != want || sum != info.WeightBytes {
				t.Errorf("got %d bytes per step (types sum to %d), want %d = %d + %d", got, sum, want, info.WeightBytes, c.rowLen)
			}
		})
	}
}

// TestGGUFDecodeAllocatesNothing: a decode step on quantized and F16
// weights allocates nothing once the first step has sized the scratch.
func TestGGUFDecodeAllocatesNothing(t *testing.T) {
	for _, file := range []string{"model-q8_0.gguf", "model-q4_0.gguf", "model-f16.gguf"} {
		t.Run(file, func(t *testing.T) {
			m := openGGUF(t, "models/tiny-random-llama/gguf/"+file)
			c, err := m.NewCache(1, 64)
			if err != nil {
				t.Fatal(err)
			}
			logits := [][]float32{make([]float32, m.d.vocab)}
			mask := make([]bool, 64)
			for i := range mask {
				mask[i] = true
			}
			b := &engine.Batch{Tokens: [][]int{{1}}, Positions: [][]int{{0}}, Mask: [][]bool{mask[:1]}}
			step := func() {
				n := c.Len()
				b.Positions[0][0], b.Mask[0] = n, mask[:n+1]
				if err := m.Forward(c, b, logits); err != nil {
					t.Fatal(err)
				}
			}
			step()
			if allocs := testing.AllocsPerRun(10, step); allocs != 0 {
				t.Errorf("got %v allocations per decode step, want 0", allocs)
			}
		})
	}
}
