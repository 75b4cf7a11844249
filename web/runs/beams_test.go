package runs

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/view"
)

// beamVocab names the ids of beamSearchTrace: whitespace-only tokens, a
// token too long for a node, and the EOS.
var beamVocab = map[int]string{
	2: "</s>", 5: "Hi", 10: " ", 11: "\n", 12: "supercalifragilisticexpialidocious",
	13: "cat", 14: "dog", 15: "\t", 16: "owl",
}

// beamSearchTrace is a beam search of two beams over three steps, as an
// imported trace holds it (no tokenizer: the trace names its tokens). At
// step 2 beam 0 ends with EOS, and that hypothesis wins: the beams still
// open at the end score worse.
func beamSearchTrace() *trace.Trace {
	lg := func(p float64) float32 { return float32(math.Log(p)) }
	cands := func(idp ...float64) []trace.Candidate {
		var out []trace.Candidate
		for k := 0; k < len(idp); k += 2 {
			id := int(idp[k])
			out = append(out, trace.Candidate{ID: id, Token: beamVocab[id], Prob: idp[k+1]})
		}
		return out
	}
	row := func(chosen int, c []trace.Candidate) trace.StepRow {
		return trace.StepRow{Candidates: c, Chosen: trace.Chosen{ID: chosen, Token: beamVocab[chosen], By: trace.ByBeam}}
	}
	s0 := lg(.5) + lg(.6)
	s1 := []float32{lg(.5) + lg(.3), lg(.3) + lg(.5)}
	return &trace.Trace{
		Model:   trace.Model{Name: "m", EOS: []int{2}, BOS: -1, PAD: -1},
		Options: trace.Options{NumBeams: 2, LengthPenalty: 1},
		Prompt:  trace.Prompt{Text: "Hi", IDs: []int{5}, Tokens: []string{"Hi"}},
		Steps: []trace.Step{
			{Index: 0, Rows: []trace.StepRow{row(10, cands(10, .5, 11, .3, 12, .1, 2, .05)), row(11, cands(10, .5, 11, .3, 12, .1, 2, .05))},
				Beams: &trace.BeamStep{ScoresIn: []float32{0, -1e9}, Source: []int{0, 0}, Tokens: []int{10, 11}, Scores: []float32{lg(.5), lg(.3)}}},
			{Index: 1, Rows: []trace.StepRow{row(13, cands(2, .6, 13, .3, 14, .1)), row(13, cands(13, .5, 12, .4, 2, .1))},
				Beams: &trace.BeamStep{ScoresIn: []float32{lg(.5), lg(.3)}, Source: []int{0, 1}, Tokens: []int{13, 13}, Scores: s1,
					Finished: []trace.Hypothesis{{Tokens: []int{10}, SumLogprobs: s0, GeneratedLen: 1, Score: float64(s0), Kept: true}}}},
			{Index: 2, Rows: []trace.StepRow{row(14, cands(16, .5, 14, .01)), row(15, cands(16, .5, 15, .01))},
				Beams: &trace.BeamStep{ScoresIn: s1, Source: []int{0, 1}, Tokens: []int{14, 15}, Scores: []float32{s1[0] + lg(.01), s1[1] + lg(.01)}}},
		},
		Output: trace.Output{StopReason: trace.StopMaxNewTokens},
	}
}

