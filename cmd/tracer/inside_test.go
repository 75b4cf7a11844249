package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tracer/engine/bench"
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

// TestInsideStories260K checks the llama2.c path on stories260K: every
// recorded attention row holds one weight per position and sums to 1
// within 1e-5, and the last layer's lens is the step's own candidates
// (same ids, logits within 1e-5), since it is the model's logits.
func TestInsideStories260K(t *testing.T) {
	bin := refdata.Need(t, "models/stories260K/stories260K.bin")
	tr := runTrace(t, "--model", bin, "--prompt", "Once upon a time", "--max-new-tokens", "12",
		"--record-attention=all", "--record-lens", "20", "--record-top", "20")
	if len(tr.Steps) != 12 {
		t.Fatalf("%d steps, want 12", len(tr.Steps))
	}
	sums := func(what string, w trace.Weights, keys int) {
		t.Helper()
		if len(w) != keys {
			t.Fatalf("%s: %d weights, want %d", what, len(w), keys)
		}
		var sum float64
		for _, v := range w {
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("%s sums to %v, want 1 within 1e-5", what, sum)
		}
	}
	for s, st := range tr.Steps {
		row := st.Rows[0]
		in := row.Inside
		if in == nil || len(in.Attention) != tr.Model.Layers || len(in.Lens) != tr.Model.Layers {
			t.Fatalf("step %d: inside %+v, want attention and lens of %d layers", s, in, tr.Model.Layers)
		}
		for l, heads := range in.Attention {
			if len(heads) != tr.Model.Heads {
				t.Fatalf("step %d layer %d: %d heads, want %d", s, l, len(heads), tr.Model.Heads)
			}
			for h, w := range heads {
				sums(fmt.Sprintf("step %d layer %d head %d", s, l, h), w, row.Context)
			}
		}
		for l, heads := range in.PromptAttention {
			for h, qs := range heads {
				for q, w := range qs {
					sums(fmt.Sprintf("prompt layer %d head %d query %d", l, h, q), w, len(row.InputIDs))
				}
			}
		}
		last, cands := in.Lens[len(in.Lens)-1], row.Candidates
		if len(last) != len(cands) {
			t.Fatalf("step %d: last layer's lens has %d entries, candidates %d", s, len(last), len(cands))
		}
		for k := range last {
			if last[k].ID != cands[k].ID || math.Abs(float64(last[k].Logit-cands[k].Logit)) > 1e-5 {
				t.Errorf("step %d rank %d: last layer's lens id %d logit %v, candidate id %d logit %v", s, k, last[k].ID, last[k].Logit, cands[k].ID, cands[k].Logit)
			}
		}
	}
	if tr.Steps[0].Rows[0].Inside.PromptAttention == nil || tr.Steps[1].Rows[0].Inside.PromptAttention != nil {
		t.Errorf("prompt_attention at steps 0 and 1: %v and %v, want only at step 0",
			tr.Steps[0].Rows[0].Inside.PromptAttention != nil, tr.Steps[1].Rows[0].Inside.PromptAttention != nil)
	}
}

