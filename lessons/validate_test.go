package lessons_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"tracer/lessons"
)

// en and hi make a Text in both languages.
func both(en, hi string) lessons.Text { return lessons.Text{"en": en, "hi": hi} }

func intp(i int) *int { return &i }

// goodLesson is a small lesson that passes Validate: a toy step at a moment,
// a compare step of two real runs with a listing, and a quiz.
func goodLesson() *lessons.Lesson {
	real := func(id string, opts lessons.Options) lessons.Run {
		return lessons.Run{ID: id, Label: both(id, id+" (हिन्दी)"), Model: lessons.ModelReal,
			Prompts: []string{"Once upon a time"}, Options: opts}
	}
	return &lessons.Lesson{
		ID: "broken-on-purpose", Title: both("A test lesson", "एक परीक्षण पाठ"), Summary: both("For tests.", "परीक्षण के लिए।"),
		Steps: []lessons.Step{
			{
				ID: "toy-moment", Title: both("A moment", "एक पल"),
				Text:      lessons.Paragraphs{"en": {"One.", "Two."}, "hi": {"एक।", "दो।"}},
				Runs:      []lessons.Run{{ID: "toy", Model: lessons.ModelToy}},
				At:        lessons.At{Kind: lessons.AtMoment, Index: 2},
				Highlight: []string{"code-line:pick", "table-cell", "annotation"},
			},
			{
				ID: "compare", Title: both("Cache on and off", "cache चालू और बंद"),
				Text: lessons.Paragraphs{"en": {"Compare."}, "hi": {"तुलना कीजिए।"}},
				Runs: []lessons.Run{
					real("on", lessons.Options{{Name: "max_new_tokens", Value: "8"}, {Name: "do_sample", Value: "true"}, {Name: "temperature", Value: "0.7"}}),
					real("off", lessons.Options{{Name: "max_new_tokens", Value: "8"}, {Name: "use_cache", Value: "false"}}),
				},
				At:         lessons.At{Kind: lessons.AtStep, Index: 3},
				Highlight:  []string{"traffic.flops", "stage:temperature", "draw", "option:use_cache"},
				SameOutput: true,
				Code: []lessons.Code{{
					Lang: "python", Title: both("transformers", "transformers में"), Mirrors: intp(1),
					Lines: []string{`out = model.generate(**tok("Once upon a time", return_tensors="pt"), max_new_tokens=8, use_cache=False)`},
				}},
				Questions: []lessons.Question{{
					ID: "q", Question: both("Why?", "क्यों?"),
					Options: []lessons.Option{
						{ID: "a", Text: both("A", "क"), Feedback: both("Yes.", "हाँ।"), Correct: true},
						{ID: "b", Text: both("B", "ख"), Feedback: both("No.", "नहीं।")},
					},
				}},
			},
		},
	}
}

