package arch

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"tracer/engine/refdata"

	"tracer/engine"
	"tracer/engine/tensor"
)

// goldenDir returns the folder of a reference model with transformers'
// generations (shared/golden), found through refdata.
func goldenDir(t *testing.T, name string) string {
	t.Helper()
	return refdata.Need(t, "golden/"+name)
}

// goldenModels are the reference models, each checked on its own golden.json.
var goldenModels = []string{"tiny-gpt2", "tiny-gpt2-v512", "tiny-llama", "tiny-llama-bf16", "tiny-llama-v512", "tiny-qwen2"}

// logitTol is the largest accepted difference from a transformers logit.
const logitTol = 1e-4

// golden is the part of a golden.json the model tests read.
type golden struct {
	Model   string `json:"model"`
	Special struct {
		EOS json.RawMessage `json:"eos_token_id"`
	} `json:"special_tokens"`
	Prefill struct {
		InputIDs     []int         `json:"input_ids"`
		HiddenStates [][][]float32 `json:"hidden_states"` // [layers+1][seq][hidden]
		PreNorm      [][]float32   `json:"last_layer_output_pre_norm"`
		Logits       []logitRecord `json:"logits"`
		KVCache      []struct {
			Layer int           `json:"layer"`
			Key   [][][]float32 `json:"key"`   // [kv_heads][seq][head_dim]
			Value [][][]float32 `json:"value"` // [kv_heads][seq][head_dim]
		} `json:"kv_cache"`
	} `json:"prefill"`
	Cases []goldenCase `json:"cases"`
}

// logitRecord is one row's raw next-token logits at one step: every logit,
// or the 50 (beam: K) largest.
type logitRecord struct {
	Argmax    int       `json:"argmax"`
	Max       float32   `json:"max"`
	Logsumexp float64   `json:"logsumexp"`
	Logits    []float32 `json:"logits"`
	TopIDs    []int     `json:"top_ids"`
	TopLogits []float32 `json:"top_logits"`
	Token     *int      `json:"token"` // the token generate() appended (not in beam records)
}

type goldenCase struct {
	Name         string  `json:"name"`
	Kind         string  `json:"kind"`
	ComputeDType string  `json:"compute_dtype"`
	Sequences    [][]int `json:"sequences"`
	EOS          []int   `json:"-"` // generate_kwargs' eos_token_id, else the model's
	Kwargs       struct {
		EOS json.RawMessage `json:"eos_token_id"`
	} `json:"generate_kwargs"`
	Pipeline struct {
		Processors []json.RawMessage `json:"processors"`
	} `json:"pipeline"`
	Steps []struct {
		Rows    []logitRecord `json:"rows"`
		BeamIdx []int         `json:"beam_idx"`
		Trace   struct {
			InputIDs      [][]int          `json:"input_ids"`
			PositionIDs   [][]int          `json:"position_ids"`
			AttentionMask [][]int          `json:"attention_mask"`
			KVAfter       *json.RawMessage `json:"kv_after"`
		} `json:"trace"`
	} `json:"steps"`
}

func readGolden(t *testing.T, dir string) *golden {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var g golden
	if err := json.NewDecoder(f).Decode(&g); err != nil {
		t.Fatalf("golden.json: %v", err)
	}
	eos, err := engine.TokenIDs(g.Special.EOS)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.Cases {
		c := &g.Cases[i]
		if c.EOS, err = engine.TokenIDs(c.Kwargs.EOS); err != nil {
			t.Fatal(err)
		}
		if c.Kwargs.EOS == nil {
			c.EOS = eos
		}
	}
	return &g
}

// skipWithoutGolden ends the test when shared/golden is absent: a skip on a
// developer's machine, a failure in CI.
func skipWithoutGolden(t *testing.T) {
	t.Helper()
	refdata.Need(t, "golden")
}

// worst tracks the largest difference seen and where.
type worst struct {
	diff  float64
	where string
}

func (w *worst) see(d float64, where string) {
	if d > w.diff {
		w.diff, w.where = d, where
	}
}

func TestGolden(t *testing.T) {
	skipWithoutGolden(t)
	for _, name := range goldenModels {
		t.Run(name, func(t *testing.T) {
			dir := goldenDir(t, name)
			g := readGolden(t, dir)
			em, err := OpenHF(dir)
			if err != nil {
				t.Fatal(err)
			}
			m := em.(*Model)
			defer m.Close()
			var w worst
			t.Run("prefill", func(t *testing.T) { checkPrefill(t, m, g, &w) })
			for _, c := range g.Cases {
				if c.ComputeDType != "" && c.ComputeDType != "float32" {
					continue // informational bf16-compute runs
				}
				t.Run(c.Name, func(t *testing.T) { teacherForce(t, m, &c, &w) })
			}
			t.Logf("%s: max |logit - transformers| = %.3g (%s)", name, w.diff, w.where)
		})
	}
}

