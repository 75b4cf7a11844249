package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"tracer/trace"
)

// Beam search as transformers 4.44 does it (BeamSearchScorer and
// BeamHypotheses): every step scores each alive beam's log-softmax plus its
// running score, keeps the best n_keep = max(2, 1+len(eos)) * beams
// candidates over all beams, turns EOS candidates ranked below num_beams
// into finished hypotheses and the others into the next beams, and stops
// when the n-best list can no longer improve (early_stopping) or at
// max_length.

// hypothesis is a finished (or, at the end, alive) beam.
type hypothesis struct {
	tokens       []int   // generated tokens, without the EOS
	sumLogprobs  float32 // running score when it ended
	generatedLen int     // new tokens, the EOS included
	score        float64 // sumLogprobs / generatedLen^length_penalty
}

// nBest is BeamHypotheses: the best num_beams hypotheses found so far.
type nBest struct {
	size          int
	lengthPenalty float64
	earlyStopping string
	hyps          []hypothesis
	worst         float64
}

// add offers h to the list and reports whether it was kept.
func (b *nBest) add(h hypothesis) bool {
	h.score = hypScore(h.sumLogprobs, h.generatedLen, b.lengthPenalty)
	if len(b.hyps) >= b.size && !(h.score > b.worst) {
		return false
	}
	b.hyps = append(b.hyps, h)
	if len(b.hyps) <= b.size {
		b.worst = min(h.score, b.worst)
		return true
	}
	// Drop the worst; the new worst is the second lowest.
	order := make([]int, len(b.hyps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmpFloat(b.hyps[x].score, b.hyps[y].score) })
	b.worst = b.hyps[order[1]].score
	b.hyps = slices.Delete(b.hyps, order[0], order[0]+1)
	return true
}