// sameInside compares a row's inside view with a single unpadded run's
// (want): the row holds pad extra positions in front (left padding), whose
// weights must be exactly 0; the rest must agree within 1e-5 (attention)
// and 1e-4 (lens logits, ids exact).
func sameInside(t *testing.T, what string, got, want *trace.Inside, pad int) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("%s: inside %v, want %v", what, got, want)
	}
	row := func(at string, g, w trace.Weights) {
		t.Helper()
		if len(g) != len(w)+pad {
			t.Fatalf("%s: %d weights, want %d (+%d pads)", at, len(g), len(w), pad)
		}
		for k := range g {
			var want float32
			if k >= pad {
				want = w[k-pad]
			}
			if d := math.Abs(float64(g[k] - want)); d > 1e-5 || k < pad && g[k] != 0 {
				t.Fatalf("%s key %d: got %v, want %v", at, k, g[k], want)
			}
		}
	}
	if len(got.Attention) != len(want.Attention) {
		t.Fatalf("%s: attention of %d layers, want %d", what, len(got.Attention), len(want.Attention))
	}
	for l := range got.Attention {
		for h := range got.Attention[l] {
			row(fmt.Sprintf("%s attention layer %d head %d", what, l, h), got.Attention[l][h], want.Attention[l][h])
		}
	}
	if (got.PromptAttention == nil) != (want.PromptAttention == nil) {
		t.Fatalf("%s: prompt_attention recorded %v, want %v", what, got.PromptAttention != nil, want.PromptAttention != nil)
	}
	for l := range got.PromptAttention {
		for h := range got.PromptAttention[l] {
			qs := got.PromptAttention[l][h][pad:] // a pad's own query is not the single run's
			for q := range qs {
				row(fmt.Sprintf("%s prompt layer %d head %d query %d", what, l, h, q), qs[q], want.PromptAttention[l][h][q])
			}
		}
	}
	if len(got.Lens) != len(want.Lens) {
		t.Fatalf("%s: lens of %d layers, want %d", what, len(got.Lens), len(want.Lens))
	}
	for l := range got.Lens {
		for k := range got.Lens[l] {
			g, w := got.Lens[l][k], want.Lens[l][k]
			if g.ID != w.ID || math.Abs(float64(g.Logit-w.Logit)) > 1e-4 {
				t.Fatalf("%s lens layer %d rank %d: got id %d logit %v, want id %d logit %v", what, l, k, g.ID, g.Logit, w.ID, w.Logit)
			}
		}
	}
}

// TestInsideSameNumbers checks that what is recorded inside does not
// depend on how the row was run: a left-padded row of a batch, every beam
// of a beam search, and a run with the cache off give the single unpadded
// cached row's numbers.
func TestInsideSameNumbers(t *testing.T) {
	golden := refdata.Need(t, "golden")
	for _, name := range []string{"tiny-llama", "tiny-gpt2", "tiny-qwen2"} {
		dir := filepath.Join(golden, name)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "inside.json"))
			if err != nil {
				t.Fatal(err)
			}
			var ref insideRef
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatal(err)
			}
			prompt := joinIDs(ref.Prompt)
			longer := joinIDs(append(slices.Clone(ref.Prompt), ref.Prompt[:3]...))
			common := []string{"--model", dir, "--max-new-tokens", "4", "--do-sample=false", "--repetition-penalty", "1.0",
				"--record-attention=all", "--record-lens", "10", "--eos-id", "0"}
			single := runTrace(t, append([]string{"--prompt-ids", prompt}, common...)...)

			t.Run("cache off", func(t *testing.T) {
				tr := runTrace(t, append([]string{"--prompt-ids", prompt, "--no-cache"}, common...)...)
				for s := range single.Steps {
					sameInside(t, fmt.Sprintf("step %d", s), tr.Steps[s].Rows[0].Inside, single.Steps[s].Rows[0].Inside, 0)
				}
			})
			t.Run("batch left padded", func(t *testing.T) {
				tr := runTrace(t, append([]string{"--prompt-ids", prompt + ";" + longer}, common...)...)
				for s := range single.Steps {
					sameInside(t, fmt.Sprintf("step %d", s), tr.Steps[s].Rows[0].Inside, single.Steps[s].Rows[0].Inside, 3)
				}
			})
			t.Run("beams", func(t *testing.T) {
				tr := runTrace(t, append([]string{"--prompt-ids", prompt, "--num-beams", "3"}, common...)...)
				for r, row := range tr.Steps[0].Rows {
					sameInside(t, fmt.Sprintf("step 0 beam %d", r), row.Inside, single.Steps[0].Rows[0].Inside, 0)
				}
				// At step 1 one beam continues the greedy token: after
				// the cache's reorder it must still see the greedy run's
				// keys.
				found := false
				for r, row := range tr.Steps[1].Rows {
					if slices.Equal(row.InputIDs, single.Steps[1].Rows[0].InputIDs) {
						found = true
						sameInside(t, fmt.Sprintf("step 1 beam %d", r), row.Inside, single.Steps[1].Rows[0].Inside, 0)
					}
				}
				if !found {
					t.Errorf("no beam at step 1 continues the greedy token %v", single.Steps[1].Rows[0].InputIDs)
				}
			})
		})
	}
}

