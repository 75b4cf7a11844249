package engine

import (
	"math"
	"slices"

	"tracer/engine/tensor"
	"tracer/engine/tokenizer"
	"tracer/trace"
)

// topIDs returns the ids of the n highest finite scores of s, by descending
// score, ties by lower id.
func topIDs(s []float32, n int) []int {
	if n <= 0 {
		return nil
	}
	n = min(n, len(s)) // a list never holds more than the vocabulary
	// h is a min-heap of the best n seen so far: its root is the one that
	// ranks lowest (lowest score, then highest id). The loop runs over the
	// whole vocabulary for every recorded list: once h is full, blocks of
	// scores all below the root's are passed over in eight lanes
	// (tensor.SkipBelow), the rest offered one at a time.
	h := make([]int, 0, n)
	thr := float32(math.Inf(-1)) // once h is full, the score of its root
	for id := 0; id < len(s); {
		if len(h) == n { // most ids: below the n-th best so far
			id += tensor.SkipBelow(s[id:], thr)
		}
		for end := min(id+32, len(s)); id < end; id++ {
			if s[id] >= thr { // the rest (a NaN too) cannot enter
				topIDsStep(s, id, n, &h, &thr)
			}
		}
	}
	slices.SortFunc(h, func(a, b int) int {
		if ranksBelow(s, a, b) {
			return 1
		}
		if ranksBelow(s, b, a) {
			return -1
		}
		return 0
	})
	return h
}

// topIDsStep offers id to topIDs' heap h of at most n ids, whose root's
// score is thr once it is full.
func topIDsStep(s []float32, id, n int, h *[]int, thr *float32) {
	v := s[id]
	if v < *thr {
		return
	}
	if v != v || v < -math.MaxFloat32 { // NaN or -Inf
		return
	}
	if len(*h) < n {
		*h = append(*h, id)
		hh := *h
		for i := len(hh) - 1; i > 0; {
			p := (i - 1) / 2
			if !ranksBelow(s, hh[i], hh[p]) {
				break
			}
			hh[i], hh[p] = hh[p], hh[i]
			i = p
		}
		if len(hh) == n {
			*thr = s[hh[0]]
		}
		return
	}
	hh := *h
	if r := s[hh[0]]; v == r && id > hh[0] {
		return // a tie ranks below by its higher id
	}
	hh[0] = id
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(hh) {
			break
		}
		c := l
		if r := l + 1; r < len(hh) && ranksBelow(s, hh[r], hh[l]) {
			c = r
		}
		if !ranksBelow(s, hh[c], hh[i]) {
			break
		}
		hh[i], hh[c] = hh[c], hh[i]
		i = c
	}
	*thr = s[hh[0]]
}

// ranksBelow reports whether id a ranks below id b by score: a lower score,
// or the same score and a higher id.
func ranksBelow(s []float32, a, b int) bool {
	return s[a] < s[b] || s[a] == s[b] && a > b
}

// logSumExp returns log(sum(exp(s))) in float64 over the finite scores (NaN
// when one is NaN or +Inf: there is no softmax then, and -Inf when all are
// -Inf), from tensor.SumExp.
func logSumExp(s []float32) float64 {
	m, nan := maxScore(s)
	if nan {
		return math.NaN()
	}
	if math.IsInf(m, -1) {
		return m
	}
	sum, _ := sumExp(s, m, false)
	return m + math.Log(sum)
}

// maxScore returns the largest score (-Inf when there are none) and
// whether one is NaN (tensor.MaxNaN).
func maxScore(s []float32) (float64, bool) {
	m, nan := tensor.MaxNaN(s)
	return float64(m), nan
}

// sumExp returns Σ e and (with dot) Σ e·(s - m) over the scores, with
// e = exp(s - m) in float64 and m their maximum: tensor.SumExp, eight
// partial sums in index order, leaving out a NaN and the scores more than
// 707 below m.
func sumExp(s []float32, m float64, dot bool) (sum, sumEU float64) {
	return tensor.SumExp(s, m, dot)
}

