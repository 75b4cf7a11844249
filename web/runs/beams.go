package runs

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
	"tracer/web/words"
)

// Sizes of the beam tree: how much of the run it shows, and where its
// boxes go, in CSS pixels (the "Beam tree" rules of static/style.css give
// the boxes these sizes).
const (
	beamTreeSteps = 12 // steps the tree shows, up to the current one
	beamPruned    = 2  // pruned candidates shown per beam and step
	beamDummy     = -1e8
	beamTokenMax  = 16 // runes of a token drawn whole; longer ones are cut

	beamNodeW = 132 // a node's box
	beamNodeH = 34
	beamColW  = 168 // from a column's left edge to the next one's
	beamRowH  = 42  // from a node's top edge to the next one's below
	beamHeadH = 24  // a column's step label, above its nodes
)

// beamTree draws a beam search up to step pos of steps as a tree: a column
// per step, with the num_beams that went on and their cumulative
// log-probabilities, the best of the pruned candidates faded and the
// hypotheses that ended, each with an edge back to the beam it extends; the
// winner's path marked once the run has ended at the last step; and the
// hypotheses finished so far with their length-normalised scores. nil for
// a run without beams.
func beamTree(r *Run, steps []trace.Step, pos int, w words.Words) *view.BeamTreeView {
	t := r.Trace
	if t.Options.NumBeams <= 1 || len(steps) == 0 || pos >= len(steps) || steps[0].Beams == nil {
		return nil
	}
	label := tokenNames(r, steps[:pos+1])
	lp := t.Options.LengthPenalty
	v := &view.BeamTreeView{
		Note:   w.F(words.KeyDbgBeamsNote, "beams", strconv.Itoa(t.Options.NumBeams), "penalty", strconv.FormatFloat(lp, 'g', -1, 64)),
		Legend: w.T(words.KeyDbgBeamsLegend),
	}
	ended := pos == len(steps)-1 && pathOutput(t, 0).StopReason != "" && !(r.Live && r.LiveBranch == 0)
	var winner hyp
	v.Finished, winner = hypotheses(t, steps, pos, ended, label)

	path := winnerPath(steps, winner)
	first := max(0, pos+1-beamTreeSteps)
	v.Root = beamRoot(t, steps, first, path, winner.node != "", label, w)
	open := ended && steps[len(steps)-1].Beams != nil && !steps[len(steps)-1].Beams.Done
	for i := first; i <= pos; i++ {
		if steps[i].Beams == nil {
			continue
		}
		sv := beamColumn(t, steps, i, path, open, winner.node, label, w)
		sv.Current = i == pos
		v.Steps = append(v.Steps, sv)
	}
	layoutBeams(v)
	return v
}

// winnerPath follows the winning hypothesis back through the beams: after
// step i it was beam path[i]. Empty without a winner.
func winnerPath(steps []trace.Step, winner hyp) map[int]int {
	path := map[int]int{}
	if winner.node == "" {
		return path
	}
	beam := winner.beam
	for i := winner.step - 1; i >= 0 && beam >= 0; i-- {
		path[i] = beam
		b := steps[i].Beams
		if b == nil || beam >= len(b.Source) {
			break
		}
		beam = b.Source[beam]
	}
	return path
}

