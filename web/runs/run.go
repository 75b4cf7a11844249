package runs

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

// Document is what a session shows: one run stepped through, several runs
// side by side (a comparison), or the lesson's walkthrough of a toy run.
//
// A document and its runs belong to one session and change only under that
// session's lock: a live run grows as its steps arrive, and branching adds
// to a run's tree. Steps, once appended, are never changed, so a snapshot
// (see run.snapshot) may be read without the lock.
type Document struct {
	Runs    []*Run               // at least one
	Walk    *lessons.Walkthrough // set: the stepper walks the lesson's moments of runs[0]
	Compare bool                 // the runs are shown side by side
	Source  string               // where the document came from, for the page
	Notice  string               // why a toy trace is not narrated, if it is not
	Origin  Origin               // where it came from, worded per page (compare_words.go)
}

// Count is the number of stepper positions: the walkthrough's moments, the
// steps along the selected branch, or for a comparison the longest run (at
// least one, so an empty trace still shows its output).
func (d *Document) Count(branch int) int {
	if d.Walk != nil {
		return len(d.Walk.Moments)
	}
	if d.Compare {
		n := 1
		for _, r := range d.Runs {
			n = max(n, len(r.Trace.Steps))
		}
		return n
	}
	return max(1, len(PathSteps(d.Runs[0].Trace, branch)))
}

// Live reports whether any run of the document is still generating.
func (d *Document) Live() bool {
	for _, r := range d.Runs {
		if r.Live {
			return true
		}
	}
	return false
}

// Run is one generate() call and the branches made from it: a trace tree.
type Run struct {
	id    uint64       // unique in the server: names the run in chart caches
	Label string       // "greedy", "temperature=0.7"; "" for a lone run
	Trace *trace.Trace // trunk and branches
	err   string       // why generation failed, if it did

	// Model and req make branching possible: the opened model and the
	// request the trunk ran with. model is nil for imported traces.
	Model *models.Loaded
	Req   engine.Request
	// server and sreq stand in for model and req for a model on a serving
	// engine (servers.go): nil and zero otherwise.
	server *remote.Client
	sreq   remote.Request
	// Caches holds the KV cache each branch ended with (0 is the trunk), so a
	// new branch clones its parent's instead of recomputing the prefix.
	Caches map[int]engine.Cache
	// Inside holds what the run looked up inside its steps on demand
	// (inside.go); nil when it records them at every step.
	Inside *insideStore

	Live       bool // a generation is appending to this run
	KeptLogits bool // its steps hold every raw logit for the what-if panel, which exports leave out
	LiveBranch int  // the branch being generated while live
}

// generated reports whether the run was generated here, on a local model
// or a server's, rather than imported: it can branch and is shown as a run.
func (r *Run) generated() bool { return r.Model != nil || r.server != nil }

// Err is why the run's generation failed, as its status says it; "" when
// it did not fail.
func (r *Run) Err() string { return r.err }

// maxCaches bounds the KV caches a run keeps for branching (a real model's
// cache can be tens of MiB): beyond it the oldest branch's goes, and
// branching from that branch recomputes its prefix.
const maxCaches = 4

// keepCache keeps the cache a branch ended with. The caller holds the
// session's lock.
func (r *Run) keepCache(branch int, c engine.Cache) {
	r.Caches[branch] = c
	for len(r.Caches) > maxCaches {
		oldest := -1
		for id := range r.Caches {
			if id != 0 && id != branch && (oldest < 0 || id < oldest) {
				oldest = id
			}
		}
		if oldest < 0 {
			return
		}
		delete(r.Caches, oldest)
	}
}

// NewRun wraps a trace; id must be unique in the server.
func NewRun(id uint64, t *trace.Trace, label string) *Run {
	return &Run{id: id, Label: label, Trace: t, Caches: map[int]engine.Cache{}}
}

// Snapshot returns a copy of the run's trace that later appends do not
// touch: the step slices are clipped to their current length, and the
// branch list is copied.
func (r *Run) Snapshot() *trace.Trace {
	t := *r.Trace
	t.Steps = slices.Clip(t.Steps)
	t.Branches = slices.Clone(t.Branches)
	for i := range t.Branches {
		t.Branches[i].Steps = slices.Clip(t.Branches[i].Steps)
	}
	return &t
}

// Snapshot copies d for a reader outside its page's lock (an export):
// each run's trace as run.snapshot gives it, its label and error, whether
// it was still generating and whether it kept full logits.
func (d *Document) Snapshot() *Document {
	c := &Document{Walk: d.Walk, Compare: d.Compare, Source: d.Source, Notice: d.Notice, Origin: d.Origin}
	for _, x := range d.Runs {
		c.Runs = append(c.Runs, &Run{id: x.id, Label: x.Label, Trace: x.Snapshot(), err: x.err, Live: x.Live, KeptLogits: x.KeptLogits})
	}
	return c
}

