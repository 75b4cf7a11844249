package web

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/engine/remote"
	"tracer/lessons"
	"tracer/toy"
	"tracer/trace"
)

// document is what a session shows: one run stepped through, several runs
// side by side (a comparison), or the lesson's walkthrough of a toy run.
//
// A document and its runs belong to one session and change only under that
// session's lock: a live run grows as its steps arrive, and branching adds
// to a run's tree. Steps, once appended, are never changed, so a snapshot
// (see run.snapshot) may be read without the lock.
type document struct {
	runs    []*run               // at least one
	walk    *lessons.Walkthrough // set: the stepper walks the lesson's moments of runs[0]
	compare bool                 // the runs are shown side by side
	source  string               // where the document came from, for the page
	notice  string               // why a toy trace is not narrated, if it is not
	origin  origin               // where it came from, worded per page (compare_words.go)
}

// count is the number of stepper positions: the walkthrough's moments, the
// steps along the selected branch, or for a comparison the longest run (at
// least one, so an empty trace still shows its output).
func (d *document) count(branch int) int {
	if d.walk != nil {
		return len(d.walk.Moments)
	}
	if d.compare {
		n := 1
		for _, r := range d.runs {
			n = max(n, len(r.trace.Steps))
		}
		return n
	}
	return max(1, len(pathSteps(d.runs[0].trace, branch)))
}

// live reports whether any run of the document is still generating.
func (d *document) live() bool {
	for _, r := range d.runs {
		if r.live {
			return true
		}
	}
	return false
}

// run is one generate() call and the branches made from it: a trace tree.
type run struct {
	id    uint64       // unique in the server: names the run in chart caches
	label string       // "greedy", "temperature=0.7"; "" for a lone run
	trace *trace.Trace // trunk and branches
	err   string       // why generation failed, if it did

	// model and req make branching possible: the opened model and the
	// request the trunk ran with. model is nil for imported traces.
	model *models.Loaded
	req   engine.Request
	// server and sreq stand in for model and req for a model on a serving
	// engine (servers.go): nil and zero otherwise.
	server *remote.Client
	sreq   remote.Request
	// caches holds the KV cache each branch ended with (0 is the trunk), so a
	// new branch clones its parent's instead of recomputing the prefix.
	caches map[int]engine.Cache
	// inside holds what the run looked up inside its steps on demand
	// (inside.go); nil when it records them at every step.
	inside *insideStore

	live       bool // a generation is appending to this run
	keptLogits bool // its steps hold every raw logit for the what-if panel, which exports leave out
	liveBranch int  // the branch being generated while live
}

// generated reports whether the run was generated here, on a local model
// or a server's, rather than imported: it can branch and is shown as a run.
func (r *run) generated() bool { return r.model != nil || r.server != nil }

// maxCaches bounds the KV caches a run keeps for branching (a real model's
// cache can be tens of MiB): beyond it the oldest branch's goes, and
// branching from that branch recomputes its prefix.
const maxCaches = 4

// keepCache keeps the cache a branch ended with. The caller holds the
// session's lock.
func (r *run) keepCache(branch int, c engine.Cache) {
	r.caches[branch] = c
	for len(r.caches) > maxCaches {
		oldest := -1
		for id := range r.caches {
			if id != 0 && id != branch && (oldest < 0 || id < oldest) {
				oldest = id
			}
		}
		if oldest < 0 {
			return
		}
		delete(r.caches, oldest)
	}
}

// newRun wraps a trace; id must be unique in the server.
func newRun(id uint64, t *trace.Trace, label string) *run {
	return &run{id: id, label: label, trace: t, caches: map[int]engine.Cache{}}
}

// snapshot returns a copy of the run's trace that later appends do not
// touch: the step slices are clipped to their current length, and the
// branch list is copied.
func (r *run) snapshot() *trace.Trace {
	t := *r.trace
	t.Steps = slices.Clip(t.Steps)
	t.Branches = slices.Clone(t.Branches)
	for i := range t.Branches {
		t.Branches[i].Steps = slices.Clip(t.Branches[i].Steps)
	}
	return &t
}

