// Package view holds the page's view models and the templ components that
// render them: what a step, a comparison, the panels, the lesson pages and
// the page show, as plain values, built by web/runs and web/lessonpage
// from the engine's traces; and the charts, drawn by web/plots and kept in
// a cache. A component takes view-model values only, never a session,
// server or run. It imports web/words, web/plots and web/static, and none
// of web/live, web/runs or web/catalog.
package view

import "tracer/web/words"

// View models: plain data shaped like the page. Components render only
// these; the builders (build.go, panels.go, compare.go, ...) translate
// traces, walkthroughs and session state into them.

// PageView is the whole page.
type PageView struct {
	SessionID     string
	CSS, JS, Icon string // asset URLs
	WhatIfJS      string // the what-if panel's script
	PanesJS       string // the toy's table-or-listing switch's script (panes.js)
	ImportURL     string
	ExportURL     string
	WebSocketPath string
	MaxImport     string // "16 MiB"
	Error         string // shown above the stepper, e.g. a failed import
	Form          FormView
	Role          string     // classroom: "instructor" or "student"; "" outside a classroom
	Class         *ClassView // the instructor's dashboard; nil on every other page
	Stepper       StepperView
	W             words.Words    // the page's wording
	Langs         []LangLinkView // the language switch
}

// FormView is the run form: the models on offer and the defaults.
type FormView struct {
	Models   []ModelOptionView
	MaxNew   string // the cap on max_new_tokens, as a hint
	Variants string // the comparison's default lines
	CanPull  bool   // the server downloads models from the Hugging Face Hub
	Locked   bool   // classroom: a student following the instructor may not run models
	// Downloads is the lessons' advice on real models to download, shown
	// when the menu holds only the toy; nil otherwise.
	Downloads []DownloadView
}

// QuantizeTypes are the types the run form offers to quantize a model's
// float weights to as it loads (arch.QuantizeTypes).
var QuantizeTypes = []string{"q8_0", "q4_0", "q4_k", "q5_k", "q6_k"}

// DownloadView is one real model worth downloading.
type DownloadView struct {
	Name, Command, About string
}

// ModelOptionView is one model of the form's menu.
type ModelOptionView struct {
	Value, Label string
	Chat         bool
}

// StepperView is the part of the page that changes as the learner steps:
// the WebSocket sends it as a fragment.
type StepperView struct {
	W          words.Words // the wording, in the page's language
	Source     string      // "run of toy, greedy", "imported trace.json"
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
	Text       OutputView    // the text so far, token by token, at every position
	Beams      *BeamTreeView // beam search's beams and hypotheses; nil without beams
	StopReason string

	Status    StatusView
	Hit       string          // the breakpoint that stopped the run-until
	Following string          // classroom: "instructor" when mirroring the instructor, "detached", or ""
	Rows      []RowTabView    // batch rows or beams to pick from; nil for one row
	Branches  *BranchTreeView // nil: no tree to show
	Panels    *PanelsView     // a real run's step in detail; nil for walkthroughs
	Compare   *CompareView    // several runs side by side; nil otherwise
	Pair      *PairView       // the toy's step beside a real run; nil when off
	Charts    *ChartsView     // nil when off or nothing to chart
}

// StatusView says whether generation runs and how it ended.
type StatusView struct {
	State string // "running", "done", "stopped", "failed", "imported"
	Text  string // "generating… 7 steps", "stopped: cancelled after 7 steps"
}

// RowTabView is one batch row (or beam) to show.
type RowTabView struct {
	Index    int
	Label    string // "row 1"
	Selected bool
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
	Branchable bool   // candidates may be clicked to branch
	Final      bool   // candidates show a final (processed) probability too
	Logits     bool   // candidates show their logits (a trace without them shows none)
	Processed  bool   // some candidate's processed logit differs from its raw one
}

// TokenView is one token as a chip.
type TokenView struct {
	Text    string
	Special bool // a marker such as <s> or </s>
	Pad     bool // padding, not attended
}

