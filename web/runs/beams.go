package runs

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
	"tracer/web/words"
)

// Sizes of the beam tree.
const (
	beamTreeSteps = 12 // steps the tree shows, up to the current one
	beamPruned    = 2  // pruned candidates shown per beam and step
	beamDummy     = -1e8
)

// beamTree draws a beam search up to step pos of steps: at each step the
// candidates each live beam offered, the num_beams that went on with their
// cumulative log-probabilities, the best of the pruned ones faded; and the
// hypotheses finished so far with their length-normalised scores, the
// winner marked once the run has ended at the last step. nil for a run
// without beams.
func beamTree(r *Run, steps []trace.Step, pos int, w words.Words) *view.BeamTreeView {
	t := r.Trace
	if t.Options.NumBeams <= 1 || len(steps) == 0 || pos >= len(steps) || steps[0].Beams == nil {
		return nil
	}
	name := r.namer()
	label := func(id int) string {
		tok := ""
		if name != nil {
			tok = name(id)
		}
		return marks.TokenOrID(tok, id)
	}
	lp := t.Options.LengthPenalty
	v := &view.BeamTreeView{Note: w.F(words.KeyDbgBeamsNote, "beams", strconv.Itoa(t.Options.NumBeams), "penalty", strconv.FormatFloat(lp, 'g', -1, 64))}

	// The hypotheses finished by step pos.
	type hyp struct {
		view         view.HypothesisView
		step, beam   int // the step it left from and the beam it extended there
		score        float64
		recordedKept bool
	}
	var hyps []hyp
	for i := 0; i <= pos; i++ {
		b := steps[i].Beams
		if b == nil {
			continue
		}
		src := finishedSources(steps[i], t.Model.EOS, t.Options.EOSTokenID)
		for k, h := range b.Finished {
			beam := -1
			if k < len(src) {
				beam = src[k]
			}
			hyps = append(hyps, hyp{view: view.HypothesisView{
				Text: tokensLabel(h.Tokens, label), Sum: logprobText(float64(h.SumLogprobs)), Length: h.GeneratedLen,
				Score: logprobText(h.Score), Kept: h.Kept, Step: i + 1,
			}, step: i, beam: beam, score: h.Score, recordedKept: h.Kept})
		}
	}
	last := steps[len(steps)-1].Beams
	ended := pos == len(steps)-1 && pathOutput(t, 0).StopReason != "" && !(r.Live && r.LiveBranch == 0)
	if ended && last != nil && !last.Done {
		// The beams still open at the end join the hypotheses, as the engine's
		// final pass adds them.
		for j := range last.Scores {
			toks := beamTokens(steps, len(steps)-1, j)
			n := len(toks)
			score := float64(last.Scores[j]) / math.Pow(float64(max(n, 1)), lp)
			hyps = append(hyps, hyp{view: view.HypothesisView{
				Text: tokensLabel(toks, label), Sum: logprobText(float64(last.Scores[j])), Length: n,
				Score: logprobText(score), Kept: true,
			}, step: len(steps), beam: j, score: score, recordedKept: true})
		}
	}
	slices.SortStableFunc(hyps, func(a, b hyp) int { return cmp.Compare(b.score, a.score) })
	winner := hyp{step: -1}
	if ended {
		kept := 0
		for k := range hyps {
			hyps[k].view.Kept = hyps[k].recordedKept && kept < t.Options.NumBeams
			if hyps[k].view.Kept {
				kept++
			}
		}
		if len(hyps) > 0 && hyps[0].recordedKept {
			hyps[0].view.Winner = true
			winner = hyps[0]
		}
	}
	for _, h := range hyps {
		v.Finished = append(v.Finished, h.view)
	}

	// The winner's path back through the beams: at step i it was beam path[i].
	path := map[int]int{}
	if winner.step >= 0 {
		beam := winner.beam
		for i := winner.step - 1; i >= 0 && beam >= 0; i-- {
			path[i] = beam
			if b := steps[i].Beams; b != nil && beam < len(b.Source) {
				beam = b.Source[beam]
			} else {
				break
			}
		}
	}

	for i := max(0, pos+1-beamTreeSteps); i <= pos; i++ {
		b := steps[i].Beams
		if b == nil {
			continue
		}
		sv := view.BeamStepView{Number: i + 1, Current: i == pos}
		for j, from := range b.Source {
			if j >= len(b.Tokens) || j >= len(b.Scores) {
				break
			}
			p, onPath := path[i]
			sv.Nodes = append(sv.Nodes, view.BeamNodeView{From: from, Beam: j, Token: label(b.Tokens[j]),
				Score: logprobText(float64(b.Scores[j])), Winner: onPath && p == j})
		}
		sv.Nodes = append(sv.Nodes, prunedNodes(steps[i], label)...)
		v.Steps = append(v.Steps, sv)
	}
	return v
}

