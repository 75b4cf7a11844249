package lessons

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/toy"
	"tracer/trace"
)

// problems collects what is wrong with lessons, each with where it is.
type problems struct{ errs []error }

func (p *problems) add(where, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
}

func (p *problems) err() error { return errors.Join(p.errs...) }

// Validate checks the whole catalog: every lesson (see Lesson.Validate),
// unique lesson ids, every page string of the Key constants in every
// language with the same placeholders, and the downloads.
func (c *Catalog) Validate() error {
	var p problems
	if len(c.Lessons) == 0 {
		p.add("catalog", "no lessons")
	}
	seen := map[string]bool{}
	for i := range c.Lessons {
		l := &c.Lessons[i]
		if seen[l.ID] {
			p.add("lesson "+l.ID, "the id is used twice")
		}
		seen[l.ID] = true
		l.validate(&p)
	}
	if err := c.UI.Check("ui", uiKeys()); err != nil {
		p.errs = append(p.errs, err)
	}
	for i, d := range c.Downloads {
		where := fmt.Sprintf("download %d (%s)", i+1, d.Name)
		if strings.TrimSpace(d.Name) == "" || !strings.HasPrefix(d.Command, "tracer pull ") {
			p.add(where, "want a name and a `tracer pull` command")
		}
		checkText(&p, where+": about", d.About)
	}
	return p.err()
}