// checkPrefill compares one plain forward over prompt p0: hidden states,
// logits at every position and the KV cache.
func checkPrefill(t *testing.T, m *Model, g *golden, w *worst) {
	ids := g.Prefill.InputIDs
	c, err := m.NewCache(1, len(ids))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.ForwardAll(c, prompt(ids))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(out.Hidden), len(g.Prefill.HiddenStates); got != want {
		t.Fatalf("%d hidden states, want %d", got, want)
	}
	for l, want := range g.Prefill.HiddenStates {
		for pos := range want {
			if d := maxDiff(out.Hidden[l][0][pos], want[pos]); d > logitTol {
				t.Errorf("hidden_states[%d] position %d differs by %g", l, pos, d)
			}
		}
	}
	for pos, want := range g.Prefill.PreNorm {
		if d := maxDiff(out.PreNorm[0][pos], want); d > logitTol {
			t.Errorf("last layer output before the norm, position %d, differs by %g", pos, d)
		}
	}
	for pos, rec := range g.Prefill.Logits {
		d := checkLogits(t, out.Logits[0][pos], rec, fmt.Sprintf("position %d", pos))
		w.see(d, fmt.Sprintf("prefill position %d", pos))
	}
	cache := c.(*Cache)
	for _, layer := range g.Prefill.KVCache {
		for h := range layer.Key {
			for pos := range layer.Key[h] {
				if d := maxDiff(cache.Keys(layer.Layer, 0, h, pos), layer.Key[h][pos]); d > logitTol {
					t.Errorf("layer %d kv head %d position %d: key differs by %g", layer.Layer, h, pos, d)
				}
				if d := maxDiff(cache.Values(layer.Layer, 0, h, pos), layer.Value[h][pos]); d > logitTol {
					t.Errorf("layer %d kv head %d position %d: value differs by %g", layer.Layer, h, pos, d)
				}
			}
		}
	}
}

// teacherForce replays a case: each step feeds what transformers' forward
// received (its trace: input ids, position ids, attention mask), on one
// cache (or a fresh one each step when the case ran without a cache, or
// reordered by beam_idx between beam-search steps), and compares every
// row's logits.
func teacherForce(t *testing.T, m *Model, c *goldenCase, w *worst) {
	rows := len(c.Steps[0].Trace.InputIDs)
	useCache := c.Steps[0].Trace.KVAfter != nil
	capacity := len(c.Steps[len(c.Steps)-1].Trace.AttentionMask[0])
	var cache engine.Cache
	logits := make([][]float32, rows)
	for r := range logits {
		logits[r] = make([]float32, m.Info().VocabSize)
	}
	// Plain greedy search appends the argmax (until a row finishes: then pads).
	greedy := (c.Kind == "greedy" || c.Kind == "greedy_batch") && len(c.Pipeline.Processors) == 0
	finished := make([]bool, rows)
	for s, step := range c.Steps {
		if cache == nil || !useCache {
			var err error
			if cache, err = m.NewCache(rows, capacity); err != nil {
				t.Fatal(err)
			}
		}
		tr := step.Trace
		b := &engine.Batch{Tokens: tr.InputIDs, Positions: tr.PositionIDs, Mask: boolMask(tr.AttentionMask)}
		if err := m.Forward(cache, b, logits); err != nil {
			t.Fatalf("step %d: %v", s, err)
		}
		for r, rec := range step.Rows {
			where := fmt.Sprintf("step %d row %d", s, r)
			w.see(checkLogits(t, logits[r], rec, where), c.Name+" "+where)
			if greedy && !finished[r] && rec.Token != nil {
				if got := tensor.Argmax(logits[r]); got != *rec.Token {
					t.Errorf("%s: greedy token %d, transformers chose %d", where, got, *rec.Token)
				}
				finished[r] = eosStop(c, *rec.Token)
			}
		}
		if c.Kind == "beam" && s+1 < len(c.Steps) {
			cache.Reorder(step.BeamIdx)
		}
	}
}

// eosStop reports whether tok ends a row in case c: an eos id passed to
// generate(), or the model's.
func eosStop(c *goldenCase, tok int) bool {
	for _, e := range c.EOS {
		if e == tok {
			return true
		}
	}
	return false
}

// checkLogits compares logits with a record: every recorded logit within
// logitTol, the argmax, the max and the log-sum-exp. It returns the largest
// difference.
func checkLogits(t *testing.T, got []float32, rec logitRecord, where string) float64 {
	t.Helper()
	var d float64
	if rec.Logits != nil {
		d = maxDiff(got, rec.Logits)
	}
	for i, id := range rec.TopIDs {
		d = math.Max(d, math.Abs(float64(got[id])-float64(rec.TopLogits[i])))
	}
	if d > logitTol {
		t.Errorf("%s: logits differ by %g", where, d)
	}
	if a := tensor.Argmax(got); a != rec.Argmax {
		t.Errorf("%s: argmax %d (%v), transformers %d (%v, ours %v)", where, a, got[a], rec.Argmax, rec.Max, got[rec.Argmax])
	}
	if diff := math.Abs(float64(got[rec.Argmax]) - float64(rec.Max)); diff > logitTol {
		t.Errorf("%s: max logit %v, transformers %v", where, got[rec.Argmax], rec.Max)
	}
	if lse := logSumExp(got); math.Abs(lse-rec.Logsumexp) > logitTol {
		t.Errorf("%s: logsumexp %v, transformers %v", where, lse, rec.Logsumexp)
	}
	return d
}

func maxDiff(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var d float64
	for i := range got {
		d = math.Max(d, math.Abs(float64(got[i])-float64(want[i])))
	}
	return d
}

func logSumExp(x []float32) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}

// prompt is a one-row batch feeding ids at positions 0.. with no padding.
func prompt(ids []int) *engine.Batch {
	pos := make([]int, len(ids))
	mask := make([]bool, len(ids))
	for i := range pos {
		pos[i], mask[i] = i, true
	}
	return &engine.Batch{Tokens: [][]int{ids}, Positions: [][]int{pos}, Mask: [][]bool{mask}}
}

func boolMask(m [][]int) [][]bool {
	out := make([][]bool, len(m))
	for r, row := range m {
		out[r] = make([]bool, len(row))
		for i, v := range row {
			out[r][i] = v != 0
		}
	}
	return out
}