// TestValidateCatchesBrokenLessons breaks a good lesson one way at a time
// and wants Validate to say where and what.
func TestValidateCatchesBrokenLessons(t *testing.T) {
	if err := goodLesson().Validate(); err != nil {
		t.Fatalf("the good lesson does not validate: %v", err)
	}
	cases := []struct {
		name string
		edit func(l *lessons.Lesson)
		want string
	}{
		// Missing or broken translations.
		{"lesson title without Hindi", func(l *lessons.Lesson) { delete(l.Title, "hi") }, "lesson broken-on-purpose: title: no Hindi (hi) text"},
		{"blank English summary", func(l *lessons.Lesson) { l.Summary["en"] = "  " }, "summary: no English (en) text"},
		{"step title in a third language only", func(l *lessons.Lesson) { l.Steps[0].Title = lessons.Text{"en": "A", "hn": "ए"} }, `language "hn" is not one of`},
		{"a Hindi paragraph missing", func(l *lessons.Lesson) { l.Steps[0].Text["hi"] = l.Steps[0].Text["hi"][:1] }, "step toy-moment: text: 1 Hindi (hi) paragraphs, 2 English ones"},
		{"no Hindi text at all", func(l *lessons.Lesson) { delete(l.Steps[1].Text, "hi") }, "step compare: text: 0 Hindi (hi) paragraphs"},
		{"blank Hindi paragraph", func(l *lessons.Lesson) { l.Steps[0].Text["hi"][1] = "" }, "Hindi (hi) paragraph 2 is blank"},
		{"unpaired backtick", func(l *lessons.Lesson) { l.Steps[0].Text["en"][0] = "the `while line" }, "a ` without its pair"},
		{"compare label without Hindi", func(l *lessons.Lesson) { l.Steps[1].Runs[1].Label = lessons.Text{"en": "off"} }, "run off: label: no Hindi (hi) text"},
		{"question without Hindi", func(l *lessons.Lesson) { delete(l.Steps[1].Questions[0].Question, "hi") }, "question q: no Hindi (hi) text"},
		{"option text without Hindi", func(l *lessons.Lesson) { delete(l.Steps[1].Questions[0].Options[1].Text, "hi") }, "option 2 (b): text: no Hindi (hi) text"},
		{"feedback without Hindi", func(l *lessons.Lesson) { delete(l.Steps[1].Questions[0].Options[0].Feedback, "hi") }, "option 1 (a): feedback: no Hindi (hi) text"},
		{"feedback without English", func(l *lessons.Lesson) { delete(l.Steps[1].Questions[0].Options[1].Feedback, "en") }, "option 2 (b): feedback: no English (en) text"},
		{"code title without Hindi", func(l *lessons.Lesson) { delete(l.Steps[1].Code[0].Title, "hi") }, "code 1: title: no Hindi (hi) text"},

		// Quiz.
		{"two right answers", func(l *lessons.Lesson) { l.Steps[1].Questions[0].Options[1].Correct = true }, "want exactly one correct option, got 2"},
		{"no right answer", func(l *lessons.Lesson) { l.Steps[1].Questions[0].Options[0].Correct = false }, "want exactly one correct option, got 0"},
		{"one option", func(l *lessons.Lesson) { l.Steps[1].Questions[0].Options = l.Steps[1].Questions[0].Options[:1] }, "at least two options"},

		// Ids.
		{"step id twice", func(l *lessons.Lesson) { l.Steps[1].ID = "toy-moment" }, "step toy-moment: the id is used twice"},
		{"id with capitals", func(l *lessons.Lesson) { l.Steps[0].ID = "Toy_Moment" }, `id "Toy_Moment": want lowercase`},
		{"option id twice", func(l *lessons.Lesson) { l.Steps[1].Questions[0].Options[1].ID = "a" }, "option 2 (a): the id is used twice"},
		{"run id twice", func(l *lessons.Lesson) { l.Steps[1].Runs[1].ID = "on" }, "run on: the id is used twice"},

		// Highlights.
		{"unknown highlight", func(l *lessons.Lesson) { l.Steps[0].Highlight[1] = "table-cel" }, `highlight "table-cel" is not one the page knows`},
		{"unknown listing role", func(l *lessons.Lesson) { l.Steps[0].Highlight[0] = "code-line:loop" }, `no line of the listing has role "loop"`},
		{"unknown stage", func(l *lessons.Lesson) { l.Steps[1].Highlight[1] = "stage:top_n" }, `no processor is called "top_n"`},
		{"unknown option", func(l *lessons.Lesson) { l.Steps[1].Highlight[3] = "option:max_tokens" }, `"max_tokens" is not a generation option`},
		{"toy highlight on real runs", func(l *lessons.Lesson) { l.Steps[1].Highlight = append(l.Steps[1].Highlight, "table-row") }, `highlight "table-row": no run of the step has it to show (it needs a toy run)`},
		{"traffic on the toy", func(l *lessons.Lesson) { l.Steps[0].Highlight = append(l.Steps[0].Highlight, "kv") }, `highlight "kv": no run`},
		{"stage without sampling", func(l *lessons.Lesson) { l.Steps[1].Runs[0].Options = l.Steps[1].Runs[0].Options[:1] }, `highlight "stage:temperature": no run`},
		{"batch highlight on one prompt", func(l *lessons.Lesson) { l.Steps[1].Highlight = append(l.Steps[1].Highlight, "prompt.rows") }, "it needs a batch"},
		{"annotation off a moment", func(l *lessons.Lesson) { l.Steps[0].At = lessons.At{Kind: lessons.AtEnd} }, `highlight "annotation" needs at moment:N`},
		{"highlight twice", func(l *lessons.Lesson) { l.Steps[0].Highlight = append(l.Steps[0].Highlight, "table-cell") }, `highlight "table-cell" is listed twice`},

		// Runs and places.
		{"runs without at", func(l *lessons.Lesson) { l.Steps[1].At = lessons.At{} }, `the step has runs but no "at"`},
		{"moment of a real run", func(l *lessons.Lesson) { l.Steps[1].At = lessons.At{Kind: lessons.AtMoment} }, "moments exist for single-prompt toy runs only"},
		{"step past max_new_tokens", func(l *lessons.Lesson) { l.Steps[1].At.Index = 8 }, "run on makes at most 8 steps"},
		{"unknown model kind", func(l *lessons.Lesson) { l.Steps[1].Runs[0].Model = "gpt" }, `model "gpt": want toy or real`},
		{"unknown option name", func(l *lessons.Lesson) {
			l.Steps[1].Runs[1].Options = append(l.Steps[1].Runs[1].Options, lessons.Setting{Name: "max_tokens", Value: "5"})
		}, `setting "max_tokens" is not a generation option`},
		{"option of the wrong type", func(l *lessons.Lesson) { l.Steps[1].Runs[1].Options[0].Value = `"eight"` }, "cannot unmarshal string"},
		{"option out of range", func(l *lessons.Lesson) { l.Steps[1].Runs[0].Options[2].Value = "-1" }, "temperature must be a positive number"},
		{"toy prompt off the table", func(l *lessons.Lesson) { l.Steps[0].Runs[0].Prompts = []string{"I hate"} }, `"hate" is not a word of the table`},
		{"padding a single prompt", func(l *lessons.Lesson) { l.Steps[1].Runs[0].Padding = "right" }, "only a batch of prompts is padded"},
		{"padding upside down", func(l *lessons.Lesson) {
			l.Steps[1].Runs[0].Prompts = []string{"a", "b c"}
			l.Steps[1].Runs[0].Padding = "top"
		}, `padding "top": want left or right`},
		{"a toy run suggesting a model", func(l *lessons.Lesson) { l.Steps[0].Runs[0].Suggest = "openai-community/gpt2" }, "only a real run suggests a model"},
		{"unknown stop reason", func(l *lessons.Lesson) { l.Steps[1].Runs[0].ExpectStop = "length" }, `expect_stop "length" is not a stop reason`},
		{"same output of one run", func(l *lessons.Lesson) {
			l.Steps[0].SameOutput = true
		}, "same_output needs at least two runs"},
		{"at without runs", func(l *lessons.Lesson) { l.Steps[0].Runs = nil }, "at moment:2 needs a run"},

		// Listings.
		{"listing in Rust", func(l *lessons.Lesson) { l.Steps[1].Code[0].Lang = "rust" }, `lang "rust": want python or sh`},
		{"listing mirrors a missing run", func(l *lessons.Lesson) { l.Steps[1].Code[0].Mirrors = intp(2) }, "mirrors run 2, but the step has 2 runs"},
		{"listing forgets an option", func(l *lessons.Lesson) { l.Steps[1].Code[0].Mirrors = intp(0) }, "does not say do_sample=True"},
		{"listing forgets the prompt", func(l *lessons.Lesson) {
			l.Steps[1].Code[0].Lines = []string{"out = model.generate(max_new_tokens=8, use_cache=False)"}
		}, `does not hold its prompt "Once upon a time"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := goodLesson()
			c.edit(l)
			err := l.Validate()
			if err == nil {
				t.Fatalf("got no error, want one saying %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error\n%v\nwant one saying %q", err, c.want)
			}
		})
	}
}

// TestValidateCatalogLessons checks that the catalog's own Validate reaches
// the lessons and their ids.
func TestValidateCatalogLessons(t *testing.T) {
	c := load(t)
	twice := &lessons.Catalog{Lessons: []lessons.Lesson{c.Lessons[0], c.Lessons[0]}, UI: c.UI, Downloads: c.Downloads}
	if err := twice.Validate(); err == nil || !strings.Contains(err.Error(), "lesson one-token-at-a-time: the id is used twice") {
		t.Errorf("got error %v, want the lesson id used twice", err)
	}
	bad := *goodLesson()
	delete(bad.Steps[0].Title, "hi")
	withBad := &lessons.Catalog{Lessons: []lessons.Lesson{bad}, UI: c.UI, Downloads: c.Downloads}
	if err := withBad.Validate(); err == nil || !strings.Contains(err.Error(), "step toy-moment: title: no Hindi (hi) text") {
		t.Errorf("got error %v, want the missing Hindi title", err)
	}
}

// TestParseRefusesDuplicateKeys: a key written twice in one object would
// keep the last copy silently (an edit to the first would be lost), so the
// catalog refuses it and names the key and line.
func TestParseRefusesDuplicateKeys(t *testing.T) {
	for _, tc := range []struct {
		name, ui, want string
	}{
		{"top level", `{"strings": {}, "strings": {}}`, `line 1: key "strings" appears twice`},
		{"nested", "{\"strings\": {\"a\": {\"en\": \"x\"},\n \"a\": {\"en\": \"y\"}}}", `line 2: key "a" appears twice`},
		{"inside an array", `{"strings": {}, "downloads": [{"name": "a", "name": "b"}]}`, `key "name" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lessons.Parse(fstest.MapFS{"ui.json": {Data: []byte(tc.ui)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("same key in two objects is fine", func(t *testing.T) {
		_, err := lessons.Parse(fstest.MapFS{"ui.json": {Data: []byte(`{"strings": {"a": {"en": "x"}}, "downloads": [{"name": "a"}, {"name": "b"}]}`)}})
		if err != nil && strings.Contains(err.Error(), "twice") {
			t.Errorf("got %v, want no duplicate-key error", err)
		}
	})
}
