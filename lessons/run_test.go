package lessons_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/engine/refdata"
	"tracer/lessons"
	tracertoy "tracer/toy"
	"tracer/trace"
)

// The shared reference models: stories260K (a llama2.c checkpoint with its
// tokenizer) and tiny-gpt2 (Hugging Face layout, no tokenizer).
const (
	stories260K = "models/stories260K/stories260K.bin"
	tinyGPT2    = "golden/tiny-gpt2"
)

// openShared opens a shared model (a path under shared/), found through
// refdata: a skip when it is absent, a failure in CI.
func openShared(t *testing.T, rel string) *models.Loaded {
	t.Helper()
	l, err := models.Open(refdata.Need(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// stepRun is one run of one step of the catalog.
type stepRun struct {
	lesson *lessons.Lesson
	step   *lessons.Step
	run    *lessons.Run
}

func (s stepRun) String() string { return s.lesson.ID + "/" + s.step.ID + "/" + s.run.ID }

// runsOf lists every run of the catalog of a model kind.
func runsOf(t *testing.T, kind lessons.ModelKind) []stepRun {
	var out []stepRun
	c := load(t)
	for i := range c.Lessons {
		l := &c.Lessons[i]
		for j := range l.Steps {
			s := &l.Steps[j]
			for k := range s.Runs {
				if s.Runs[k].Model == kind {
					out = append(out, stepRun{l, s, &s.Runs[k]})
				}
			}
		}
	}
	return out
}

// generate runs a lesson run on a model exactly as a page would.
func generate(t *testing.T, l *models.Loaded, r *lessons.Run) *trace.Trace {
	t.Helper()
	req, err := r.Request(l)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// traces runs every run of the catalog of a kind once (runs repeat across
// steps) and returns the trace of each, by its String.
func traces(t *testing.T, l *models.Loaded, kind lessons.ModelKind) map[string]*trace.Trace {
	t.Helper()
	byRun := map[string]*trace.Trace{}
	done := map[string]*trace.Trace{}
	for _, sr := range runsOf(t, kind) {
		key := sr.run.Command("")
		if _, ok := done[key]; !ok {
			done[key] = generate(t, l, sr.run)
		}
		byRun[sr.String()] = done[key]
	}
	return byRun
}

// checkSteps checks what a step promises about its runs' traces: the
// stop reasons, the same output, At within the run, and that every
// highlight has something to show in at least one of the runs.
func checkSteps(t *testing.T, kind lessons.ModelKind, byRun map[string]*trace.Trace) {
	t.Helper()
	for _, l := range load(t).Lessons {
		for _, s := range l.Steps {
			var ts []*trace.Trace
			for _, r := range s.Runs {
				tr := byRun[l.ID+"/"+s.ID+"/"+r.ID]
				if tr == nil {
					continue // a run of the other kind
				}
				ts = append(ts, tr)
				if r.ExpectStop != "" && tr.Output.StopReason != r.ExpectStop {
					t.Errorf("%s/%s/%s: got stop reason %s, want %s", l.ID, s.ID, r.ID, tr.Output.StopReason, r.ExpectStop)
				}
				if s.At.Kind == lessons.AtStep && s.At.Index >= len(tr.Steps) {
					t.Errorf("%s/%s/%s: at %s, but the run made %d steps", l.ID, s.ID, r.ID, s.At, len(tr.Steps))
				}
			}
			if len(ts) == 0 || len(ts) != len(s.Runs) {
				continue
			}
			if s.SameOutput {
				for _, tr := range ts[1:] {
					if !slices.EqualFunc(tr.Output.Sequences, ts[0].Output.Sequences, slices.Equal[[]int]) || !slices.Equal(tr.Output.NewIDs, ts[0].Output.NewIDs) {
						t.Errorf("%s/%s: same_output, but got new ids %v and %v", l.ID, s.ID, ts[0].Output.NewIDs, tr.Output.NewIDs)
					}
				}
			}
			for _, h := range s.Highlight {
				var why []string
				shown := slices.ContainsFunc(ts, func(tr *trace.Trace) bool {
					err := showable(tr, s.At, h)
					if err != nil {
						why = append(why, err.Error())
					}
					return err == nil
				})
				if !shown {
					t.Errorf("%s/%s: highlight %q has nothing to show on the %s model: %s", l.ID, s.ID, h, kind, strings.Join(why, "; "))
				}
			}
		}
	}
}

// showable says why a trace has nothing for a highlight at a place, or nil.
func showable(tr *trace.Trace, at lessons.At, h string) error {
	steps := tr.Steps
	if at.Kind == lessons.AtStep {
		if at.Index >= len(steps) {
			return fmt.Errorf("no step %d", at.Index)
		}
		steps = steps[at.Index : at.Index+1]
	}
	anyStep := func(what string, ok func(s trace.Step, r trace.StepRow) bool) error {
		for _, s := range steps {
			for _, r := range s.Rows {
				if ok(s, r) {
					return nil
				}
			}
		}
		return fmt.Errorf("no step has %s", what)
	}
	is := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("the trace has no %s", what)
		}
		return nil
	}
	toy := tr.Model.Kind == "toy"
	stage, isStage := strings.CutPrefix(h, "stage:")
	option, isOption := strings.CutPrefix(h, "option:")
	switch {
	case h == "table", h == "table-row", h == "table-cell", h == "token-list", h == "annotation", strings.HasPrefix(h, "code-line:"):
		return is(toy, "toy table")
	case isStage:
		return anyStep("stage "+stage, func(_ trace.Step, r trace.StepRow) bool {
			return slices.ContainsFunc(r.Stages, func(st trace.Stage) bool { return st.Name == stage })
		})
	case isOption:
		_, ok := tr.Options.Sources[option]
		return is(ok, "source for "+option)
	}
	switch h {
	case "prompt.ids":
		return is(len(tr.Prompt.IDs) > 0, "prompt ids")
	case "prompt.rows", "prompt.attention_mask":
		return is(len(tr.Prompt.Rows) > 1, "padded rows")
	case "input_ids":
		return anyStep("input ids", func(_ trace.Step, r trace.StepRow) bool { return len(r.InputIDs) > 0 })
	case "phase":
		return anyStep("a phase", func(s trace.Step, _ trace.StepRow) bool { return s.Phase != "" })
	case "logits", "candidates":
		return anyStep("candidates", func(_ trace.Step, r trace.StepRow) bool { return len(r.Candidates) > 0 })
	case "final":
		return anyStep("a final distribution", func(_ trace.Step, r trace.StepRow) bool { return r.Final != nil })
	case "draw":
		return anyStep("a draw", func(_ trace.Step, r trace.StepRow) bool { return r.Draw != nil })
	case "chosen":
		return anyStep("a chosen token", func(_ trace.Step, r trace.StepRow) bool { return r.Chosen.By != "" })
	case "options", "options.sources":
		return is(len(tr.Options.Sources) > 0, "option sources")
	case "notices":
		return is(len(tr.Notices) > 0, "notice")
	case "model":
		return is(tr.Model.Name != "", "model description")
	case "kv":
		return anyStep("a KV cache", func(s trace.Step, _ trace.StepRow) bool { return s.KV != nil && s.KV.Bytes > 0 })
	case "traffic.flops", "traffic.bytes", "traffic.intensity", "bandwidth":
		return anyStep("traffic", func(s trace.Step, _ trace.StepRow) bool { return s.Traffic != nil && s.Traffic.FLOPs > 0 })
	case "elapsed":
		return anyStep("a time", func(s trace.Step, _ trace.StepRow) bool { return s.ElapsedNS > 0 })
	case "output.ids":
		return is(len(tr.Output.IDs) > 0, "output ids")
	case "output.new_ids":
		return is(len(tr.Output.NewIDs) > 0, "new ids")
	case "output.text", "output.new_text":
		return is(tr.Output.NewText != "", "new text")
	case "output.sequences", "output.new_texts":
		return is(len(tr.Output.Sequences) > 1 && len(tr.Output.NewTexts) > 1, "batch output")
	case "output.stop_reason":
		return is(tr.Output.StopReason != "", "stop reason")
	case "attention", "lens", "forward": // the page records them again for the step (web/lessonpage)
		return is(!toy && tr.Model.Layers > 0 && tr.Model.Heads > 0, "layers and heads to look inside")
	}
	return fmt.Errorf("the test does not know highlight %q", h)
}

// TestToyRuns runs every toy run of the lessons and checks what its steps
// promise.
func TestToyRuns(t *testing.T) {
	toy, err := models.Open("toy")
	if err != nil {
		t.Fatal(err)
	}
	byRun := traces(t, toy, lessons.ModelToy)
	if len(byRun) == 0 {
		t.Fatal("no toy runs in the lessons")
	}
	checkSteps(t, lessons.ModelToy, byRun)
}

// TestGreedyLessonMoments walks the greedy lesson's run and wants its
// moment steps to be the ten moments in order, each highlighting the line
// and the table cell the moment is at.
func TestGreedyLessonMoments(t *testing.T) {
	l := load(t).Lesson("greedy-on-the-toy")
	if l == nil {
		t.Fatal("no greedy-on-the-toy lesson")
	}
	toy, err := models.Open("toy")
	if err != nil {
		t.Fatal(err)
	}
	var moments []int
	want := []struct {
		role lessons.Role
		cell string
	}{
		{lessons.RoleStart, ""}, {lessons.RoleCheck, ""}, {lessons.RolePick, "I"}, {lessons.RoleAppend, "I"},
		{lessons.RolePick, "love"}, {lessons.RolePick, "chai"}, {lessons.RolePick, "</s>"}, {lessons.RoleAppend, "</s>"},
		{lessons.RoleCheck, ""}, {lessons.RolePrint, ""},
	}
	for i := range l.Steps {
		s := &l.Steps[i]
		n, ok := s.Moment()
		if !ok || i == len(l.Steps)-1 { // the closing step looks back at a moment
			continue
		}
		moments = append(moments, n)
		w, err := lessons.Walk(generate(t, toy, &s.Runs[0]), tracertoy.Of(toy).Table())
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Moments) != 10 {
			t.Fatalf("%s: got %d moments, want 10", s.ID, len(w.Moments))
		}
		m := w.Moments[n]
		if n < len(want) && (m.Role != want[n].role || m.Cell != want[n].cell) {
			t.Errorf("%s: moment %d is %s at cell %q, want %s at %q", s.ID, n, m.Role, m.Cell, want[n].role, want[n].cell)
		}
		if !s.Highlights("code-line:" + string(m.Role)) {
			t.Errorf("%s: moment %d runs the %s line, but the step highlights %v", s.ID, n, m.Role, s.Highlight)
		}
		if got := s.Highlights("table-cell"); got != (m.Role == lessons.RolePick) {
			t.Errorf("%s: highlights table-cell: %v, want %v (moment %s %q)", s.ID, got, !got, m.Role, m.Cell)
		}
	}
	if !slices.Equal(moments, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("got moments %v, want 0..9 in order", moments)
	}
	last := l.Steps[len(l.Steps)-1]
	if last.ID != "never-looks-ahead" || !strings.Contains(last.Text.In(lessons.English)[len(last.Text["en"])-1], "nothing guarantees") {
		t.Errorf("the lesson ends on %s, want it to close on greedy never looking ahead", last.ID)
	}
	if n, _ := last.Moment(); n != 5 {
		t.Errorf("the closing step shows moment %d, want 5 (chai narrowly over </s>)", n)
	}
}

// TestRealRunsOnStories260K runs every real run of the lessons on
// stories260K, the real model every learner can have, and checks what the
// steps promise: stop reasons, identical tokens with and without the cache,
// notices, stages, draws, KV cache and traffic where highlighted.
func TestRealRunsOnStories260K(t *testing.T) {
	m := openShared(t, stories260K)
	byRun := traces(t, m, lessons.ModelReal)
	checkSteps(t, lessons.ModelReal, byRun)

	// The claim of right padding's junk: the left-padded short row gets the
	// reply it would get alone, the right-padded one does not.
	left := byRun["batches-and-padding/right-padding-junk/left"]
	right := byRun["batches-and-padding/right-padding-junk/right"]
	alone := generate(t, m, &lessons.Run{ID: "alone", Model: lessons.ModelReal, Prompts: []string{"Lily"},
		Options: lessons.Options{{Name: "max_new_tokens", Value: "12"}, {Name: "do_sample", Value: "false"}}})
	if left.Output.NewTexts[1] != alone.Output.NewText {
		t.Errorf("left padding: got %q, want %q as the prompt alone gets", left.Output.NewTexts[1], alone.Output.NewText)
	}
	if right.Output.NewTexts[1] == alone.Output.NewText {
		t.Errorf("right padding: got %q like the prompt alone; the lesson says it goes wrong", right.Output.NewTexts[1])
	}

	// The default length: prompt and new tokens make 20.
	noLength := byRun["max-new-tokens/no-length/no-length"]
	if n := len(noLength.Output.IDs); n != engine.DefaultMaxLength {
		t.Errorf("no length: got %d ids in all, want %d", n, engine.DefaultMaxLength)
	}
}

// TestRealRunsOnTinyGPT2 resolves every real run's options against a Hugging
// Face checkpoint's generation_config.json and runs it on prompt ids (the
// golden folder has no tokenizer).
func TestRealRunsOnTinyGPT2(t *testing.T) {
	m := openShared(t, tinyGPT2)
	ids := []int{464, 1266, 318, 257, 640, 612, 373, 257, 1310, 3290}
	done := map[string]bool{}
	for _, sr := range runsOf(t, lessons.ModelReal) {
		key := sr.run.Command("")
		if done[key] {
			continue
		}
		done[key] = true
		user, err := sr.run.Settings()
		if err != nil {
			t.Fatalf("%s: %v", sr, err)
		}
		var in models.Input
		for _, p := range sr.run.Prompts {
			in.IDs = append(in.IDs, ids[:min(len(ids), len(strings.Fields(p))+1)])
		}
		req, err := m.Request(in, user)
		if err != nil {
			t.Fatalf("%s: %v", sr, err)
		}
		if len(in.IDs) > 1 {
			req.Options.Padding = sr.run.Padding
		}
		req.Record = true
		tr, err := engine.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", sr, err)
		}
		if len(tr.Steps) == 0 || tr.Steps[0].Traffic == nil || tr.Steps[0].KV == nil {
			t.Errorf("%s: got %d steps without traffic or KV cache", sr, len(tr.Steps))
		}
	}
}