// beamColumn is step i's column of the tree, not yet placed: the beams that
// went on (marked as hypotheses when open says the run ended with them
// open), the hypotheses the step ended, and the pruned candidates.
func beamColumn(t *trace.Trace, steps []trace.Step, i int, path map[int]int, open bool, winner string, label func(int) string, w words.Words) view.BeamStepView {
	b := steps[i].Beams
	sv := view.BeamStepView{Number: i + 1, Label: w.F(lessons.KeyStepNOfTotal, "n", strconv.Itoa(i+1), "total", strconv.Itoa(len(steps)))}
	p, onPath := path[i]
	for j, from := range b.Source {
		if j >= len(b.Tokens) || j >= len(b.Scores) {
			break
		}
		sv.Nodes = append(sv.Nodes, view.BeamNodeView{ID: beamNodeName(i+1, strconv.Itoa(j)), From: from, Beam: j,
			Token: label(b.Tokens[j]), Score: logprobText(float64(b.Scores[j])),
			Winner: onPath && p == j, Final: open && i == len(steps)-1})
	}
	sv.Nodes = append(sv.Nodes, endNodes(t, steps[i], i, winner, label)...)
	for k, n := range prunedNodes(steps[i], label) {
		n.ID = beamNodeName(i+1, "p"+strconv.Itoa(k))
		sv.Nodes = append(sv.Nodes, n)
	}
	return sv
}

// beamNodeName names a node: "beam-3-1" is beam 1 after step 3 (beam-0-0 the
// prompt), "beam-3-p0" a pruned candidate, "beam-3-f0" an ended hypothesis.
func beamNodeName(step int, which string) string {
	return "beam-" + strconv.Itoa(step) + "-" + which
}

// beamRoot is the column the tree grows from: the prompt when the tree
// shows the run from its first step, else the beams entering the first
// step it shows.
func beamRoot(t *trace.Trace, steps []trace.Step, first int, path map[int]int, won bool, label func(int) string, w words.Words) view.BeamStepView {
	if first == 0 {
		root := view.BeamStepView{Label: w.T(lessons.KeyPrompt)}
		tok := ""
		if n := len(t.Prompt.IDs); n > 0 {
			tok = label(t.Prompt.IDs[n-1])
			if len(t.Prompt.Tokens) == n {
				tok = marks.Token(t.Prompt.Tokens[n-1])
			}
		}
		for r, in := range steps[0].Beams.ScoresIn {
			if in > beamDummy { // the others are copies of beam 0, never expanded
				root.Nodes = append(root.Nodes, view.BeamNodeView{ID: beamNodeName(0, strconv.Itoa(r)), From: -1, Beam: r,
					Token: tok, Score: logprobText(float64(in)), Winner: won})
			}
		}
		return root
	}
	total := strconv.Itoa(len(steps))
	root := view.BeamStepView{Number: first, Label: w.F(lessons.KeyStepNOfTotal, "n", strconv.Itoa(first), "total", total)}
	if b := steps[first-1].Beams; b != nil {
		for j, from := range b.Source {
			if j >= len(b.Tokens) || j >= len(b.Scores) {
				break
			}
			p, onPath := path[first-1]
			root.Nodes = append(root.Nodes, view.BeamNodeView{ID: beamNodeName(first, strconv.Itoa(j)), From: from, Beam: j,
				Token: label(b.Tokens[j]), Score: logprobText(float64(b.Scores[j])), Winner: onPath && p == j})
		}
	}
	return root
}

// endNodes are the hypotheses step i (of index i in its path) finished: the
// EOS each live beam chose, with the hypothesis's sum of log-probabilities.
func endNodes(t *trace.Trace, s trace.Step, i int, winner string, label func(int) string) []view.BeamNodeView {
	src, eos := finishedSources(s, t.Model.EOS, t.Options.EOSTokenID)
	var out []view.BeamNodeView
	for k, h := range s.Beams.Finished {
		tok := "EOS"
		switch {
		case eos[k] >= 0:
			tok = label(eos[k])
		case len(t.Options.EOSTokenID) > 0:
			tok = label(t.Options.EOSTokenID[0])
		case len(t.Model.EOS) > 0:
			tok = label(t.Model.EOS[0])
		}
		id := beamNodeName(i+1, "f"+strconv.Itoa(k))
		out = append(out, view.BeamNodeView{ID: id, From: src[k], Beam: -1, Token: tok,
			Score: logprobText(float64(h.SumLogprobs)), EOS: true, Final: true, Winner: id == winner})
	}
	return out
}