// snapshot copies d for a reader outside its page's lock (an export):
// each run's trace as run.snapshot gives it, its label and error, whether
// it was still generating and whether it kept full logits.
func (d *document) snapshot() *document {
	c := &document{walk: d.walk, compare: d.compare, source: d.source, notice: d.notice, origin: d.origin}
	for _, x := range d.runs {
		c.runs = append(c.runs, &run{id: x.id, label: x.label, trace: x.snapshot(), err: x.err, live: x.live, keptLogits: x.keptLogits})
	}
	return c
}

// fork returns a copy of the run, under a new id, for another session (a
// student detaching from the instructor): it shares the steps and caches,
// which are never changed, and branches separately.
func (r *run) fork(id uint64) *run {
	c := *r
	c.id = id
	c.trace = r.snapshot()
	c.caches = make(map[int]engine.Cache, len(r.caches))
	for k, v := range r.caches {
		c.caches[k] = v
	}
	c.live = false
	return &c
}

// branchByID returns the branch with the id, or nil (0, the trunk, has
// none).
func branchByID(t *trace.Trace, id int) *trace.Branch {
	if id <= 0 || id > len(t.Branches) {
		return nil
	}
	return &t.Branches[id-1]
}

// pathSteps returns the steps along a branch: its ancestors' steps before
// each branch point, then its own. Branch 0 is the trunk; an unknown branch
// gives the trunk.
func pathSteps(t *trace.Trace, branch int) []trace.Step {
	b := branchByID(t, branch)
	if b == nil {
		return t.Steps
	}
	parent := pathSteps(t, b.Parent)
	out := make([]trace.Step, 0, b.At+len(b.Steps))
	out = append(out, parent[:min(b.At, len(parent))]...)
	return append(out, b.Steps...)
}

// pathOutput returns the output of a branch (the trunk's for 0).
func pathOutput(t *trace.Trace, branch int) trace.Output {
	if b := branchByID(t, branch); b != nil {
		return b.Output
	}
	return t.Output
}

// chosenIDs returns the tokens row chose at each of steps.
func chosenIDs(steps []trace.Step, row int) []int {
	ids := make([]int, 0, len(steps))
	for _, s := range steps {
		if row < len(s.Rows) {
			ids = append(ids, s.Rows[row].Chosen.ID)
		}
	}
	return ids
}

// rowCount is the number of rows the run's steps hold (batch rows or beams).
func rowCount(t *trace.Trace) int {
	n := 1
	if len(t.Prompt.Rows) > 0 {
		n = len(t.Prompt.Rows)
	}
	if len(t.Steps) > 0 {
		n = max(n, len(t.Steps[0].Rows))
	}
	return n
}

// cursor is where a session stands in its document.
type cursor struct {
	pos    int    // stepper position
	branch int    // the branch followed (0 = trunk)
	row    int    // the batch row or beam shown
	hit    string // the breakpoint that stopped the last run-until, shown until the next move
	// pending: a run-until waits for steps still to come; hit says which
	// breakpoints it waits for.
	pending bool
}

// runFileName names run i of a comparison's file: "run-2-T=0.7.json".
// The label keeps letters, digits and . = _ -, anything else becomes "-",
// and it is cut to 40 bytes, so the name is safe in a header and on disk.
func runFileName(i int, label string) string {
	var sb strings.Builder
	for _, c := range label {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '=', c == '_', c == '-':
			sb.WriteRune(c)
		default:
			sb.WriteByte('-')
		}
		if sb.Len() >= 40 {
			break
		}
	}
	l := strings.Trim(sb.String(), "-.")
	name := "run-" + strconv.Itoa(i+1)
	if l != "" {
		name += "-" + l
	}
	return name + ".json"
}

// withoutLogits returns a copy of t without the rows of raw logits a live
// run kept for the what-if panel (see keepLogits): they are the page's
// working data, not something the learner asked to record.
func withoutLogits(t *trace.Trace) *trace.Trace {
	c := *t
	c.Options.FullLogits = false
	strip := func(steps []trace.Step) []trace.Step {
		out := make([]trace.Step, len(steps))
		for i, st := range steps {
			st.Rows = slices.Clone(st.Rows)
			for k := range st.Rows {
				st.Rows[k].Logits = nil
			}
			out[i] = st
		}
		return out
	}
	c.Steps = strip(t.Steps)
	c.Branches = slices.Clone(t.Branches)
	for i := range c.Branches {
		c.Branches[i].Steps = strip(c.Branches[i].Steps)
	}
	return &c
}

