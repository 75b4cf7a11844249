package lessons

import (
	"strings"
)

// The languages lessons are written in, as the keys of Text and Paragraphs.
const (
	English = "en"
	Hindi   = "hi"
)

// Languages returns the languages every text of the lessons exists in,
// English first: it is the fallback of Text.In.
func Languages() []string { return []string{English, Hindi} }

// Text is one piece of wording in every language: language code → text.
// In running text, `backticks` mark code (token names, options, calls),
// which a page may set in a code font.
type Text map[string]string

// In returns the text in lang, or the English text when lang has none.
func (t Text) In(lang string) string {
	if s := t[lang]; s != "" {
		return s
	}
	return t[English]
}

// Paragraphs is wording made of paragraphs, in every language: language
// code → paragraphs. Every language has as many paragraphs as English, so a
// page may show them side by side.
type Paragraphs map[string][]string

// In returns the paragraphs in lang, or the English ones when lang has none.
func (p Paragraphs) In(lang string) []string {
	if ps := p[lang]; len(ps) > 0 {
		return ps
	}
	return p[English]
}

// Catalog is everything the lesson pages need: the lessons in order, the
// page's own wording, and the models a learner may download.
type Catalog struct {
	Lessons   []Lesson   `json:"lessons"`
	UI        Strings    `json:"ui"`        // the page's labels and messages, by key (see the Key constants)
	Downloads []Download `json:"downloads"` // real models worth downloading, smallest first
}

// Lesson returns the lesson with the id, or nil.
func (c *Catalog) Lesson(id string) *Lesson {
	for i := range c.Lessons {
		if c.Lessons[i].ID == id {
			return &c.Lessons[i]
		}
	}
	return nil
}

// Lesson is one lesson: a titled sequence of steps. Its number is its
// 1-based place in Catalog.Lessons.
type Lesson struct {
	ID      string `json:"id"` // stable, URL-safe: /lessons/{lesson}/{step}
	Title   Text   `json:"title"`
	Summary Text   `json:"summary"` // one sentence for the list of lessons
	Steps   []Step `json:"steps"`
}

// Step returns the step with the id, or nil.
func (l *Lesson) Step(id string) *Step {
	if i := l.Index(id); i >= 0 {
		return &l.Steps[i]
	}
	return nil
}

// Index returns the position of the step with the id in l.Steps, or -1.
// The steps before and after it are the page's Previous and Next.
func (l *Lesson) Index(stepID string) int {
	for i := range l.Steps {
		if l.Steps[i].ID == stepID {
			return i
		}
	}
	return -1
}

// Step is one page of a lesson: text to read, the runs it drives, where in
// those runs to look and what to highlight there.
type Step struct {
	ID    string     `json:"id"` // stable within the lesson, URL-safe
	Title Text       `json:"title"`
	Text  Paragraphs `json:"text"`

	// Runs are the generations the step shows: none for a step of pure
	// text, one, or several side by side for a comparison (cache on and
	// off, left and right padding, ...).
	Runs []Run `json:"runs,omitempty"`
	// At is the place in every run the step shows.
	At At `json:"at,omitzero"`
	// Highlight names the page elements to draw the eye to; see
	// HighlightNames for the closed set.
	Highlight []string `json:"highlight,omitempty"`
	// SameOutput says that every run of the step generates the same new
	// tokens (the cache changes the cost of a run, not its result); a page
	// may check it on the traces and say so.
	SameOutput bool `json:"same_output,omitempty"`

	Code      []Code     `json:"code,omitempty"`      // listings to read beside the runs
	Questions []Question `json:"questions,omitempty"` // a quiz, answered on the page
}

// Moment returns the index of the toy walkthrough's moment the step shows
// (At "moment:N"), and whether it shows one.
func (s *Step) Moment() (int, bool) {
	if s.At.Kind == AtMoment {
		return s.At.Index, true
	}
	return 0, false
}

// Highlights reports whether the step highlights the named element.
func (s *Step) Highlights(name string) bool {
	for _, h := range s.Highlight {
		if h == name {
			return true
		}
	}
	return false
}

// Code is a listing shown beside a step: the same thing done with
// transformers, or with tracer's command line.
type Code struct {
	Lang  string   `json:"lang"` // "python" or "sh"
	Title Text     `json:"title"`
	Lines []string `json:"lines"`
	// Mirrors, when set, is the index of the step's run the listing does
	// the same as: its prompt and settings appear in the listing.
	Mirrors *int `json:"mirrors,omitempty"`
}

// Source returns the listing as one text, a newline after every line.
func (c *Code) Source() string { return strings.Join(c.Lines, "\n") + "\n" }

// Question is one quiz question with its options, exactly one of them
// right. The page shows an option's feedback once it is chosen.
type Question struct {
	ID       string   `json:"id"`
	Question Text     `json:"question"`
	Options  []Option `json:"options"`
}

// Correct returns the index of the right option, or -1 when the question
// has none (Validate rejects such a question).
func (q *Question) Correct() int {
	for i, o := range q.Options {
		if o.Correct {
			return i
		}
	}
	return -1
}

// Option is one answer of a question, with what the page says when it is
// chosen.
type Option struct {
	ID       string `json:"id"`
	Text     Text   `json:"text"`
	Feedback Text   `json:"feedback"`
	Correct  bool   `json:"correct,omitempty"`
}

// Download is a real model a learner may fetch for the lessons that need
// one.
type Download struct {
	Name    string `json:"name"`    // e.g. "HuggingFaceTB/SmolLM2-135M-Instruct"
	Command string `json:"command"` // the tracer command that fetches it
	About   Text   `json:"about"`   // what it is and which lesson it suits
}
