package engine

import (
	"math"
	"slices"

	"tracer/engine/tensor"
	"tracer/trace"
)

// Processor is one stage of transformers' logits-processing pipeline. Apply
// rewrites a row's scores in place (float32, -inf = removed), given the
// row's ids so far (prompt, pads and generated tokens).
type Processor interface {
	Name() string
	Params() map[string]float64
	Apply(scores []float32, ids []int)
}

// A localProcessor changes at most the scores of a few ids, which it names
// before it runs: the recorder then updates the log-sum-exp from those
// scores alone instead of summing over the whole vocabulary again.
type localProcessor interface {
	Processor
	// Touches returns the ids whose scores Apply(s, ids) may change
	// (repeats allowed).
	Touches(ids []int) []int
}

var negInf = float32(math.Inf(-1))

// Pipeline builds the processors generate() would build for o, in
// transformers' order: the processors (repetition penalty, min_new_tokens),
// then, when sampling, the warpers (temperature, top-k, top-p, min-p).
// Settings that change nothing (temperature 1, top_k 0, top_p 1, penalty 1)
// add no stage, as in transformers.
func Pipeline(o trace.Options, promptLen int) []Processor {
	var ps []Processor
	if o.RepetitionPenalty != 1 {
		ps = append(ps, &RepetitionPenalty{Penalty: o.RepetitionPenalty})
	}
	if o.MinNewTokens > 0 && len(o.EOSTokenID) > 0 {
		ps = append(ps, &MinNewTokens{PromptLen: promptLen, Min: o.MinNewTokens, EOS: o.EOSTokenID})
	}
	if !o.DoSample {
		return ps
	}
	// Beam sampling keeps at least 2 tokens per warper; plain sampling 1.
	keep := 1
	if o.NumBeams > 1 {
		keep = 2
	}
	if o.Temperature != 1 {
		ps = append(ps, &Temperature{T: o.Temperature})
	}
	if o.TopK != 0 {
		ps = append(ps, &TopK{K: o.TopK, MinKeep: keep})
	}
	if o.TopP < 1 {
		ps = append(ps, &TopP{P: o.TopP, MinKeep: keep})
	}
	if o.MinP > 0 {
		ps = append(ps, &MinP{P: float32(o.MinP), MinKeep: keep})
	}
	return ps
}

// RepetitionPenalty divides the positive scores and multiplies the negative
// scores of every id already in the row (prompt, pads and BOS included), once
// per distinct id:
//
//	for id in set(ids): s[id] = s[id] < 0 ? s[id]*p : s[id]/p
//
// in float32, as transformers does. Where that would overflow (a penalty
// near 0 or huge, or one that float32 rounds to 0 or +Inf), the score is held
// at ±MaxFloat32, the limit it tends to, and a score of 0 stays 0 (0/0 would
// be NaN): the penalised tokens keep their order against the others, and
// softmax stays defined. transformers instead produces ±inf and NaN there,
// and torch.multinomial then refuses the distribution.
type RepetitionPenalty struct {
	Penalty float64 // applied in float32, as torch does with a float32 tensor
	seen    []bool  // [vocab] scratch
}

// Name is "repetition_penalty".
func (p *RepetitionPenalty) Name() string { return "repetition_penalty" }

// Params holds the penalty.
func (p *RepetitionPenalty) Params() map[string]float64 {
	return map[string]float64{"penalty": p.Penalty}
}

// Apply penalises the scores of the ids in place.
func (p *RepetitionPenalty) Apply(s []float32, ids []int) {
	if len(p.seen) != len(s) {
		p.seen = make([]bool, len(s))
	}
	pen := float32(p.Penalty)
	for _, id := range ids {
		if id < 0 || id >= len(s) || p.seen[id] {
			continue
		}
		p.seen[id] = true
		switch v := s[id]; {
		case isInf32(v) || v != v || v == 0:
			// Removed stays removed, NaN stops the run later, 0 stays 0.
		case v < 0:
			s[id] = clampInf(v * pen)
		default:
			s[id] = clampInf(v / pen)
		}
	}
	for _, id := range ids {
		if id >= 0 && id < len(s) {
			p.seen[id] = false
		}
	}
}

// Touches returns ids: only their scores are penalised.
func (p *RepetitionPenalty) Touches(ids []int) []int { return ids }

// isInf32 reports whether v is ±Inf.
func isInf32(v float32) bool { return v > math.MaxFloat32 || v < -math.MaxFloat32 }

// clampInf holds an overflowed score at ±MaxFloat32, the limit it tends to.
func clampInf(v float32) float32 {
	return min(max(v, -math.MaxFloat32), math.MaxFloat32)
}

