package web

import (
	"slices"
	"strconv"
	"strings"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/view"
)

// LessonHeadView is what every lesson page's head and top bar show.
type LessonHeadView struct {
	Lang          string // "en" or "hi": the page's language
	CSS, JS, Icon string // asset URLs
	Lessons       string // "Lessons"
	IndexURL      string // the list of lessons, in the page's language
	Debugger      string // "The debugger": the link back to /
	LanguageLabel string
	Langs         []view.LangLinkView
}

// LessonIndexView is the list of lessons.
type LessonIndexView struct {
	Head     LessonHeadView
	Progress string // "{done} of {total} steps done", filled in by the script
	Start    string // "Start the lesson"
	Lessons  []LessonItemView
}

// LessonItemView is one lesson of the list.
type LessonItemView struct {
	ID, Number, Title, Summary string
	URL                        string // its first step
	Steps                      string // its steps' progress keys, "lesson/step", space-separated
}

// TextPart is a run of text; Code marks what the lesson wrote in backticks.
type TextPart struct {
	Text string
	Code bool
}

// textParts splits text at backticks: the odd parts are code.
func textParts(s string) []TextPart {
	var out []TextPart
	for i, p := range strings.Split(s, "`") {
		if p != "" {
			out = append(out, TextPart{Text: p, Code: i%2 == 1})
		}
	}
	return out
}

// LessonStepView is one step of a lesson.
type LessonStepView struct {
	Head        LessonHeadView
	LessonID    string
	StepID      string
	Number      string // "Lesson 2"
	LessonTitle string
	Title       string
	Position    string // "Step 3 of 12"
	Index       int    // 0-based
	Count       int
	Paragraphs  [][]TextPart
	Code        []CodeView
	Figure      *FigureView       // nil for a step of text only
	Form        *LessonFormView   // nil when the step takes no input
	Picker      *LessonPickerView // nil when the step runs no real model
	Quiz        *QuizView         // nil without questions
	PrevURL     string            // "" on the first step
	NextURL     string            // "" on the last step
	Previous    string
	Next        string
	Done        string // "You have finished this lesson.", on the last step
}

// CodeView is a listing beside a step.
type CodeView struct {
	Title string
	Lang  string // "python" or "sh"
	Lines []view.CodeLineView
}

// QuizView is a step's questions.
type QuizView struct {
	Title     string // "Quick check"
	Correct   string // "Correct!"
	NotQuite  string // "Not quite"
	Questions []QuestionView
}

// QuestionView is one question; its options carry their feedback, which
// the script shows once the option is chosen.
type QuestionView struct {
	ID       string
	Question []TextPart
	Options  []OptionView
}

// OptionView is one answer of a question.
type OptionView struct {
	ID       string
	Text     []TextPart
	Feedback []TextPart
	Correct  bool
}

// LessonFormView lets the learner change a step's input and run it again.
type LessonFormView struct {
	Batch        bool   // prompts, one per line; else one prompt and max_new_tokens
	Prompts      string // the prompts, one per line
	MaxNew       string
	PromptsLabel string
	PromptLabel  string
	MaxNewLabel  string
	Run          string // the button
	Lang         string
	Model        string // the chosen model, kept across the form's runs
}

// indexView builds the list of lessons.
func indexView(cat *lessons.Catalog, lang string, head LessonHeadView) LessonIndexView {
	ui := cat.UI
	v := LessonIndexView{Head: head, Progress: ui.Get(lessons.KeyProgressDone, lang), Start: ui.Get(lessons.KeyStart, lang)}
	for i, l := range cat.Lessons {
		keys := make([]string, len(l.Steps))
		for j, st := range l.Steps {
			keys[j] = l.ID + "/" + st.ID
		}
		v.Lessons = append(v.Lessons, LessonItemView{
			ID: l.ID, Number: lessons.Fill(ui.Get(lessons.KeyLessonN, lang), "n", strconv.Itoa(i+1)),
			Title: l.Title.In(lang), Summary: l.Summary.In(lang),
			URL:   stepURL(l.ID, l.Steps[0].ID, lang),
			Steps: strings.Join(keys, " "),
		})
	}
	return v
}

// stepURL is the deep link of a step in a language.
func stepURL(lesson, step, lang string) string {
	return "/lessons/" + lesson + "/" + step + langQuery(lang)
}

// stepPageView builds a step's page, all but its figure and form.
func stepPageView(cat *lessons.Catalog, l *lessons.Lesson, i int, lang string, head LessonHeadView) LessonStepView {
	ui := cat.UI
	st := &l.Steps[i]
	n := slices.IndexFunc(cat.Lessons, func(x lessons.Lesson) bool { return x.ID == l.ID }) + 1
	v := LessonStepView{
		Head: head, LessonID: l.ID, StepID: st.ID,
		Number:      lessons.Fill(ui.Get(lessons.KeyLessonN, lang), "n", strconv.Itoa(n)),
		LessonTitle: l.Title.In(lang), Title: st.Title.In(lang),
		Position: lessons.Fill(ui.Get(lessons.KeyStepNOfTotal, lang), "n", strconv.Itoa(i+1), "total", strconv.Itoa(len(l.Steps))),
		Index:    i, Count: len(l.Steps),
		Previous: ui.Get(lessons.KeyPrevious, lang), Next: ui.Get(lessons.KeyNext, lang),
	}
	for _, p := range st.Text.In(lang) {
		v.Paragraphs = append(v.Paragraphs, textParts(p))
	}
	for _, c := range st.Code {
		cv := CodeView{Title: c.Title.In(lang), Lang: c.Lang}
		for j, line := range c.Lines {
			cv.Lines = append(cv.Lines, view.CodeLineView{Number: j + 1, Text: line})
		}
		v.Code = append(v.Code, cv)
	}
	if i > 0 {
		v.PrevURL = stepURL(l.ID, l.Steps[i-1].ID, lang)
	}
	if i+1 < len(l.Steps) {
		v.NextURL = stepURL(l.ID, l.Steps[i+1].ID, lang)
	} else {
		v.Done = ui.Get(lessons.KeyLessonDone, lang)
	}
	if len(st.Questions) > 0 {
		v.Quiz = &QuizView{Title: ui.Get(lessons.KeyQuickCheck, lang), Correct: ui.Get(lessons.KeyCorrect, lang), NotQuite: ui.Get(lessons.KeyNotQuite, lang)}
		for _, q := range st.Questions {
			qv := QuestionView{ID: q.ID, Question: textParts(q.Question.In(lang))}
			for _, o := range q.Options {
				qv.Options = append(qv.Options, OptionView{ID: o.ID, Text: textParts(o.Text.In(lang)), Feedback: textParts(o.Feedback.In(lang)), Correct: o.Correct})
			}
			v.Quiz.Questions = append(v.Quiz.Questions, qv)
		}
	}
	return v
}

