// Package lessonpage serves the lessons' pages (/lessons): the lessons'
// text beside the figures their runs draw (the toy's bigram table, real
// models, padding, sampling stages, the KV cache's cost), generated on
// demand within the debugger's generation slots and kept in a small cache,
// and the links that open a lesson's run in the debugger. It imports
// web/runs, web/view and web/words; only web uses it.
package lessonpage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/models"
	"tracer/lessons"
	"tracer/toy"
	"tracer/trace"
	"tracer/web/runs"
	"tracer/web/view"
	"tracer/web/words"
)

// Limits on the lesson pages' generations.
const (
	lessonCacheSize = 64  // generations kept in memory, oldest dropped first
	lessonMaxNew    = 256 // the most new tokens a lesson form may ask for
	lessonMaxPrompt = 200 // the longest prompt a lesson form may send, in bytes
	lessonMaxRows   = 4   // the most prompts of a batch form
)

// Pages serves /lessons: the lessons' text beside the runs they drive,
// generated on demand and kept in a small cache.
type Pages struct {
	*runs.Runner                     // the pages' generations share the debugger's slots
	book         *words.Book         // the debugger's words (the lessons carry their own)
	asset        func(string) string // a static file's URL
	Cat          *lessons.Catalog
	toy          func() (*models.Loaded, error) // models.Open("toy"), once

	mu    sync.Mutex
	cache *runs.FIFO[*trace.Trace] // by lessonKey, the newest lessonCacheSize
}

func New(rn *runs.Runner, book *words.Book, asset func(string) string) (*Pages, error) {
	cat, err := lessons.Load()
	if err != nil {
		return nil, err
	}
	return &Pages{
		Runner: rn, book: book, asset: asset,
		Cat:   cat,
		toy:   sync.OnceValues(func() (*models.Loaded, error) { return models.Open("toy") }),
		cache: runs.NewFIFO[*trace.Trace](lessonCacheSize),
	}, nil
}

// get returns the cached trace of key, if any.
func (p *Pages) get(key string) (*trace.Trace, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cache.Get(key)
}

// put keeps a trace, dropping the oldest beyond lessonCacheSize.
func (p *Pages) put(key string, t *trace.Trace) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cache.Put(key, t)
}

// Lang returns the page's language: ?lang= when it names one of the
// lessons' languages, else English.
func Lang(r *http.Request) string {
	if l := r.URL.Query().Get("lang"); slices.Contains(lessons.Languages(), l) {
		return l
	}
	return lessons.English
}

// ErrNotFound: no such lesson or step.
var ErrNotFound = errors.New("no such lesson or step")

// Index is the list of lessons in lang.
func (s *Pages) Index(lang string) view.LessonIndexView {
	return indexView(s.Cat, lang, s.lessonHead(lang, "/lessons"))
}

// StepPage is one step of a lesson, its runs generated: the page at r's
// path /lessons/{lesson}/{step}, with r's form and model choice. It is
// errNotFound for no such lesson or step, another error for a bad form.
func (s *Pages) StepPage(r *http.Request) (view.LessonStepView, error) {
	lang := Lang(r)
	l := s.Cat.Lesson(r.PathValue("lesson"))
	if l == nil {
		return view.LessonStepView{}, ErrNotFound
	}
	i := l.Index(r.PathValue("step"))
	if i < 0 {
		return view.LessonStepView{}, ErrNotFound
	}
	in, err := readLessonInput(r, l, &l.Steps[i])
	if err != nil {
		return view.LessonStepView{}, err
	}
	v := stepPageView(s.Cat, l, i, lang, s.lessonHead(lang, r.URL.Path))
	if in.form != nil {
		formLabels(in.form, s.Cat.UI, lang)
		v.Form = in.form
	}
	want := r.URL.Query().Get("model")
	var choices []lessonChoice
	if usesRealModel(&l.Steps[i]) {
		choices = s.lessonChoices(lang)
		if len(choices) > 0 {
			v.Picker = pickerView(s.Cat.UI, choices, want, lang)
			if in.form != nil {
				in.form.Model = v.Picker.Chosen
			}
		}
	}
	v.Figure = s.lessonFigure(r.Context(), l, &l.Steps[i], in, lang, want, choices)
	return v, nil
}

