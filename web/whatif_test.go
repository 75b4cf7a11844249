package web

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
	"tracer/web/runs"
)

// sendRaw sends one message as written.
func sendRaw(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func TestWhatIfMessages(t *testing.T) {
	s, _, c := liveServer(t, Config{}, 0)
	// The walkthrough's first moment runs no forward pass: a note, not an error.
	sendRaw(t, c, `{"type": "whatif"}`)
	if o := waitFor(t, c, "the note", func(o live.Outbound) bool { return o.Type == live.MsgWhatIf }); !strings.Contains(o.HTML, "This position has no step to re-sample") {
		t.Errorf("at a moment without a step: got %.300s", o.HTML)
	}
	// The walkthrough's run keeps its logits too: a moment with a step has
	// the whole vocabulary, and no note says otherwise.
	sendJSON(t, c, map[string]any{"type": "step", "index": 3})
	sendRaw(t, c, `{"type": "whatif", "whatif": {"temperature": 2}}`)
	if o := waitFor(t, c, "the walkthrough's what-if", func(o live.Outbound) bool { return o.Type == live.MsgWhatIf }); !strings.Contains(o.HTML, "whatif-result") || strings.Contains(o.HTML, "raw logits at this step") {
		t.Errorf("walkthrough: got %.400s, want an outcome over the whole vocabulary", o.HTML)
	}
	generate(t, s, c, form{"model": "toy", "do_sample": "true", "seed": "3"})
	cases := []struct {
		name, msg, want string
	}{
		{"the run's own settings", `{"type": "whatif"}`, `data-testid="whatif-result"`},
		{"colder", `{"type": "whatif", "whatif": {"temperature": 0.2}}`, `data-label="T=0.2 top_k=50"`},
		{"top-k 1 keeps one", `{"type": "whatif", "whatif": {"top_k": 1}}`, `1 of 8`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sendRaw(t, c, tc.msg)
			o := waitFor(t, c, "the what-if", func(o live.Outbound) bool { return o.Type == live.MsgWhatIf })
			if !strings.Contains(o.HTML, tc.want) {
				t.Errorf("got %.300s, want it to hold %s", o.HTML, tc.want)
			}
		})
	}
	errs := []struct{ name, msg, says string }{
		{"unknown setting", `{"type": "whatif", "whatif": {"top_z": 1}}`, `unknown field "top_z"`},
		{"bad value", `{"type": "whatif", "whatif": {"top_p": 0}}`, "top_p 0 is out of range"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			sendRaw(t, c, tc.msg)
			waitFor(t, c, "the error", errorSaying(tc.says))
		})
	}
}