// MinNewTokens removes every EOS id until Min new tokens have been generated.
type MinNewTokens struct {
	PromptLen, Min int
	EOS            []int
}

// Name is "min_new_tokens".
func (p *MinNewTokens) Name() string { return "min_new_tokens" }

// Params holds the minimum.
func (p *MinNewTokens) Params() map[string]float64 {
	return map[string]float64{"min_new_tokens": float64(p.Min)}
}

// Touches returns the EOS ids while they are removed, else none.
func (p *MinNewTokens) Touches(ids []int) []int {
	if len(ids)-p.PromptLen >= p.Min {
		return nil
	}
	return p.EOS
}

// Apply removes the EOS ids while too few tokens are new.
func (p *MinNewTokens) Apply(s []float32, ids []int) {
	if len(ids)-p.PromptLen >= p.Min {
		return
	}
	for _, id := range p.EOS {
		s[id] = negInf
	}
}

// Temperature divides every score by T: s[i] /= T, in float32 as
// transformers does, as long as the quotients stay finite.
//
// As T tends to 0, softmax(s/T) tends to greedy decoding: all the mass on
// the highest score (shared evenly by ties). transformers computes s/T
// regardless, so a tiny T (1e-45, or one float32 rounds to 0) overflows to
// ±inf, inf-inf makes NaN and sampling fails. Here, when some |s|/T would
// overflow float32, the scores are shifted by their maximum m first:
//
//	s[i] = (s[i] - m) / T    (in float64, then rounded to float32)
//
// which softmax cannot tell from s/T (it subtracts the maximum itself) but
// which stays finite: the top scores become 0 and the others tend to -inf,
// so the limit is greedy. Removed tokens (-inf) stay removed.
type Temperature struct{ T float64 }

// Name is "temperature".
func (p *Temperature) Name() string { return "temperature" }

// Params holds the temperature.
func (p *Temperature) Params() map[string]float64 {
	return map[string]float64{"temperature": p.T}
}

// Apply divides the scores by T in place.
func (p *Temperature) Apply(s []float32, _ []int) {
	lo, hi := tensor.FiniteRange(s)
	big := max(0, hi, -lo) // the largest finite magnitude
	t := float32(p.T)
	if t > 0 && !isInf32(t) && float64(big)/p.T <= math.MaxFloat32 {
		tensor.Div(s, t)
		return
	}
	// The largest finite score, not FiniteRange's hi: of +0 and -0 that
	// may be either, and the sign of m reaches the shifted zeros.
	m := negInf
	for _, v := range s {
		if !isInf32(v) && v == v {
			m = max(m, v)
		}
	}
	for i, v := range s {
		if isInf32(v) || v != v {
			continue // removed stays removed; +Inf and NaN stop the run later
		}
		s[i] = float32(float64(v-m) / p.T)
	}
}

// TopK removes every score strictly below the k-th largest (k at least
// MinKeep), so ties with the k-th score all survive.
type TopK struct {
	K, MinKeep int
	buf        []float32 // [vocab] scratch for the quickselect
	heap       []float32 // [k] scratch for kthByHeap
}

// Name is "top_k".
func (p *TopK) Name() string { return "top_k" }

// Params holds k.
func (p *TopK) Params() map[string]float64 { return map[string]float64{"k": float64(p.K)} }

// Apply removes the scores below the k-th largest in place.
func (p *TopK) Apply(s []float32, _ []int) {
	k := min(max(p.K, p.MinKeep), len(s))
	var kth float32
	if _, nan := tensor.MaxNaN(s); !nan && k >= 1 && k <= topKHeapMax {
		kth = p.kthByHeap(s, k)
	} else { // a NaN (the run stops on it later) or a large k
		p.buf = append(p.buf[:0], s...)
		kth = kthLargest(p.buf, k)
	}
	tensor.RemoveBelow(s, kth)
}

// topKHeapMax bounds the k that kthByHeap takes: its cost grows as
// log k per score that enters the heap.
const topKHeapMax = 1024

// kthByHeap returns the k-th largest value of s, which holds no NaN
// (1 ≤ k ≤ min(len(s), topKHeapMax)): a min-heap of the k largest seen,
// whose root is the k-th; blocks of scores below the root are passed over
// in eight lanes (tensor.SkipBelow), so that over a vocabulary most scores
// cost one vector comparison.
func (p *TopK) kthByHeap(s []float32, k int) float32 {
	h := append(p.heap[:0], s[:k]...)
	p.heap = h
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for i := k; i < len(s); {
		i += tensor.SkipBelow(s[i:], h[0])
		for end := min(i+32, len(s)); i < end; i++ {
			if v := s[i]; v > h[0] {
				h[0] = v
				siftDown(h, 0)
			}
		}
	}
	return h[0]
}