// hyp is a hypothesis in the making: its row of the table and where it
// ends in the tree.
type hyp struct {
	view         view.HypothesisView
	step, beam   int    // the step it left from and the beam it extended there
	node         string // the node it ends at
	score        float64
	recordedKept bool
}

// hypotheses lists the hypotheses finished by step pos, best first, and
// the winner once the run has ended (node "" before).
func hypotheses(t *trace.Trace, steps []trace.Step, pos int, ended bool, label func(int) string) ([]view.HypothesisView, hyp) {
	lp := t.Options.LengthPenalty
	var hyps []hyp
	for i := 0; i <= pos; i++ {
		b := steps[i].Beams
		if b == nil {
			continue
		}
		src, _ := finishedSources(steps[i], t.Model.EOS, t.Options.EOSTokenID)
		for k, h := range b.Finished {
			hyps = append(hyps, hyp{view: view.HypothesisView{
				Text: tokensLabel(h.Tokens, label), Sum: logprobText(float64(h.SumLogprobs)), Length: h.GeneratedLen,
				Score: logprobText(h.Score), Kept: h.Kept, Step: i + 1,
			}, step: i, beam: src[k], node: beamNodeName(i+1, "f"+strconv.Itoa(k)), score: h.Score, recordedKept: h.Kept})
		}
	}
	last := steps[len(steps)-1].Beams
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
			}, step: len(steps), beam: j, node: beamNodeName(len(steps), strconv.Itoa(j)), score: score, recordedKept: true})
		}
	}
	slices.SortStableFunc(hyps, func(a, b hyp) int { return cmp.Compare(b.score, a.score) })
	var winner hyp
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
	out := make([]view.HypothesisView, 0, len(hyps))
	for _, h := range hyps {
		out = append(out, h.view)
	}
	return out, winner
}

// layoutBeams places the tree's columns side by side and each column's
// nodes grouped under the node they extend (in the order of those nodes,
// each group as level with its parent as the tallest column allows: the
// beams that went on, then the ends, then the pruned), and draws an edge
// from every node to its parent in the column before. A token too long for
// its box is cut.
func layoutBeams(v *view.BeamTreeView) {
	rows := len(v.Root.Nodes)
	for _, sv := range v.Steps {
		rows = max(rows, len(sv.Nodes))
	}
	kind := func(n view.BeamNodeView) int {
		switch {
		case n.Pruned:
			return 2
		case n.EOS:
			return 1
		}
		return 0
	}
	type place struct {
		row int
		id  string
	}
	prev := &v.Root
	at := map[int]place{} // the beams of the column before
	for k := range v.Root.Nodes {
		v.Root.Nodes[k].Y = beamHeadH + k*beamRowH
		v.Root.Nodes[k].Label = cutToken(v.Root.Nodes[k].Token)
		at[v.Root.Nodes[k].Beam] = place{k, v.Root.Nodes[k].ID}
	}
	const none = math.MaxInt32
	for c := range v.Steps {
		sv := &v.Steps[c]
		sv.X = (c + 1) * beamColW
		if sv.Number != prev.Number+1 {
			at = nil // a step without beams between: no parents to draw
		}
		parent := func(n view.BeamNodeView) int {
			if p, ok := at[n.From]; ok {
				return p.row
			}
			return none
		}
		slices.SortStableFunc(sv.Nodes, func(a, b view.BeamNodeView) int {
			return cmp.Or(cmp.Compare(parent(a), parent(b)), cmp.Compare(kind(a), kind(b)))
		})
		next := map[int]place{}
		free := 0
		for k := range sv.Nodes {
			n := &sv.Nodes[k]
			p := parent(*n)
			row := free
			if p != none && (k == 0 || parent(sv.Nodes[k-1]) != p) {
				row = max(free, min(p, rows-(len(sv.Nodes)-k)))
			}
			free = row + 1
			n.Y = beamHeadH + row*beamRowH
			n.Label = cutToken(n.Token)
			if n.Beam >= 0 {
				next[n.Beam] = place{row, n.ID}
			}
			if p != none {
				v.Edges = append(v.Edges, beamEdge(prev.X+beamNodeW, beamHeadH+p*beamRowH, sv.X, *n, at[n.From].id, sv.Number))
			}
		}
		prev, at = sv, next
	}
	v.Width = (len(v.Steps)+1)*beamColW - (beamColW - beamNodeW)
	v.Height = beamHeadH + rows*beamRowH - (beamRowH - beamNodeH)
}

