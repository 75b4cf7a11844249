package lessons_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"tracer/lessons"
)

// load returns the embedded catalog.
func load(t *testing.T) *lessons.Catalog {
	t.Helper()
	c, err := lessons.Load()
	if err != nil {
		t.Fatalf("the embedded lessons do not load:\n%v", err)
	}
	return c
}

func TestLoadOrderAndCounts(t *testing.T) {
	c := load(t)
	wantIDs := []string{
		"one-token-at-a-time", "greedy-on-the-toy", "generate-with-a-small-lm", "kv-cache",
		"max-new-tokens", "greedy-and-sampling", "batches-and-padding", "memory-bound",
		"inside-the-forward-pass",
	}
	var ids []string
	steps := 0
	for _, l := range c.Lessons {
		ids = append(ids, l.ID)
		steps += len(l.Steps)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("got lessons %v, want %v", ids, wantIDs)
	}
	t.Logf("%d lessons, %d steps", len(c.Lessons), steps)
	if again, _ := lessons.Load(); again != c {
		t.Errorf("Load parsed the lessons twice; want one shared catalog")
	}
}

// TestEveryTextInEveryLanguage walks the catalog itself (not through
// Validate) and wants non-blank text in both languages everywhere.
func TestEveryTextInEveryLanguage(t *testing.T) {
	c := load(t)
	check := func(where string, tx lessons.Text) {
		t.Helper()
		for _, lang := range lessons.Languages() {
			if strings.TrimSpace(tx[lang]) == "" {
				t.Errorf("%s: no %s text", where, lang)
			}
		}
	}
	for _, l := range c.Lessons {
		check(l.ID+" title", l.Title)
		check(l.ID+" summary", l.Summary)
		for _, s := range l.Steps {
			where := l.ID + "/" + s.ID
			check(where+" title", s.Title)
			for _, lang := range lessons.Languages() {
				if len(s.Text[lang]) == 0 || len(s.Text[lang]) != len(s.Text[lessons.English]) {
					t.Errorf("%s: %d %s paragraphs, %d English", where, len(s.Text[lang]), lang, len(s.Text[lessons.English]))
				}
			}
			for _, r := range s.Runs {
				if len(s.Runs) > 1 {
					check(where+" run "+r.ID, r.Label)
				}
			}
			for _, code := range s.Code {
				check(where+" code", code.Title)
			}
			for _, q := range s.Questions {
				check(where+" question "+q.ID, q.Question)
				for _, o := range q.Options {
					check(where+" option "+o.ID, o.Text)
					check(where+" feedback "+o.ID, o.Feedback)
				}
			}
		}
	}
	for k, tx := range c.UI {
		check("ui "+k, tx)
	}
	for _, d := range c.Downloads {
		check("download "+d.Name, d.About)
	}
}

// TestHindiIsHindi guards against a Hindi text left in English: every
// Hindi paragraph and title holds Devanagari (language names and bare
// option numbers aside).
func TestHindiIsHindi(t *testing.T) {
	c := load(t)
	devanagari := func(s string) bool {
		return strings.IndexFunc(s, func(r rune) bool { return r >= 0x0900 && r <= 0x097F }) >= 0
	}
	for _, l := range c.Lessons {
		for _, s := range l.Steps {
			if !devanagari(s.Title[lessons.Hindi]) && !strings.Contains(s.Title[lessons.Hindi], "greedy") {
				t.Errorf("%s/%s: Hindi title %q has no Devanagari", l.ID, s.ID, s.Title[lessons.Hindi])
			}
			for i, p := range s.Text[lessons.Hindi] {
				if !devanagari(p) {
					t.Errorf("%s/%s: Hindi paragraph %d has no Devanagari: %q", l.ID, s.ID, i+1, p)
				}
			}
		}
	}
	for _, k := range []string{lessons.KeyNoRealModel, lessons.KeyNext, lessons.KeyCheckAnswer, lessons.KeyQuickCheck} {
		if !devanagari(c.UI.Get(k, lessons.Hindi)) {
			t.Errorf("ui %s: Hindi %q has no Devanagari", k, c.UI.Get(k, lessons.Hindi))
		}
	}
}