// siftDown restores the min-heap order of h below i.
func siftDown(h []float32, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if !(h[c] < h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// kthLargest returns the k-th largest value of v (1-based), reordering v:
// the one with len(v)-k values below it.
func kthLargest(v []float32, k int) float32 {
	return kthSmallest(v, len(v)-k)
}

// TopP keeps the smallest set of highest scores whose probabilities add up
// to more than P: sorted ascending, softmax, cumulative sum (accumulated in
// float64 and stored as float32, like torch's CPU cumsum), remove where
// cumsum <= float32(1-P); the MinKeep highest always survive.
type TopP struct {
	P       float64
	MinKeep int
	order   []int32   // [vocab] scratch: ids by ascending score
	probs   []float32 // [vocab] scratch
}

// Name is "top_p".
func (p *TopP) Name() string { return "top_p" }

// Params holds p.
func (p *TopP) Params() map[string]float64 { return map[string]float64{"p": p.P} }

// Apply removes the tail outside the top-p mass in place. Scores already
// at -Inf (a top-k before it removed all but k) sort first with
// probability 0: they leave the sums as they are and stay removed, so
// only the others are sorted, each at its rank among all n.
func (p *TopP) Apply(s []float32, _ []int) {
	n := len(s)
	p.order = p.order[:0]
	for i, v := range s {
		if v != negInf {
			p.order = append(p.order, int32(i))
		}
	}
	removed := n - len(p.order) // ranks [0, removed): the -Inf scores
	slices.SortFunc(p.order, ascendingScore(s))
	if cap(p.probs) < len(p.order) {
		p.probs = make([]float32, len(p.order))
	}
	probs := p.probs[:len(p.order)]
	softmaxInto(probs, s, p.order)
	var cum float64
	limit := float32(1 - p.P)
	for j, id := range p.order {
		cum += float64(probs[j])
		if float32(cum) <= limit && removed+j < n-p.MinKeep {
			s[id] = negInf
		}
	}
}

// ascendingScore orders ids of s by ascending score, ties by descending
// id, so that the lower id of a tie sits later and is the one top_p keeps
// (the order of ties at the boundary is arbitrary in torch too).
func ascendingScore(s []float32) func(a, b int32) int {
	return func(a, b int32) int {
		switch sa, sb := s[a], s[b]; {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return int(b - a)
	}
}

// softmaxInto writes softmax(s[order[r]]) to dst[r], in float32 like torch.
func softmaxInto(dst []float32, s []float32, order []int32) {
	m := negInf
	for _, id := range order {
		m = max(m, s[id])
	}
	var sum float32
	for r, id := range order {
		e := float32(math.Exp(float64(s[id] - m)))
		dst[r] = e
		sum += e
	}
	for r := range order {
		dst[r] /= sum
	}
}

// MinP removes tokens whose probability (softmax of the current scores) is
// below P times the largest probability, keeping at least MinKeep tokens.
type MinP struct {
	P       float32
	MinKeep int
	probs   []float32 // [vocab] scratch
}

// Name is "min_p".
func (p *MinP) Name() string { return "min_p" }

// Params holds min_p.
func (p *MinP) Params() map[string]float64 { return map[string]float64{"min_p": float64(p.P)} }

// Apply removes the tokens below min_p times the top probability in place.
func (p *MinP) Apply(s []float32, _ []int) {
	n := len(s)
	if cap(p.probs) < n {
		p.probs = make([]float32, n)
	}
	probs := p.probs[:n]
	m := negInf
	for _, v := range s {
		m = max(m, v)
	}
	var sum, top float32
	for i, v := range s {
		e := float32(math.Exp(float64(v - m)))
		probs[i] = e
		sum += e
	}
	for i := range probs {
		probs[i] /= sum
		top = max(top, probs[i])
	}
	threshold := p.P * top
	removed := 0
	for i := range probs {
		if probs[i] < threshold {
			removed++
		}
	}
	if n-removed >= p.MinKeep {
		for i := range probs {
			if probs[i] < threshold {
				s[i] = negInf
			}
		}
		return
	}
	// Keep the MinKeep highest scores (ties by lower id).
	keep := topIDs(s, p.MinKeep)
	kept := make(map[int]bool, len(keep))
	for _, id := range keep {
		kept[id] = true
	}
	for i := range probs {
		if probs[i] < threshold && !kept[i] {
			s[i] = negInf
		}
	}
}
