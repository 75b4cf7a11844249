package web

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/models"
	"tracer/engine/tensor"
	"tracer/trace"
	"tracer/web/words"
)

// randomModel builds a small random Llama with the given vocabulary (the
// shape of SmolLM2's vocabulary at a fraction of its size elsewhere).
func randomModel(t testing.TB, vocab int) *models.Loaded {
	t.Helper()
	s := arch.Shape{Arch: "llama", VocabSize: vocab, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 1, Intermediate: 64, MaxPositions: 128, Tied: true}
	m, err := arch.NewRandom("whatif", s, tensor.F32, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &models.Loaded{Spec: "random", Model: m}
}

// sampledRun generates a few sampled steps of m with settings and seed,
// keeping every raw logit.
func sampledRun(t *testing.T, m *models.Loaded, set whatIfSettings, seed uint64) *trace.Trace {
	t.Helper()
	yes, n := true, 3
	req, err := m.Request(models.Input{IDs: [][]int{{5, 9, 11}}}, &engine.Settings{
		DoSample: &yes, Temperature: &set.Temperature, TopK: &set.TopK, TopP: &set.TopP, MinP: &set.MinP, Seed: &seed, MaxNewTokens: &n,
	})
	if err != nil {
		t.Fatal(err)
	}
	req.Record, req.Options.FullLogits = true, true
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The what-if at step 0 of a run with one setting must give what the
// engine gives when it runs with the other setting on the same seed: the
// same kept set and probabilities, the same draw interval and token.
func TestWhatIfMatchesTheEngine(t *testing.T) {
	m := randomModel(t, 300)
	base := whatIfSettings{Temperature: 1, TopK: 0, TopP: 1, MinP: 0}
	cases := []struct {
		name string
		set  whatIfSettings
	}{
		{"as run", base},
		{"cold", whatIfSettings{Temperature: 0.3, TopP: 1}},
		{"hot", whatIfSettings{Temperature: 2.5, TopP: 1}},
		{"top-k 5", whatIfSettings{Temperature: 1, TopK: 5, TopP: 1}},
		{"top-p 0.5", whatIfSettings{Temperature: 0.8, TopP: 0.5}},
		{"min-p 0.05", whatIfSettings{Temperature: 1.2, TopP: 1, MinP: 0.05}},
		{"all four", whatIfSettings{Temperature: 0.7, TopK: 40, TopP: 0.9, MinP: 0.01}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(8) {
				a := sampledRun(t, m, base, seed)
				b := sampledRun(t, m, tc.set, seed)
				w := whatIfStep{t: *a, steps: a.Steps, pos: 0}
				got, err := reSample(w, tc.set)
				if err != nil {
					t.Fatal(err)
				}
				want := b.Steps[0].Rows[0]
				if got.row.Chosen.ID != want.Chosen.ID || got.row.Chosen.Rank != want.Chosen.Rank {
					t.Errorf("seed %d: chose %d (rank %d), want %d (rank %d)", seed, got.row.Chosen.ID, got.row.Chosen.Rank, want.Chosen.ID, want.Chosen.Rank)
				}
				if got.row.Final.KeptCount != want.Final.KeptCount {
					t.Errorf("seed %d: kept %d, want %d", seed, got.row.Final.KeptCount, want.Final.KeptCount)
				}
				for k, id := range got.row.Final.IDs[:min(len(got.row.Final.IDs), len(want.Final.IDs))] {
					if id != want.Final.IDs[k] || math.Abs(got.row.Final.Probs[k]-want.Final.Probs[k]) > 1e-7 {
						t.Errorf("seed %d: final[%d] = %d %g, want %d %g", seed, k, id, got.row.Final.Probs[k], want.Final.IDs[k], want.Final.Probs[k])
						break
					}
				}
				gd, wd := got.row.Draw, want.Draw
				if gd == nil || wd == nil || gd.U != wd.U || math.Abs(gd.CumBefore-wd.CumBefore) > 1e-9 || math.Abs(gd.CumAfter-wd.CumAfter) > 1e-9 {
					t.Errorf("seed %d: draw %+v, want %+v", seed, gd, wd)
				}
				if len(got.row.Stages) != len(want.Stages) {
					t.Fatalf("seed %d: %d stages, want %d", seed, len(got.row.Stages), len(want.Stages))
				}
				for k, st := range got.row.Stages {
					if st.Name != want.Stages[k].Name || st.Kept != want.Stages[k].Kept {
						t.Errorf("seed %d: stage %s kept %d, want %s kept %d", seed, st.Name, st.Kept, want.Stages[k].Name, want.Stages[k].Kept)
					}
				}
			}
		})
	}
}

// Without every raw logit the what-if works on the recorded candidates and
// says how many of the vocabulary those are.
func TestWhatIfPartialVocabulary(t *testing.T) {
	m := randomModel(t, 300)
	a := sampledRun(t, m, whatIfSettings{Temperature: 1, TopP: 1}, 1)
	for i := range a.Steps {
		a.Steps[i].Rows[0].Logits = nil
	}
	w := whatIfStep{t: *a, steps: a.Steps, pos: 0}
	out, err := reSample(w, whatIfSettings{Temperature: 0.5, TopP: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(a.Steps[0].Rows[0].Candidates); out.partial != n {
		t.Errorf("partial: got %d, want the %d recorded candidates", out.partial, n)
	}
	if out.row.Final.KeptCount != out.partial {
		t.Errorf("kept %d, want the %d known tokens", out.row.Final.KeptCount, out.partial)
	}
	v := whatIfView(w, out, words.Words{Lang: "en"})
	if len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "dbg-whatif-partial") {
		t.Errorf("notes: got %q, want the partial-vocabulary note", v.Notes)
	}
}

func TestWhatIfFormErrors(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	k := func(v int) *int { return &v }
	cases := []struct {
		name string
		form whatIfForm
		says string
	}{
		{"zero temperature", whatIfForm{Temperature: f(0)}, "temperature 0 is out of range"},
		{"NaN temperature", whatIfForm{Temperature: f(math.NaN())}, "temperature NaN is out of range"},
		{"negative top-k", whatIfForm{TopK: k(-1)}, "top_k -1 is out of range: give 0 (off) to 300"},
		{"top-k past the vocabulary", whatIfForm{TopK: k(301)}, "top_k 301 is out of range"},
		{"top-p 0", whatIfForm{TopP: f(0)}, "top_p 0 is out of range"},
		{"top-p above 1", whatIfForm{TopP: f(1.5)}, "top_p 1.5 is out of range"},
		{"min-p above 1", whatIfForm{MinP: f(2)}, "min_p 2 is out of range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.form.apply(whatIfSettings{Temperature: 1, TopP: 1}, 300)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want an error saying %q", err, tc.says)
			}
		})
	}
}

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
	if o := waitFor(t, c, "the note", func(o outbound) bool { return o.Type == msgWhatIf }); !strings.Contains(o.HTML, "This position has no step to re-sample") {
		t.Errorf("at a moment without a step: got %.300s", o.HTML)
	}
	// The walkthrough's run keeps its logits too: a moment with a step has
	// the whole vocabulary, and no note says otherwise.
	sendJSON(t, c, map[string]any{"type": "step", "index": 3})
	sendRaw(t, c, `{"type": "whatif", "whatif": {"temperature": 2}}`)
	if o := waitFor(t, c, "the walkthrough's what-if", func(o outbound) bool { return o.Type == msgWhatIf }); !strings.Contains(o.HTML, "whatif-result") || strings.Contains(o.HTML, "raw logits at this step") {
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
			o := waitFor(t, c, "the what-if", func(o outbound) bool { return o.Type == msgWhatIf })
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

// BenchmarkWhatIf re-samples one step of a SmolLM2-sized vocabulary with
// the four settings on, as one slider move does on the server.
func BenchmarkWhatIf(b *testing.B) {
	for _, vocab := range []int{50257, 49152} {
		b.Run(strconv.Itoa(vocab), func(b *testing.B) {
			logits := make(trace.Logits, vocab)
			for i := range logits {
				logits[i] = float32(math.Sin(float64(i)*0.37)) * 6
			}
			st := trace.Step{Rows: []trace.StepRow{{Logits: logits, Draw: &trace.Draw{U: 0.4}}}}
			w := whatIfStep{t: trace.Trace{Model: trace.Model{VocabSize: vocab}, Options: trace.Options{RepetitionPenalty: 1}}, steps: []trace.Step{st}}
			set := whatIfSettings{Temperature: 0.7, TopK: 50, TopP: 0.9, MinP: 0.02}
			b.SetBytes(int64(4 * vocab))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reSample(w, set); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// drawFrom orders only the leading tokens unless the draw falls past
// them; both ways must agree with ordering every token.
func TestDrawFromAgreesWithAFullOrder(t *testing.T) {
	flat := make([]float32, 5000)
	for i := range flat {
		flat[i] = float32(1+i%7) / 20000
	}
	peaked := slices.Clone(flat)
	peaked[4321] = 0.9
	cases := []struct {
		name  string
		probs []float32
		u     float64
	}{
		{"flat, early", flat, 0.01},
		{"flat, past the lead", flat, 0.97},
		{"flat, the very end", flat, 0.999999},
		{"peaked, in the peak", peaked, 0.5},
		{"peaked, in the tail", peaked, 0.995},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, lo, hi := drawFrom(tc.probs, tc.u)
			all := byProb(tc.probs, len(tc.probs))
			var total, cum float64
			for _, p := range tc.probs {
				total += float64(p)
			}
			wid, wlo, whi := -1, 0.0, 0.0
			for _, k := range all {
				prev := cum
				cum += float64(tc.probs[k])
				if tc.u*total < cum {
					wid, wlo, whi = k, prev/total, cum/total
					break
				}
			}
			if id != wid || lo != wlo || hi != whi {
				t.Errorf("got %d [%g, %g), want %d [%g, %g)", id, lo, hi, wid, wlo, whi)
			}
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
		m, err := parseInbound([]byte(msg))
		if err != nil || (m.Type != msgWhatIf && m.Type != msgBranch) {
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
		w := whatIfStep{t: trace.Trace{Model: trace.Model{VocabSize: vocab}, Options: base, Prompt: trace.Prompt{IDs: []int{1, 2}}}, steps: []trace.Step{st}}
		set, err := m.WhatIf.apply(settingsOf(base), vocab)
		if err != nil {
			return
		}
		out, err := reSample(w, set)
		if err != nil {
			return
		}
		prev := vocab
		for _, s := range out.row.Stages {
			if s.Kept > prev {
				t.Fatalf("stage %s keeps %d after %d", s.Name, s.Kept, prev)
			}
			prev = s.Kept
		}
		f := out.row.Final
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
		if d := out.row.Draw; d != nil && !(d.CumBefore <= d.U && (d.U < d.CumAfter || d.CumAfter == 1)) {
			t.Fatalf("draw %+v does not hold its u", d)
		}
	})
}

// A run of several prompts keeps its raw logits for the what-if only while
// its memory estimate, counting them, stays within --max-run-mib; a single
// prompt never keeps them (the what-if recomputes them from its cache).
func TestKeepLogitsWithinTheRunLimit(t *testing.T) {
	m := randomModel(t, 49152)
	info := m.Model.Info()
	o := trace.Options{MaxNewTokens: 100, RecordTop: 20, UseCache: true}
	if s := (&runner{cfg: runConfig{MaxRunBytes: 1 << 40}}); s.keepLogits(info, o, [][]int{{1, 2, 3}}) {
		t.Error("a single prompt keeps its logits; want them recomputed from the cache")
	}
	prompts := [][]int{{1, 2, 3}, {4, 5, 6}}
	without := estimateRun(info, o, prompts).total()
	o.FullLogits = true
	with := estimateRun(info, o, prompts).total()
	o.FullLogits = false
	cases := []struct {
		name  string
		limit float64
		want  bool
	}{
		{"room for them", with + 1, true},
		{"room for the run alone", (with + without) / 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &runner{cfg: runConfig{MaxRunBytes: int64(tc.limit)}}
			if got := s.keepLogits(info, o, prompts); got != tc.want {
				t.Errorf("limit %.0f (run %.0f, with logits %.0f): got %v, want %v", tc.limit, without, with, got, tc.want)
			}
		})
	}
}

// TestWhatIfRecomputesLogits runs a sampled single-prompt run on the page,
// which keeps only its top candidates, and requires the logits the
// what-if recomputes at every step from the run's kept cache to be the
// run's own, bit for bit: those of the same run recorded with every raw
// logit.
func TestWhatIfRecomputesLogits(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	m := randomModel(t, 64)
	s.catalog.Add("rand", "random llama", m)
	f := map[string]string{"model": "rand", "input": "ids", "prompt": "5 9 11", "max_new_tokens": "6", "do_sample": "true", "temperature": "0.9", "seed": "4"}
	sendJSON(t, c, map[string]any{"type": "generate", "form": f})
	waitFor(t, c, "the run", func(o outbound) bool { return finished(o) && strings.Contains(o.HTML, "random") })
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
	sess.mu.Lock()
	r := sess.doc.runs[0]
	steps := r.trace.Steps
	var agains []func() []float32
	for pos := range steps {
		if len(steps[pos].Rows[0].Logits) > 0 {
			t.Fatalf("step %d kept its logits", pos)
		}
		w, err := whatIfAt(sess.doc, cursor{pos: pos})
		if err != nil || w.again == nil {
			sess.mu.Unlock()
			t.Fatalf("step %d: what-if cannot recompute the logits (err %v)", pos, err)
		}
		agains = append(agains, w.again)
	}
	sess.mu.Unlock()
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
