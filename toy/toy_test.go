package toy_test

import (
	"context"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/toy"
	"tracer/trace"
)

func generate(t *testing.T, m *toy.Model, user *engine.Settings) *trace.Trace {
	t.Helper()
	opts, notices, err := engine.Resolve(m.Info(), m.GenerationConfig(), user)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := engine.Generate(context.Background(), engine.Request{
		Model: m, Tokenizer: m, Prompts: [][]int{{0}}, Options: opts, Notices: notices, Record: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestGreedyLesson(t *testing.T) {
	m := toy.New(toy.Lesson())
	tr := generate(t, m, nil)
	want := []struct {
		token string
		prob  float64
		other string
	}{{"I", 0.9, "you"}, {"love", 0.7, "eat"}, {"chai", 0.6, "</s>"}, {"</s>", 0.8, "too"}}
	if len(tr.Steps) != len(want) {
		t.Fatalf("got %d steps, want %d", len(tr.Steps), len(want))
	}
	for i, w := range want {
		row := tr.Steps[i].Rows[0]
		if row.Chosen.Token != w.token || row.Chosen.By != trace.ByGreedy || row.Chosen.Rank != 1 {
			t.Errorf("step %d: chose %+v, want %q greedy rank 1", i, row.Chosen, w.token)
		}
		if d := row.Chosen.Prob - w.prob; d > 1e-6 || d < -1e-6 {
			t.Errorf("step %d: prob %v, want %v", i, row.Chosen.Prob, w.prob)
		}
		if len(row.Candidates) != 2 || row.Candidates[1].Token != w.other {
			t.Errorf("step %d: candidates %+v, want %s then %s", i, row.Candidates, w.token, w.other)
		}
	}
	if tr.Output.NewText != "I love chai" || tr.Output.StopReason != trace.StopEOS {
		t.Errorf("output %q stop %q, want %q eos", tr.Output.NewText, tr.Output.StopReason, "I love chai")
	}
	for _, n := range tr.Notices {
		if strings.Contains(n, "max_length") {
			t.Errorf("notice %q: the toy sets its own max_length, want no default-length notice", n)
		}
	}
}

func TestSamplingIsSeededAndRecorded(t *testing.T) {
	m := toy.New(toy.Lesson())
	yes := true
	texts := map[string]bool{}
	for seed := range uint64(40) {
		s := seed
		tr := generate(t, m, &engine.Settings{DoSample: &yes, Seed: &s})
		again := generate(t, m, &engine.Settings{DoSample: &yes, Seed: &s})
		if tr.Output.NewText != again.Output.NewText {
			t.Fatalf("seed %d: %q then %q, want the same text", seed, tr.Output.NewText, again.Output.NewText)
		}
		texts[tr.Output.NewText] = true
		for _, st := range tr.Steps {
			r := st.Rows[0]
			if r.Chosen.By != trace.BySample || r.Draw == nil {
				t.Fatalf("seed %d step %d: chosen %+v draw %v, want a recorded sample", seed, st.Index, r.Chosen, r.Draw)
			}
			if !(r.Draw.CumBefore <= r.Draw.U && r.Draw.U < r.Draw.CumAfter) {
				t.Errorf("seed %d step %d: draw %+v does not fall in the chosen token's interval", seed, st.Index, *r.Draw)
			}
		}
	}
	if len(texts) < 3 {
		t.Errorf("40 seeds gave only %d texts (%v): sampling does not vary", len(texts), texts)
	}
}

func TestNoRowStops(t *testing.T) {
	tb, err := toy.Parse(strings.NewReader(`{"table": {"<s>": {"hello": 1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := generate(t, toy.New(tb), nil)
	if tr.Output.StopReason != trace.StopNoRow || tr.Output.NewText != "hello" {
		t.Errorf("got %q stop %q, want %q stop no_row", tr.Output.NewText, tr.Output.StopReason, "hello")
	}
}

func TestMaxLengthCap(t *testing.T) {
	tb, err := toy.Parse(strings.NewReader(`{"max_length": 4, "table": {"<s>": {"a": 1}, "a": {"a": 1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := generate(t, toy.New(tb), nil)
	if len(tr.Output.IDs) != 4 || tr.Output.StopReason != trace.StopMaxLength {
		t.Errorf("got ids %v stop %q, want 4 tokens stop max_length", tr.Output.IDs, tr.Output.StopReason)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"truncated", `{"table": {"<s>": {"I": 0.9`, "not a toy table"},
		{"no table", `{"name": "x"}`, `missing "table"`},
		{"negative", `{"table": {"<s>": {"I": -1}}}`, "positive probability"},
		{"string prob", `{"table": {"<s>": {"I": "high"}}}`, "positive probability"},
		{"empty row", `{"table": {"<s>": {}}}`, "empty"},
		{"space", `{"table": {"<s>": {"a b": 1}}}`, "no spaces"},
		{"same markers", `{"bos": "x", "eos": "x", "table": {"x": {"y": 1}}}`, "must differ"},
		{"not object", `[1, 2]`, "not a toy table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toy.Parse(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestBranchResumesFromTheSharedPrefix(t *testing.T) {
	m := toy.New(toy.Lesson())
	opts, _, err := engine.Resolve(m.Info(), m.GenerationConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var kept engine.Cache
	trunk, err := engine.Generate(context.Background(), engine.Request{
		Model: m, Tokenizer: m, Prompts: [][]int{{0}}, Options: opts, Record: true,
		KeepCache: func(c engine.Cache) { kept = c },
	})
	if err != nil {
		t.Fatal(err)
	}
	// Branch at step 2: choose </s> instead of chai. The cache keeps the
	// positions fed before step 2 (<s> and I); step 2 feeds "love" again.
	const at = 2
	c := kept.Clone()
	c.Truncate(len(trunk.Prompt.IDs) + at - 1)
	before := trunk.Output.NewIDs[:at]
	branch, err := engine.Generate(context.Background(), engine.Request{
		Model: m, Tokenizer: m, Prompts: [][]int{{0}}, Options: opts, Record: true,
		Resume: &engine.Resume{Cache: c, Tokens: [][]int{before}, Step: at},
		Force:  [][]int{append(append([]int{}, before...), m.ID("</s>"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if branch.Output.NewText != "I love" || branch.Output.StopReason != trace.StopEOS {
		t.Errorf("branch: %q stop %q, want \"I love\" eos", branch.Output.NewText, branch.Output.StopReason)
	}
	if len(branch.Steps) != 1 || branch.Steps[0].Index != at || len(branch.Steps[0].Rows[0].InputIDs) != 1 {
		t.Fatalf("branch steps %+v, want one step (index %d) feeding one token", branch.Steps, at)
	}
	if got := branch.Steps[0].Rows[0].Candidates; len(got) != 2 || got[0].Token != "chai" {
		t.Errorf("branch step candidates %+v, want chai first as in the trunk", got)
	}
	if trunk.Output.NewText != "I love chai" {
		t.Errorf("the branch changed the trunk: %q", trunk.Output.NewText)
	}
}

func TestStopStringsAndMinNewTokens(t *testing.T) {
	m := toy.New(toy.Lesson())
	tr := generate(t, m, &engine.Settings{StopStrings: []string{"lov"}})
	if tr.Output.NewText != "I love" || tr.Output.StopReason != trace.StopString {
		t.Errorf("stop string: %q stop %q, want \"I love\" stop_string (the string ends inside the newest token)", tr.Output.NewText, tr.Output.StopReason)
	}
	// min_new_tokens 4 keeps </s> out until four words are new: at step 3
	// chai's row offers only too.
	four := 4
	tr = generate(t, m, &engine.Settings{MinNewTokens: &four})
	if tr.Output.NewText != "I love chai too" {
		t.Errorf("min_new_tokens 4: %q, want \"I love chai too\"", tr.Output.NewText)
	}
	if st := tr.Steps[3].Rows[0].Stages; len(st) != 1 || st[0].Name != "min_new_tokens" || st[0].Kept != 1 {
		t.Errorf("step 3 stages %+v, want min_new_tokens keeping only too", st)
	}
}
