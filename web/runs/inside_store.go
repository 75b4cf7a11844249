package runs

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/trace"
	"tracer/web/view"
	"tracer/web/words"
)

// Where a step's inside comes from on a live page: recorded at every step
// when the model is small (liveInside), looked up for the step on view
// otherwise (insideStore), and recorded for a lesson step that shows it
// (lessonInside).
// liveInside turns on attention and lens recording for a live run on the
// page when the model can show them and is small enough to stay
// interactive (insideBudget): the lens of the top lensShown tokens, the
// attention of each step's newest query. It reports whether it did.
func liveInside(m engine.Model, o *trace.Options, prompts [][]int) bool {
	if _, ok := m.(engine.InsideModel); !ok || o.RecordAttention != "" || o.RecordLens > 0 {
		return false
	}
	info := m.Info()
	longest := 0
	for _, p := range prompts {
		longest = max(longest, len(p))
	}
	length := longest + max(0, o.MaxNewTokens)
	if o.MaxNewTokens < 0 {
		length = max(longest, o.MaxLength)
	}
	if float64(info.Params)*float64(length) > insideBudget {
		return false
	}
	RecordShown(o, info)
	return true
}

// RecordShown asks o to record what the page's inside panels show: each
// step's attention, the lens of the top LensShown tokens, and the forward
// pass with ForwardRecorded neurons a layer (none for a model without an
// MLP width).
func RecordShown(o *trace.Options, info engine.Info) {
	o.RecordAttention, o.RecordLens = trace.RecordAttentionStep, LensShown
	o.RecordForward = min(ForwardRecorded, max(info.Intermediate, 0))
}

// insideBytes estimates what recording inside the model adds to a run's
// trace per row and step: one float32 weight per layer, head and key, and
// RecordLens entries per layer (each as big as a recorded candidate).
func insideBytes(info engine.Info, o trace.Options, length int, entryBytes int) float64 {
	var n float64
	if o.RecordAttention != "" {
		n += 4 * float64(info.Layers) * float64(info.Heads) * float64(length)
	}
	if o.RecordLens > 0 {
		n += float64(info.Layers) * float64(o.RecordLens) * float64(entryBytes)
	}
	if o.RecordForward > 0 { // five norms, the heads' shares and the neurons, per layer
		n += float64(info.Layers) * float64(5+2*min(info.Heads, o.RecordForward)+2*o.RecordForward) * 8
	}
	return n
}

// InsideKeep bounds the steps whose inside a run keeps once it looked
// inside them on demand (see insideStore); the run's memory estimate
// counts them (estimateRun).
const InsideKeep = 32

// ClassInsideKeep is insideKeep for the classroom's instructor, whose
// steps are looked inside ahead of the moves (renderAhead, cast.go) for
// every follower at once. A run's memory estimate counts insideKeep; the
// instructor's one document may keep up to this many.
const ClassInsideKeep = 256

// insideStore holds what a live run looked up inside its steps on demand:
// a model too large to record attention and the lens at every step
// (insideBudget) has the step on view computed when it is shown, once, by
// running the step's context through the model again. One computation
// runs at a time per run; the newest insideKeep results are kept, by
// context (the ids before the step: a branch that shares them shares the
// result).
type insideStore struct {
	start func(key string, ids []int)             // begins a computation (the server's)
	look  func(ids []int) (*trace.Inside, string) // computes one now, on the caller's goroutine; or says why not

	mu      sync.Mutex
	kept    *FIFO[*trace.Inside] // by insideKey, the newest insideKeep
	failed  map[string]string    // why a computation failed, by key
	pending string               // the key being computed; "" for none
}

// insideKey names a context: its ids.
func insideKey(ids []int) string {
	b := make([]byte, 0, 6*len(ids))
	for _, id := range ids {
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, ' ')
	}
	return string(b)
}

// lookup returns the kept inside of a context, or why it failed, or
// (when start is true) starts computing it when nothing else is being
// computed.
func (st *insideStore) lookup(ids []int, start bool) (*trace.Inside, string) {
	key := insideKey(ids)
	st.mu.Lock()
	defer st.mu.Unlock()
	if in, ok := st.kept.Get(key); ok {
		return in, ""
	}
	if why, ok := st.failed[key]; ok {
		return nil, why
	}
	if start && st.pending == "" {
		st.pending = key
		st.start(key, slices.Clone(ids))
	}
	return nil, ""
}

// Ensure computes the inside of a context now unless it is kept, failed
// or being computed.
func (st *insideStore) Ensure(ids []int) {
	key := insideKey(ids)
	st.mu.Lock()
	_, kept := st.kept.Get(key)
	_, failed := st.failed[key]
	busy := st.pending == key
	st.mu.Unlock()
	if kept || failed || busy {
		return
	}
	in, why := st.look(ids)
	st.finish(key, in, why)
}

// finish keeps a computation's result (or why it failed).
func (st *insideStore) finish(key string, in *trace.Inside, why string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.pending == key {
		st.pending = ""
	}
	if in == nil {
		if len(st.failed) >= InsideKeep {
			clear(st.failed)
		}
		st.failed[key] = why
		return
	}
	st.kept.Put(key, in)
}

// InsideOpts say how a run's inside store serves its page: how many
// steps' insides it keeps (insideKeep, or classInsideKeep for a class's
// instructor), and what to call once a computation ends (to show the page
// again).
type InsideOpts struct {
	Keep    int
	Changed func()
}

