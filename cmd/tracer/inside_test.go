package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tracer/engine/refdata"
	"tracer/trace"
)

// insideRef is what transformers showed inside the forward pass
// (golden/*/inside.json, see golden/INSIDE.md).
type insideRef struct {
	NumLayers int   `json:"num_layers"`
	NumHeads  int   `json:"num_heads"`
	Prompt    []int `json:"prompt"`
	Prefill   struct {
		Attentions [][][][]float64 `json:"attentions"` // [layer][head][query][key]
	} `json:"prefill"`
	Decode struct {
		NewTokens []int `json:"new_tokens"`
		Steps     []struct {
			T          int           `json:"t"`
			Attentions [][][]float64 `json:"attentions"` // [layer][head][key]
			Lens       struct {
				TopIDs    [][]int     `json:"top_ids"`    // [layer][10]
				TopLogits [][]float64 `json:"top_logits"` // [layer][10]
			} `json:"lens"`
		} `json:"steps"`
	} `json:"decode"`
}

// joinIDs writes ids as --prompt-ids wants them: "1,2,3".
func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

// runTrace runs the binary with args and decodes its --json trace.
func runTrace(t *testing.T, args ...string) *trace.Trace {
	t.Helper()
	out, errOut, code := tracer(t, "", append([]string{"run", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("tracer run %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	tr, err := trace.Decode([]byte(out))
	if err != nil {
		t.Fatalf("tracer run %s: %v", strings.Join(args, " "), err)
	}
	return tr
}

// maxDiff is a running maximum of absolute differences.
type maxDiff float64

func (m *maxDiff) add(got float32, want float64) float64 {
	d := math.Abs(float64(got) - want)
	if d > float64(*m) || d != d {
		*m = maxDiff(d)
	}
	return d
}

// TestInsideGolden reproduces every golden model's inside.json from the
// real binary: each decode step's attention and the prefill matrices
// within 1e-4, every layer's lens top-10 ids exactly (two ids may swap only
// where their logits tie within 1e-5) and their logits within 1e-4.
func TestInsideGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(refdata.Need(t, "golden"), "*", "inside.json"))
	if len(files) == 0 {
		t.Fatal("no golden/*/inside.json found")
	}
	for _, file := range files {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var ref insideRef
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			tr := runTrace(t, "--model", dir, "--prompt-ids", joinIDs(ref.Prompt), "--max-new-tokens", fmt.Sprint(len(ref.Decode.Steps)),
				"--do-sample=false", "--repetition-penalty", "1.0", "--record-attention=all", "--record-lens", "10")
			if !slices.Equal(tr.Output.NewIDs, ref.Decode.NewTokens) {
				t.Fatalf("new ids %v, want %v", tr.Output.NewIDs, ref.Decode.NewTokens)
			}
			if len(tr.Steps) != len(ref.Decode.Steps) {
				t.Fatalf("%d steps, want %d", len(tr.Steps), len(ref.Decode.Steps))
			}
			var att, prompt, lens maxDiff
			for s, want := range ref.Decode.Steps {
				in := tr.Steps[s].Rows[0].Inside
				if in == nil {
					t.Fatalf("step %d has no inside", s)
				}
				if len(in.Attention) != ref.NumLayers {
					t.Fatalf("step %d: attention of %d layers, want %d", s, len(in.Attention), ref.NumLayers)
				}
				for l, heads := range in.Attention {
					if len(heads) != ref.NumHeads {
						t.Fatalf("step %d layer %d: attention of %d heads, want %d", s, l, len(heads), ref.NumHeads)
					}
					for h, w := range heads {
						compareWeights(t, fmt.Sprintf("step %d layer %d head %d", s, l, h), w, want.Attentions[l][h], &att)
					}
				}
				if len(in.Lens) != ref.NumLayers {
					t.Fatalf("step %d: lens of %d layers, want %d", s, len(in.Lens), ref.NumLayers)
				}
				for l, got := range in.Lens {
					ids, logits := want.Lens.TopIDs[l], want.Lens.TopLogits[l]
					if len(got) != len(ids) {
						t.Fatalf("step %d layer %d: %d lens entries, want %d", s, l, len(got), len(ids))
					}
					for k, c := range got {
						d := lens.add(c.Logit, logits[k])
						if d > 1e-4 || c.ID != ids[k] && d > 1e-5 {
							t.Errorf("step %d layer %d lens %d: got id %d logit %v, want id %d logit %v", s, l, k, c.ID, c.Logit, ids[k], logits[k])
						}
					}
				}
			}
			pa := tr.Steps[0].Rows[0].Inside.PromptAttention
			if pa == nil {
				t.Fatal("step 0 has no prompt_attention")
			}
			if len(pa) != len(ref.Prefill.Attentions) {
				t.Fatalf("prompt_attention of %d layers, want %d", len(pa), len(ref.Prefill.Attentions))
			}
			for l := range pa {
				if len(pa[l]) != len(ref.Prefill.Attentions[l]) {
					t.Fatalf("prompt_attention layer %d: %d heads, want %d", l, len(pa[l]), len(ref.Prefill.Attentions[l]))
				}
				for h, qs := range pa[l] {
					want := ref.Prefill.Attentions[l][h]
					if len(qs) != len(want) {
						t.Fatalf("prompt_attention layer %d head %d: %d queries, want %d", l, h, len(qs), len(want))
					}
					for q, w := range qs {
						compareWeights(t, fmt.Sprintf("prompt_attention layer %d head %d query %d", l, h, q), w, want[q], &prompt)
					}
				}
			}
			t.Logf("max abs differences: decode attention %.3g, prefill attention %.3g, lens logits %.3g", att, prompt, lens)
		})
	}
}

// compareWeights compares one attention row with want within 1e-4.
func compareWeights(t *testing.T, what string, got trace.Weights, want []float64, m *maxDiff) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d weights, want %d", what, len(got), len(want))
	}
	for k := range got {
		if d := m.add(got[k], want[k]); d > 1e-4 || d != d {
			t.Errorf("%s key %d: got %v, want %v", what, k, got[k], want[k])
		}
	}
}