// beamEdge is the curve from the right side of the parent node whose top
// is at (x1, y1) to the left side of node n, at x2.
func beamEdge(x1, y1, x2 int, n view.BeamNodeView, parent string, step int) view.BeamEdgeView {
	y1 += beamNodeH / 2
	y2 := n.Y + beamNodeH/2
	mid := (x1 + x2) / 2
	return view.BeamEdgeView{From: parent, To: n.ID, Step: step, Pruned: n.Pruned, EOS: n.EOS, Winner: n.Winner,
		Path: fmt.Sprintf("M%d %dC%d %d %d %d %d %d", x1, y1, mid, y1, mid, y2, x2, y2)}
}

// tokenNames names ids as the run's tokenizer does, or else as the trace
// spells them (an imported trace has no tokenizer): its prompt's tokens and
// the candidates and choices of steps; "#id" when neither can.
func tokenNames(r *Run, steps []trace.Step) func(int) string {
	if name := r.namer(); name != nil {
		return func(id int) string { return marks.TokenOrID(name(id), id) }
	}
	t := r.Trace
	known := map[int]string{}
	if len(t.Prompt.Tokens) == len(t.Prompt.IDs) {
		for k, id := range t.Prompt.IDs {
			known[id] = t.Prompt.Tokens[k]
		}
	}
	for _, s := range steps {
		for _, row := range s.Rows {
			for _, c := range row.Candidates {
				if c.Token != "" {
					known[c.ID] = c.Token
				}
			}
			if row.Chosen.Token != "" {
				known[row.Chosen.ID] = row.Chosen.Token
			}
		}
	}
	return func(id int) string { return marks.TokenOrID(known[id], id) }
}

// cutToken is a token as a node draws it: whole up to beamTokenMax runes,
// else cut to fit with "…" (the node's title holds it whole).
func cutToken(tok string) string {
	if utf8.RuneCountInString(tok) <= beamTokenMax {
		return tok
	}
	return string([]rune(tok)[:beamTokenMax-1]) + "…"
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
// came from, and the EOS token it chose: the live beam whose EOS
// candidate, added to its score, gives the hypothesis's sum of
// log-probabilities (the trace does not say). -1 where none does.
func finishedSources(s trace.Step, eos, optEOS []int) (src, ids []int) {
	b := s.Beams
	src, ids = make([]int, len(b.Finished)), make([]int, len(b.Finished))
	for k, h := range b.Finished {
		src[k], ids[k] = -1, -1
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
					best, src[k], ids[k] = d, r, c.ID
				}
			}
		}
	}
	return src, ids
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

// beamPath names the tokens beam j holds after step i of steps, followed
// back through the beams it extended: each step's row j chose the token
// beam j appended there.
func beamPath(steps []trace.Step, i, j int) []string {
	var rev []string
	for i = min(i, len(steps)-1); i >= 0; i-- {
		b := steps[i].Beams
		if b == nil || j < 0 || j >= len(b.Tokens) || j >= len(b.Source) {
			return nil
		}
		id, tok := b.Tokens[j], ""
		if j < len(steps[i].Rows) && steps[i].Rows[j].Chosen.ID == id {
			tok = steps[i].Rows[j].Chosen.Token
		}
		rev = append(rev, marks.TokenOrID(tok, id))
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