// hypScore is sumLogprobs / generatedLen^lengthPenalty. A run stopped
// before its first token (a NaN at step 0) leaves hypotheses of length 0:
// their score is sumLogprobs, not 0/0.
func hypScore(sum float32, n int, lengthPenalty float64) float64 {
	if n <= 0 {
		return float64(sum)
	}
	return float64(sum) / math.Pow(float64(n), lengthPenalty)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// done is BeamHypotheses.is_done: can no alive beam beat the worst kept
// hypothesis? best is this step's best candidate score, curLen the length
// after the step.
func (b *nBest) done(best float32, curLen, promptLen, maxLen int) bool {
	if len(b.hyps) < b.size {
		return false
	}
	switch b.earlyStopping {
	case "true":
		return true
	case "never":
		if b.lengthPenalty > 0 {
			return b.worst >= float64(best)/math.Pow(float64(maxLen-promptLen), b.lengthPenalty)
		}
	}
	return b.worst >= float64(best)/math.Pow(float64(curLen-promptLen), b.lengthPenalty)
}

// beamSearch runs beam search on the loop's rows (num_beams copies of one
// prompt) and returns the stop reason and the finished hypotheses, the
// best of which beamOutput lays out.
func (g *loop) beamSearch(ctx context.Context) (string, *nBest, error) {
	o := &g.req.Options
	t, maxLen := g.t, g.maxLen
	nb, vocab := o.NumBeams, g.info.VocabSize
	nKeep := max(2, 1+len(o.EOSTokenID)) * nb
	scores := make([]float32, nb) // running score of each beam
	for i := 1; i < nb; i++ {
		scores[i] = -1e9
	}
	best := &nBest{size: nb, lengthPenalty: o.LengthPenalty, earlyStopping: o.EarlyStopping, worst: 1e9}
	next := make([]float32, nb*vocab) // [beams][vocab]: running score + processed log-prob
	done := false
	stop := g.lengthStop
	for step := 0; len(g.rows[0]) < maxLen; step++ {
		if ctx.Err() != nil {
			stop = trace.StopCancelled
			break
		}
		start := time.Now()
		past, phase, err := g.forward(step)
		if err != nil {
			var se *StopError
			if errors.As(err, &se) {
				t.Notices = append(t.Notices, se.Msg)
				stop = se.Reason
				break
			}
			return "", nil, err
		}
		var nan *nanStop
		if err := g.checkLogits(step, past); err != nil {
			nan = err.(*nanStop)
		}
		var rec *trace.Step
		if g.rec != nil {
			rec = &trace.Step{Index: step, Phase: phase, Rows: make([]trace.StepRow, nb),
				Beams: &trace.BeamStep{ScoresIn: slices.Clone(scores)}}
		}
		for r := 0; r < nb && nan == nil; r++ {
			s := next[r*vocab : (r+1)*vocab]
			logSoftmax(s, g.logits[r])
			if rec != nil {
				g.rec.raw(&rec.Rows[r], g.logits[r])
			}
			for _, p := range g.procs {
				p.Apply(s, g.rows[r])
				if rec != nil {
					rec.Rows[r].Stages = append(rec.Rows[r].Stages, g.rec.stage(p, s))
				}
			}
			if bad, empty := scanScores(s); bad >= 0 || empty {
				n := trace.NaN{Step: step, Row: r, Where: trace.NaNNoMass, Layer: -1}
				if bad >= 0 {
					n.Where, n.Stage = trace.NaNStage, firstBadStage(g.procs, logSoftmaxCopy(g.logits[r]), g.rows[r])
				}
				nan = newNaNStop(n, g.info.Layers)
				break
			}
			for i := range s {
				s[i] += scores[r]
			}
		}
		if nan != nil {
			t.Notices = append(t.Notices, nan.Error())
			stop, t.Output.NaN = trace.StopNaN, &nan.nan
			break
		}
		cands := topIDs(next, nKeep)
		curLen := len(g.rows[0]) + 1
		src := make([]int, 0, nb)
		toks := make([]int, 0, nb)
		newScores := make([]float32, 0, nb)
		for rank, flat := range cands {
			r, tok := flat/vocab, flat%vocab
			if slices.Contains(o.EOSTokenID, tok) {
				if rank >= nb {
					continue
				}
				h := hypothesis{tokens: slices.Clone(g.rows[r][g.promptLen:]), sumLogprobs: next[flat], generatedLen: curLen - g.promptLen}
				kept := best.add(h)
				if rec != nil {
					rec.Beams.Finished = append(rec.Beams.Finished, trace.Hypothesis{
						Tokens: h.tokens, SumLogprobs: h.sumLogprobs, GeneratedLen: h.generatedLen,
						Score: hypScore(h.sumLogprobs, h.generatedLen, o.LengthPenalty), Kept: kept})
				}
				continue
			}
			src, toks, newScores = append(src, r), append(toks, tok), append(newScores, next[flat])
			if len(src) == nb {
				break
			}
		}
		if len(src) < nb {
			return "", nil, fmt.Errorf("engine: beam search found only %d continuations for %d beams: the vocabulary is too small", len(src), nb)
		}
		done = best.done(next[cands[0]], curLen, g.promptLen, maxLen)

		// Reorder the beams and append their tokens.
		old := make([][]int, nb)
		for r := range nb {
			old[r] = g.rows[r]
		}
		for r := range nb {
			g.rows[r] = append(slices.Clone(old[src[r]]), toks[r])
			g.mask[r] = append(g.mask[r], true)
		}
		g.cache.Reorder(src)
		copy(scores, newScores)
		if rec != nil {
			rec.Beams.Source, rec.Beams.Tokens, rec.Beams.Scores, rec.Beams.Done = src, toks, slices.Clone(scores), done
			for r := range nb {
				row := &rec.Rows[r]
				sr := src[r]
				lp := next[sr*vocab+toks[r]] - rec.Beams.ScoresIn[sr]
				row.Chosen = trace.Chosen{ID: toks[r], Token: g.rec.token(toks[r]), Prob: math.Exp(float64(lp)),
					Rank: rank(next[sr*vocab:(sr+1)*vocab], toks[r]), By: trace.ByBeam}
			}
			g.recordInside(rec)
			g.finishRecord(rec, past, start)
			t.Steps = append(t.Steps, *rec)
			if g.req.OnStep != nil {
				g.req.OnStep(*rec)
			}
		}
		if done {
			stop = trace.StopEOS
			break
		}
	}
	if !done {
		for r := range nb {
			best.add(hypothesis{tokens: slices.Clone(g.rows[r][g.promptLen:]), sumLogprobs: scores[r], generatedLen: len(g.rows[r]) - g.promptLen})
		}
	}
	return stop, best, nil
}

// logSoftmaxCopy returns log_softmax(x) in a new slice.
func logSoftmaxCopy(x []float32) []float32 {
	dst := make([]float32, len(x))
	logSoftmax(dst, x)
	return dst
}

// logSoftmax writes log_softmax(x) to dst in float32.
func logSoftmax(dst, x []float32) {
	m := negInf
	for _, v := range x {
		m = max(m, v)
	}
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v - m))
	}
	ls := float32(math.Log(sum))
	for i, v := range x {
		dst[i] = (v - m) - ls
	}
}