// FuzzWhatIf feeds what-if messages and raw logits to the panel's path:
// parse the message, lay its settings over the run's, re-sample. It must
// never panic, and an answer must be a distribution: the kept count falls
// stage by stage, the final probabilities are those of kept tokens and sum
// to at most 1, and the draw's interval holds its u and the choice.
func FuzzWhatIf(f *testing.F) {
	f.Add(`{"type": "whatif"}`, []byte{1, 2, 3, 200, 90}, 0.4)
	f.Add(`{"type": "whatif", "whatif": {"temperature": 0.7, "top_k": 3, "top_p": 0.9, "min_p": 0.05}}`, []byte{9, 9, 9, 9}, 0.99)
	f.Add(`{"type": "whatif", "whatif": {"top_k": 1}}`, []byte{0}, 0.0)
	f.Add(`{"type": "whatif", "whatif": {"temperature": 1e-300}}`, []byte{255, 0, 255}, 0.5)
	f.Add(`{"type": "whatif", "whatif": {"top_p": 1e-9, "min_p": 1}}`, []byte{7, 7}, 0.999999)
	f.Add(`{"type": "branch", "id": 3, "whatif": {"temperature": 2}}`, []byte{}, 0.1)
	f.Fuzz(func(t *testing.T, msg string, raw []byte, u float64) {
		m, err := live.ParseInbound([]byte(msg))
		if err != nil || (m.Type != live.MsgWhatIf && m.Type != live.MsgBranch) {
			return
		}
		const vocab = 40
		logits := make(trace.Logits, vocab)
		for i := range logits {
			logits[i] = float32(math.Inf(-1))
			if i < len(raw) {
				logits[i] = float32(int(raw[i])-128) / 8
			}
		}
		if len(raw) == 0 {
			logits[0] = 0
		}
		var draw *trace.Draw
		if u >= 0 && u < 1 {
			draw = &trace.Draw{U: u}
		}
		st := trace.Step{Rows: []trace.StepRow{{Logits: logits, Draw: draw}}}
		base := trace.Options{DoSample: true, Temperature: 1, TopP: 1, RepetitionPenalty: 1.3}
		w := runs.WhatIfStep{T: trace.Trace{Model: trace.Model{VocabSize: vocab}, Options: base, Prompt: trace.Prompt{IDs: []int{1, 2}}}, Steps: []trace.Step{st}}
		set, err := m.WhatIf.Apply(runs.SettingsOf(base), vocab)
		if err != nil {
			return
		}
		out, err := runs.ReSample(w, set)
		if err != nil {
			return
		}
		prev := vocab
		for _, s := range out.Row.Stages {
			if s.Kept > prev {
				t.Fatalf("stage %s keeps %d after %d", s.Name, s.Kept, prev)
			}
			prev = s.Kept
		}
		f := out.Row.Final
		var sum float64
		for k, id := range f.IDs {
			if math.IsInf(float64(logits[id]), -1) {
				t.Fatalf("final lists %d, which had no logit", id)
			}
			sum += f.Probs[k]
		}
		if sum > 1+1e-5 || f.KeptCount > prev {
			t.Fatalf("final sums to %g over %d kept (last stage %d)", sum, f.KeptCount, prev)
		}
		if d := out.Row.Draw; d != nil && !(d.CumBefore <= d.U && (d.U < d.CumAfter || d.CumAfter == 1)) {
			t.Fatalf("draw %+v does not hold its u", d)
		}
	})
}

// TestWhatIfRecomputesLogits runs a sampled single-prompt run on the page,
// which keeps only its top candidates, and requires the logits the
// what-if recomputes at every step from the run's kept cache to be the
// run's own, bit for bit: those of the same run recorded with every raw
// logit.
func TestWhatIfRecomputesLogits(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	m := testsupport.RandomModel(t, 64)
	s.Catalog.Add("rand", "random llama", m)
	f := map[string]string{"model": "rand", "input": "ids", "prompt": "5 9 11", "max_new_tokens": "6", "do_sample": "true", "temperature": "0.9", "seed": "4"}
	sendJSON(t, c, map[string]any{"type": "generate", "form": f})
	waitFor(t, c, "the run", func(o live.Outbound) bool { return finished(o) && strings.Contains(o.HTML, "random") })
	jobsEnded(t, s)

	yes, temp, seed, n := true, 0.9, uint64(4), 6
	req, err := m.Request(models.Input{IDs: [][]int{{5, 9, 11}}}, &engine.Settings{DoSample: &yes, Temperature: &temp, Seed: &seed, MaxNewTokens: &n})
	if err != nil {
		t.Fatal(err)
	}
	req.Record, req.Options.FullLogits = true, true
	want, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	sess.Mu.Lock()
	r := sess.Doc.Runs[0]
	steps := r.Trace.Steps
	var agains []func() []float32
	for pos := range steps {
		if len(steps[pos].Rows[0].Logits) > 0 {
			t.Fatalf("step %d kept its logits", pos)
		}
		w, err := runs.WhatIfAt(sess.Doc, runs.Cursor{Pos: pos})
		if err != nil || w.Again == nil {
			sess.Mu.Unlock()
			t.Fatalf("step %d: what-if cannot recompute the logits (err %v)", pos, err)
		}
		agains = append(agains, w.Again)
	}
	sess.Mu.Unlock()
	if len(steps) != len(want.Steps) {
		t.Fatalf("the page's run has %d steps, the same run alone %d", len(steps), len(want.Steps))
	}
	for pos, again := range agains {
		got, exp := again(), want.Steps[pos].Rows[0].Logits
		if len(got) != len(exp) {
			t.Fatalf("step %d: %d logits recomputed, want %d", pos, len(got), len(exp))
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(exp[i]) {
				t.Fatalf("step %d logit %d: recomputed %v, recorded %v", pos, i, got[i], exp[i])
			}
		}
	}
}
