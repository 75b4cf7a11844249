package arch

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"tracer/engine/refdata"
)

// zooRef is quant-zoo/reference.json: llama-server's greedy ids and top-10
// log-probabilities for llama-quantize files of every type, on two random
// Llama shapes (k256: rows of 256 and 768; kmix: rows of 320, so that its
// K-quant files hold llama-quantize's fallback types).
type zooRef struct {
	Prompts [][]int `json:"prompts"`
	Files   map[string]struct {
		File        string         `json:"file"` // under shared/models
		Shape       string         `json:"shape"`
		Type        string         `json:"type"`
		TensorTypes map[string]int `json:"tensor_types"`
		Cases       []struct {
			PromptIDs []int `json:"prompt_ids"`
			NewIDs    []int `json:"new_ids"`
			Steps     []struct {
				ID           int          `json:"id"`
				Top          [][2]float64 `json:"top"` // [id, log p] × 10, by descending log p
				Filled       bool         `json:"filled"`
				ULPSensitive bool         `json:"ulp_sensitive"`
			} `json:"steps"`
		} `json:"cases"`
	} `json:"files"`
}

// zooStats are one file's (or one prompt's) top-10 |Δ log p| over its
// teacher-forced steps.
type zooStats struct {
	d       []float64 // per step: the largest |Δ log p| over llama.cpp's top 10
	idsSame int       // steps whose greedy id is llama.cpp's
	sens    int       // steps marked ulp_sensitive
	sensBad int       // of those, steps over 5e-3
}

func (s *zooStats) add(d float64, same, sensitive bool) {
	s.d = append(s.d, d)
	if same {
		s.idsSame++
	}
	if sensitive {
		s.sens++
		if d > 5e-3 {
			s.sensBad++
		}
	}
}

// quantile is the q-quantile of the steps' differences (nearest rank).
func (s *zooStats) quantile(q float64) float64 {
	if len(s.d) == 0 {
		return 0
	}
	d := slices.Clone(s.d)
	sort.Float64s(d)
	return d[min(len(d)-1, int(math.Ceil(q*float64(len(d))))-1)]
}

func (s *zooStats) over(tol float64) int {
	n := 0
	for _, d := range s.d {
		if d > tol {
			n++
		}
	}
	return n
}

func (s *zooStats) String() string {
	return fmt.Sprintf("max %.2e  p95 %.2e  steps %2d  ids equal %2d/%d  >5e-3 %d (ulp-sensitive %d of %d)",
		s.quantile(1), s.quantile(0.95), len(s.d), s.idsSame, len(s.d), s.over(5e-3), s.sensBad, s.sens)
}

