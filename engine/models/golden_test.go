package models_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/engine/refdata"
	"tracer/trace"
)

// The goldens in ../shared/golden were recorded from transformers 4.44.2
// generate(); see its README. These tests drive the real generation loop
// (processors, batching, padding, EOS, beams) on the real architectures and
// compare with them.

type goldenFile struct {
	Cases []goldenCase `json:"cases"`
}

type goldenCase struct {
	Name           string          `json:"name"`
	Kind           string          `json:"kind"`
	InputIDs       [][]int         `json:"input_ids"`
	AttentionMask  [][]int         `json:"attention_mask"`
	PaddingSide    *string         `json:"padding_side"`
	GenerateKwargs json.RawMessage `json:"generate_kwargs"`
	Sequences      [][]int         `json:"sequences"`
	SeqScores      []float32       `json:"sequences_scores"`
	Steps          []struct {
		Rows []struct {
			Argmax    int              `json:"argmax"`
			TopIDs    []int            `json:"top_ids"`
			TopLogits []float32        `json:"top_logits"`
			Logits    []float32        `json:"logits"`
			Token     int              `json:"token"`
			Processed *goldenProcessed `json:"processed"`
		} `json:"rows"`
	} `json:"steps"`
}

type goldenProcessed struct {
	KeptCount int       `json:"kept_count"`
	Truncated bool      `json:"truncated"`
	IDs       []int     `json:"ids"`
	Probs     []float64 `json:"probs"`
}

var goldenCache sync.Map // dir -> *goldenFile

func loadGolden(t *testing.T, dir string) *goldenFile {
	t.Helper()
	if g, ok := goldenCache.Load(dir); ok {
		return g.(*goldenFile)
	}
	data, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	goldenCache.Store(dir, &g)
	return &g
}

func goldenModels(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(refdata.Need(t, "golden"), "tiny-*"))
	if len(dirs) == 0 {
		t.Fatal("no golden models tiny-* in the shared golden folder")
	}
	return dirs
}

// unpad recovers each row's prompt from a padded batch and its mask.
func unpad(ids, mask [][]int) [][]int {
	out := make([][]int, len(ids))
	for r := range ids {
		for i, id := range ids[r] {
			if mask[r][i] == 1 {
				out[r] = append(out[r], id)
			}
		}
	}
	return out
}

