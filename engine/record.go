package engine

import (
	"math"
	"slices"

	"tracer/engine/tokenizer"
	"tracer/trace"
)

// topIDs returns the ids of the n highest finite scores of s, by descending
// score, ties by lower id.
func topIDs(s []float32, n int) []int {
	if n <= 0 {
		return nil
	}
	// h is a min-heap (by better()) of the best n seen so far.
	h := make([]int, 0, n)
	worse := func(a, b int) bool { // a ranks below b
		return s[a] < s[b] || s[a] == s[b] && a > b
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			c := l
			if r := l + 1; r < len(h) && worse(h[r], h[l]) {
				c = r
			}
			if !worse(h[c], h[i]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for id, v := range s {
		if math.IsInf(float64(v), -1) || math.IsNaN(float64(v)) {
			continue
		}
		if len(h) < n {
			h = append(h, id)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !worse(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if worse(h[0], id) {
			h[0] = id
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b int) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return h
}

// logSumExp returns log(sum(exp(s))) in float64 over the finite scores.
func logSumExp(s []float32) float64 {
	m := math.Inf(-1)
	for _, v := range s {
		m = math.Max(m, float64(v))
	}
	if math.IsInf(m, -1) {
		return m
	}
	var sum float64
	for _, v := range s {
		sum += math.Exp(float64(v) - m)
	}
	return m + math.Log(sum)
}

// recorder turns one row's logits into the trace's view of a step. Its
// methods allocate: it runs only when recording is on.
type recorder struct {
	tok  tokenizer.Tokenizer // may be nil
	top  int                 // candidates per list
	full bool                // record every raw logit
}

func (r *recorder) token(id int) string {
	if r.tok == nil {
		return ""
	}
	return r.tok.Token(id)
}

// candidates lists the top entries of s with their softmax probabilities.
func (r *recorder) candidates(s []float32, lse float64) []trace.Candidate {
	ids := topIDs(s, r.top)
	out := make([]trace.Candidate, len(ids))
	for i, id := range ids {
		out[i] = trace.Candidate{ID: id, Token: r.token(id), Logit: s[id], Prob: math.Exp(float64(s[id]) - lse)}
	}
	return out
}

// raw fills the raw view of a row: candidates, entropy and, when asked, the
// full logits.
func (r *recorder) raw(row *trace.StepRow, logits []float32) {
	lse := logSumExp(logits)
	row.Candidates = r.candidates(logits, lse)
	var h float64
	for _, v := range logits {
		if p := math.Exp(float64(v) - lse); p > 0 {
			h -= p * (float64(v) - lse)
		}
	}
	row.Entropy = h
	if r.full {
		row.Logits = append(trace.Logits{}, logits...)
	}
}

// stage records the scores as a processor left them.
func (r *recorder) stage(p Processor, s []float32) trace.Stage {
	kept := 0
	for _, v := range s {
		if !math.IsInf(float64(v), -1) {
			kept++
		}
	}
	return trace.Stage{Name: p.Name(), Params: p.Params(), Kept: kept, Top: r.candidates(s, logSumExp(s))}
}

// final records the distribution a token was chosen from: kept tokens by
// descending probability, up to r.top.
func (r *recorder) final(probs []float32, kept int) *trace.Final {
	ids := topIDs(probs, r.top)
	f := &trace.Final{KeptCount: kept, IDs: make([]int, 0, len(ids)), Probs: make([]float64, 0, len(ids))}
	for _, id := range ids {
		if probs[id] <= 0 {
			break
		}
		f.IDs = append(f.IDs, id)
		f.Probs = append(f.Probs, float64(probs[id]))
	}
	return f
}

// rank is the 1-based rank of id in probs: tokens more probable, or as
// probable with a lower id, come first.
func rank(probs []float32, id int) int {
	r := 1
	p := probs[id]
	for i, q := range probs {
		if q > p || q == p && i < id {
			r++
		}
	}
	return r
}