func TestKVCacheQuiz(t *testing.T) {
	c := load(t)
	s := c.Lesson("kv-cache").Step("quick-check")
	if s == nil || len(s.Questions) != 1 {
		t.Fatalf("kv-cache/quick-check: want one question")
	}
	q := s.Questions[0]
	if got := q.Question.In(lessons.English); !strings.Contains(got, "KV cache") {
		t.Errorf("got question %q, want it to ask about the KV cache", got)
	}
	var ids []string
	for _, o := range q.Options {
		ids = append(ids, o.ID)
	}
	want := []string{"vocabulary-on-gpu", "past-conversations", "random-sampling", "avoid-recomputing"}
	if !slices.Equal(ids, want) {
		t.Errorf("got options %v, want %v", ids, want)
	}
	if got := q.Correct(); got != 3 {
		t.Errorf("got correct option %d, want 3 (avoid recomputing keys and values)", got)
	}
	if heading := c.UI.Get(lessons.KeyQuickCheck, lessons.Hindi); heading != "त्वरित जाँच" {
		t.Errorf("got Hindi quick-check heading %q, want त्वरित जाँच", heading)
	}
}

func TestEveryQuestionHasOneRightAnswer(t *testing.T) {
	for _, l := range load(t).Lessons {
		for _, s := range l.Steps {
			for _, q := range s.Questions {
				right := 0
				for _, o := range q.Options {
					if o.Correct {
						right++
					}
				}
				if right != 1 || len(q.Options) < 2 {
					t.Errorf("%s/%s/%s: %d options, %d right; want one right", l.ID, s.ID, q.ID, len(q.Options), right)
				}
			}
		}
	}
}

func TestIDsUniqueAndURLSafe(t *testing.T) {
	c := load(t)
	lessonIDs := map[string]bool{}
	for _, l := range c.Lessons {
		if lessonIDs[l.ID] {
			t.Errorf("lesson id %s twice", l.ID)
		}
		lessonIDs[l.ID] = true
		stepIDs := map[string]bool{}
		for i, s := range l.Steps {
			if stepIDs[s.ID] {
				t.Errorf("%s: step id %s twice", l.ID, s.ID)
			}
			stepIDs[s.ID] = true
			if got := l.Step(s.ID); got != &l.Steps[i] || l.Index(s.ID) != i {
				t.Errorf("%s: Step(%q) does not find step %d", l.ID, s.ID, i)
			}
			for _, id := range []string{l.ID, s.ID} {
				if strings.Trim(id, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
					t.Errorf("id %q is not URL-safe", id)
				}
			}
		}
	}
	if c.Lesson("no-such-lesson") != nil || c.Lessons[0].Step("no-such-step") != nil || c.Lessons[0].Index("no-such-step") != -1 {
		t.Errorf("lookups of unknown ids found something")
	}
}

// TestHighlightsClosedSet checks every highlight of the lessons against
// the documented names.
func TestHighlightsClosedSet(t *testing.T) {
	var fixed, prefixes []string
	for _, h := range lessons.HighlightNames() {
		if h.About == "" {
			t.Errorf("highlight %q is undocumented", h.Name)
		}
		if strings.HasSuffix(h.Name, ":") {
			prefixes = append(prefixes, h.Name)
		} else {
			fixed = append(fixed, h.Name)
		}
	}
	used := map[string]bool{}
	for _, l := range load(t).Lessons {
		for _, s := range l.Steps {
			for _, h := range s.Highlight {
				used[h] = true
				if !slices.Contains(fixed, h) && !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(h, p) }) {
					t.Errorf("%s/%s: highlight %q is not in lessons.HighlightNames", l.ID, s.ID, h)
				}
			}
		}
	}
	t.Logf("highlights used: %v", slices.Sorted(maps.Keys(used)))
}

func TestTextFallback(t *testing.T) {
	tx := lessons.Text{"en": "Next", "hi": "आगे"}
	cases := []struct{ lang, want string }{{"en", "Next"}, {"hi", "आगे"}, {"fr", "Next"}, {"", "Next"}}
	for _, c := range cases {
		if got := tx.In(c.lang); got != c.want {
			t.Errorf("In(%q): got %q, want %q", c.lang, got, c.want)
		}
	}
	if got := (lessons.Text{"en": "only English"}).In("hi"); got != "only English" {
		t.Errorf("got %q, want the English fallback", got)
	}
	ps := lessons.Paragraphs{"en": {"a", "b"}}
	if got := ps.In("hi"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("got %q, want the English paragraphs", got)
	}
	ui := lessons.Strings{"next": tx}
	if got := ui.Get("next", "hi"); got != "आगे" {
		t.Errorf("got %q, want आगे", got)
	}
	if got := ui.Get("missing-key", "hi"); got != "missing-key" {
		t.Errorf("got %q for a missing key, want the key", got)
	}
	if got := lessons.Fill("Step {n} of {total}", "n", "2", "total", "9"); got != "Step 2 of 9" {
		t.Errorf("got %q, want Step 2 of 9", got)
	}
}

