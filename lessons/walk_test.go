package lessons_test

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/lessons"
	"tracer/toy"
	"tracer/trace"
)

// run generates from a table with the user's settings and records the trace.
func run(t *testing.T, table *toy.Table, user *engine.Settings) *trace.Trace {
	t.Helper()
	m := toy.New(table)
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

func parse(t *testing.T, js string) *toy.Table {
	t.Helper()
	table, err := toy.Parse(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return table
}

// want is one expected moment: its role, step, row and cell, the token
// list, and phrases its text must hold.
type want struct {
	role      lessons.Role
	step      int
	row, cell string
	tokens    string
	says      []string
}

func check(t *testing.T, w *lessons.Walkthrough, wants []want) {
	t.Helper()
	if len(w.Moments) != len(wants) {
		for i, m := range w.Moments {
			t.Logf("moment %d: %s %q", i+1, m.Title, m.Text)
		}
		t.Fatalf("got %d moments, want %d", len(w.Moments), len(wants))
	}
	for i, wm := range wants {
		m := w.Moments[i]
		if m.Role != wm.role || m.Step != wm.step || m.Row != wm.row || m.Cell != wm.cell {
			t.Errorf("moment %d: got role %s step %d row %q cell %q, want %s %d %q %q", i+1, m.Role, m.Step, m.Row, m.Cell, wm.role, wm.step, wm.row, wm.cell)
		}
		if got := strings.Join(m.Tokens, " "); got != wm.tokens {
			t.Errorf("moment %d: got tokens %q, want %q", i+1, got, wm.tokens)
		}
		line := w.Listing[m.Line-1]
		if line.Number != m.Line || line.Role != m.Role {
			t.Errorf("moment %d: line %d is %+v, want role %s", i+1, m.Line, line, m.Role)
		}
		for _, s := range wm.says {
			if !strings.Contains(m.Text, s) {
				t.Errorf("moment %d: text %q does not say %q", i+1, m.Text, s)
			}
		}
	}
}

func TestWalkLesson(t *testing.T) {
	table := toy.Lesson()
	w, err := lessons.Walk(run(t, table, nil), table)
	if err != nil {
		t.Fatal(err)
	}
	check(t, w, []want{
		{lessons.RoleStart, -1, "", "", "<s>", []string{"begin marker <s>", "BOS"}},
		{lessons.RoleCheck, -1, "", "", "<s>", []string{"</s>", "fewer than 6 tokens", "max_length"}},
		{lessons.RolePick, 0, "<s>", "I", "<s>", []string{"Greedy", "I (0.9) beats you (0.1)"}},
		{lessons.RoleAppend, 0, "<s>", "I", "<s> I", []string{`["<s>", "I"]`}},
		{lessons.RolePick, 1, "I", "love", "<s> I", []string{"last word only", "love (0.7) beats eat (0.3)"}},
		{lessons.RolePick, 2, "love", "chai", "<s> I love", []string{"chai (0.6) beats </s> (0.4)", "narrowly", "never looks ahead"}},
		{lessons.RolePick, 3, "chai", "</s>", "<s> I love chai", []string{"</s> (0.8) beats too (0.2)"}},
		{lessons.RoleAppend, 3, "chai", "</s>", "<s> I love chai </s>", []string{"end marker </s> is appended"}},
		{lessons.RoleCheck, -1, "", "", "<s> I love chai </s>", []string{"loop ends", "Stop reason: eos"}},
		{lessons.RolePrint, -1, "", "", "<s> I love chai </s>", []string{`"I love chai"`, "skip_special_tokens=True"}},
	})
	for i, m := range w.Moments {
		if i != 5 && strings.Contains(m.Text, "narrowly") {
			t.Errorf("moment %d: %q calls a clear pick narrow", i+1, m.Text)
		}
	}
	if w.Printed != "I love chai" {
		t.Errorf("got printed %q, want %q", w.Printed, "I love chai")
	}
}

func TestWalkCustomTable(t *testing.T) {
	table := parse(t, `{"name": "pets", "max_length": 4, "table": {
		"<s>": {"the": 0.5, "a": 0.3, "my": 0.2},
		"the": {"cat": 0.55, "dog": 0.45},
		"cat": {"sat": 1},
		"sat": {"</s>": 0.9, "down": 0.1}}}`)
	w, err := lessons.Walk(run(t, table, nil), table)
	if err != nil {
		t.Fatal(err)
	}
	check(t, w, []want{
		{lessons.RoleStart, -1, "", "", "<s>", nil},
		{lessons.RoleCheck, -1, "", "", "<s>", []string{"fewer than 4 tokens"}},
		{lessons.RolePick, 0, "<s>", "the", "<s>", []string{"the (0.5) beats a (0.3)"}},
		{lessons.RoleAppend, 0, "<s>", "the", "<s> the", nil},
		{lessons.RolePick, 1, "the", "cat", "<s> the", []string{"narrowly", "never looks ahead"}},
		{lessons.RolePick, 2, "cat", "sat", "<s> the cat", []string{"only word", "probability 1"}},
		{lessons.RoleCheck, -1, "", "", "<s> the cat sat", []string{"holds 4 tokens", "Stop reason: max_length"}},
		{lessons.RolePrint, -1, "", "", "<s> the cat sat", []string{`"the cat sat"`}},
	})
	var rows []string
	for _, l := range w.Listing {
		if l.Role == lessons.RoleTable {
			rows = append(rows, strings.TrimSpace(l.Text))
		}
	}
	wantRows := []string{
		`probs = {`,
		`"<s>": {"the": 0.5, "a": 0.3, "my": 0.2},`,
		`"the": {"cat": 0.55, "dog": 0.45},`,
		`"cat": {"sat": 1},`,
		`"sat": {"</s>": 0.9, "down": 0.1},`,
		`}`,
	}
	if !slices.Equal(rows, wantRows) {
		t.Errorf("got table lines\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}
}

func TestWalkNoRow(t *testing.T) {
	table := parse(t, `{"table": {"<s>": {"hi": 1}}}`)
	w, err := lessons.Walk(run(t, table, nil), table)
	if err != nil {
		t.Fatal(err)
	}
	stop := w.Moments[len(w.Moments)-2]
	if stop.Role != lessons.RoleLookup || !strings.Contains(stop.Text, "no_row") || !strings.Contains(stop.Text, "KeyError") {
		t.Errorf("got stop moment %+v, want the lookup line with no_row", stop)
	}
}

func TestWalkSampled(t *testing.T) {
	doSample, seed := true, uint64(7)
	table := toy.Lesson()
	tr := run(t, table, &engine.Settings{DoSample: &doSample, Seed: &seed})
	w, err := lessons.Walk(tr, table)
	if err != nil {
		t.Fatal(err)
	}
	if l := w.Listing[lessons.LineOf(w.Listing, lessons.RolePick)-1]; !strings.Contains(l.Text, "random.choices") {
		t.Errorf("got pick line %q, want random.choices", l.Text)
	}
	picks := 0
	for _, m := range w.Moments {
		if m.Role != lessons.RolePick {
			continue
		}
		picks++
		if !strings.Contains(m.Text, "Sampled") || !strings.Contains(m.Text, "u = ") {
			t.Errorf("moment %s: %q does not describe the draw", m.Title, m.Text)
		}
	}
	if picks != len(tr.Steps) {
		t.Errorf("got %d pick moments, want one per step (%d)", picks, len(tr.Steps))
	}
}

func TestWalkWithMaxNewTokens(t *testing.T) {
	n := 2
	table := toy.Lesson()
	w, err := lessons.Walk(run(t, table, &engine.Settings{MaxNewTokens: &n}), table)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Listing[lessons.LineOf(w.Listing, lessons.RoleSetup)-1].Text; !strings.HasSuffix(got, ", 3") {
		t.Errorf("got setup line %q, want the cap 1 + 2 = 3", got)
	}
	if got := w.Moments[len(w.Moments)-2].Text; !strings.Contains(got, "max_new_tokens") {
		t.Errorf("got stop text %q, want stop reason max_new_tokens", got)
	}
}

func TestWalkRejectsOtherTable(t *testing.T) {
	tr := run(t, toy.Lesson(), nil)
	other := parse(t, `{"table": {"<s>": {"I": 1, "you": 1}, "I": {"eat": 1}}}`)
	if _, err := lessons.Walk(tr, other); err == nil || !strings.Contains(err.Error(), "step 1") {
		t.Errorf("got error %v, want step 1 not fitting the table", err)
	}
}

func TestWalkRejectsOtherCandidates(t *testing.T) {
	tr := run(t, toy.Lesson(), nil)
	tr.Steps[2].Rows[0].Candidates[1].Token = "tea"
	if _, err := lessons.Walk(tr, toy.Lesson()); err == nil || !strings.Contains(err.Error(), `candidate "tea"`) {
		t.Errorf("got error %v, want the candidate tea not fitting the table", err)
	}
}

func TestTableFromTrace(t *testing.T) {
	tr := run(t, toy.Lesson(), nil)
	rebuilt, err := lessons.TableFromTrace(tr)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lessons.Walk(tr, rebuilt)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := lessons.Walk(tr, toy.Lesson())
	for i := range want.Moments {
		g, w := got.Moments[i], want.Moments[i]
		if g.Line != w.Line || g.Row != w.Row || g.Cell != w.Cell || g.Text != w.Text {
			t.Errorf("moment %d: got %+v, want %+v", i+1, g, w)
		}
	}
	if rebuilt.BOS != "<s>" || rebuilt.EOS != "</s>" || rebuilt.MaxLength != 6 {
		t.Errorf("got markers %q %q cap %d, want <s> </s> 6", rebuilt.BOS, rebuilt.EOS, rebuilt.MaxLength)
	}
}

// TestWalkMemoryIsLinear walks long toy runs: the moments share one token
// list, so the walkthrough's memory grows with the steps, not with their
// square (a 29k-step trace once cost 6.9 GB).
func TestWalkMemoryIsLinear(t *testing.T) {
	table := parse(t, `{"name": "loop", "max_length": 100000, "table": {
  "<s>": {"a": 1}, "a": {"b": 1}, "b": {"a": 1}}}`)
	for _, steps := range []int{2000, 8000} {
		t.Run(strconv.Itoa(steps), func(t *testing.T) {
			n := steps
			tr := run(t, table, &engine.Settings{MaxNewTokens: &n})
			if len(tr.Steps) != steps {
				t.Fatalf("got %d steps, want %d", len(tr.Steps), steps)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			w, err := lessons.Walk(tr, table)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			// A moment's own share: its struct, its texts and a token. The
			// old copies added 16 bytes × steps per moment.
			const perStep = 4 << 10
			if got := after.TotalAlloc - before.TotalAlloc; got > uint64(steps*perStep) {
				t.Errorf("walking %d steps allocated %d bytes, want at most %d (%d per step)", steps, got, steps*perStep, perStep)
			}
			last := w.Moments[len(w.Moments)-1].Tokens
			if len(last) != steps+1 || last[0] != "<s>" || last[steps] == "" {
				t.Errorf("the last moment's tokens: got %d, want %d starting with <s>", len(last), steps+1)
			}
			// Moments are prefixes of one list, clipped: appending to one
			// cannot change another.
			m := w.Moments[2].Tokens
			next := w.Moments[3].Tokens
			_ = append(m, "x")
			if len(next) > len(m) && next[len(m)] == "x" {
				t.Error("appending to a moment's tokens changed the next moment's")
			}
		})
	}
}
