package engine

import (
	"math"
	"slices"

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

var negInf = float32(math.Inf(-1))

// Pipeline builds the processors generate() would build for o, in
// transformers' order: the processors (repetition penalty, min_new_tokens),
// then, when sampling, the warpers (temperature, top-k, top-p, min-p).
// Settings that change nothing (temperature 1, top_k 0, top_p 1, penalty 1)
// add no stage, as in transformers.
func Pipeline(o trace.Options, promptLen int) []Processor {
	var ps []Processor
	if o.RepetitionPenalty != 1 {
		ps = append(ps, &RepetitionPenalty{Penalty: float32(o.RepetitionPenalty)})
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
		ps = append(ps, &Temperature{T: float32(o.Temperature)})
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
type RepetitionPenalty struct {
	Penalty float32
	seen    []bool // [vocab] scratch
}

func (p *RepetitionPenalty) Name() string { return "repetition_penalty" }
func (p *RepetitionPenalty) Params() map[string]float64 {
	return map[string]float64{"penalty": float64(p.Penalty)}
}
func (p *RepetitionPenalty) Apply(s []float32, ids []int) {
	if len(p.seen) != len(s) {
		p.seen = make([]bool, len(s))
	}
	for _, id := range ids {
		if id < 0 || id >= len(s) || p.seen[id] {
			continue
		}
		p.seen[id] = true
		if s[id] < 0 {
			s[id] *= p.Penalty
		} else {
			s[id] /= p.Penalty
		}
	}
	for _, id := range ids {
		if id >= 0 && id < len(s) {
			p.seen[id] = false
		}
	}
}

// MinNewTokens removes every EOS id until Min new tokens have been generated.
type MinNewTokens struct {
	PromptLen, Min int
	EOS            []int
}

func (p *MinNewTokens) Name() string { return "min_new_tokens" }
func (p *MinNewTokens) Params() map[string]float64 {
	return map[string]float64{"min_new_tokens": float64(p.Min)}
}
func (p *MinNewTokens) Apply(s []float32, ids []int) {
	if len(ids)-p.PromptLen >= p.Min {
		return
	}
	for _, id := range p.EOS {
		s[id] = negInf
	}
}

// Temperature divides every score by T: s[i] /= T.
type Temperature struct{ T float32 }

func (p *Temperature) Name() string { return "temperature" }
func (p *Temperature) Params() map[string]float64 {
	return map[string]float64{"temperature": float64(p.T)}
}
func (p *Temperature) Apply(s []float32, _ []int) {
	for i := range s {
		s[i] /= p.T
	}
}

// TopK removes every score strictly below the k-th largest (k at least
// MinKeep), so ties with the k-th score all survive.
type TopK struct {
	K, MinKeep int
	buf        []float32 // [vocab] scratch
}

func (p *TopK) Name() string               { return "top_k" }
func (p *TopK) Params() map[string]float64 { return map[string]float64{"k": float64(p.K)} }
func (p *TopK) Apply(s []float32, _ []int) {
	k := min(max(p.K, p.MinKeep), len(s))
	p.buf = append(p.buf[:0], s...)
	kth := kthLargest(p.buf, k)
	for i, v := range s {
		if v < kth {
			s[i] = negInf
		}
	}
}

// kthLargest returns the k-th largest value of v (1-based), reordering v.
func kthLargest(v []float32, k int) float32 {
	lo, hi, target := 0, len(v)-1, k-1
	for lo < hi {
		pivot := v[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for v[i] > pivot {
				i++
			}
			for v[j] < pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case target <= j:
			hi = j
		case target >= i:
			lo = i
		default:
			return v[target]
		}
	}
	return v[target]
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

func (p *TopP) Name() string               { return "top_p" }
func (p *TopP) Params() map[string]float64 { return map[string]float64{"p": p.P} }
func (p *TopP) Apply(s []float32, _ []int) {
	n := len(s)
	p.order = p.order[:0]
	for i := range s {
		p.order = append(p.order, int32(i))
	}
	// Ascending by score; ties by descending id, so the lower id of a tie
	// sits later and is the one kept (the order of ties at the boundary is
	// arbitrary in torch too).
	slices.SortFunc(p.order, func(a, b int32) int {
		switch sa, sb := s[a], s[b]; {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return int(b - a)
	})
	if cap(p.probs) < n {
		p.probs = make([]float32, n)
	}
	probs := p.probs[:n]
	softmaxInto(probs, s, p.order)
	var cum float64
	limit := float32(1 - p.P)
	for r, id := range p.order {
		cum += float64(probs[r])
		if float32(cum) <= limit && r < n-p.MinKeep {
			s[id] = negInf
		}
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

func (p *MinP) Name() string               { return "min_p" }
func (p *MinP) Params() map[string]float64 { return map[string]float64{"min_p": float64(p.P)} }
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