// TestCheckpointDefaults resolves the sampling lesson's runs under a
// generation_config.json like Qwen2.5-Instruct's: the run that sets only
// max_new_tokens samples with the checkpoint's values, and do_sample=false
// wins over it.
func TestCheckpointDefaults(t *testing.T) {
	yes, temp, topP, topK, rep := true, 0.7, 0.8, 20, 1.1
	qwen := &engine.Settings{DoSample: &yes, Temperature: &temp, TopP: &topP, TopK: &topK, RepetitionPenalty: &rep}
	info := engine.Info{VocabSize: 1000, BOS: -1, EOS: []int{2}, PAD: -1}
	s := load(t).Lesson("greedy-and-sampling").Step("your-settings-win")
	cases := []struct {
		run        string
		wantSample bool
		wantSource string
	}{
		{"checkpoint", true, engine.SourceModel},
		{"greedy", false, engine.SourceUser},
	}
	for _, c := range cases {
		i := slices.IndexFunc(s.Runs, func(r lessons.Run) bool { return r.ID == c.run })
		if i < 0 {
			t.Fatalf("no run %s", c.run)
		}
		user, err := s.Runs[i].Settings()
		if err != nil {
			t.Fatal(err)
		}
		o, _, err := engine.Resolve(info, qwen, user)
		if err != nil {
			t.Fatal(err)
		}
		if o.DoSample != c.wantSample || o.Sources["do_sample"] != c.wantSource {
			t.Errorf("%s: got do_sample %v from %s, want %v from %s", c.run, o.DoSample, o.Sources["do_sample"], c.wantSample, c.wantSource)
		}
		if o.Sources["temperature"] != engine.SourceModel || o.Temperature != 0.7 {
			t.Errorf("%s: got temperature %v from %s, want 0.7 from the checkpoint", c.run, o.Temperature, o.Sources["temperature"])
		}
	}
}

