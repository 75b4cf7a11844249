package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/engine/remote"
	"tracer/engine/tokenizer"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
)

// branchTree lists a run's trunk and branches, each under its parent; nil
// when the run has no branches.
func branchTree(r *Run, selected int) *view.BranchTreeView {
	t := r.Trace
	if len(t.Branches) == 0 {
		return nil
	}
	// children[id]: the branches whose parent is id, in the trace's order,
	// built once so that the tree costs one pass over the branches.
	children := make(map[int][]int, len(t.Branches))
	for _, b := range t.Branches {
		children[b.Parent] = append(children[b.Parent], b.ID)
	}
	v := &view.BranchTreeView{Nodes: make([]view.BranchNodeView, 0, len(t.Branches)+1)}
	type visit struct{ id, depth int }
	stack := []visit{{0, 0}}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		node := view.BranchNodeView{ID: n.id, Depth: n.depth, Selected: n.id == selected, Live: r.Live && r.LiveBranch == n.id}
		if b := branchByID(t, n.id); b != nil {
			node.Label, node.Text = b.Label, b.Output.NewText
		} else {
			node.Label, node.Text = "trunk", t.Output.NewText
		}
		v.Nodes = append(v.Nodes, node)
		kids := children[n.id]
		delete(children, n.id) // a malformed tree (a cycle) is walked once
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, visit{kids[i], n.depth + 1})
		}
	}
	return v
}

// BranchPlan is a branch about to run.
type BranchPlan struct {
	r      *Run
	parent int
	At     int   // the step that chooses the new token
	before []int // the tokens the parent chose before at
	id     int   // the new token
	req    engine.Request
	// Existing is the branch (0: the trunk) that already chose id at step
	// at after the same prefix, or -1: choosing it again goes there
	// instead of making a duplicate.
	Existing int
	settings string // what-if settings the branch continues with, "T=0.7 top_k=5"; "" keeps the run's
	// sreq is a server run's branch: step mode from the branch point
	// (serverrun.go); text is the new token's text as the step listed it.
	sreq      remote.Request
	fromStart bool // sreq's steps count from the trunk's first, not from at
	text      string
}

// BranchAsk is what a page asks of a branch, as its message gave it: at
// step Step of the followed branch (nil: the position shown) choose the
// token ID or Token, or go on with the what-if panel's settings. It keeps
// the runs' code apart from the protocol's message type.
type BranchAsk struct {
	Step, ID *int
	Token    *string
	WhatIf   *WhatIfForm
}

// PlanBranch checks a branch asked for against the session's document and
// prepares the request: at step m.Step of the followed branch (default: the
// current position) choose the token, then continue as the run did. The
// parent's KV cache, cut to the shared prefix, is reused. The caller holds
// the session's lock.
func PlanBranch(d *Document, cur Cursor, m BranchAsk) (*BranchPlan, error) {
	if d.Compare {
		return nil, errors.New("branching works on one run at a time: generate a single run first")
	}
	r := d.Runs[0]
	t := r.Trace
	switch {
	case r.Live:
		return nil, errors.New("the run is still generating: stop it or wait for it before branching")
	case !r.generated():
		return nil, errors.New("this trace was imported without its model: generate a run on the page to branch")
	case RowCount(t) > 1 || t.Options.NumBeams > 1:
		return nil, errors.New("branching follows a single prompt: batches and beam search cannot branch")
	}
	steps := PathSteps(t, cur.Branch)
	at := cur.Pos
	if d.Walk != nil {
		at = d.Walk.Moments[cur.Pos].Step
	}
	if m.Step != nil {
		at = *m.Step
	}
	if at < 0 || at >= len(steps) {
		return nil, fmt.Errorf("cannot branch at step index %d: this branch has steps 0 to %d", at, len(steps)-1)
	}
	vocab := t.Model.VocabSize
	if r.server != nil {
		return planServerBranch(r, cur, m, steps, at, cmpVocab(vocab))
	}
	var id int
	if m.ID != nil {
		id = *m.ID
		if err := checkID(id, vocab); err != nil {
			return nil, err
		}
	} else {
		var err error
		if id, err = lookupToken(r.Model.Tokenizer, *m.Token, vocab); err != nil {
			return nil, err
		}
	}
	p := &BranchPlan{r: r, parent: cur.Branch, At: at, before: chosenIDs(steps[:at], 0), id: id}
	if m.WhatIf != nil { // the what-if panel's branch: on with its settings
		set, err := m.WhatIf.Apply(SettingsOf(t.Options), vocab)
		if err != nil {
			return nil, err
		}
		p.Existing, p.settings = -1, set.label()
		p.req = r.Req
		p.req.Options = set.options(r.Req.Options)
		if err := engine.Validate(p.req.Options, r.Model.Model.Info()); err != nil {
			return nil, fmt.Errorf("what-if: %w", err)
		}
	} else if p.Existing = existingBranch(t, cur.Branch, steps, at, id, p.before); p.Existing >= 0 {
		return p, nil
	}
	if m.WhatIf == nil {
		p.req = r.Req
	}
	p.req.Force = [][]int{append(append([]int{}, p.before...), id)}
	if c := r.Caches[cur.Branch]; c != nil {
		kept := c.Clone()
		kept.Truncate(max(0, len(t.Prompt.IDs)+at-1))
		p.req.Resume = &engine.Resume{Cache: kept, Tokens: [][]int{p.before}, Step: at}
	}
	return p, nil
}