// lessonHead is what every lesson page's head and top bar need.
func (s *Pages) lessonHead(lang, path string) view.LessonHeadView {
	ui := s.Cat.UI
	h := view.LessonHeadView{
		Lang: lang, CSS: s.asset("style.css"), JS: s.asset("lessons.js"),
		Icon: s.asset("favicon.svg"), Lessons: ui.Get(lessons.KeyLessons, lang),
		IndexURL: "/lessons" + view.LangQuery(lang), Debugger: ui.Get(lessons.KeyDebugger, lang),
		LanguageLabel: ui.Get(lessons.KeyLanguage, lang),
	}
	for _, l := range lessons.Languages() {
		h.Langs = append(h.Langs, view.LangLinkView{
			Code: l, Name: ui.Get("lang-"+l, l), URL: path + "?lang=" + l, Current: l == lang,
		})
	}
	return h
}

// lessonInput is what the learner changed on a step's form: the batch's
// prompts (lesson 7), or the prompt and max_new_tokens (lesson 8).
type lessonInput struct {
	prompts []string // nil: the lesson's own
	maxNew  int      // 0: the lesson's own
	form    *view.LessonFormView
}

// readLessonInput reads the step's form from the query, when the step has
// one: a step whose runs are real and batched takes prompts; a step of the
// memory-bound lesson takes a prompt and max_new_tokens.
func readLessonInput(r *http.Request, l *lessons.Lesson, st *lessons.Step) (lessonInput, error) {
	var in lessonInput
	if len(st.Runs) == 0 || st.Runs[0].Model != lessons.ModelReal {
		return in, nil
	}
	run := st.Runs[0]
	q := r.URL.Query()
	batch := len(run.Prompts) > 1
	if !batch && l.ID != "memory-bound" {
		return in, nil
	}
	f := &view.LessonFormView{Batch: batch, Prompts: strings.Join(run.Prompts, "\n")}
	if v := q.Get("prompts"); v != "" {
		for _, p := range strings.Split(strings.ReplaceAll(v, "\r\n", "\n"), "\n") {
			if p = strings.TrimSpace(p); p != "" {
				in.prompts = append(in.prompts, p)
			}
		}
		switch {
		case batch && (len(in.prompts) < 2 || len(in.prompts) > lessonMaxRows):
			return in, fmt.Errorf("want 2 to %d prompts, one per line, for a batch; got %d", lessonMaxRows, len(in.prompts))
		case !batch && len(in.prompts) != 1:
			return in, fmt.Errorf("want one prompt, got %d", len(in.prompts))
		case slices.ContainsFunc(in.prompts, func(p string) bool { return len(p) > lessonMaxPrompt }):
			return in, fmt.Errorf("a prompt is longer than %d bytes", lessonMaxPrompt)
		}
		f.Prompts = strings.Join(in.prompts, "\n")
	}
	f.MaxNew = run.Options.Get("max_new_tokens")
	if v := q.Get("max_new_tokens"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > lessonMaxNew {
			return in, fmt.Errorf("max_new_tokens %q: want a whole number from 1 to %d", v, lessonMaxNew)
		}
		in.maxNew, f.MaxNew = n, v
	}
	in.form = f
	return in, nil
}

// apply returns the run with the learner's input in place of the lesson's.
func (in lessonInput) apply(run lessons.Run) lessons.Run {
	if in.prompts != nil {
		run.Prompts = in.prompts
	}
	if in.maxNew > 0 {
		opts := slices.DeleteFunc(slices.Clone(run.Options), func(o lessons.Setting) bool { return o.Name == "max_new_tokens" })
		run.Options = append(lessons.Options{{Name: "max_new_tokens", Value: strconv.Itoa(in.maxNew)}}, opts...)
	}
	return run
}

// lessonChoice is a model of the server's catalog as the lessons see it:
// whether it can run their real runs, and why not.
type lessonChoice struct {
	Name   string // the catalog's name: what ?model= and the debugger's link carry
	Label  string
	Reason string // "" when the model can run the lessons: else why not ("no tokenizer")
	model  *models.Loaded
}

// lessonChoices lists the real models of the catalog, each with whether it
// can run the lessons: it must open, and have a tokenizer, since every
// lesson's prompt is text.
func (s *Pages) lessonChoices(lang string) []lessonChoice {
	ui := s.Cat.UI
	var out []lessonChoice
	for _, e := range s.Catalog.List() {
		if e.Name == "toy" {
			continue
		}
		c := lessonChoice{Name: e.Name, Label: e.Label}
		m, err := s.Catalog.Open(e.Name)
		switch {
		case err != nil:
			c.Reason = ui.Get(lessons.KeyModelNotOpen, lang)
		case !lessons.ModelReal.Fits(m):
			continue // a toy table of the models folder
		case m.Tokenizer == nil:
			c.Reason = ui.Get(lessons.KeyModelNoTokenizer, lang)
		default:
			c.model = m
		}
		out = append(out, c)
	}
	return out
}

