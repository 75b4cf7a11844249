package plots_test

import (
	"context"
	"math"
	"testing"

	"tracer/engine"
	"tracer/toy"
	"tracer/trace"
)

// Shapes of SmolLM2-135M, so the hand-built traces read like real ones.
const (
	layers       = 30
	kvPerToken   = 2 * layers * 3 * 64 * 2 // keys and values, 3 KV heads of 64, bf16
	weightBytes  = 269_060_352
	flopsPerTok  = 2 * 134_515_008
	promptTokens = 12
)

// vocab are the candidate tokens of every hand-built step: byte-level and
// SentencePiece spellings, whitespace, a special token, CJK, an invisible.
var vocab = []trace.Candidate{
	{ID: 262, Token: "Ġthe"},
	{ID: 257, Token: " a"},
	{ID: 3797, Token: "▁cat"},
	{ID: 198, Token: "\n"},
	{ID: 278, Token: "ing"},
	{ID: 11, Token: ","},
	{ID: 50256, Token: "<|endoftext|>"},
	{ID: 9999, Token: "日本"},
	{ID: 197, Token: "\t"},
	{ID: 2634, Token: "é"},
	{ID: 8203, Token: "\u200b"},
	{ID: 4242, Token: "supercalifragilistic"},
}

// handTrace builds a sampled run of n steps with temperature 0.7 and top-k
// 5, KV cache and traffic records. With the cache off every step re-feeds
// the whole sequence and keeps no cache.
func handTrace(n int, useCache bool) *trace.Trace {
	t := &trace.Trace{
		Format: trace.Format,
		Model:  trace.Model{Name: "SmolLM2-135M", Kind: "hf", Architecture: "llama", VocabSize: 49152, Layers: layers},
		Options: trace.Options{
			MaxNewTokens: n, DoSample: true, Temperature: 0.7, TopK: 5, TopP: 1, UseCache: useCache, RecordTop: len(vocab),
		},
		Prompt: trace.Prompt{Text: "Once upon a time", IDs: make([]int, promptTokens)},
	}
	for i := range n {
		// Confidence swings from step to step: the top token's logit lead.
		lead := 1 + 2.5*math.Abs(math.Sin(float64(i)*1.3))
		cands := make([]trace.Candidate, len(vocab))
		var z float64
		for k := range vocab {
			z += math.Exp(-lead * float64(k) * 0.6)
		}
		var h float64
		for k, c := range vocab {
			c.Logit = float32(-lead * float64(k) * 0.6)
			c.Prob = math.Exp(float64(c.Logit)) / z
			h -= c.Prob * math.Log(c.Prob)
			cands[k] = c
		}
		final := &trace.Final{KeptCount: 5}
		var fz float64
		for k := range 5 {
			fz += math.Pow(cands[k].Prob, 1/0.7)
		}
		for k := range 5 {
			final.IDs = append(final.IDs, cands[k].ID)
			final.Probs = append(final.Probs, math.Pow(cands[k].Prob, 1/0.7)/fz)
		}
		pick := i % 3 // not always the top token: it was sampled
		fed, past := 1, promptTokens+i-1
		phase := trace.PhaseDecode
		switch {
		case !useCache:
			fed, past, phase = promptTokens+i, 0, trace.PhaseFull
		case i == 0:
			fed, past, phase = promptTokens, 0, trace.PhasePrefill
		}
		st := trace.Step{
			Index: i,
			Phase: phase,
			Rows: []trace.StepRow{{
				Context:    promptTokens + i,
				Candidates: cands,
				Entropy:    h,
				Final:      final,
				Chosen:     trace.Chosen{ID: cands[pick].ID, Token: cands[pick].Token, Prob: final.Probs[pick], Rank: pick + 1, By: trace.BySample},
			}},
			Traffic: &trace.Traffic{
				WeightBytes:  weightBytes,
				KVReadBytes:  int64(past * kvPerToken),
				KVWriteBytes: int64(fed * kvPerToken),
				FLOPs:        int64(fed*flopsPerTok + 4*layers*fed*(past+fed)*576),
			},
			ElapsedNS: int64(7_000_000 + fed*1_400_000 + past*20_000),
		}
		if useCache {
			pos := promptTokens + i
			st.KV = &trace.KV{Positions: pos, Bytes: int64(pos * kvPerToken)}
		}
		t.Steps = append(t.Steps, st)
	}
	return t
}

// toyTrace generates the toy's lesson, greedily, as the toy's own tests do.
func toyTrace(t testing.TB) *trace.Trace {
	t.Helper()
	m := toy.New(toy.Lesson())
	opts, notices, err := engine.Resolve(m.Info(), m.GenerationConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := engine.Generate(context.Background(), engine.Request{
		Model: m, Tokenizer: m, Prompts: [][]int{{0}}, Options: opts, Notices: notices, Record: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
