package web

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"tracer/engine/refdata"
	"tracer/lessons"
	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
	"tracer/web/runs"
)

// TestLiveRunRecordsInside runs stories260K on the page: the run records
// attention and the lens by default, and the step's view shows both panels.
func TestLiveRunRecordsInside(t *testing.T) {
	dir := refdata.Need(t, "models/stories260K")
	s, sess, c := liveServer(t, Config{ModelsDir: dir}, 0)
	o := generate(t, s, c, form{"model": "stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "4"})
	for _, want := range []string{`data-testid="attention-panel"`, `data-testid="lens-panel"`, `data-testid="lens-settled"`} {
		if !strings.Contains(o.HTML, want) {
			t.Errorf("the last step's view has no %s", want)
		}
	}
	tr := sessionTrace(sess)
	if tr.Options.RecordAttention != trace.RecordAttentionStep || tr.Options.RecordLens != runs.LensShown {
		t.Errorf("got record_attention %q, record_lens %d; want %q and %d", tr.Options.RecordAttention, tr.Options.RecordLens, trace.RecordAttentionStep, runs.LensShown)
	}
	for i, st := range tr.Steps {
		if in := st.Rows[0].Inside; in == nil || len(in.Attention) != 5 || len(in.Lens) != 5 {
			t.Errorf("step %d: got inside %v, want 5 layers of attention and lens", i, in)
		}
	}
}

// TestInsideOnDemand stands a run that did not record its inside (as a
// model too large for insideBudget does not) in for one: the step on view
// is looked into once the run has ended, and shows what recording would
// have shown.
func TestInsideOnDemand(t *testing.T) {
	dir := refdata.Need(t, "models/stories260K")
	s, sess, c := liveServer(t, Config{ModelsDir: dir}, 0)
	generate(t, s, c, form{"model": "stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "4"})
	sess.Mu.Lock()
	r := sess.Doc.Runs[0]
	recorded := r.Snapshot()
	bare := r.Snapshot()
	bare.Steps = slices.Clone(bare.Steps)
	for i := range bare.Steps {
		bare.Steps[i].Rows = slices.Clone(bare.Steps[i].Rows)
		bare.Steps[i].Rows[0].Inside = nil
	}
	bare.Options.RecordAttention, bare.Options.RecordLens = "", 0
	r.Trace = bare
	req := r.Req
	req.Options.RecordAttention, req.Options.RecordLens = "", 0
	r.Inside = s.NewInsideStore(r.Model, req, s.InsideOpts(sess))
	sess.Mu.Unlock()
	if r.Inside == nil {
		t.Fatal("no store for a run that records nothing inside")
	}
	for _, at := range []int{2, 0} {
		if at == 2 {
			sendJSON(t, c, map[string]string{"type": "prev"})
		} else {
			sendJSON(t, c, map[string]string{"type": "first"})
		}
		o := waitFor(t, c, "the step's inside", func(o live.Outbound) bool {
			return o.Type == live.MsgView && o.Index == at && strings.Contains(o.HTML, `data-testid="attention-panel"`)
		})
		if !strings.Contains(o.HTML, `data-testid="lens-settled"`) {
			t.Errorf("step %d: the view has no lens", at)
		}
		sess.Mu.Lock()
		v := runs.InsideFor(r, r.Trace.Steps, at, 0, testsupport.Words(t, lessons.English), true)
		sess.Mu.Unlock()
		want := recorded.Steps[at].Rows[0].Inside
		var d runs.AttnData
		if err := json.Unmarshal([]byte(v.Attention.Data), &d); err != nil {
			t.Fatal(err)
		}
		for l := range want.Attention {
			for h, ws := range want.Attention[l] {
				for k, x := range ws {
					if diff := d.Cells[l][h].W[k] - x; diff > 0.5e-4+1e-7 || diff < -0.5e-4-1e-7 { // the panel's four decimals
						t.Fatalf("step %d layer %d head %d key %d: got %v looked up, want %v recorded", at, l, h, k, d.Cells[l][h].W[k], x)
					}
				}
			}
		}
		if v.Lens.First == 0 || len(v.Lens.Rows) != len(want.Lens) || v.Lens.Rows[4].Cells[0].ID != want.Lens[4][0].ID {
			t.Errorf("step %d: got lens %+v, want the recorded one", at, v.Lens)
		}
	}
}