// lessonModel returns the model a run asks for: the toy, or the real model
// the learner chose (want, a catalog name) when it can run the lessons,
// else the first that can. It returns the model's catalog name, and nil
// when no model can run the lesson.
func (s *Pages) lessonModel(kind lessons.ModelKind, want string, choices []lessonChoice) (string, *models.Loaded, error) {
	if kind == lessons.ModelToy {
		m, err := s.toy()
		return "toy", m, err
	}
	first := slices.IndexFunc(choices, func(c lessonChoice) bool { return c.model != nil })
	if first < 0 {
		return "", nil, nil
	}
	if i := slices.IndexFunc(choices, func(c lessonChoice) bool { return c.Name == want && c.model != nil }); i >= 0 {
		first = i
	}
	return choices[first].Name, choices[first].model, nil
}

// lessonTrace generates a run of a step, or returns it from the cache.
func (s *Pages) lessonTrace(ctx context.Context, key string, run lessons.Run, m *models.Loaded) (*trace.Trace, error) {
	if t, ok := s.get(key); ok {
		return t, nil
	}
	req, err := run.Request(m)
	if err != nil {
		return nil, err
	}
	select {
	case s.Slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t, err := engine.Generate(ctx, req)
	<-s.Slots
	if err != nil {
		return nil, fmt.Errorf("run %q: %w", run.ID, err)
	}
	s.put(key, t)
	return t, nil
}

// lessonFigure generates the step's runs and shows what the step points at;
// nil for a step of text only. want is the real model the learner chose.
func (s *Pages) lessonFigure(ctx context.Context, l *lessons.Lesson, st *lessons.Step, in lessonInput, lang, want string, choices []lessonChoice) *view.FigureView {
	if len(st.Runs) == 0 {
		return nil
	}
	ui := s.Cat.UI
	name, m, err := s.lessonModel(st.Runs[0].Model, want, choices)
	if err != nil {
		return &view.FigureView{Error: s.PageError(err)}
	}
	if m == nil && len(choices) > 0 {
		return &view.FigureView{NoModel: textParts(ui.Get(lessons.KeyNoRunnableModel, lang))}
	}
	if m == nil {
		return &view.FigureView{NoModel: textParts(ui.Get(lessons.KeyNoRealModel, lang))}
	}
	var traces []*trace.Trace
	var runs []lessons.Run
	for _, run := range st.Runs {
		run = in.apply(run)
		runs = append(runs, run)
		key := strings.Join([]string{l.ID, st.ID, run.ID, name, run.Quantize, strings.Join(run.Prompts, "\x00"), fmt.Sprint(in.maxNew)}, "\x01")
		rm := m
		if run.Quantize != "" { // the same weights, quantized as they load (a copy the catalog keeps)
			q, err := arch.ParseQuantize(run.Quantize)
			if err == nil {
				rm, err = s.Catalog.OpenQuantized(name, q)
			}
			if err != nil {
				return &view.FigureView{Error: s.PageError(err)}
			}
		}
		t, err := s.lessonTrace(ctx, key, run, rm)
		if err != nil {
			return &view.FigureView{Error: s.PageError(err)}
		}
		traces = append(traces, t)
	}
	var f *view.FigureView
	if mi, ok := st.Moment(); ok || st.At.Kind == lessons.AtBefore && toy.Of(m) != nil {
		f = s.momentFigure(traces[0], m, st, mi, ok, lang)
	} else {
		f = runsFigure(s.book.In(lang), ui, st, runs, name, traces, lang, m.Tokenizer)
		f.Inside = s.lessonInside(ctx, strings.Join([]string{l.ID, st.ID, runs[0].ID, name, strings.Join(runs[0].Prompts, "\x00"), fmt.Sprint(in.maxNew)}, "\x01"), st, runs[0], m, lang)
	}
	f.Open = ui.Get(lessons.KeyOpenInDebugger, lang)
	pos := FigureStep(st)
	for i := range f.Runs {
		f.Runs[i].Link, _ = debuggerLink(name, runs[i], pos, lang)
	}
	if f.Moment != nil {
		f.Moment.Link, _ = debuggerLink(name, runs[0], pos, lang)
		f.Moment.NewIDList = NewIDList(traces[0])
	}
	if len(runs) > 1 {
		if link, err := compareLink(name, runs, pos, lang); err == nil {
			f.CompareLink, f.CompareOpen = link, ui.Get(lessons.KeyCompareInDebugger, lang)
		}
	}
	return f
}

// FigureStep is the debugger's stepper position that shows what the step
// points at: the moment or the step, else the start.
func FigureStep(st *lessons.Step) int {
	if st.At.Kind == lessons.AtStep || st.At.Kind == lessons.AtMoment {
		return st.At.Index
	}
	return 0
}

// PageError is an error as a page may show it: the server's paths become
// the catalog's names, and a model without a tokenizer says what the
// lesson page can do about it.
func (s *Pages) PageError(err error) string {
	msg := s.Catalog.Redact(err.Error())
	if errors.Is(err, models.ErrNoTokenizer) {
		msg += " (pick a model with a tokenizer)"
	}
	return msg
}

// momentFigure is the toy's walkthrough at a moment (or before the first,
// for At "before"): table, listing and token list.
func (s *Pages) momentFigure(t *trace.Trace, m *models.Loaded, st *lessons.Step, i int, isMoment bool, lang string) *view.FigureView {
	w, err := lessons.Walk(t, toy.Of(m).Table())
	if err != nil {
		return &view.FigureView{Error: err.Error()}
	}
	ui := s.Cat.UI
	f := &view.FigureView{Moment: &view.MomentView{
		TableTitle: ui.Get(lessons.KeyBigramTable, lang), ListingTitle: ui.Get(lessons.KeyPythonLoop, lang),
		TokensTitle: ui.Get(lessons.KeyTokenList, lang),
		LastWord:    ui.Get(lessons.KeyLastWord, lang), NextWord: ui.Get(lessons.KeyNextWord, lang),
	}}
	mv := f.Moment
	var mo lessons.Moment
	if isMoment && i < len(w.Moments) {
		mo = w.Moments[i]
		mv.Position = lessons.Fill(ui.Get(lessons.KeyMomentNOfTotal, lang), "n", strconv.Itoa(i+1), "total", strconv.Itoa(len(w.Moments)))
		mv.Index = i
		if lang == lessons.English { // Walk narrates in English; the step's text says it in every language
			mv.Annotation = mo.Text
		}
		mv.Tokens = runs.Chips(mo.Tokens, w.Table.BOS, w.Table.EOS)
	}
	mv.Rows = runs.TableRows(w, mo.Row, mo.Cell)
	for _, ln := range w.Listing {
		active := ln.Number == mo.Line || !isMoment && st.Highlights("code-line:"+string(ln.Role))
		mv.Lines = append(mv.Lines, view.CodeLineView{Number: ln.Number, Text: ln.Text, Active: active})
	}
	return f
}

// lessonInside shows the inside of a lesson step's first run for a step
// that highlights "attention" or "lens": the run again, recording the
// attention and lens (lesson runs name only generation options; a
// lesson's run is short and cached, so it records whatever the model's
// size), cached like the step's own traces. nil for other steps, a model
// without inside (the toy) or a failed run.
func (s *Pages) lessonInside(ctx context.Context, key string, st *lessons.Step, run lessons.Run, m *models.Loaded, lang string) *view.LessonInsideView {
	inside, forward := st.Highlights("attention") || st.Highlights("lens"), st.Highlights("forward")
	if m == nil || toy.Of(m) != nil || !inside && !forward {
		return nil
	}
	key += "\x01inside"
	t, ok := s.get(key)
	if !ok {
		req, err := run.Request(m)
		if _, ok := m.Model.(engine.InsideModel); err != nil || !ok {
			return nil
		}
		// A lesson's run is short and cached: it records whatever the model's size.
		runs.RecordShown(&req.Options, m.Model.Info())
		select {
		case s.Slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		t, err = engine.Generate(ctx, req)
		<-s.Slots
		if err != nil {
			return nil
		}
		s.put(key, t)
	}
	at := len(t.Steps) - 1
	if st.At.Kind == lessons.AtStep {
		at = min(st.At.Index, at)
	}
	w := s.book.In(lang)
	v := runs.BuildInside(t, t.Steps, at, 0, w)
	if v == nil {
		return nil
	}
	if !forward {
		v.Forward = nil
	}
	if !inside { // the forward pass alone: a layer's button still opens no panel
		v.Attention, v.Lens, v.Missing = nil, nil, nil
	}
	return &view.LessonInsideView{View: *v, W: w}
}