// narrate walks a lone toy trace of d through table when it fits, else
// through the part of the table the trace itself records; a trace neither
// fits is shown step by step with a notice saying why.
func narrate(d *document, table *toy.Table) {
	t := d.runs[0].trace
	if t.Model.Kind != "toy" || len(t.Branches) > 0 {
		return
	}
	w, err := lessons.Walk(t, table)
	if err != nil {
		owned, terr := lessons.TableFromTrace(t)
		if terr == nil {
			w, err = lessons.Walk(t, owned)
		}
	}
	if err != nil {
		d.notice = "This toy trace is shown step by step without the walkthrough: " + strings.TrimPrefix(err.Error(), "lessons: ")
		return
	}
	d.walk = w
}

// firstRun runs the server's toy greedily, as the page does on opening.
// The run keeps its request and KV cache, so the learner may branch off
// the lesson.
func (s *runner) firstRun(ctx context.Context) (*document, error) {
	req, err := s.toy.Request(models.Input{}, nil)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	req.Record = true
	req.Options.FullLogits = true // the what-if panel's raw logits (8 per step)
	var kept engine.Cache
	req.KeepCache = func(c engine.Cache) { kept = c }
	t, err := engine.Generate(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("web: run %s: %w", s.toy.Spec, err)
	}
	req.KeepCache = nil
	d := s.newDocument(t, "run of "+s.toy.Spec+", greedy")
	d.origin = origin{kind: originRun, model: s.toy.Spec}
	r := d.runs[0]
	r.model, r.req, r.caches[0] = s.toy, req, kept
	r.keptLogits = true
	return d, nil
}

// newDocument prepares a trace for showing. A single-prompt toy trace is
// narrated against the server's table when it fits, else against the part
// of the table the trace itself records.
func (s *runner) newDocument(t *trace.Trace, source string) *document {
	d := &document{runs: []*run{newRun(s.runIDs.Add(1), t, "")}, source: source}
	narrate(d, toy.Of(s.toy).Table())
	return d
}

// sizeText writes a byte count in MiB or KiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// forkDocument copies a document for another session: the runs are forked
// (shared steps, separate trees); a run still generating is cut where it
// stands. The caller holds the owner's lock.
func (s *runner) forkDocument(d *document) *document {
	o := d.origin
	o.copy = true
	c := &document{walk: d.walk, compare: d.compare, source: d.source + " (your copy)", notice: d.notice, origin: o}
	for _, r := range d.runs {
		f := r.fork(s.runIDs.Add(1))
		if r.live {
			if f.trace.Output.StopReason == "" {
				f.trace.Output = cutOutput()
			}
			for i := range f.trace.Branches {
				if f.trace.Branches[i].Output.StopReason == "" {
					f.trace.Branches[i].Output = cutOutput()
				}
			}
		}
		c.runs = append(c.runs, f)
	}
	return c
}

// heldBytes is what r holds of full logits and KV caches. The caller
// holds the session's lock.
func (r *run) heldBytes() int64 {
	var n int64
	steps := func(ss []trace.Step) {
		for _, s := range ss {
			for _, row := range s.Rows {
				n += 4 * int64(len(row.Logits))
			}
		}
	}
	steps(r.trace.Steps)
	for _, b := range r.trace.Branches {
		steps(b.Steps)
	}
	for _, c := range r.caches {
		if c == nil {
			continue
		}
		for _, b := range c.LayerBytes() {
			n += b
		}
	}
	return n
}

// shed drops r's full logits and KV caches. The steps are never changed
// in place (a snapshot may be reading them): the trace is copied without
// the logits (withoutLogits). The caller holds the session's lock.
func (r *run) shed() {
	r.trace = withoutLogits(r.trace)
	r.keptLogits = false
	clear(r.caches)
}