// TestInsideUsageErrors checks the flags' errors: each names the flag and
// says what to do, with the usage exit status.
func TestInsideUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"attention without a trace", []string{"run", "--model", "toy", "--record-attention"}, "add --json or --out FILE"},
		{"lens without a trace", []string{"run", "--model", "toy", "--record-lens", "5"}, "add --json or --out FILE"},
		{"negative lens", []string{"run", "--model", "toy", "--record-lens", "-1", "--json"}, "--record-lens must be 0 (off) or more"},
		{"unknown attention value", []string{"run", "--model", "toy", "--record-attention=some", "--json"}, `--record-attention=all (also the prompt's matrices), got "some"`},
		{"all without =", []string{"run", "--model", "toy", "--json", "--record-attention", "all"}, "write --record-attention=all (with =)"},
		{"toy has no inside", []string{"run", "--model", "toy", "--record-attention", "--json"}, "record_attention, record_lens and record_forward need a transformer"},
		{"forward without a trace", []string{"run", "--model", "toy", "--record-forward", "5"}, "add --json or --out FILE"},
		{"negative forward", []string{"run", "--model", "toy", "--record-forward", "-1", "--json"}, "--record-forward must be 0 (off) or more"},
		{"forward above the cap", []string{"run", "--model", "toy", "--record-forward", "65", "--json"}, "--record-forward must be at most 64 (the heads and MLP neurons kept per layer), got 65: ask for fewer"},
		{"forward not a number", []string{"run", "--model", "toy", "--record-forward", "many", "--json"}, "record-forward"},
		{"toy has no forward pass", []string{"run", "--model", "toy", "--record-forward", "3", "--json"}, "record_forward need a transformer"},
		{"bench negative lens", []string{"bench", "--shape", "gpt2", "--record-lens", "-2"}, "--record-lens must be 0 (off) or more"},
		{"bench forward above the cap", []string{"bench", "--shape", "gpt2", "--record-forward", "65"}, "--record-forward must be 0 (off) to 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := tracer(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, no output and %q", code, out, errOut, exitUsage, tt.want)
			}
		})
	}
}