// recorder turns one row's logits into the trace's view of a step. Its
// methods allocate: it runs only when recording is on.
type recorder struct {
	tok  tokenizer.Tokenizer // may be nil
	top  int                 // candidates per list
	full bool                // record every raw logit

	sc  sparseScratch // the kept scores of a stage
	fin sparseScratch // the kept probabilities of final

	// lse is the log-sum-exp of the scores as raw or the last stage saw
	// them (lseSet: it is known); local, touched and was describe the
	// stage to come when it is a localProcessor's (see before).
	lse     float64
	lseSet  bool
	local   bool
	touched []int     // the distinct ids it may change
	was     []float32 // their scores before it
	mark    []bool    // [vocab] scratch
}

// sparseScratch holds the kept scores of a stage where most are removed,
// and their ids.
type sparseScratch struct {
	vals []float32
	ids  []int
}

func (r *recorder) token(id int) string {
	if r.tok == nil {
		return ""
	}
	return r.tok.Token(id)
}

// candidates lists the top entries of s with their softmax probabilities,
// tokens left out.
func (r *recorder) candidates(s []float32, lse float64) []trace.Candidate {
	ids := topIDs(s, r.top)
	out := make([]trace.Candidate, len(ids))
	for i, id := range ids {
		out[i] = trace.Candidate{ID: id, Logit: s[id], Prob: math.Exp(float64(s[id]) - lse)}
	}
	return out
}

// raw fills the raw view of a row: candidates, entropy and, when asked,
// the full logits.
func (r *recorder) raw(row *trace.StepRow, logits []float32) {
	lse, h := lseEntropy(logits)
	r.lse, r.lseSet, r.local = lse, true, false
	row.Candidates = r.candidates(logits, lse)
	r.name(row.Candidates)
	row.Entropy = h
	if r.full {
		row.Logits = append(trace.Logits{}, logits...)
	}
}

// lseEntropy returns logSumExp(s) and the entropy of softmax(s) in nats
// from one pass of exponentials: with m = max(s), u = s - m, e = exp(u),
// S = Σe and T = Σ e·u (float64, see sumExp),
//
//	lse = m + log S
//	H   = -Σ p·(s - lse) = log S - T/S     (p = e/S; terms with e = 0 left out)
func lseEntropy(s []float32) (lse, h float64) {
	m, nan := maxScore(s)
	if nan {
		return math.NaN(), math.NaN()
	}
	if math.IsInf(m, -1) {
		return m, 0
	}
	sum, dot := sumExp(s, m, true)
	logS := math.Log(sum)
	return m + logS, logS - dot/sum
}

// name fills in the tokens of candidates.
func (r *recorder) name(cs []trace.Candidate) {
	for i := range cs {
		cs[i].Token = r.token(cs[i].ID)
	}
}

// stage records the scores as a processor left them.
func (r *recorder) stage(p Processor, s []float32) trace.Stage {
	st := trace.Stage{Name: p.Name(), Params: p.Params()}
	st.Kept, st.Top = r.stageTop(s, &r.sc)
	r.local = false // before describes one stage
	r.name(st.Top)
	return st
}

// localLSE takes at most len(s)/maxTouched touched ids: from about
// len(s)/16 on, the two math.Exp calls of each (some 10 ns) cost more than
// the pass of SumExp they save (some 0.6 ns a score).
const maxTouched = 64

// before notes, when p is a localProcessor, the scores it is about to
// change, so that the stage after it can update the log-sum-exp (see
// localLSE). s must hold the scores that raw or the last stage saw.
func (r *recorder) before(p Processor, s []float32, ids []int) {
	r.local = false
	lp, ok := p.(localProcessor)
	if !ok || !r.lseSet {
		return
	}
	if len(r.mark) != len(s) {
		r.mark = make([]bool, len(s))
	}
	r.touched, r.was = r.touched[:0], r.was[:0]
	for _, id := range lp.Touches(ids) {
		if id < 0 || id >= len(s) || r.mark[id] {
			continue
		}
		r.mark[id] = true
		r.touched, r.was = append(r.touched, id), append(r.was, s[id])
	}
	for _, id := range r.touched {
		r.mark[id] = false
	}
	r.local = len(r.touched)*maxTouched <= len(s)
}

