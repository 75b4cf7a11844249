package lessonpage

import (
	"slices"
	"strconv"
	"strings"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/view"
)

// textParts splits text at backticks: the odd parts are code.
func textParts(s string) []view.TextPart {
	var out []view.TextPart
	for i, p := range strings.Split(s, "`") {
		if p != "" {
			out = append(out, view.TextPart{Text: p, Code: i%2 == 1})
		}
	}
	return out
}

// indexView builds the list of lessons.
func indexView(cat *lessons.Catalog, lang string, head view.LessonHeadView) view.LessonIndexView {
	ui := cat.UI
	v := view.LessonIndexView{Head: head, Progress: ui.Get(lessons.KeyProgressDone, lang), Start: ui.Get(lessons.KeyStart, lang)}
	for i, l := range cat.Lessons {
		keys := make([]string, len(l.Steps))
		for j, st := range l.Steps {
			keys[j] = l.ID + "/" + st.ID
		}
		v.Lessons = append(v.Lessons, view.LessonItemView{
			ID: l.ID, Number: lessons.Fill(ui.Get(lessons.KeyLessonN, lang), "n", strconv.Itoa(i+1)),
			Title: l.Title.In(lang), Summary: l.Summary.In(lang),
			URL:   StepURL(l.ID, l.Steps[0].ID, lang),
			Steps: strings.Join(keys, " "),
		})
	}
	return v
}

// StepURL is the deep link of a step in a language.
func StepURL(lesson, step, lang string) string {
	return "/lessons/" + lesson + "/" + step + view.LangQuery(lang)
}

// stepPageView builds a step's page, all but its figure and form.
func stepPageView(cat *lessons.Catalog, l *lessons.Lesson, i int, lang string, head view.LessonHeadView) view.LessonStepView {
	ui := cat.UI
	st := &l.Steps[i]
	n := slices.IndexFunc(cat.Lessons, func(x lessons.Lesson) bool { return x.ID == l.ID }) + 1
	v := view.LessonStepView{
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
		cv := view.CodeView{Title: c.Title.In(lang), Lang: c.Lang}
		for j, line := range c.Lines {
			cv.Lines = append(cv.Lines, view.CodeLineView{Number: j + 1, Text: line})
		}
		v.Code = append(v.Code, cv)
	}
	if i > 0 {
		v.PrevURL = StepURL(l.ID, l.Steps[i-1].ID, lang)
	}
	if i+1 < len(l.Steps) {
		v.NextURL = StepURL(l.ID, l.Steps[i+1].ID, lang)
	} else {
		v.Done = ui.Get(lessons.KeyLessonDone, lang)
		if n < len(cat.Lessons) && len(cat.Lessons[n].Steps) > 0 {
			next := &cat.Lessons[n]
			v.NextLessonURL = StepURL(next.ID, next.Steps[0].ID, lang)
			v.NextLesson = lessons.Fill(ui.Get(lessons.KeyNextLesson, lang), "title", next.Title.In(lang))
		}
	}
	if len(st.Questions) > 0 {
		v.Quiz = &view.QuizView{Title: ui.Get(lessons.KeyQuickCheck, lang), Correct: ui.Get(lessons.KeyCorrect, lang), NotQuite: ui.Get(lessons.KeyNotQuite, lang)}
		for _, q := range st.Questions {
			qv := view.QuestionView{ID: q.ID, Question: textParts(q.Question.In(lang))}
			for _, o := range q.Options {
				qv.Options = append(qv.Options, view.OptionView{ID: o.ID, Text: textParts(o.Text.In(lang)), Feedback: textParts(o.Feedback.In(lang)), Correct: o.Correct})
			}
			v.Quiz.Questions = append(v.Quiz.Questions, qv)
		}
	}
	return v
}

// formLabels fills in the form's wording.
func formLabels(f *view.LessonFormView, ui lessons.Strings, lang string) {
	f.PromptsLabel = ui.Get(lessons.KeyBatchPrompts, lang)
	f.PromptLabel = ui.Get(lessons.KeyPrompt, lang)
	f.MaxNewLabel = "max_new_tokens"
	f.Run = ui.Get(lessons.KeyRunAgain, lang)
	f.Lang = lang
}

// idViews writes ids for the page; ids from start on are new.
func idViews(ids []int, start int) []view.IDView {
	out := make([]view.IDView, len(ids))
	for i, id := range ids {
		out[i] = view.IDView{ID: strconv.Itoa(id), New: i >= start}
	}
	return out
}

// batchRows shows each row of a batch with its pads, its new ids and its
// text; junk marks the rows whose new text differs from the reference run's.
func batchRows(t *trace.Trace, ref *trace.Trace) []view.SeqRowView {
	var out []view.SeqRowView
	for r, seq := range t.Output.Sequences {
		row := view.SeqRowView{}
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

// usesRealModel reports whether a step runs a real model.
func usesRealModel(st *lessons.Step) bool {
	return len(st.Runs) > 0 && st.Runs[0].Model == lessons.ModelReal
}

// pickerView builds the model picker: want is the model asked for (?model=).
func pickerView(ui lessons.Strings, choices []lessonChoice, want, lang string) *view.LessonPickerView {
	v := &view.LessonPickerView{Label: ui.Get(lessons.KeyLessonModel, lang), Use: ui.Get(lessons.KeyUseModel, lang), Lang: lang}
	for _, c := range choices {
		if v.Chosen == "" && c.model != nil {
			v.Chosen = c.Name
		}
		if c.Name == want && c.model != nil {
			v.Chosen = want
		}
	}
	for _, c := range choices {
		o := view.PickerOptionView{Name: c.Name, Label: c.Label, Disabled: c.model == nil, Selected: c.Name == v.Chosen}
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