// TestForwardTrace runs tracer run --record-forward on a golden model of
// each architecture, a quantized GGUF file and stories260K (llama2.c), and
// checks every step's forward pass: one per layer, the heads and neurons
// asked for, layer l+1 entering as layer l leaves, the
// bytes adding up to the step's traffic (weights and cached keys read),
// and the trace reading back and writing to the same bytes. (Its values
// are checked against transformers in engine/arch's TestForwardGolden.)
func TestForwardTrace(t *testing.T) {
	for _, tc := range []struct{ name, model string }{
		{"tiny-gpt2", "golden/tiny-gpt2"},
		{"tiny-llama-bf16", "golden/tiny-llama-bf16"},
		{"tiny-qwen2", "golden/tiny-qwen2"},
		{"gguf-q4_0", "models/tiny-random-llama/gguf/model-q4_0.gguf"},
		{"stories260K", "models/stories260K/stories260K.bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := refdata.Need(t, tc.model)
			const K = 6
			out, errOut, code := tracer(t, "", "run", "--json", "--model", model, "--prompt-ids", "1,5,9,14", "--max-new-tokens", "4",
				"--do-sample=false", "--eos-id", "0", "--record-forward", fmt.Sprint(K))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			tr, err := trace.Decode([]byte(out))
			if err != nil {
				t.Fatal(err)
			}
			// Read back and written again, the trace reads the same; each
			// forward pass writes back to the bytes the run wrote. (A whole
			// trace may not: text with invalid UTF-8 is written \ufffd,
			// then read and written as the character.)
			var again strings.Builder
			if err := trace.Write(&again, tr); err != nil {
				t.Fatal(err)
			}
			if back, err := trace.Decode([]byte(again.String())); err != nil || !reflect.DeepEqual(back, tr) {
				t.Errorf("the trace reads back differently (%v)", err)
			}
			for s, st := range tr.Steps {
				if b, err := json.Marshal(st.Rows[0].Inside); err != nil || !strings.Contains(out, string(b)) {
					t.Errorf("step %d: the inside view does not write back to the bytes the run wrote (%v)", s, err)
				}
			}
			if tr.Options.RecordForward != K || len(tr.Steps) != 4 {
				t.Fatalf("record_forward %d, %d steps; want %d and 4", tr.Options.RecordForward, len(tr.Steps), K)
			}
			for s, st := range tr.Steps {
				in := st.Rows[0].Inside
				if in == nil || in.Forward == nil || in.Attention != nil || in.Lens != nil {
					t.Fatalf("step %d: inside %+v, want the forward pass alone", s, in)
				}
				f := in.Forward
				if len(f.Layers) != tr.Model.Layers || !(f.Embedding > 0) || !(f.Final > 0) {
					t.Fatalf("step %d: forward of %d layers (model: %d), embedding %v, final %v", s, len(f.Layers), tr.Model.Layers, f.Embedding, f.Final)
				}
				bytes := f.EmbedBytes + f.UnembedBytes
				for l, fl := range f.Layers {
					prev := f.Embedding
					if l > 0 {
						prev = f.Layers[l-1].Out
					}
					if fl.In != prev || len(fl.Heads) != min(K, tr.Model.Heads) || len(fl.Neurons) != K {
						t.Fatalf("step %d layer %d: in %v (previous out %v), %d heads, %d neurons", s, l, fl.In, prev, len(fl.Heads), len(fl.Neurons))
					}
					bytes += fl.AttnBytes + fl.MLPBytes
				}
				if tr := st.Traffic; tr == nil || bytes != tr.WeightBytes+tr.KVReadBytes {
					t.Errorf("step %d: the forward pass's bytes add up to %d, want the traffic's weights and KV reads (%+v)", s, bytes, tr)
				}
			}
		})
	}
}

// TestInsideOffLeavesTraceAlone checks that a run without the flags
// records nothing inside and says so in no option, so traces stay as they
// were.
func TestInsideOffLeavesTraceAlone(t *testing.T) {
	dir := refdata.Need(t, "golden/tiny-llama")
	out, errOut, code := tracer(t, "", "run", "--json", "--model", dir, "--prompt-ids", "1,2,3", "--max-new-tokens", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, field := range []string{`"inside"`, `"record_attention"`, `"record_lens"`, `"record_forward"`, `"forward"`} {
		if strings.Contains(out, field) {
			t.Errorf("the trace holds %s, want it absent when not recorded", field)
		}
	}
}

// TestInsideBench runs tracer bench with the inside recorded on
// stories260K, briefly, and checks that the report says what was recorded
// and measured it.
func TestInsideBench(t *testing.T) {
	bin := refdata.Need(t, "models/stories260K/stories260K.bin")
	out, errOut, code := tracer(t, "", "bench", "--model", bin, "--threads", "2", "--prompt-len", "4",
		"--new-tokens", "6", "--reps", "1", "--probe-mib", "8", "--record-attention", "--record-lens", "10", "--record-forward", "5", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if r.Record == nil || r.Record.Attention != "step" || r.Record.Lens != 10 || r.Record.Forward != 5 || !(r.Record.OnTokensPerSec.Median > 0) || !(r.Record.Ratio > 0) {
		t.Errorf("record report %+v, want attention \"step\", lens 10, forward 5 and measured speeds", r.Record)
	}
}
