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

// TestRunGoldenModel runs the binary on every golden model's greedy/p0 case
// and compares the new ids and every step's top-50 logits with what
// transformers recorded.
func TestRunGoldenModel(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(refdata.Need(t, "golden"), "tiny-*"))
	if len(dirs) == 0 {
		t.Fatal("no golden models tiny-* in the shared golden folder")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			g := readGreedyP0(t, dir)
			ids := strings.Trim(strings.ReplaceAll(fmt.Sprint(g.InputIDs[0]), " ", ","), "[]")
			// The case passes do_sample=False and repetition_penalty=1.0,
			// which override tiny-qwen2's generation_config.json (sampling,
			// penalty 1.1); say so on the command line too.
			out, errOut, code := tracer(t, "", "run", "--model", dir, "--prompt-ids", ids, "--max-new-tokens", "12", "--json", "--record-top", "50",
				"--do-sample=false", "--repetition-penalty", "1.0")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			tr, err := trace.Decode([]byte(out))
			if err != nil {
				t.Fatal(err)
			}
			if want := g.Sequences[0][len(g.InputIDs[0]):]; !slices.Equal(tr.Output.NewIDs, want) {
				t.Fatalf("new ids %v, want %v", tr.Output.NewIDs, want)
			}
			for s, st := range g.Steps {
				row := st.Rows[0]
				wantIDs, wantLogits := row.TopIDs, row.TopLogits
				if row.Logits != nil {
					wantIDs, wantLogits = top50(row.Logits)
				}
				got := tr.Steps[s].Rows[0].Candidates
				if len(got) != 50 {
					t.Fatalf("step %d: %d candidates, want 50", s, len(got))
				}
				for i := range got {
					d := math.Abs(float64(got[i].Logit - wantLogits[i]))
					if d > 1e-4 || got[i].ID != wantIDs[i] && d > 1e-5 {
						t.Fatalf("step %d candidate %d: id %d logit %v, want id %d logit %v", s, i, got[i].ID, got[i].Logit, wantIDs[i], wantLogits[i])
					}
				}
			}
		})
	}
}

type greedyCase struct {
	InputIDs  [][]int `json:"input_ids"`
	Sequences [][]int `json:"sequences"`
	Steps     []struct {
		Rows []struct {
			TopIDs    []int     `json:"top_ids"`
			TopLogits []float32 `json:"top_logits"`
			Logits    []float32 `json:"logits"`
		} `json:"rows"`
	} `json:"steps"`
}

func readGreedyP0(t *testing.T, dir string) greedyCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	for _, raw := range g.Cases {
		var head struct{ Name string }
		json.Unmarshal(raw, &head)
		if head.Name == "greedy/p0" {
			var c greedyCase
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatalf("%s: no greedy/p0 case", dir)
	return greedyCase{}
}

// top50 returns the 50 largest logits and their ids, ties by lower id.
func top50(l []float32) ([]int, []float32) {
	ids := make([]int, len(l))
	for i := range ids {
		ids[i] = i
	}
	slices.SortStableFunc(ids, func(a, b int) int {
		switch {
		case l[a] > l[b]:
			return -1
		case l[a] < l[b]:
			return 1
		}
		return 0
	})
	ids = ids[:50]
	out := make([]float32, 50)
	for i, id := range ids {
		out[i] = l[id]
	}
	return ids, out
}

// TestRunUsesGenerationConfig checks the layering of options on tiny-qwen2,
// whose generation_config.json turns sampling on like Qwen2.5-Instruct's:
// transformers' defaults < the file < flags, each value's source recorded,
// and the default length of 20 with its notice when no length is given.
func TestRunUsesGenerationConfig(t *testing.T) {
	dir := refdata.Need(t, "golden/tiny-qwen2")
	out, errOut, code := tracer(t, "", "run", "--model", dir, "--prompt-ids", "176,100,8,326,245,28,460", "--json", "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	tr, err := trace.Decode([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	o := tr.Options
	if !o.DoSample || o.Sources["do_sample"] != "generation_config" || o.TopK != 20 || o.TopP != 0.8 || o.Sources["seed"] != "user" {
		t.Errorf("options %+v, want sampling from generation_config.json (top_k 20, top_p 0.8) and a user seed", o)
	}
	if o.MaxLength != 20 || o.Sources["max_length"] != "default" || len(tr.Steps) > 13 || !strings.Contains(strings.Join(tr.Notices, " "), "max_new_tokens") {
		t.Errorf("max_length %d (%s), %d steps, notices %q; want the default 20 with a notice", o.MaxLength, o.Sources["max_length"], len(tr.Steps), tr.Notices)
	}
	var stages []string
	for _, s := range tr.Steps[0].Rows[0].Stages {
		stages = append(stages, s.Name)
	}
	if want := []string{"repetition_penalty", "temperature", "top_k", "top_p"}; !slices.Equal(stages, want) {
		t.Errorf("stages %v, want %v", stages, want)
	}
	out, _, _ = tracer(t, "", "run", "--model", dir, "--prompt-ids", "176,100,8", "--json", "--do-sample=false", "--max-new-tokens", "3")
	if tr, err = trace.Decode([]byte(out)); err != nil {
		t.Fatal(err)
	}
	if tr.Options.DoSample || tr.Options.Sources["do_sample"] != "user" || tr.Steps[0].Rows[0].Chosen.By != trace.ByGreedy {
		t.Errorf("--do-sample=false: options %+v, chosen by %s; want greedy from the user", tr.Options, tr.Steps[0].Rows[0].Chosen.By)
	}
}