// planServerBranch is planBranch for a run on a server model: the token
// is found among the step's candidates (or given by id), and the branch
// records in step mode from the branch point on.
func planServerBranch(r *Run, cur Cursor, m BranchAsk, steps []trace.Step, at, vocab int) (*BranchPlan, error) {
	if m.WhatIf != nil {
		return nil, errors.New("what-if needs the model's logits, and a server gives only its top log-probabilities: branch with a token instead")
	}
	var id int
	var text string
	if m.ID != nil {
		id = *m.ID
		if err := checkID(id, vocab); err != nil {
			return nil, err
		}
		for _, c := range steps[at].Rows[0].Candidates {
			if c.ID == id {
				text = c.Token
			}
		}
	} else {
		var err error
		if id, text, err = serverToken(steps[at], *m.Token, vocab); err != nil {
			return nil, err
		}
	}
	p := &BranchPlan{r: r, parent: cur.Branch, At: at, before: chosenIDs(steps[:at], 0), id: id, text: text}
	if p.Existing = existingBranch(r.Trace, cur.Branch, steps, at, id, p.before); p.Existing >= 0 {
		return p, nil
	}
	var err error
	p.sreq, p.fromStart, err = serverBranch(r, at, p.before, id)
	return p, err
}

// existingBranch finds the path that already chose id at step at after
// the tokens before: the followed branch itself, or a branch made there
// before. It returns its id (0: the trunk), or -1 when there is none.
func existingBranch(t *trace.Trace, followed int, steps []trace.Step, at, id int, before []int) int {
	if steps[at].Rows[0].Chosen.ID == id {
		return followed
	}
	for _, b := range t.Branches {
		if b.At != at || len(b.Steps) == 0 || b.Steps[0].Rows[0].Chosen.ID != id {
			continue
		}
		if path := PathSteps(t, b.ID); len(path) > at && slices.Equal(chosenIDs(path[:at], 0), before) {
			return b.ID
		}
	}
	return -1
}

// lookupToken finds the id of a token typed by the user: a vocabulary
// string ("Ġthe"), or text that encodes to exactly one token (" the").
func lookupToken(tok tokenizer.Tokenizer, text string, vocab int) (int, error) {
	if text == "" {
		return 0, errors.New("no token given: type a token or its id")
	}
	if strings.HasPrefix(text, "#") {
		id, err := strconv.Atoi(text[1:])
		if err != nil {
			return 0, fmt.Errorf("%q is not a token id", text)
		}
		if err := checkID(id, vocab); err != nil {
			return 0, err
		}
		return id, nil
	}
	if tok == nil {
		return 0, errors.New("this model has no tokenizer: give the token's id (#123)")
	}
	for id := range tok.VocabSize() {
		if tok.Token(id) == text {
			return id, nil
		}
	}
	ids, err := tok.Encode(text, false)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a token of this vocabulary: %v", text, err)
	case len(ids) != 1:
		return 0, fmt.Errorf("%q is not one token of this vocabulary (it encodes to %d tokens %v): type a single token or its id (#123)", text, len(ids), ids)
	}
	return ids[0], nil
}