// TestCosts checks the memory-bound lesson's figures on stories260K: the
// decode steps read about all the weights each, at the intensity of 32-bit
// weights, and prefill's intensity is higher.
func TestCosts(t *testing.T) {
	m := openShared(t, stories260K)
	s := load(t).Lesson("memory-bound").Step("arithmetic-intensity")
	tr := generate(t, m, &s.Runs[0])
	costs := lessons.Costs(tr)
	if len(costs) != 2 || costs[0].Phase != trace.PhasePrefill || costs[1].Phase != trace.PhaseDecode {
		t.Fatalf("got phases %+v, want prefill then decode", costs)
	}
	prefill, decode := costs[0], costs[1]
	if prefill.Steps != 1 || decode.Steps != len(tr.Steps)-1 {
		t.Errorf("got %d prefill and %d decode steps, want 1 and %d", prefill.Steps, decode.Steps, len(tr.Steps)-1)
	}
	if got, want := decode.BytesPerToken(), float64(tr.Model.WeightBytes); got < want || got > 1.1*want {
		t.Errorf("decode moves %.0f bytes per token, want about the weights' %.0f", got, want)
	}
	if got := decode.Intensity(); got < 0.4 || got > 0.6 {
		t.Errorf("decode intensity %.3f FLOPs/byte, want about 0.5 for f32 weights", got)
	}
	if prefill.Intensity() < 2*decode.Intensity() {
		t.Errorf("prefill intensity %.3f, decode %.3f: want prefill well above", prefill.Intensity(), decode.Intensity())
	}
	if decode.BytesPerSecond() <= 0 || decode.TimePerStep() <= 0 {
		t.Errorf("got %v B/s and %v per step, want positive figures", decode.BytesPerSecond(), decode.TimePerStep())
	}
	toy, err := models.Open("toy")
	if err != nil {
		t.Fatal(err)
	}
	if got := lessons.Costs(generate(t, toy, &lessons.Run{ID: "t", Model: lessons.ModelToy})); len(got) != 0 {
		t.Errorf("got toy costs %+v, want none (a table moves no weights)", got)
	}
}

func TestRequestRefusesTheWrongModel(t *testing.T) {
	toy, err := models.Open("toy")
	if err != nil {
		t.Fatal(err)
	}
	r := lessons.Run{ID: "r", Model: lessons.ModelReal, Prompts: []string{"I love"}}
	if _, err := r.Request(toy); err == nil || !strings.Contains(err.Error(), "wants a real model") {
		t.Errorf("got error %v, want a real run refused on the toy", err)
	}
}