func TestNoRealModelMessage(t *testing.T) {
	c := load(t)
	for _, lang := range lessons.Languages() {
		msg := c.UI.Get(lessons.KeyNoRealModel, lang)
		for _, want := range []string{"tracer pull HuggingFaceTB/SmolLM2-135M-Instruct", "stories260K"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: no-real-model message %q does not mention %q", lang, msg, want)
			}
		}
	}
	if len(c.Downloads) == 0 || !strings.Contains(c.Downloads[0].Command, "stories260K") {
		t.Errorf("got downloads %+v, want the smallest (stories260K) first", c.Downloads)
	}
}

func TestAt(t *testing.T) {
	cases := []struct {
		in      string
		want    lessons.At
		wantErr string
	}{
		{"end", lessons.At{Kind: lessons.AtEnd}, ""},
		{"before", lessons.At{Kind: lessons.AtBefore}, ""},
		{"each-step", lessons.At{Kind: lessons.AtEachStep}, ""},
		{"each-moment", lessons.At{Kind: lessons.AtEachMoment}, ""},
		{"step:3", lessons.At{Kind: lessons.AtStep, Index: 3}, ""},
		{"moment:9", lessons.At{Kind: lessons.AtMoment, Index: 9}, ""},
		{"step", lessons.At{}, "with an index"},
		{"step:-1", lessons.At{}, "0 or more"},
		{"end:2", lessons.At{}, "only step:N and moment:N"},
		{"middle", lessons.At{}, "want before"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := lessons.ParseAt(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
			if got.String() != c.in {
				t.Errorf("got String %q, want %q", got.String(), c.in)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	cases := []struct {
		name  string
		run   string // JSON of a run
		model string
		want  string
	}{
		{"toy", `{"id": "a", "model": "toy"}`, "", "tracer run"},
		{"toy-sampled", `{"id": "a", "model": "toy", "options": {"do_sample": true, "seed": 7}}`, "toy",
			"tracer run --do-sample --seed 7"},
		{"real-suggested", `{"id": "a", "model": "real", "suggest": "HuggingFaceTB/SmolLM2-135M-Instruct", "prompts": ["It's a test"], "options": {"max_new_tokens": 5, "do_sample": false}}`, "",
			`tracer run --model HuggingFaceTB/SmolLM2-135M-Instruct --prompt 'It'\''s a test' --max-new-tokens 5 --do-sample=false`},
		{"real-named", `{"id": "a", "model": "real", "prompts": ["Hi"], "options": {"use_cache": false, "temperature": 0.7}}`, "/models/my gpt2",
			`tracer run --model '/models/my gpt2' --prompt Hi --no-cache --temperature 0.7`},
		{"real-unnamed", `{"id": "a", "model": "real", "prompts": ["Hi"]}`, "", "tracer run --model MODEL --prompt Hi"},
		{"batch-right", `{"id": "a", "model": "real", "prompts": ["A b", "C"], "padding": "right", "options": {"eos_token_id": [2, 1], "stop_strings": "."}}`, "m",
			`tracer run --model m --prompt 'A b' --prompt C --padding right --eos-id 2 --eos-id 1 --stop .`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r lessons.Run
			if err := json.Unmarshal([]byte(c.run), &r); err != nil {
				t.Fatal(err)
			}
			if got := r.Command(c.model); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestShellListingsMirrorTheirRuns wants every `tracer run` line of a
// shell listing to be exactly the command of the run it mirrors.
func TestShellListingsMirrorTheirRuns(t *testing.T) {
	found := 0
	for _, l := range load(t).Lessons {
		for _, s := range l.Steps {
			for _, code := range s.Code {
				if code.Lang != "sh" || code.Mirrors == nil {
					continue
				}
				r := s.Runs[*code.Mirrors]
				for _, line := range code.Lines {
					if strings.HasPrefix(line, "tracer run ") {
						found++
						if want := r.Command(r.Suggest); line != want {
							t.Errorf("%s/%s: got  %s\nwant %s", l.ID, s.ID, line, want)
						}
					}
				}
			}
		}
	}
	if found == 0 {
		t.Errorf("no shell listing runs tracer; lesson 3 should show the command")
	}
}

// TestOptionsRoundTrip checks that options keep their order through JSON,
// so a page serving the catalog as JSON shows them as written.
func TestOptionsRoundTrip(t *testing.T) {
	in := `{"id":"a","model":"real","options":{"max_new_tokens":24,"do_sample":false,"use_cache":false}}`
	var r lessons.Run
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"options":{"max_new_tokens":24,"do_sample":false,"use_cache":false}`) {
		t.Errorf("got %s, want the options in their order", out)
	}
	s, err := r.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxNewTokens == nil || *s.MaxNewTokens != 24 || s.DoSample == nil || *s.DoSample || s.UseCache == nil || *s.UseCache || s.Temperature != nil {
		t.Errorf("got settings %+v, want max_new_tokens 24, do_sample false, use_cache false and nothing else", s)
	}
}

func TestParseNamesFileAndField(t *testing.T) {
	ui, err := json.Marshal(map[string]any{"strings": load(t).UI})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, lesson, want string
	}{
		{"unknown field", `{"id": "x", "titel": {"en": "X", "hi": "X"}}`, `lessons/01-x.json: json: unknown field "titel"`},
		{"syntax", "{\n\"id\": \"x\",,\n}", "lessons/01-x.json: line 2"},
		{"bad at", `{"id": "x", "steps": [{"id": "s", "at": "middle"}]}`, `at "middle"`},
		{"settings twice", `{"id": "x", "steps": [{"id": "s", "runs": [{"id": "r", "model": "toy", "options": {"seed": 1, "seed": 2}}]}]}`, `"seed" appears twice`},
		{"incomplete", `{"id": "x", "title": {"en": "X"}, "summary": {"en": "S", "hi": "स"}, "steps": [{"id": "s", "title": {"en": "S", "hi": "स"}, "text": {"en": ["p"], "hi": ["प"]}}]}`, "lesson x: title: no Hindi (hi) text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"ui.json":             {Data: ui},
				"lessons/01-x.json":   {Data: []byte(c.lesson)},
				"lessons/README.text": {Data: []byte("not a lesson")},
			}
			_, err := lessons.Parse(fsys)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestValidateUI(t *testing.T) {
	c := load(t)
	broken := func(edit func(ui lessons.Strings)) *lessons.Catalog {
		ui := maps.Clone(c.UI)
		edit(ui)
		return &lessons.Catalog{Lessons: c.Lessons, UI: ui, Downloads: c.Downloads}
	}
	cases := []struct {
		name string
		cat  *lessons.Catalog
		want string
	}{
		{"missing key", broken(func(ui lessons.Strings) { delete(ui, lessons.KeyCheckAnswer) }), `no text for key "check-answer"`},
		{"missing Hindi", broken(func(ui lessons.Strings) { ui[lessons.KeyNext] = lessons.Text{"en": "Next"} }), `ui "next": no Hindi (hi) text`},
		{"placeholder lost", broken(func(ui lessons.Strings) {
			ui[lessons.KeyLessonN] = lessons.Text{"en": "Lesson {n}", "hi": "पाठ"}
		}), "hi has placeholders [], English [{n}]"},
		{"a debugger key is web's", broken(func(ui lessons.Strings) {
			ui["dbg-generate"] = lessons.Text{"en": "Generate", "hi": "टेक्स्ट बनाएँ"}
		}), `ui "dbg-generate": not a key`},
		{"unknown key", broken(func(ui lessons.Strings) { ui["nxet"] = lessons.Text{"en": "Next", "hi": "आगे"} }), `ui "nxet": not a key`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.cat.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// TestNoDebuggerWords checks that the debugger's wording lives in web: the
// lessons' catalog holds no dbg- key.
func TestNoDebuggerWords(t *testing.T) {
	for k := range load(t).UI {
		if strings.HasPrefix(k, "dbg-") {
			t.Errorf("got key %q in lessons' ui.json, want the debugger's words in web/words/data/words.json", k)
		}
	}
}

// TestCatalogJSONRoundTrip serves the catalog as JSON, as a page may send
// it to the browser, and reads it back unchanged.
func TestCatalogJSONRoundTrip(t *testing.T) {
	c := load(t)
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back lessons.Catalog
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, c) {
		t.Errorf("the catalog changed through JSON")
	}
	if err := back.Validate(); err != nil {
		t.Errorf("the catalog read back does not validate: %v", err)
	}
}

// TestEveryLessonHasAQuiz (issue 37, point 12): every lesson of the
// catalog asks at least one question, and every question and option has
// its words in every language.
func TestEveryLessonHasAQuiz(t *testing.T) {
	c, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range c.Lessons {
		questions := 0
		for _, s := range l.Steps {
			for _, q := range s.Questions {
				questions++
				for _, lang := range lessons.Languages() {
					if q.Question[lang] == "" {
						t.Errorf("lesson %d (%s), question %s: no %s wording", i+1, l.ID, q.ID, lang)
					}
					for _, o := range q.Options {
						if o.Text[lang] == "" {
							t.Errorf("lesson %d (%s), question %s, option %s: no %s wording", i+1, l.ID, q.ID, o.ID, lang)
						}
					}
				}
			}
		}
		if questions == 0 {
			t.Errorf("lesson %d (%s) has no quiz", i+1, l.ID)
		}
	}
}