// fork returns a copy of the run, under a new id, for another session (a
// student detaching from the instructor): it shares the steps and caches,
// which are never changed, and branches separately.
func (r *Run) fork(id uint64) *Run {
	c := *r
	c.id = id
	c.Trace = r.Snapshot()
	c.Caches = make(map[int]engine.Cache, len(r.Caches))
	for k, v := range r.Caches {
		c.Caches[k] = v
	}
	c.Live = false
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

// PathSteps returns the steps along a branch: its ancestors' steps before
// each branch point, then its own. Branch 0 is the trunk; an unknown branch
// gives the trunk.
func PathSteps(t *trace.Trace, branch int) []trace.Step {
	b := branchByID(t, branch)
	if b == nil {
		return t.Steps
	}
	parent := PathSteps(t, b.Parent)
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

// RowCount is the number of rows the run's steps hold (batch rows or beams).
func RowCount(t *trace.Trace) int {
	n := 1
	if len(t.Prompt.Rows) > 0 {
		n = len(t.Prompt.Rows)
	}
	if len(t.Steps) > 0 {
		n = max(n, len(t.Steps[0].Rows))
	}
	return n
}

// Cursor is where a session stands in its document.
type Cursor struct {
	Pos    int    // stepper position
	Branch int    // the branch followed (0 = trunk)
	Row    int    // the batch row or beam shown
	Hit    string // the breakpoint that stopped the last run-until, shown until the next move
	// Pending: a run-until waits for steps still to come; hit says which
	// breakpoints it waits for.
	Pending bool
}

// RunFileName names run i of a comparison's file: "run-2-T=0.7.json".
// The label keeps letters, digits and . = _ -, anything else becomes "-",
// and it is cut to 40 bytes, so the name is safe in a header and on disk.
func RunFileName(i int, label string) string {
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

// WithoutLogits returns a copy of t without the rows of raw logits a live
// run kept for the what-if panel (see keepLogits): they are the page's
// working data, not something the learner asked to record.
func WithoutLogits(t *trace.Trace) *trace.Trace {
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

// Narrate walks a lone toy trace of d through table when it fits, else
// through the part of the table the trace itself records; a trace neither
// fits is shown step by step with a notice saying why.
func Narrate(d *Document, table *toy.Table) {
	t := d.Runs[0].Trace
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
		d.Notice = "This toy trace is shown step by step without the walkthrough: " + strings.TrimPrefix(err.Error(), "lessons: ")
		return
	}
	d.Walk = w
}

// FirstRun runs the server's toy greedily, as the page does on opening.
// The run keeps its request and KV cache, so the learner may branch off
// the lesson.
func (s *Runner) FirstRun(ctx context.Context) (*Document, error) {
	req, err := s.Toy.Request(models.Input{}, nil)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	req.Record = true
	req.Options.FullLogits = true // the what-if panel's raw logits (8 per step)
	var kept engine.Cache
	req.KeepCache = func(c engine.Cache) { kept = c }
	t, err := engine.Generate(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("web: run %s: %w", s.Toy.Spec, err)
	}
	req.KeepCache = nil
	d := s.NewDocument(t, "run of "+s.Toy.Spec+", greedy")
	d.Origin = Origin{Kind: originRun, model: s.Toy.Spec}
	r := d.Runs[0]
	r.Model, r.Req, r.Caches[0] = s.Toy, req, kept
	r.KeptLogits = true
	return d, nil
}

// NewDocument prepares a trace for showing. A single-prompt toy trace is
// narrated against the server's table when it fits, else against the part
// of the table the trace itself records.
func (s *Runner) NewDocument(t *trace.Trace, source string) *Document {
	d := &Document{Runs: []*Run{NewRun(s.runIDs.Add(1), t, "")}, Source: source}
	Narrate(d, toy.Of(s.Toy).Table())
	return d
}

// SizeText writes a byte count in MiB or KiB.
func SizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ForkDocument copies a document for another session: the runs are forked
// (shared steps, separate trees); a run still generating is cut where it
// stands. The caller holds the owner's lock.
func (s *Runner) ForkDocument(d *Document) *Document {
	o := d.Origin
	o.copy = true
	c := &Document{Walk: d.Walk, Compare: d.Compare, Source: d.Source + " (your copy)", Notice: d.Notice, Origin: o}
	for _, r := range d.Runs {
		f := r.fork(s.runIDs.Add(1))
		if r.Live {
			if f.Trace.Output.StopReason == "" {
				f.Trace.Output = CutOutput()
			}
			for i := range f.Trace.Branches {
				if f.Trace.Branches[i].Output.StopReason == "" {
					f.Trace.Branches[i].Output = CutOutput()
				}
			}
		}
		c.Runs = append(c.Runs, f)
	}
	return c
}

// HeldBytes is what r holds of full logits and KV caches. The caller
// holds the session's lock.
func (r *Run) HeldBytes() int64 {
	var n int64
	steps := func(ss []trace.Step) {
		for _, s := range ss {
			for _, row := range s.Rows {
				n += 4 * int64(len(row.Logits))
			}
		}
	}
	steps(r.Trace.Steps)
	for _, b := range r.Trace.Branches {
		steps(b.Steps)
	}
	for _, c := range r.Caches {
		if c == nil {
			continue
		}
		for _, b := range c.LayerBytes() {
			n += b
		}
	}
	return n
}

// Shed drops r's full logits and KV caches. The steps are never changed
// in place (a snapshot may be reading them): the trace is copied without
// the logits (withoutLogits). The caller holds the session's lock.
func (r *Run) Shed() {
	r.Trace = WithoutLogits(r.Trace)
	r.KeptLogits = false
	clear(r.Caches)
}