// TestBeamTreeIsATree builds the tree of beamSearchTrace at its last step:
// a column per step labelled with the run's step count, an edge from every
// beam that went on to the beam it extends (and from every pruned and
// ended node to its own), tokens whole with their whitespace marked (the
// too long one cut, its title whole), the ended hypothesis and the beams
// open at the end marked, the winner's path as long as the winner, every
// box inside the drawing and none over another.
func TestBeamTreeIsATree(t *testing.T) {
	tr := beamSearchTrace()
	w := testsupport.Words(t, lessons.English)
	v := beamTree(&Run{Trace: tr}, tr.Steps, 2, w)
	if v == nil {
		t.Fatal("no tree for a beam search")
	}
	if len(v.Root.Nodes) != 1 || v.Root.Nodes[0].ID != "beam-0-0" || v.Root.Nodes[0].Label != "Hi" || v.Root.Label != "Prompt" {
		t.Errorf("root: got %q with %+v, want the prompt's last token Hi as beam-0-0", v.Root.Label, v.Root.Nodes)
	}
	nodes := map[string]view.BeamNodeView{}
	for _, n := range v.Root.Nodes {
		nodes[n.ID] = n
	}
	for k, sv := range v.Steps {
		if want := fmt.Sprintf("Step %d of 3", k+1); sv.Number != k+1 || sv.Label != want {
			t.Errorf("column %d: got step %d labelled %q, want %q", k, sv.Number, sv.Label, want)
		}
		if sv.X != (k+1)*beamColW {
			t.Errorf("column %d at x %d, want %d", k, sv.X, (k+1)*beamColW)
		}
		rows := map[int]string{}
		for _, n := range sv.Nodes {
			nodes[n.ID] = n
			if o, ok := rows[n.Y]; ok {
				t.Errorf("step %d: %s and %s both at y %d", sv.Number, o, n.ID, n.Y)
			}
			rows[n.Y] = n.ID
			if n.Y < beamHeadH || n.Y+beamNodeH > v.Height || sv.X+beamNodeW > v.Width {
				t.Errorf("step %d: %s at (%d, %d) outside the %d×%d drawing", sv.Number, n.ID, sv.X, n.Y, v.Width, v.Height)
			}
		}
	}
	beamEdges := map[int]int{}
	for _, e := range v.Edges {
		if _, ok := nodes[e.From]; !ok {
			t.Errorf("edge %s → %s from no node", e.From, e.To)
		}
		if !e.Pruned && !e.EOS {
			beamEdges[e.Step]++
		}
	}
	for i, s := range tr.Steps {
		if beamEdges[i+1] != len(s.Beams.Source) {
			t.Errorf("step %d: %d edges to beams that went on, want %d", i+1, beamEdges[i+1], len(s.Beams.Source))
		}
		for j, src := range s.Beams.Source {
			want := view.BeamEdgeView{From: fmt.Sprintf("beam-%d-%d", i, src), To: fmt.Sprintf("beam-%d-%d", i+1, j), Step: i + 1}
			if !hasEdge(v.Edges, want) {
				t.Errorf("step %d: no edge %s → %s", i+1, want.From, want.To)
			}
		}
	}
	for _, c := range []struct {
		id, label, token, score    string
		pruned, eos, final, winner bool
	}{
		{"beam-1-0", "␣", "␣", "-0.69", false, false, false, true},
		{"beam-1-1", "⏎", "⏎", "-1.20", false, false, false, false},
		{"beam-1-p0", "supercalifragil…", "supercalifragilisticexpialidocious", "-2.30", true, false, false, false},
		{"beam-2-f0", "</s>", "</s>", "-1.20", false, true, true, true},
		{"beam-3-1", "→", "→", "-6.50", false, false, true, false},
	} {
		n, ok := nodes[c.id]
		if !ok {
			t.Errorf("no node %s", c.id)
			continue
		}
		if n.Label != c.label || n.Token != c.token || n.Score != c.score || n.Pruned != c.pruned || n.EOS != c.eos || n.Final != c.final || n.Winner != c.winner {
			t.Errorf("node %s: got %q (%q) %s pruned %v eos %v final %v winner %v, want %q (%q) %s pruned %v eos %v final %v winner %v",
				c.id, n.Label, n.Token, n.Score, n.Pruned, n.EOS, n.Final, n.Winner, c.label, c.token, c.score, c.pruned, c.eos, c.final, c.winner)
		}
	}
	if !hasEdge(v.Edges, view.BeamEdgeView{From: "beam-1-0", To: "beam-2-f0", Step: 2, EOS: true, Winner: true}) {
		t.Errorf("no edge from beam 0 to the EOS that ended it: %+v", v.Edges)
	}
	path := 0
	for _, sv := range v.Steps {
		for _, n := range sv.Nodes {
			if n.Winner && !n.EOS {
				path++
			}
		}
	}
	if len(v.Finished) != 3 || !v.Finished[0].Winner || v.Finished[0].Length != path {
		t.Errorf("got %d hypotheses, the first %+v, and %d nodes on the winner's path; want 3, the EOS one winning with as many tokens as its path", len(v.Finished), v.Finished, path)
	}
}