// TestGGUFQuantZoo opens every file of shared/models/quant-zoo (every
// llama-quantize type, Q2_K to IQ4_XS, and the kmix files that mix
// K-quants with Q5_0, Q5_1, Q8_0 and IQ4_NL) and teacher-forces
// llama-server's greedy continuation of each of its three prompts: at
// every step the greedy id is llama.cpp's, and the log-probabilities of
// llama.cpp's top 10 lie within 1e-5 of llama.cpp's for every quantized
// file, at every step (the acceptance asks 1e-4 for Q8_0 and, for the
// other types, 5e-3 at 95 % of the steps and 5e-2 at all): a GGUF file
// with quantized weights computes llama.cpp's logits bit for bit
// (gguf_ggml.go), and what is left is llama.cpp's float32 softmax against
// the test's float64 one. The F32 files (nothing rounded, so tracer keeps
// its own float order) are held to the acceptance's 5e-3 and 5e-2. It
// logs, per file and per prompt length, the largest and 95th-percentile
// |Δ log p|.
func TestGGUFQuantZoo(t *testing.T) {
	if testing.Short() {
		t.Skip("28 models × 48 steps: not in -short")
	}
	var ref zooRef
	readJSON(t, refdata.Need(t, "models/quant-zoo/reference.json"), &ref)
	names := make([]string, 0, len(ref.Files))
	for name := range ref.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) != 28 {
		t.Errorf("reference.json lists %d files, want 28", len(names))
	}
	var table []string
	for _, name := range names {
		fr := ref.Files[name]
		t.Run(name, func(t *testing.T) {
			m := openGGUF(t, "models/"+fr.File)
			wt := map[string]int{}
			for dt := range m.Info().WeightTypes {
				wt[strings.ToUpper(dt)]++
			}
			var rounding []string
			for typ := range fr.TensorTypes {
				if wt[typ] == 0 {
					t.Errorf("the file holds %s tensors, the model reports weight types %v", typ, m.Info().WeightTypes)
				}
				if r, ok := zooRounding[typ]; ok && !slices.Contains(rounding, r) {
					rounding = append(rounding, r)
				}
			}
			if got := slices.Sorted(slices.Values(m.Info().ActivationRounding)); !slices.Equal(got, slices.Sorted(slices.Values(rounding))) {
				t.Errorf("activation rounding %v, want %v for tensor types %v", m.Info().ActivationRounding, rounding, fr.TensorTypes)
			}
			tol, loose := 5e-3, 5e-2
			if fr.Type != "F32" {
				tol, loose = 1e-5, 1e-5
			}
			var all zooStats
			var per []string
			for _, c := range fr.Cases {
				var cs zooStats
				logits := stepLogits(t, m, c.PromptIDs, c.NewIDs[:len(c.NewIDs)-1])
				for i, s := range c.Steps {
					lp := logSoftmax64(logits[i])
					got := argmax(logits[i])
					d := 0.0
					for _, e := range s.Top {
						d = max(d, math.Abs(lp[int(e[0])]-e[1]))
					}
					if got != s.ID {
						t.Errorf("prompt of %d ids, step %d: got greedy id %d (log p %.5f), want %d (log p %.5f here, %.5f in llama.cpp)",
							len(c.PromptIDs), i, got, lp[got], s.ID, lp[s.ID], s.Top[0][1])
					}
					if d > loose {
						t.Errorf("prompt of %d ids, step %d: top-10 log-probabilities differ by %.3g, want ≤ %g (ulp-sensitive: %v)",
							len(c.PromptIDs), i, d, loose, s.ULPSensitive)
					}
					cs.add(d, got == s.ID, s.ULPSensitive)
					all.add(d, got == s.ID, s.ULPSensitive)
				}
				per = append(per, fmt.Sprintf("    prompt of %2d ids: %s", len(c.PromptIDs), &cs))
			}
			if float64(all.over(tol)) > 0.05*float64(len(all.d)) {
				t.Errorf("%d of %d steps differ by more than %g, want at most 5 %%", all.over(tol), len(all.d), tol)
			}
			line := fmt.Sprintf("%-13s %s", name, &all)
			t.Log(line + "\n" + strings.Join(per, "\n"))
			table = append(table, line+"\n"+strings.Join(per, "\n"))
		})
	}
	t.Log("per file, top-10 |Δ log p| against llama-server:\n" + strings.Join(table, "\n"))
}

// zooRounding is how llama.cpp rounds the input of a product with weights
// of each ggml type (its vec_dot_type), as Info.ActivationRounding names
// it.
var zooRounding = map[string]string{
	"Q8_0": "q8_0", "Q4_0": "q8_0", "Q5_0": "q8_0", "IQ4_NL": "q8_0", "Q4_1": "q8_1", "Q5_1": "q8_1",
	"Q2_K": "q8_k", "Q3_K": "q8_k", "Q4_K": "q8_k", "Q5_K": "q8_k", "Q6_K": "q8_k", "IQ4_XS": "q8_k",
}

// logSoftmax64 is log softmax(logits) in float64.
func logSoftmax64(logits []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	var s float64
	for _, v := range logits {
		s += math.Exp(float64(v) - mx)
	}
	ls := math.Log(s)
	out := make([]float64, len(logits))
	for i, v := range logits {
		out[i] = float64(v) - mx - ls
	}
	return out
}
