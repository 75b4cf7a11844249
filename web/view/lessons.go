package view

import "tracer/web/words"

// The lesson pages' view models, the what-if panel's and the export page's.

// LessonHeadView is what every lesson page's head and top bar show.
type LessonHeadView struct {
	Lang          string // "en" or "hi": the page's language
	CSS, JS, Icon string // asset URLs
	Lessons       string // "Lessons"
	IndexURL      string // the list of lessons, in the page's language
	Debugger      string // "The debugger": the link back to /
	LanguageLabel string
	Langs         []LangLinkView
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
	// NextLessonURL and NextLesson link the last step to the next lesson's
	// first ("" after the last lesson).
	NextLessonURL, NextLesson string
}

// CodeView is a listing beside a step.
type CodeView struct {
	Title string
	Lang  string // "python" or "sh"
	Lines []CodeLineView
}

// QuizView is a step's questions.
type QuizView struct {
	Title    string // "Quick check"
	Correct  string // "Correct!"
	NotQuite string // "Not quite"
	// AnswerURL, on a classroom server, is where the page posts each
	// question's first answer for the instructor's counts; "" elsewhere:
	// the answers stay in the browser.
	AnswerURL string
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

// IDView is one token id of an output.
type IDView struct {
	ID  string
	New bool // generated, not from the prompt
	Pad bool // padding
}

// SeqRowView is one row of a batch's output.
type SeqRowView struct {
	Prompt string
	IDs    []IDView
	Text   string // the row's new text
	Junk   bool   // differs from the left-padded run
	Mask   string // the attention mask, "0 0 1 1", when the lesson looks at it
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

// FigureView is what a step shows of its runs: the toy's walkthrough at a
// moment, or the runs side by side.
type FigureView struct {
	Error   string     // the runs failed
	NoModel []TextPart // no real model: what to download
	Moment  *MomentView
	Runs    []RunColumnView
	Compare string // "same output" or "different output", for steps that compare
	Same    bool
	Labels  FigureLabels

	Inside *LessonInsideView // attention and lens, for steps that highlight them (inside.go)
	// Side is the runs step by step in one table, where the step asks to
	// find where they part ways; nil otherwise.
	Side        *SideBySideView
	Open        string // "Open in the debugger": the links' text
	CompareLink string // the runs as a comparison in the debugger; "" when they cannot be
	CompareOpen string // "Compare in the debugger"
}

// FigureLabels is the figure's wording in the page's language.
type FigureLabels struct {
	Model, PromptIDs, NewIDs, Output, StopReason, Notices, Steps, Phase, Fed,
	Chosen, Candidates, FLOPs, Bytes, Time, TimePerStep, BytesPerToken,
	Intensity, Bandwidth, Sequences, Junk, Command string
	Diverge string // the side-by-side table's heading
	Logit   string // the candidates' raw score
}

// MomentView is the toy's walkthrough at one moment: the table with the
// row and cell being read, the listing with the line that runs.
type MomentView struct {
	Position     string // "Moment 3 of 10"; "" before the first
	Index        int
	Annotation   string
	Tokens       []TokenView
	Rows         []TableRowView
	Lines        []CodeLineView
	TableTitle   string
	ListingTitle string
	TokensTitle  string
	LastWord     string // the table's column headings
	NextWord     string
	Link         string // the run in the debugger, at this moment
	NewIDList    string // what the run generated (see newIDList)
}

// RunColumnView is one run of a step.
type RunColumnView struct {
	Label      string // the run's label, or its id
	Command    string // the run as a tracer command line
	Model      string
	Link       string   // the run in the debugger, at the step the lesson points at
	NewIDList  string   // what the run generated, for tests (see newIDList)
	TraceModel string   // the model's name in the trace
	PromptIDs  []IDView // a single prompt
	NewIDs     []IDView
	Rows       []SeqRowView // a batch
	Text       string       // the new text of a single prompt
	StopReason string
	Notices    []string
	At         *AtStepView // the step At points at
	Steps      []StepRowView
	Costs      []CostView
	Extra      ColumnExtras // what the step's text points at beyond the above
}

// AtStepView is the candidates of the step a lesson points at.
type AtStepView struct {
	Title      string // "Step 1"
	Candidates []CandidateView
	Chosen     string
	Logits     []string         // each candidate's raw logit, in the order of Candidates
	Temp       *TempBarsView    // raw beside after-temperature, when the step asks
	Funnel     *StageFunnelView // tokens left after each stage, when the step asks
	Draw       string           // where the random number fell, when the step asks
}

// TempBarsView is the leading candidates' probabilities before and after
// the temperature stage, each as a bar of the same scale.
type TempBarsView struct {
	Title, Raw, After string // the heading and the two series' names
	Rows              []TempBarView
}

// TempBarView is one candidate's pair of bars.
type TempBarView struct {
	Token              string
	Raw, After         string // probabilities, written
	RawWidth, AftWidth string // CSS widths, "42.0%"
}

// StageFunnelView is how many tokens each stage of the pipeline left.
type StageFunnelView struct {
	Title string
	Rows  []StageFunnelRowView
}

// StageFunnelRowView is one stage of the funnel: its name and the tokens left,
// with a bar on a linear scale of the vocabulary.
type StageFunnelRowView struct {
	Stage string // "vocabulary", "temperature (T=0.7)", "top_k (k=20)", "final"
	Kept  int
	Text  string // "20 of 512"
	Width string // CSS width
}

// StepRowView is one step of a run, in the run's table of steps.
type StepRowView struct {
	Number             int
	Phase, Fed, Chosen string
	FLOPs, Bytes, Time string
	KV                 string // the cache after the step, when the lesson looks at it
	Active             bool   // the step At points at
	Differs            bool   // chose another token than the reference run
}

// CostView is one phase's figures (lessons.Costs).
type CostView struct {
	Phase                             string
	Steps, Tokens                     int
	FLOPs, Bytes, BytesPerToken       string
	Intensity, Bandwidth, TimePerStep string
}

// SideBySideView is two runs step by step in one table, with the step
// where they part ways marked: the first that chose different tokens, or,
// when they choose alike throughout, the first that fed the model
// differently.
type SideBySideView struct {
	Runs    []string // the two runs' labels
	Verdict string   // where they part ways, in words
	First   int      // that step's number (from 1); 0 when they never do
	Rows    []SideRowView
}

// SideRowView is one step of both runs.
type SideRowView struct {
	Number int
	Cells  []SideCellView
	First  bool // the step where the runs part ways
}

// SideCellView is one run at one step.
type SideCellView struct {
	Fed, Chosen   string
	Draw          string // "u = 0.5941" where a sampled step's random number fell
	FedDiffers    bool
	ChosenDiffers bool
}

// ColumnExtras is what a step's text points at in a run beyond its output
// and steps: the whole output row, the options with their sources, the
// model's weights, the cache, each row's first choice.
type ColumnExtras struct {
	OutputIDs      []IDView // prompt then new ids, when the text compares them
	OutputIDsLabel string
	Options        []OptionRowView // the options and where they came from
	OptionsTitle   string
	OptionLabels   [3]string // "option", "value", "source"
	ModelLine      string    // the model's parameters and bytes of weights
	ShowKV         bool      // the steps table has the cache column
	KVLabel        string
	MaskLabel      string
	RowsAt         []string // each batch row's choice at the step At points at
}

// OptionRowView is one generation option of a run.
type OptionRowView struct {
	Name, Value, Source string
	Marked              bool // the step's text names it
}

// WhatIfView is the what-if panel's outcome at a step: the candidates
// with their probabilities after the new settings, the funnel and the
// draw, and what the step would have chosen.
type WhatIfView struct {
	Step     StepView   // the candidates and the choice (no context)
	Funnel   FunnelView // the stages of the new settings
	Draw     *DrawView  // nil when the step recorded no draw
	ChosenID int        // the token the settings choose, for the branch button
	Choice   string     // "With these settings: " and the token
	Label    string     // the settings, "T=0.7 top_k=5", for the branch's label
	Notes    []string   // what is missing or assumed
}

// LessonInsideView is the inside panels of a lesson step's run, at the
// step its At points at, worded in the page's language.
type LessonInsideView struct {
	View InsideView
	W    words.Words
}

// ExportPageView is what exportPage shows.
type ExportPageView struct {
	W       words.Words
	Title   string
	CSP     string
	Icon    string // a data: URL
	Head    string // trusted: the <style> element
	Tail    string // trusted: the trace, the positions and the script
	Stepper StepperView
}