// Check wants exactly the given keys in s (where names the catalog in
// errors: "ui"), each with text in every language and, in every language,
// the placeholders of its English text. The lessons check their own page
// wording with it, and web its debugger's.
func (s Strings) Check(where string, keys []string) error {
	var p problems
	for _, k := range keys {
		if _, ok := s[k]; !ok {
			p.add(where, "no text for key %q", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		t := s[k]
		kw := fmt.Sprintf("%s %q", where, k)
		if !slices.Contains(keys, k) {
			p.add(kw, "not a key the page uses (see the Key constants)")
		}
		checkText(&p, kw, t)
		want := placeholders(t[English])
		for _, lang := range Languages()[1:] {
			if got := placeholders(t[lang]); t[lang] != "" && !slices.Equal(got, want) {
				p.add(kw, "%s has placeholders %v, English %v", lang, got, want)
			}
		}
	}
	return p.err()
}

// Validate checks a lesson: ids are unique and URL-safe, every title,
// paragraph, label, question, option and feedback has text in every
// language, and every step is consistent: its runs' settings resolve
// (toy runs against the toy, real ones against any model), its At fits
// its runs, its highlights are known names with runs to point at, its
// listings mirror their runs, and each question has exactly one right
// option.
func (l *Lesson) Validate() error {
	var p problems
	l.validate(&p)
	return p.err()
}

var slug = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func checkID(p *problems, where, id string) {
	if !slug.MatchString(id) {
		p.add(where, "id %q: want lowercase letters, digits and dashes (it goes in URLs)", id)
	}
}

// idSet holds the ids of one list of siblings (a lesson's steps, a step's
// runs or questions), which must differ.
type idSet map[string]bool

// place is where the thing of this kind and id stands inside where
// ("lesson x, step y"); it notes a problem there when a sibling has the id.
func (seen idSet) place(p *problems, where, kind, id string) string {
	at := fmt.Sprintf("%s, %s %s", where, kind, id)
	if seen[id] {
		p.add(at, "the id is used twice")
	}
	seen[id] = true
	return at
}

func (l *Lesson) validate(p *problems) {
	where := "lesson " + l.ID
	checkID(p, where, l.ID)
	checkText(p, where+": title", l.Title)
	checkText(p, where+": summary", l.Summary)
	if len(l.Steps) == 0 {
		p.add(where, "no steps")
	}
	steps := idSet{}
	for i := range l.Steps {
		s := &l.Steps[i]
		s.validate(p, steps.place(p, where, "step", s.ID))
	}
}

func (s *Step) validate(p *problems, where string) {
	checkID(p, where, s.ID)
	checkText(p, where+": title", s.Title)
	checkParagraphs(p, where+": text", s.Text)
	runs := idSet{}
	for i := range s.Runs {
		r := &s.Runs[i]
		rw := runs.place(p, where, "run", r.ID)
		if len(s.Runs) > 1 || len(r.Label) > 0 {
			checkText(p, rw+": label", r.Label)
		}
		r.validate(p, rw)
	}
	s.validateAt(p, where)
	seen := map[string]bool{}
	for _, h := range s.Highlight {
		if seen[h] {
			p.add(where, "highlight %q is listed twice", h)
		}
		seen[h] = true
		s.validateHighlight(p, where, h)
	}
	if s.SameOutput && len(s.Runs) < 2 {
		p.add(where, "same_output needs at least two runs to compare")
	}
	for i := range s.Code {
		s.validateCode(p, fmt.Sprintf("%s, code %d", where, i+1), &s.Code[i])
	}
	questions := idSet{}
	for i := range s.Questions {
		q := &s.Questions[i]
		q.validate(p, questions.place(p, where, "question", q.ID))
	}
}

func (s *Step) validateAt(p *problems, where string) {
	switch s.At.Kind {
	case AtNone:
		if len(s.Runs) > 0 {
			p.add(where, "the step has runs but no \"at\": say what part of them it shows")
		}
		return
	case AtBefore, AtStep, AtEachStep, AtEnd, AtMoment, AtEachMoment:
	default:
		p.add(where, "at %q is not a place in a run", s.At)
		return
	}
	if len(s.Runs) == 0 {
		p.add(where, "at %s needs a run", s.At)
	}
	for _, r := range s.Runs {
		switch {
		case (s.At.Kind == AtMoment || s.At.Kind == AtEachMoment) && (r.Model != ModelToy || len(r.Prompts) > 1):
			p.add(where, "at %s: the walkthrough's moments exist for single-prompt toy runs only (run %s)", s.At, r.ID)
		case s.At.Kind == AtStep:
			if n, ok := intOption(r.Options, "max_new_tokens"); ok && s.At.Index >= n {
				p.add(where, "at %s: run %s makes at most %d steps", s.At, r.ID, n)
			}
		}
	}
}

func (s *Step) validateHighlight(p *problems, where, name string) {
	h, err := lookupHighlight(name)
	if err != nil {
		p.add(where, "%v", err)
		return
	}
	if h.Needs&NeedMoment != 0 && s.At.Kind != AtMoment && s.At.Kind != AtEachMoment {
		p.add(where, "highlight %q needs at moment:N or each-moment, got %q", name, s.At)
	}
	stage, isStage := strings.CutPrefix(name, "stage:")
	fits := func(r *Run) bool {
		n := h.Needs
		switch {
		case n&NeedToy != 0 && r.Model != ModelToy,
			n&NeedReal != 0 && r.Model != ModelReal,
			n&NeedBatch != 0 && len(r.Prompts) < 2,
			n&NeedSingle != 0 && len(r.Prompts) > 1,
			n&NeedSampled != 0 && r.Options.Get("do_sample") != "true":
			return false
		}
		if isStage {
			if opt := stageOption(stage); opt != "" && r.Options.Get(opt) == "" {
				return false
			}
			if stage != "repetition_penalty" && stage != "min_new_tokens" && r.Options.Get("do_sample") != "true" {
				return false
			}
		}
		return true
	}
	if !slices.ContainsFunc(s.Runs, func(r Run) bool { return fits(&r) }) {
		p.add(where, "highlight %q: no run of the step has it to show (it needs %s)", name, needText(h.Needs, isStage))
	}
}

// needText says in words what a highlight needs.
func needText(n Need, stage bool) string {
	var parts []string
	for _, x := range []struct {
		n    Need
		text string
	}{{NeedToy, "a toy run"}, {NeedReal, "a real run"}, {NeedBatch, "a batch"}, {NeedSingle, "a single prompt"}, {NeedSampled, "do_sample true"}, {NeedMoment, "a moment"}} {
		if n&x.n != 0 {
			parts = append(parts, x.text)
		}
	}
	if stage {
		parts = append(parts, "a run whose settings put that processor in the pipeline")
	}
	if len(parts) == 0 {
		return "a run"
	}
	return strings.Join(parts, ", ")
}

func (s *Step) validateCode(p *problems, where string, c *Code) {
	if c.Lang != "python" && c.Lang != "sh" {
		p.add(where, "lang %q: want python or sh", c.Lang)
	}
	checkText(p, where+": title", c.Title)
	if len(c.Lines) == 0 {
		p.add(where, "no lines")
	}
	if c.Mirrors == nil {
		return
	}
	if *c.Mirrors < 0 || *c.Mirrors >= len(s.Runs) {
		p.add(where, "mirrors run %d, but the step has %d runs", *c.Mirrors, len(s.Runs))
		return
	}
	r := &s.Runs[*c.Mirrors]
	src := c.Source()
	for _, prompt := range r.Prompts {
		if !strings.Contains(src, prompt) {
			p.add(where, "mirrors run %s but does not hold its prompt %q", r.ID, prompt)
		}
	}
	if c.Lang != "python" {
		return
	}
	for _, o := range r.Options {
		want := o.Name + "=" + pyValue(o.Value)
		if o.Name == "seed" {
			want = "manual_seed(" + o.Value + ")"
		}
		if !strings.Contains(src, want) {
			p.add(where, "mirrors run %s but does not say %s", r.ID, want)
		}
	}
}

// pyValue writes a JSON scalar as Python does.
func pyValue(v string) string {
	switch v {
	case "true":
		return "True"
	case "false":
		return "False"
	case "null":
		return "None"
	}
	return v
}

func (q *Question) validate(p *problems, where string) {
	checkID(p, where, q.ID)
	checkText(p, where, q.Question)
	if len(q.Options) < 2 {
		p.add(where, "a question needs at least two options, got %d", len(q.Options))
	}
	correct := 0
	ids := map[string]bool{}
	for i, o := range q.Options {
		ow := fmt.Sprintf("%s, option %d (%s)", where, i+1, o.ID)
		checkID(p, ow, o.ID)
		if ids[o.ID] {
			p.add(ow, "the id is used twice")
		}
		ids[o.ID] = true
		checkText(p, ow+": text", o.Text)
		checkText(p, ow+": feedback", o.Feedback)
		if o.Correct {
			correct++
		}
	}
	if correct != 1 {
		p.add(where, "want exactly one correct option, got %d", correct)
	}
}

// validate checks a run on its own: kind, prompts, padding, and settings
// that resolve (on the toy for a toy run; for a real run, against a model
// with a large vocabulary, since any model may run it).
func (r *Run) validate(p *problems, where string) {
	checkID(p, where, r.ID)
	switch r.Model {
	case ModelToy:
		if r.Suggest != "" {
			p.add(where, "suggest %q: only a real run suggests a model", r.Suggest)
		}
	case ModelReal:
	default:
		p.add(where, "model %q: want toy or real", r.Model)
	}
	for _, prompt := range r.Prompts {
		if strings.TrimSpace(prompt) == "" {
			p.add(where, "an empty prompt: leave prompts out to start from BOS")
		}
	}
	switch {
	case r.Padding != "" && r.Padding != "left" && r.Padding != "right":
		p.add(where, "padding %q: want left or right", r.Padding)
	case r.Padding != "" && len(r.Prompts) < 2:
		p.add(where, "padding %q: only a batch of prompts is padded", r.Padding)
	}
	if r.Quantize != "" {
		if _, err := arch.ParseQuantize(r.Quantize); err != nil {
			p.add(where, "%v", err)
		} else if r.Model != ModelReal {
			p.add(where, "quantize %q: only a real model's weights are quantized", r.Quantize)
		}
	}
	if r.ExpectStop != "" && !slices.Contains(trace.StopReasons(), r.ExpectStop) {
		p.add(where, "expect_stop %q is not a stop reason (want one of %s)", r.ExpectStop, strings.Join(trace.StopReasons(), ", "))
	}
	user, err := r.Settings()
	if err != nil {
		p.add(where, "%v", err)
		return
	}
	info := engine.Info{Name: "any model", VocabSize: 1 << 20, BOS: -1, PAD: -1}
	var model *engine.Settings
	if r.Model == ModelToy {
		m := toy.New(toy.Lesson())
		info, model = m.Info(), m.GenerationConfig()
		for _, prompt := range r.Prompts {
			if _, err := m.Encode(prompt, true); err != nil {
				p.add(where, "%v", err)
			}
		}
	}
	if _, _, err := engine.Resolve(info, model, user); err != nil {
		p.add(where, "%v", err)
	}
}

// intOption returns an integer option's value.
func intOption(o Options, name string) (int, bool) {
	var n int
	if _, err := fmt.Sscanf(o.Get(name), "%d", &n); err != nil {
		return 0, false
	}
	return n, true
}

// checkText wants non-blank text in every language, nothing in languages
// the lessons do not have, and balanced `code` marks.
func checkText(p *problems, where string, t Text) {
	for _, lang := range Languages() {
		if strings.TrimSpace(t[lang]) == "" {
			p.add(where, "no %s text", langName(lang))
		}
	}
	for lang, s := range t {
		if !slices.Contains(Languages(), lang) {
			p.add(where, "language %q is not one of %v", lang, Languages())
		}
		if strings.Count(s, "`")%2 != 0 {
			p.add(where, "%s: a ` without its pair", lang)
		}
	}
}

// checkParagraphs wants every language to have as many paragraphs as
// English, none of them blank.
func checkParagraphs(p *problems, where string, ps Paragraphs) {
	n := len(ps[English])
	if n == 0 {
		p.add(where, "no %s paragraphs", langName(English))
	}
	for _, lang := range Languages() {
		if len(ps[lang]) != n {
			p.add(where, "%d %s paragraphs, %d English ones", len(ps[lang]), langName(lang), n)
		}
		for i, s := range ps[lang] {
			if strings.TrimSpace(s) == "" {
				p.add(where, "%s paragraph %d is blank", langName(lang), i+1)
			}
			if strings.Count(s, "`")%2 != 0 {
				p.add(where, "%s paragraph %d: a ` without its pair", langName(lang), i+1)
			}
		}
	}
	for lang := range ps {
		if !slices.Contains(Languages(), lang) {
			p.add(where, "language %q is not one of %v", lang, Languages())
		}
	}
}

// langName names a language code in an error message.
func langName(lang string) string {
	switch lang {
	case English:
		return "English (en)"
	case Hindi:
		return "Hindi (hi)"
	}
	return lang
}

var placeholder = regexp.MustCompile(`\{[a-z]+\}`)

// placeholders returns the {name}s of a text, sorted.
func placeholders(s string) []string {
	found := placeholder.FindAllString(s, -1)
	slices.Sort(found)
	return slices.Compact(found)
}