// run generates a case with the loop, recording every step.
func run(t *testing.T, m *models.Loaded, c goldenCase, force [][]int) *trace.Trace {
	t.Helper()
	var user engine.Settings
	if err := json.Unmarshal(c.GenerateKwargs, &user); err != nil {
		t.Fatalf("generate_kwargs: %v", err)
	}
	req, err := m.Request(models.Input{IDs: unpad(c.InputIDs, c.AttentionMask)}, &user)
	if err != nil {
		t.Fatal(err)
	}
	if c.PaddingSide != nil {
		req.Options.Padding = *c.PaddingSide
	}
	req.Options.RecordTop = 50
	if c.Kind == "sample" || c.Kind == "sample_batch" {
		req.Options.RecordTop = 128 // golden lists every kept token up to 128, else the best 50
	}
	req.Force = force
	req.Record = true
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func sequences(tr *trace.Trace) [][]int {
	if tr.Output.Sequences != nil {
		return tr.Output.Sequences
	}
	return [][]int{tr.Output.IDs}
}

func TestGoldenGreedyBatchEOSAndPenalty(t *testing.T) {
	for _, dir := range goldenModels(t) {
		m, err := models.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range loadGolden(t, dir).Cases {
			if c.Kind != "greedy" && c.Kind != "greedy_batch" || strings.Contains(c.Name, "bf16_compute") {
				continue
			}
			t.Run(filepath.Base(dir)+"/"+c.Name, func(t *testing.T) {
				tr := run(t, m, c, nil)
				if got := sequences(tr); !slices.EqualFunc(got, c.Sequences, slices.Equal) {
					t.Fatalf("sequences\n got %v\nwant %v", got, c.Sequences)
				}
				// Raw logits of every row at every step, top 50.
				worst := 0.0
				for s, st := range c.Steps {
					for r, row := range st.Rows {
						got := tr.Steps[s].Rows[r].Candidates
						ids, logits := row.TopIDs, row.TopLogits
						if row.Logits != nil {
							ids, logits = topOf(row.Logits, 50)
						}
						for i := range min(len(ids), len(got), 20) {
							d := math.Abs(float64(got[i].Logit - logits[i]))
							worst = max(worst, d)
							if got[i].ID != ids[i] && d > 1e-4 {
								t.Fatalf("step %d row %d: candidate %d is %d (%v), want %d (%v)", s, r, i, got[i].ID, got[i].Logit, ids[i], logits[i])
							}
						}
					}
				}
				if worst > 1e-4 {
					t.Errorf("largest logit difference %.3g, want <= 1e-4", worst)
				}
			})
		}
	}
}

// topOf returns the n largest logits and their ids (ties by lower id).
func topOf(l []float32, n int) ([]int, []float32) {
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
	ids = ids[:min(n, len(ids))]
	out := make([]float32, len(ids))
	for i, id := range ids {
		out[i] = l[id]
	}
	return ids, out
}

func TestGoldenSamplingDistributions(t *testing.T) {
	for _, dir := range goldenModels(t) {
		m, err := models.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range loadGolden(t, dir).Cases {
			if c.Kind != "sample" && c.Kind != "sample_batch" {
				continue
			}
			t.Run(filepath.Base(dir)+"/"+c.Name, func(t *testing.T) {
				// Teacher-force the recorded continuation of every row.
				force := make([][]int, len(c.Sequences))
				for r, seq := range c.Sequences {
					force[r] = seq[len(c.InputIDs[r]):]
				}
				tr := run(t, m, c, force)
				for s, st := range c.Steps {
					for r, row := range st.Rows {
						want := row.Processed
						if want == nil {
							continue
						}
						got := tr.Steps[s].Rows[r].Final
						if got == nil {
							t.Fatalf("step %d row %d: no final distribution recorded", s, r)
						}
						if got.KeptCount != want.KeptCount {
							t.Errorf("step %d row %d: kept %d tokens, want %d", s, r, got.KeptCount, want.KeptCount)
							continue
						}
						gotP := map[int]float64{}
						for i, id := range got.IDs {
							gotP[id] = got.Probs[i]
						}
						for i, id := range want.IDs {
							p, ok := gotP[id]
							if !ok && !want.Truncated {
								t.Errorf("step %d row %d: token %d (p=%v) is not kept", s, r, id, want.Probs[i])
								continue
							}
							if ok && math.Abs(p-want.Probs[i]) > 1e-5+1e-4*want.Probs[i] {
								t.Errorf("step %d row %d: token %d has p=%v, want %v", s, r, id, p, want.Probs[i])
							}
						}
					}
				}
			})
		}
	}
}

func TestGoldenBeamSearch(t *testing.T) {
	for _, dir := range goldenModels(t) {
		m, err := models.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range loadGolden(t, dir).Cases {
			if c.Kind != "beam" {
				continue
			}
			t.Run(filepath.Base(dir)+"/"+c.Name, func(t *testing.T) {
				tr := run(t, m, c, nil)
				if got := tr.Output.Sequences; !slices.EqualFunc(got, c.Sequences, slices.Equal) {
					t.Fatalf("sequences\n got %v\nwant %v", got, c.Sequences)
				}
				for i, s := range c.SeqScores {
					if d := math.Abs(float64(tr.Output.SequencesScores[i] - s)); d > 1e-4 {
						t.Errorf("sequence %d: score %v, want %v", i, tr.Output.SequencesScores[i], s)
					}
				}
			})
		}
	}
}