// NewInsideStore returns the store of a live run that does not record its
// inside, or nil when it records it or its model has none.
func (s *Runner) NewInsideStore(m *models.Loaded, req engine.Request, o InsideOpts) *insideStore {
	if _, ok := m.Model.(engine.InsideModel); !ok || req.Options.RecordAttention != "" || req.Options.RecordLens > 0 {
		return nil
	}
	st := &insideStore{kept: NewFIFO[*trace.Inside](cmp.Or(o.Keep, InsideKeep)), failed: map[string]string{}}

	st.look = func(ids []int) (*trace.Inside, string) {
		var in *trace.Inside
		err := s.Guard("looking inside a step", func() error {
			var err error
			in, err = s.LookInside(m, req, ids)
			return err
		})
		if err != nil {
			return nil, s.Catalog.Redact(err.Error())
		}
		return in, ""
	}
	st.start = func(key string, ids []int) {
		s.jobMu.Lock()
		if s.closed {
			s.jobMu.Unlock()
			go st.finish(key, nil, "the server is shutting down")
			return
		}
		s.Jobs.Add(1)
		s.jobMu.Unlock()
		go func() {
			defer s.Jobs.Done()
			in, why := st.look(ids)
			st.finish(key, in, why)
			if o.Changed != nil {
				o.Changed()
			}
		}()
	}
	return st
}

// lookInsideTimeout bounds one on-demand look inside a step.
const lookInsideTimeout = 2 * time.Minute

// LookInside runs a context through the model once, recording the
// attention and lens of its last position: what the step that followed
// that context would have recorded. It waits for a look slot
// (Server.looks): a look runs its whole context alone through the model,
// and many at once (a class's pages each showing their run's last step)
// would take turns with the runs' shared passes kernel by kernel.
func (s *Runner) LookInside(m *models.Loaded, base engine.Request, ids []int) (*trace.Inside, error) {
	ctx, cancel := context.WithTimeout(s.Done, lookInsideTimeout)
	defer cancel()
	select {
	case s.Looks <- struct{}{}:
	case <-ctx.Done():
		return nil, errors.New("no slot to look inside came free: try again in a moment")
	}
	defer func() { <-s.Looks }()
	o := base.Options
	o.MaxNewTokens, o.MaxLength, o.MinNewTokens = 1, -1, 0
	o.NumBeams, o.NumReturnSequences, o.DoSample = 1, 1, false
	o.ForceIDs, o.StopStrings, o.Padding = nil, nil, ""
	RecordShown(&o, m.Model.Info())
	t, err := engine.Generate(ctx, engine.Request{Model: m.Model, Tokenizer: base.Tokenizer, Prompts: [][]int{ids}, Options: o, Record: true})
	if err != nil {
		return nil, err
	}
	if len(t.Steps) == 0 || len(t.Steps[0].Rows) == 0 || t.Steps[0].Rows[0].Inside == nil {
		return nil, errors.New("the model recorded nothing inside")
	}
	return t.Steps[0].Rows[0].Inside, nil
}

// InsideFor is insideView for a run, with the inside of a step its
// recording lacks looked up on demand (insideStore): shown when kept,
// started and announced otherwise. Only ended single-row runs without
// beams look inside on demand. The caller holds the session's lock.
func InsideFor(r *Run, steps []trace.Step, pos, row int, w words.Words, look bool) *view.InsideView {
	v := BuildInside(r.Trace, steps, pos, row, w)
	if v == nil || v.Attention != nil || v.Lens != nil || r.Inside == nil || RowCount(r.Trace) > 1 || r.Trace.Options.NumBeams > 1 {
		return v
	}
	if r.Live {
		v.Missing = []string{w.T(words.KeyDbgInsideAfterRun)}
		return v
	}
	ids := slices.Clone(r.Trace.Prompt.IDs)
	ids = append(ids, chosenIDs(steps[:pos], 0)...)
	in, why := r.Inside.lookup(ids, look)
	switch {
	case in != nil:
		s := steps[pos]
		s.Rows = slices.Clone(s.Rows)
		s.Rows[0].Inside = in
		at := slices.Clone(steps[:pos+1])
		at[pos] = s
		if iv := BuildInside(r.Trace, at, pos, 0, w); iv != nil {
			iv.Missing = nil
			return iv
		}
	case why != "":
		v.Missing = []string{w.F(words.KeyDbgInsideFailed, "error", why)}
	default:
		v.Missing = []string{w.T(words.KeyDbgInsideComputing)}
		v.Computing = true
	}
	return v
}

// keptInsideBytes estimates what a run keeps of the insides it looks up on
// demand (insideStore): insideKeep steps' attention and lens, for a model
// that has layers and heads to look into and a run that does not record
// them at every step.
func keptInsideBytes(info engine.Info, o trace.Options, length, entryBytes int) float64 {
	if o.RecordAttention != "" || o.RecordLens > 0 || info.Layers == 0 || info.Heads == 0 {
		return 0
	}
	RecordShown(&o, info)
	return InsideKeep * insideBytes(info, o, length, entryBytes)
}

// InsideToLook returns the store that looks inside step pos of the
// branch shown on demand, and the context to look at; nil when that step
// needs no look (its inside is recorded, or the run is not one that looks:
// see insideFor). The caller holds the session's lock.
func InsideToLook(d *Document, cur Cursor) (*insideStore, []int) {
	if d.Walk != nil || d.Compare || len(d.Runs) == 0 {
		return nil, nil
	}
	r := d.Runs[0]
	if r.Inside == nil || r.Live || RowCount(r.Trace) > 1 || r.Trace.Options.NumBeams > 1 {
		return nil, nil
	}
	steps := PathSteps(r.Trace, cur.Branch)
	if cur.Pos >= len(steps) || len(steps[cur.Pos].Rows) == 0 || steps[cur.Pos].Rows[0].Inside != nil {
		return nil, nil
	}
	ids := slices.Clone(r.Trace.Prompt.IDs)
	return r.Inside, append(ids, chosenIDs(steps[:cur.Pos], 0)...)
}