// prunedNodes lists, for each live beam entering step s, its best candidates
// that neither went on nor finished, with the cumulative log-probability
// each would have had.
func prunedNodes(s trace.Step, label func(int) string) []view.BeamNodeView {
	b := s.Beams
	var out []view.BeamNodeView
	for r, in := range b.ScoresIn {
		if in < beamDummy || r >= len(s.Rows) {
			continue // a copy of beam 0 at the first step, never expanded
		}
		sr := s.Rows[r]
		// The beam's processed log-probabilities, where a processor ran.
		processed := map[int]float32{}
		if len(sr.Stages) > 0 {
			for _, c := range sr.Stages[len(sr.Stages)-1].Top {
				processed[c.ID] = c.Logit
			}
		}
		n := 0
		for _, c := range sr.Candidates {
			if n == beamPruned {
				break
			}
			went := false
			for j, from := range b.Source {
				if from == r && j < len(b.Tokens) && b.Tokens[j] == c.ID {
					went = true
				}
			}
			if went {
				continue
			}
			lp := math.Log(c.Prob)
			if l, ok := processed[c.ID]; ok {
				lp = float64(l)
			} else if len(sr.Stages) > 0 {
				continue // removed by a processor: never a candidate
			}
			out = append(out, view.BeamNodeView{From: r, Beam: -1, Token: label(c.ID), Score: logprobText(float64(in) + lp), Pruned: true})
			n++
		}
	}
	return out
}

// finishedSources guesses the beam each of a step's finished hypotheses
// came from: the live beam whose EOS candidate, added to its score, gives the
// hypothesis's sum of log-probabilities (the trace does not say).
func finishedSources(s trace.Step, eos, optEOS []int) []int {
	b := s.Beams
	out := make([]int, len(b.Finished))
	for k, h := range b.Finished {
		out[k] = -1
		best := math.Inf(1)
		for r, in := range b.ScoresIn {
			if in < beamDummy || r >= len(s.Rows) {
				continue
			}
			for _, c := range s.Rows[r].Candidates {
				if !slices.Contains(eos, c.ID) && !slices.Contains(optEOS, c.ID) {
					continue
				}
				if d := math.Abs(float64(in) + math.Log(c.Prob) - float64(h.SumLogprobs)); d < best {
					best, out[k] = d, r
				}
			}
		}
	}
	return out
}

// beamTokens is the tokens beam j holds after step i, followed back
// through the beams it extended.
func beamTokens(steps []trace.Step, i, j int) []int {
	var rev []int
	for ; i >= 0; i-- {
		b := steps[i].Beams
		if b == nil || j < 0 || j >= len(b.Tokens) || j >= len(b.Source) {
			break
		}
		rev = append(rev, b.Tokens[j])
		j = b.Source[j]
	}
	slices.Reverse(rev)
	return rev
}

func tokensLabel(ids []int, label func(int) string) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(label(id))
	}
	return b.String()
}

// logprobText formats a log-probability: "-3.21".
func logprobText(x float64) string {
	return strconv.FormatFloat(x, 'f', 2, 64)
}