func hasEdge(edges []view.BeamEdgeView, want view.BeamEdgeView) bool {
	for _, e := range edges {
		if e.From == want.From && e.To == want.To && e.Step == want.Step && e.EOS == want.EOS && (e.Winner || !want.Winner) {
			return true
		}
	}
	return false
}

// TestBeamTreeCountsTheRunsSteps: a run longer than the tree shows numbers
// its columns against the run's steps ("Step 20 of 20", not "of 12"), and
// grows from the beams entering the first step shown.
func TestBeamTreeCountsTheRunsSteps(t *testing.T) {
	tr := &trace.Trace{Model: trace.Model{EOS: []int{2}, BOS: -1, PAD: -1}, Options: trace.Options{NumBeams: 2, LengthPenalty: 1}}
	for i := range 20 {
		in := []float32{float32(-i), float32(-i - 1)}
		if i == 0 {
			in = []float32{0, -1e9}
		}
		tr.Steps = append(tr.Steps, trace.Step{Index: i,
			Rows:  []trace.StepRow{{Candidates: []trace.Candidate{{ID: 7, Token: "a", Prob: .5}, {ID: 8, Token: "b", Prob: .3}}}, {Candidates: []trace.Candidate{{ID: 9, Token: "c", Prob: .2}}}},
			Beams: &trace.BeamStep{ScoresIn: in, Source: []int{0, 1 - i%2}, Tokens: []int{7, 8}, Scores: []float32{float32(-i - 1), float32(-i - 2)}}})
	}
	w := testsupport.Words(t, lessons.English)
	v := beamTree(&Run{Trace: tr}, tr.Steps, 19, w)
	if v.Root.Label != "Step 8 of 20" || len(v.Root.Nodes) != 2 {
		t.Errorf("root: got %q with %d beams, want Step 8 of 20 with 2", v.Root.Label, len(v.Root.Nodes))
	}
	if len(v.Steps) != beamTreeSteps {
		t.Fatalf("got %d columns, want %d", len(v.Steps), beamTreeSteps)
	}
	for k, sv := range v.Steps {
		if want := "Step " + strconv.Itoa(9+k) + " of 20"; sv.Label != want {
			t.Errorf("column %d: got %q, want %q", k, sv.Label, want)
		}
	}
	first := 0
	for _, e := range v.Edges {
		if e.Step == 9 && !e.Pruned {
			first++
		}
	}
	if first != 2 {
		t.Errorf("got %d edges from the root to step 9's beams, want 2", first)
	}
}

// TestBeamPanelRenders renders the tree of beamSearchTrace in the page:
// each node's title holds its whole token, edges name their nodes, ended
// hypotheses carry data-finished, and the attention keys of a beam are the
// tokens of its own path.
func TestBeamPanelRenders(t *testing.T) {
	tr := beamSearchTrace()
	d := &Document{Source: "imported beams.json", Runs: []*Run{NewRun(1, tr, "")}}
	v, _ := BuildStepper(d, Cursor{Pos: 2}, BuildOpts{Words: testsupport.Words(t, lessons.English)})
	var b bytes.Buffer
	if err := view.Stepper(v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`title="supercalifragilisticexpialidocious"`, `>supercalifragil…</span>`,
		`data-testid="beam-edge" data-from="beam-1-1" data-to="beam-2-1" data-step="2"`,
		`data-testid="beam-node-finished" data-node="beam-2-f0"`,
		`>Step 3 of 3</li>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page holds no %s", want)
		}
	}
	if got := len(regexp.MustCompile(`data-finished`).FindAllString(html, -1)); got != 3 {
		t.Errorf("got %d nodes marked finished, want 3 (the EOS and the two beams open at the end)", got)
	}
	texts, _ := contextKeys(tr, tr.Steps, 2, 1, 3)
	if got := strings.Join(texts, " "); got != "Hi ⏎ cat" {
		t.Errorf("beam 1's attention keys at step 3: got %q, want its path Hi ⏎ cat", got)
	}
}