// AddBranch adds the planned branch to its run's tree, the run live on it.
// The caller holds the lock of the page that shows the run.
func AddBranch(p *BranchPlan) trace.Branch {
	t := p.r.Trace
	label := fmt.Sprintf("step %d → #%d", p.At+1, p.id)
	if p.r.Model != nil && p.r.Model.Tokenizer != nil {
		label = fmt.Sprintf("step %d → %s", p.At+1, marks.TokenOrID(p.r.Model.Tokenizer.Token(p.id), p.id))
	} else if p.text != "" {
		label = fmt.Sprintf("step %d → %s", p.At+1, marks.TokenOrID(p.text, p.id))
	}
	if p.settings != "" {
		label += " (" + p.settings + ")"
	}
	b := trace.Branch{ID: len(t.Branches) + 1, Parent: p.parent, At: p.At, Label: label, Steps: []trace.Step{}}
	t.Branches = append(t.Branches, b)
	p.r.Live, p.r.LiveBranch = true, b.ID
	return b
}

// BranchWork is the work that generates branch b of plan p (added by
// addBranch) until it ends or ctx does, its steps going to k: on the local
// engine, or recorded from the run's server.
func (s *Runner) BranchWork(ctx context.Context, p *BranchPlan, b trace.Branch, k Sink) func() error {
	r := p.r
	if r.server != nil {
		return s.serverBranchWork(ctx, p, b, k)
	}
	req := p.req
	req.Record = true
	req.KeepCache = func(c engine.Cache) {
		k.Lock.Lock()
		defer k.Lock.Unlock()
		r.keepCache(b.ID, c)
	}
	// Without a kept cache the run starts over, forced along the prefix:
	// the steps before the branch point are its parent's already.
	req.OnStep = func(st trace.Step) {
		if st.Index < b.At {
			return
		}
		k.add(r, b.ID, st)
	}
	return func() error {
		out, err := s.generate(ctx, "the branch", req)
		k.Lock.Lock()
		defer k.Lock.Unlock()
		br := &r.Trace.Branches[b.ID-1]
		if err != nil {
			br.Output = trace.Output{StopReason: trace.StopCancelled}
		} else {
			first := 0
			for first < len(out.Steps) && out.Steps[first].Index < b.At {
				first++
			}
			br.Steps, br.Output = out.Steps[first:], out.Output
		}
		r.Live = false
		k.Ended(r, b.ID)
		if err != nil {
			return fmt.Errorf("the branch failed: %w", err)
		}
		return nil
	}
}

// serverBranchWork records a planned branch of a server run: steps arrive
// numbered from the branch point, and the branch's output reads from the
// trunk's first new token, as a local branch's does.
func (s *Runner) serverBranchWork(ctx context.Context, p *BranchPlan, b trace.Branch, k Sink) func() error {
	r := p.r
	var prefix strings.Builder
	for _, st := range PathSteps(r.Trace, p.parent)[:p.At] {
		prefix.WriteString(st.Rows[0].Chosen.Token)
	}
	req := p.sreq
	req.OnStep = func(st trace.Step) {
		if p.fromStart && st.Index < b.At {
			return // the prefix, forced again: its steps are the parent's
		}
		if !p.fromStart {
			st.Index += b.At
		}
		k.add(r, b.ID, st)
	}
	return func() error {
		out, err := s.record(ctx, "the branch", r.server, req)
		k.Lock.Lock()
		defer k.Lock.Unlock()
		br := &r.Trace.Branches[b.ID-1]
		switch {
		case out != nil && p.fromStart:
			first := 0
			for first < len(out.Steps) && out.Steps[first].Index < b.At {
				first++
			}
			br.Steps, br.Output = out.Steps[first:], out.Output
			// Its prompt ids are the rendered chat's, which the trunk
			// (the server's chat endpoint) does not have.
			br.Output.IDs = nil
			if ctx.Err() != nil {
				err = nil
			}
		case out != nil:
			br.Steps, br.Output = shiftBranch(out, r.Trace, b.At, p.before, prefix.String())
			if ctx.Err() != nil {
				err = nil // stopped from the page: the partial branch is kept
			}
		default:
			br.Output = trace.Output{StopReason: trace.StopCancelled}
		}
		r.Live = false
		k.Ended(r, b.ID)
		if err != nil {
			return fmt.Errorf("the branch failed: %w", err)
		}
		return nil
	}
}