// formLabels fills in the form's wording.
func formLabels(f *LessonFormView, ui lessons.Strings, lang string) {
	f.PromptsLabel = ui.Get(lessons.KeyBatchPrompts, lang)
	f.PromptLabel = ui.Get(lessons.KeyPrompt, lang)
	f.MaxNewLabel = "max_new_tokens"
	f.Run = ui.Get(lessons.KeyRunAgain, lang)
	f.Lang = lang
}

// idViews writes ids for the page; ids from start on are new.
func idViews(ids []int, start int) []IDView {
	out := make([]IDView, len(ids))
	for i, id := range ids {
		out[i] = IDView{ID: strconv.Itoa(id), New: i >= start}
	}
	return out
}

// IDView is one token id of an output.
type IDView struct {
	ID  string
	New bool // generated, not from the prompt
	Pad bool // padding
}

// batchRows shows each row of a batch with its pads, its new ids and its
// text; junk marks the rows whose new text differs from the reference run's.
func batchRows(t *trace.Trace, ref *trace.Trace) []SeqRowView {
	var out []SeqRowView
	for r, seq := range t.Output.Sequences {
		row := SeqRowView{}
		start := len(seq)
		if r < len(t.Prompt.Rows) {
			start = len(t.Prompt.Rows[r].IDs)
		}
		if r < len(t.Prompt.Texts) {
			row.Prompt = t.Prompt.Texts[r]
		}
		row.IDs = idViews(seq, start)
		for i := range row.IDs {
			if i < start && t.Prompt.Rows[r].AttentionMask[i] == 0 {
				row.IDs[i].Pad = true
			}
		}
		if r < len(t.Output.NewTexts) {
			row.Text = t.Output.NewTexts[r]
		}
		if ref != nil && r < len(ref.Output.NewTexts) && ref.Output.NewTexts[r] != row.Text {
			row.Junk = true
		}
		out = append(out, row)
	}
	return out
}

// SeqRowView is one row of a batch's output.
type SeqRowView struct {
	Prompt string
	IDs    []IDView
	Text   string // the row's new text
	Junk   bool   // differs from the left-padded run
	Mask   string // the attention mask, "0 0 1 1", when the lesson looks at it
}

// lineTestID names a listing line for tests: active lines get activeID.
func lineTestID(active bool, activeID string) string {
	if active {
		return activeID
	}
	return "code-line"
}

// rowTestID names a batch row for tests: "junk-row" when it differs from
// the left-padded run.
func rowTestID(junk bool) string {
	if junk {
		return "junk-row"
	}
	return "batch-row"
}

// LessonPickerView is the menu of the real models that can run the
// lessons; the models that cannot are listed, disabled, with the reason.
type LessonPickerView struct {
	Label   string // "Model for the lessons"
	Use     string // the button, for pages without the script
	Lang    string
	Chosen  string // the catalog name of the model the figures run on; "" for none
	Note    string // the model asked for cannot run the lessons: which one runs instead
	Options []PickerOptionView
}

// PickerOptionView is one model of the picker.
type PickerOptionView struct {
	Name, Label string
	Disabled    bool // cannot run the lessons: Label says why
	Selected    bool
}

// usesRealModel reports whether a step runs a real model.
func usesRealModel(st *lessons.Step) bool {
	return len(st.Runs) > 0 && st.Runs[0].Model == lessons.ModelReal
}

// pickerView builds the model picker: want is the model asked for (?model=).
func pickerView(ui lessons.Strings, choices []lessonChoice, want, lang string) *LessonPickerView {
	v := &LessonPickerView{Label: ui.Get(lessons.KeyLessonModel, lang), Use: ui.Get(lessons.KeyUseModel, lang), Lang: lang}
	for _, c := range choices {
		if v.Chosen == "" && c.model != nil {
			v.Chosen = c.Name
		}
		if c.Name == want && c.model != nil {
			v.Chosen = want
		}
	}
	for _, c := range choices {
		o := PickerOptionView{Name: c.Name, Label: c.Label, Disabled: c.model == nil, Selected: c.Name == v.Chosen}
		if o.Disabled {
			o.Label += " (" + c.Reason + ")"
		}
		v.Options = append(v.Options, o)
		if c.Name == want && c.model == nil && v.Chosen != "" {
			v.Note = lessons.Fill(ui.Get(lessons.KeyModelFallback, lang), "model", want, "reason", c.Reason, "chosen", v.Chosen)
		}
	}
	return v
}