// CandidateView is one candidate with its probability bars.
type CandidateView struct {
	ID         int
	Token      string
	Prob       string // raw probability, "0.9"
	Width      string // the raw bar's CSS width, "90.0%"
	FinalProb  string // after every processor: "0.95", or "removed"
	FinalWidth string
	Logit      string // the raw logit, "12.31"
	FinalLogit string // the score after the processors, "17.59", "-inf"; "" where it equals Logit or is unknown
	Kept       bool   // survives the processors
	Chosen     bool
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

// PanelsView is one step of a real run in detail.
type PanelsView struct {
	Funnel    FunnelView
	Draw      *DrawView // nil when the step was not sampled
	Chosen    ChosenView
	KV        KVView
	Traffic   TrafficView
	Tokenizer TokenizerView

	Inside *InsideView // attention and logit lens (inside.go); nil for the toy
}

// FunnelView shows the sampling stages: how many tokens each keeps, and
// what becomes of the leading raw candidates: those that survive, and
// below them, faded, the leading ones a stage removed.
type FunnelView struct {
	Stages []StageView
	Tokens []FunnelTokenView
	Empty  string // why there are no stages ("greedy: no warpers run")
}

// StageView is one processor of the pipeline.
type StageView struct {
	Name   string // "top_k"
	Params string // "k=50"
	Kept   string // "50 of 50257"
	Width  string // kept share as a CSS width, on a linear scale
}

// FunnelTokenView is one leading raw candidate and its fate at each stage.
type FunnelTokenView struct {
	Token     string
	Rank      int // 1-based, by raw probability
	Chosen    bool
	Marks     []string // per stage: "kept", "removed" or "unknown" (outside the recorded top)
	RemovedBy string   // the first stage that removed it; "" when it survived every stage
}

// DrawView lays the kept tokens on [0, 1) by descending probability with a
// marker where the uniform draw landed.
type DrawView struct {
	Segments []SegmentView
	Marker   string // CSS left of the marker, "42.0%"
	U        string // "0.420"
	Interval string // "[0.310, 0.905)"
}

// SegmentView is one kept token's interval on the draw's bar.
type SegmentView struct {
	Token  string
	Left   string // CSS
	Width  string
	Chosen bool
	Rest   bool // the kept tokens the trace did not record, together
}

// ChosenView is the step's choice.
type ChosenView struct {
	Token   TokenView
	ID      int
	Prob    string
	Rank    int
	By      string // "greedy", "sampled", "forced", "beam"
	Explain string
}

// KVView is the KV cache after the step.
type KVView struct {
	Present   bool
	Off       bool // use_cache is off: Note says why each step recomputes
	Positions int
	Total     string // "24.0 KiB"
	Growth    string // "+2.0 KiB since the previous step"
	Layers    []LayerBytesView
	Note      string
}

// LayerBytesView is one layer's share of the cache.
type LayerBytesView struct {
	Layer int
	Bytes string
	Width string
}

// TrafficView is what the step cost.
type TrafficView struct {
	Present     bool
	WeightBytes string
	KVRead      string
	KVWrite     string
	FLOPs       string
	Intensity   string // "1.0 FLOP/byte"
	Time        string // "1.2 ms"
	Achieved    string // "3.4 GB/s"
	Bandwidth   string // what the step is compared with: "26.1 GB/s (main memory)", "n/a" until measured
	Resident    bool   // the step's bytes fit in the last-level cache
	Where       string // where the step's bytes come from, and why
	Probe       string // when and how the bandwidth was measured, with its spread
	Batch       string // the forward pass it shared with other runs, or ""
	Note        string
}

// TokenizerView shows the chosen token's bytes and what the stream decoder
// holds back.
type TokenizerView struct {
	Token   string
	Hex     string // "e2 80"
	Held    string // "e2 80 (an unfinished character)", or ""
	Text    string // the text the stream has completed so far, its tail
	Note    string // "bytes of the token's text (no tokenizer)"
	Partial bool
	Prompt  []PromptTokenView // how the prompt became tokens (row shown)
}

// PromptTokenView is one prompt token: its text, id and raw bytes.
type PromptTokenView struct {
	Token string
	ID    int
	Hex   string
}

// BranchTreeView lists a run's trunk and branches as a tree.
type BranchTreeView struct {
	Nodes []BranchNodeView
}

// BranchNodeView is one branch of the tree.
type BranchNodeView struct {
	ID       int
	Depth    int // indentation: 0 for the trunk
	Label    string
	Text     string // its output text
	Selected bool
	Live     bool
}

// PairView is the toy's step beside a real run, at the same index clamped
// to the toy's steps.
type PairView struct {
	Position string
	Step     StepView
	Rows     []TableRowView
}

// ChartsView holds the step's charts.
type ChartsView struct {
	Charts []ChartView
	Note   string // why charts are missing, if they are
}

// ChartView is one chart, inlined as SVG, with download links.
type ChartView struct {
	Name  string // "candidates"
	Title string
	SVG   string // trusted SVG from web/plots
	Error string
	SVGURL,
	PNGURL string
}

// CompareView shows several runs side by side.
type CompareView struct {
	Steps      []int // 1-based step numbers, the table's columns
	Current    int   // 0-based position
	Divergence int   // 0-based first step where the choices differ; -1 for none
	Says       string
	Runs       []CompareRunView
}

// CompareRunView is one run of a comparison.
type CompareRunView struct {
	Label  string
	Status string
	Cells  []CompareCellView
	TV     []string // per step: total variation distance from the first run
	Step   StepView // its step at the current position
	Output string
	Export string // export URL of this run
	File   string // the name it downloads under, "tracer-run-2-T=0.7.json"
}

// CompareCellView is one run's choice at one step.
type CompareCellView struct {
	Token    string
	Diverged bool // the first step where the runs differ
	Current  bool
	Differs  bool // differs from the first run
}

// OutputView is the text generated so far: the prompt set apart, then each
// generated token tinted by the probability it was chosen with.
type OutputView struct {
	Prompt string // the prompt's text ("" when the trace has none)
	Tokens []OutputTokenView
	Legend bool // the tint legend applies (some token has a probability)
}

// OutputTokenView is one generated token of the text so far.
type OutputTokenView struct {
	Text    string // the token's text as it reads in the output
	ID      int    // the token's id
	Odd     bool   // every other token: neighbours are outlined apart
	Shape   string // "narrow": one character, given a tap width; "newline": whitespace with a line break, its ⏎ shown faint; "" other
	Jump    int    // the position to go to for its step; -1: none
	Tint    string // probability band: "p0" (below 0.05) to "p4" (0.8 and up)
	Prob    string // "0.62"
	Alts    []AltView
	Current bool // chosen at the step shown
}

// AltView is one of a step's leading candidates, for a token's tooltip.
type AltView struct {
	Token  string // whitespace made visible
	Prob   string
	Chosen bool
}

// BeamTreeView is beam search drawn as a tree, laid out by the server so
// that the export draws it without a script: a column per step, each node
// a candidate continuation of a beam (the beams that went on, the best
// pruned ones, the hypotheses that ended), an edge from each node to the
// beam it extends; then the finished hypotheses with their
// length-normalised scores. Sizes are CSS pixels.
type BeamTreeView struct {
	Root     BeamStepView // the column the tree starts from: the prompt, or the beams entering the first step shown
	Steps    []BeamStepView
	Edges    []BeamEdgeView
	Width    int // of the drawing
	Height   int
	Finished []HypothesisView // every hypothesis finished by the step shown, best first
	Note     string
	Legend   string
}

// BeamStepView is one column of the beam tree.
type BeamStepView struct {
	Number  int    // 1-based step; for the root, the step its beams came out of (0: the prompt)
	Label   string // "Step 3 of 12", "Prompt"
	Current bool
	X       int // left edge
	Nodes   []BeamNodeView
}

// BeamNodeView is one candidate continuation of a beam at a step.
type BeamNodeView struct {
	ID     string // "beam-3-1": beam 1 after step 3; "beam-3-p0", "beam-3-f0": pruned, ended
	From   int    // the beam it extends
	Beam   int    // the beam it became; -1 when pruned or ended
	Token  string // whitespace made visible, whole
	Label  string // Token as drawn: cut with "…" when very long
	Score  string // cumulative log-probability, "-3.21"
	Pruned bool
	EOS    bool // the end of sequence that finished a hypothesis
	Final  bool // the last node of a hypothesis: an EOS, or a beam still open when the run ended
	Winner bool // on the path of the winning hypothesis, or its end
	Y      int  // top edge
}

// BeamEdgeView is the line from a node to the beam it extends.
type BeamEdgeView struct {
	From, To string // node IDs
	Step     int    // the step of the node it leads to
	Path     string // SVG path data
	Pruned   bool
	EOS      bool
	Winner   bool
}

// HypothesisView is one finished hypothesis.
type HypothesisView struct {
	Text   string // whitespace made visible
	Sum    string // sum of log-probabilities
	Length int
	Score  string // length-normalised: Sum / Length^length_penalty
	Kept   bool   // kept among the num_beams best
	Winner bool
	Step   int // 1-based step it finished at; 0 for a beam still open at the end
}

// InsideView is what a step showed inside the model: the attention and
// lens panels, each nil when the step did not record it, and for each a
// sentence saying what is missing and how to get it.
type InsideView struct {
	Forward   *ForwardView
	Attention *AttentionView
	Lens      *LensView
	Missing   []string
	Computing bool // the step's inside is being computed on demand (insideStore)
}

// AttentionView is the newest query's attention over the context: every
// layer × head (and each layer's heads averaged) to pick from, the picked
// one shown on the context's tokens.
type AttentionView struct {
	Layers, Heads int
	Keys          []AttnKeyView    // the context, one per key position
	Grid          [][]AttnCellView // [layer][head], then the layer's "all heads"
	Layer, Head   int              // shown first: the last layer, all heads (Head == Heads)
	Data          string           // JSON of attnData, for inside.js
}

// AttnKeyView is one key position of the context as the page shows it:
// its token with visible whitespace, and its weight in the cell shown first.
type AttnKeyView struct {
	Text   string
	Pad    bool   // a padding position (weight 0)
	Query  bool   // the newest position: the query itself
	Weight string // in the cell shown first, "0.4213"
	Tint   string // CSS opacity of its tint: the weight over the cell's largest, "0.42"
	Link   bool   // among the strongest keys of the cell shown first
}

// AttnCellView is one cell of the grid: a layer's head, or its heads
// averaged.
type AttnCellView struct {
	Layer, Head int // 0-based; Head == Heads for all heads
	All         bool
	Label       string // "L1 H2", "L1 all"
	Selected    bool
}

// LensView is the logit lens: every layer's top tokens with their
// probabilities, the chosen token highlighted from the first layer where
// it is top-1.
type LensView struct {
	Rows    []LensRowView
	First   int    // 1-based: the first layer where the chosen token is top-1; 0 for none
	Settled string // the sentence that says so
}

// LensRowView is one layer of the lens.
type LensRowView struct {
	Layer int // 1-based
	Cells []LensCellView
}

// LensCellView is one of a layer's top tokens.
type LensCellView struct {
	ID     int
	Token  string // visible whitespace
	Prob   string
	Tint   string // CSS opacity: the probability
	Chosen bool   // the step's chosen token, from the first layer it is top-1
}

// LangLinkView is one entry of the language switch.
type LangLinkView struct {
	Code, Name, URL string
	Current         bool
}
