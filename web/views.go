package web

// View models: plain data shaped like the page. Components render only
// these; stepperView and its helpers translate traces and walkthroughs into
// them.

// PageView is the whole page.
type PageView struct {
	SessionID     string
	CSS, JS, Icon string // asset URLs
	ImportURL     string
	ExportURL     string
	WebSocketPath string
	MaxImport     string // "16 MiB"
	Error         string // shown above the stepper, e.g. a failed import
	Stepper       StepperView
}

// StepperView is the part of the page that changes as the learner steps:
// the WebSocket sends it as a fragment.
type StepperView struct {
	Source     string // "run of toy, greedy", "imported trace.json"
	ModelName  string
	Notices    []string
	Index      int    // position, 0-based
	Count      int    // positions in all
	Position   string // "Moment 3 of 10", "Step 2 of 4"
	Title      string // the moment's title, e.g. "pick love"
	AtStart    bool
	AtEnd      bool
	Step       StepView
	Toy        *ToyView // nil when the trace is not narrated
	Output     string   // the printed text, shown at the end
	ShowOutput bool
	StopReason string
}

// StepView is one step of the trace: what the model saw, its candidates and
// the choice. Present is false for moments outside any step.
type StepView struct {
	Present    bool
	Number     int    // 1-based step number
	Of         int    // steps in the trace
	Label      string // "Tokens" or "Context"
	Tokens     []TokenView
	Candidates []CandidateView
	Chosen     TokenView
	ChosenProb string
	By         string // "greedy", "sampled", ...
	Draw       string // where a sampled step's draw fell
	Note       string // for moments without a step, or batches
}

// TokenView is one token as a chip.
type TokenView struct {
	Text    string
	Special bool // a marker such as <s> or </s>
}

// CandidateView is one candidate with its probability bar.
type CandidateView struct {
	Token  string
	Prob   string // "0.9"
	Width  string // the bar's CSS width, "90.0%"
	Chosen bool
}

// ToyView is the narrated side of a toy trace: the table, the listing and
// what the current moment says.
type ToyView struct {
	Rows       []TableRowView
	Lines      []CodeLineView
	Annotation string
}

// TableRowView is one row of the bigram table.
type TableRowView struct {
	Word   string
	Active bool
	Cells  []TableCellView
}

// TableCellView is one next word of a row with its probability.
type TableCellView struct {
	Word   string
	Prob   string
	Active bool
}

// CodeLineView is one line of the Python listing.
type CodeLineView struct {
	Number int
	Text   string
	Active bool
}