// localLSE returns the log-sum-exp of s from the one before the stage
// just applied, when that stage changed at most the scores at r.touched
// (from r.was): with L the old log-sum-exp,
//
//	L' = L + log1p(Σ e^(s[id] - L) - Σ e^(was - L))
//
// the probability mass the touched tokens gained less the mass they held.
// It declines (ok false) where that could be inexact: L unknown or not
// finite, a new score NaN or above L + 700 (e^(s - L) could overflow), or
// the touched tokens holding more than half the mass (the difference
// would lose digits).
func (r *recorder) localLSE(s []float32) (lse float64, ok bool) {
	if !r.local || !r.lseSet || math.IsInf(r.lse, 0) || r.lse != r.lse {
		return 0, false
	}
	var gone, came float64
	for k, id := range r.touched {
		v := float64(s[id])
		if !(v-r.lse <= 700) {
			return 0, false
		}
		gone += math.Exp(float64(r.was[k]) - r.lse)
		came += math.Exp(v - r.lse)
	}
	if !(gone <= 0.5) {
		return 0, false
	}
	return r.lse + math.Log1p(came-gone), true
}

// stageTop counts the kept scores of s and lists the top ones, tokens left
// out. After top-k or top-p most scores are -Inf: the kept ones are
// gathered first (into sc), so that the log-sum-exp and the candidates
// cost little.
func (r *recorder) stageTop(s []float32, sc *sparseScratch) (int, []trace.Candidate) {
	kept := tensor.CountKept(s)
	if kept*8 >= len(s) {
		lse, ok := r.localLSE(s)
		if !ok {
			lse = logSumExp(s)
		}
		r.lse, r.lseSet = lse, true
		return kept, r.candidates(s, lse)
	}
	sc.vals, sc.ids = sc.vals[:0], sc.ids[:0]
	for id := 0; id < len(s); {
		id += tensor.SkipRemoved(s[id:])
		for end := min(id+32, len(s)); id < end; id++ {
			if v := s[id]; v >= -math.MaxFloat32 || v != v {
				sc.vals, sc.ids = append(sc.vals, v), append(sc.ids, id)
			}
		}
	}
	lse := logSumExp(sc.vals)
	r.lse, r.lseSet = lse, true
	// Gathered in id order, so ties still rank by id.
	top := topIDs(sc.vals, r.top)
	out := make([]trace.Candidate, len(top))
	for i, k := range top {
		id := sc.ids[k]
		out[i] = trace.Candidate{ID: id, Logit: s[id], Prob: math.Exp(float64(s[id]) - lse)}
	}
	return kept, out
}

// final records the distribution a token was chosen from: kept tokens by
// descending probability, up to r.top; and the rank of the chosen id
// among all (see rank). When few tokens are kept (after a top-k or top-p),
// the positive probabilities are gathered first, in id order so that ties
// still rank by id, and both are taken from them: tokens of probability 0
// neither enter the list nor rank above a chosen token that has more.
func (r *recorder) final(probs []float32, kept, chosen int) (*trace.Final, int) {
	vals, ids := probs, []int(nil)
	if kept*8 < len(probs) {
		sc := &r.fin
		sc.vals, sc.ids = sc.vals[:0], sc.ids[:0]
		for id := 0; id < len(probs); {
			// p > 0 is p ≥ the smallest positive float32
			id += tensor.SkipBelow(probs[id:], math.SmallestNonzeroFloat32)
			for end := min(id+32, len(probs)); id < end; id++ {
				if p := probs[id]; p > 0 {
					sc.vals, sc.ids = append(sc.vals, p), append(sc.ids, id)
				}
			}
		}
		vals, ids = sc.vals, sc.ids
	}
	top := topIDs(vals, r.top)
	f := &trace.Final{KeptCount: kept, IDs: make([]int, 0, len(top)), Probs: make([]float64, 0, len(top))}
	for _, k := range top {
		if vals[k] <= 0 {
			break
		}
		id := k
		if ids != nil {
			id = ids[k]
		}
		f.IDs = append(f.IDs, id)
		f.Probs = append(f.Probs, float64(vals[k]))
	}
	p := probs[chosen]
	if ids == nil || !(p > 0) {
		return f, rank(probs, chosen)
	}
	n := 1
	for k, q := range vals {
		if q > p || q == p && ids[k] < chosen {
			n++
		}
	}
	return f, n
}

// rank is the 1-based rank of id in probs: tokens more probable, or as
// probable with a lower id, come first.
func rank(probs []float32, id int) int {
	p := probs[id]
	return 1 + tensor.CountAbove(probs, p) + tensor.CountEqual(probs[:id], p)
}
