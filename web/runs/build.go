package runs

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"tracer/engine/bench"
	"tracer/lessons"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
	"tracer/web/words"
)

// Sizes of a step's view.
const (
	maxCandidates = 10 // candidates a step shows
	maxContext    = 24 // context tokens a step shows, the latest ones (the text so far shows all)
)

// BuildOpts is what a view needs besides the document and the cursor.
type BuildOpts struct {
	Session   string        // the recipient's session id, for download URLs
	Lesson    *Document     // the toy's lesson, to pair with a real run; nil when off
	Charts    bool          // build the charts panel
	Dark      bool          // charts in the dark palette
	Following string        // classroom state for the banner: "instructor", "detached" or ""
	Words     words.Words   // the recipient's language
	Machine   bench.Machine // what the bandwidth probe measured; zero while unknown
	Ahead     bool          // rendered ahead of a move (the classroom's stream): start no look inside a step
}

// BuildStepper translates a document at a cursor into the stepper's view,
// and lists the charts the view shows (rendered outside the session lock).
func BuildStepper(d *Document, cur Cursor, o BuildOpts) (view.StepperView, []view.ChartJob) {
	var v view.StepperView
	var jobs []view.ChartJob
	switch {
	case d.Walk != nil:
		v = walkView(d, cur.Pos, o.Words)
	case d.Compare:
		v, jobs = compareStepper(d, cur, o)
	default:
		v, jobs = runView(d, cur, o)
	}
	v.Following = o.Following
	v.W = o.Words
	view.LocalizeCharts(v.Charts, o.Words)
	return v, jobs
}

// walkView is a position of the lesson's walkthrough, worded in w's
// language (the walkthrough's own narration stays English).
func walkView(d *Document, pos int, w words.Words) view.StepperView {
	t := d.Runs[0].Trace
	n := len(d.Walk.Moments)
	pos = min(max(pos, 0), n-1)
	m := d.Walk.Moments[pos]
	v := view.StepperView{
		Source: d.sourceText(w), ModelName: t.Model.Name, Notices: slices.Clone(t.Notices),
		Index: pos, Count: n, AtStart: pos == 0, AtEnd: pos == n-1,
		StopReason: t.Output.StopReason, ShowOutput: pos == n-1,
		Position: w.F(lessons.KeyMomentNOfTotal, "n", strconv.Itoa(pos+1), "total", strconv.Itoa(n)), Title: m.Title, Output: d.Walk.Printed,
		Status: view.StatusView{State: "done", Text: w.T(words.KeyDbgWalkStatus)},
	}
	if d.Notice != "" {
		v.Notices = append(v.Notices, d.Notice)
	}
	if m.Step >= 0 {
		v.Step = BuildStep(t, t.Steps, m.Step, 0, m.Tokens, w)
	} else {
		v.Step = view.StepView{Label: w.T(words.KeyDbgTokens), Tokens: Chips(m.Tokens, d.Walk.Table.BOS, d.Walk.Table.EOS), Note: w.T(words.KeyDbgNoForward)}
	}
	v.Toy = toyView(d.Walk, m)
	v.Text = walkOutput(d, m)
	return v
}

// runView is a position of one run, along the cursor's branch.
func runView(d *Document, cur Cursor, o BuildOpts) (view.StepperView, []view.ChartJob) {
	r := d.Runs[0]
	t := r.Trace
	steps := PathSteps(t, cur.Branch)
	n := max(1, len(steps))
	pos := min(max(cur.Pos, 0), n-1)
	row := min(max(cur.Row, 0), RowCount(t)-1)
	generating := r.Live && r.LiveBranch == cur.Branch
	out := pathOutput(t, cur.Branch)
	w := o.Words
	v := view.StepperView{
		Source: d.sourceText(w), ModelName: t.Model.Name, Notices: slices.Clone(t.Notices),
		Index: pos, Count: n, AtStart: pos == 0, AtEnd: pos == n-1,
		Position: w.F(lessons.KeyStepNOfTotal, "n", strconv.Itoa(pos+1), "total", strconv.Itoa(n)), Hit: cur.Hit,
		Status: statusView(r, cur.Branch, len(steps), w), StopReason: out.StopReason,
	}
	switch {
	case generating:
		v.Position = w.F(words.KeyDbgStepSoFar, "n", strconv.Itoa(pos+1), "total", strconv.Itoa(n))
	case len(steps) == 0: // no step 1 of 1 to show
		v.Position = w.F(words.KeyDbgNSteps, "n", "0")
	}
	if b := branchByID(t, cur.Branch); b != nil && b.Label != "" {
		// On a branch the run's settings are the parent's unless the
		// branch's label says otherwise (a what-if branch names its own).
		v.Source += " · " + b.Label
	}
	if d.Notice != "" {
		v.Notices = append(v.Notices, d.Notice)
	}
	// A failed run's status says why it ended: its placeholder stop
	// reason (cancelled) would contradict it.
	v.ShowOutput = v.AtEnd && !generating && out.StopReason != "" && v.Status.State != "failed"
	v.Output = out.NewText
	if row < len(out.NewTexts) {
		v.Output = out.NewTexts[row]
	}
	if pos < len(steps) {
		v.Step = BuildStep(t, steps, pos, row, nil, w)
		v.Step.Tokens = namedTokensBefore(t, steps, pos, row, r.namer())
		v.Text = runOutput(r, steps, pos, row)
		v.Step.Branchable = r.generated() && !r.Live && RowCount(t) == 1 && t.Options.NumBeams <= 1
		v.Panels = panelsView(r, steps, pos, row, w, o.Machine, !o.Ahead)
	} else {
		note := w.T(words.KeyDbgNoSteps)
		switch {
		case r.Live:
			note = w.T(words.KeyDbgWaiting)
		case v.Status.State == "failed":
			note = w.T(words.KeyDbgFailedNoSteps)
		}
		v.Step = view.StepView{Label: w.T(lessons.KeyPrompt), Tokens: namedTokensBefore(t, steps, 0, row, r.namer()), Note: note}
		v.Text = view.OutputView{Prompt: promptText(t, row)}
	}
	v.Beams = beamTree(r, steps, pos, w)
	v.Rows = rowTabs(t, row, w)
	v.Branches = branchTree(r, cur.Branch)
	if o.Lesson != nil && t.Model.Kind != "toy" {
		v.Pair = pairView(o.Lesson, pos, w)
	}
	var jobs []view.ChartJob
	if o.Charts && len(steps) > 0 {
		v.Charts, jobs = ChartsFor([]*Run{r}, cur.Branch, steps, pos, o)
	}
	return v, jobs
}

// statusView says how a run stands, in w's language (an engine's error
// stays as the engine wrote it).
func statusView(r *Run, branch, steps int, w words.Words) view.StatusView {
	out := pathOutput(r.Trace, branch)
	n := w.F(words.KeyDbgNSteps, "n", strconv.Itoa(steps))
	if steps == 1 {
		n = w.T(words.KeyDbgOneStep)
	}
	switch {
	case r.Live && r.LiveBranch == branch:
		return view.StatusView{State: "running", Text: w.F(words.KeyDbgStatusRunning, "steps", n)}
	case r.err != "":
		return view.StatusView{State: "failed", Text: w.F(words.KeyDbgStatusFailed, "error", r.err)}
	case out.StopReason == trace.StopCancelled:
		return view.StatusView{State: "stopped", Text: w.F(words.KeyDbgStatusStopped, "steps", n)}
	case !r.generated():
		return view.StatusView{State: "imported", Text: w.F(words.KeyDbgStatusImported, "steps", n, "reason", out.StopReason)}
	}
	return view.StatusView{State: "done", Text: w.F(words.KeyDbgStatusDone, "steps", n, "reason", out.StopReason)}
}

// rowTabs lists a batch's rows (or a beam search's beams) to pick from.
func rowTabs(t *trace.Trace, row int, w words.Words) []view.RowTabView {
	n := RowCount(t)
	if n < 2 {
		return nil
	}
	name := words.KeyDbgRowN
	if t.Options.NumBeams > 1 {
		name = words.KeyDbgBeamN
	}
	out := make([]view.RowTabView, n)
	for i := range out {
		out[i] = view.RowTabView{Index: i, Label: w.F(name, "n", strconv.Itoa(i)), Selected: i == row}
	}
	return out
}

// BuildStep shows step i of steps for a row, labelled in w's language. toks,
// when given, is the token list to show instead of the context before the step.
func BuildStep(t *trace.Trace, steps []trace.Step, i, row int, toks []string, w words.Words) view.StepView {
	s := steps[i]
	row = min(row, len(s.Rows)-1)
	r := s.Rows[row]
	v := view.StepView{Present: true, Number: s.Index + 1, Of: len(steps), Label: w.T(words.KeyDbgContext)}
	if toks != nil {
		v.Label = w.T(words.KeyDbgTokens)
		v.Tokens = Chips(toks, specialWords(t)...)
	} else {
		v.Tokens = tokensBefore(t, steps, i, row)
	}
	final := map[int]float64{}
	complete := true // every kept token is listed in Final
	if f := r.Final; f != nil {
		v.Final = true
		for k, id := range f.IDs {
			final[id] = f.Probs[k]
		}
		complete = f.KeptCount <= len(f.IDs)
	}
	// The scores after the last processor, for the leaders it recorded.
	processed := map[int]float32{}
	if len(r.Stages) > 0 {
		for _, c := range r.Stages[len(r.Stages)-1].Top {
			processed[c.ID] = c.Logit
		}
	}
	v.Logits = len(r.Candidates) > 0
	for k, c := range r.Candidates {
		if k == maxCandidates {
			break
		}
		cv := view.CandidateView{
			ID: c.ID, Token: marks.TokenOrID(c.Token, c.ID), Prob: probText(c.Prob), Width: percent(c.Prob),
			Chosen: c.ID == r.Chosen.ID, Logit: logitText(c.Logit),
		}
		if fl, ok := processed[c.ID]; ok && fl != c.Logit {
			cv.FinalLogit = logitText(fl)
			v.Processed = true
		} else if !ok && len(r.Stages) > 0 && r.Stages[len(r.Stages)-1].Kept <= len(r.Stages[len(r.Stages)-1].Top) {
			cv.FinalLogit = "-inf" // removed: every kept token is among the recorded leaders
			v.Processed = true
		}
		if v.Final {
			p, ok := final[c.ID]
			switch {
			case ok:
				cv.Kept, cv.FinalProb, cv.FinalWidth = true, probText(p), percent(p)
			case complete:
				cv.FinalProb, cv.FinalWidth = "removed", "0%"
			default:
				cv.Kept, cv.FinalProb, cv.FinalWidth = true, "< "+probText(f64Last(r.Final.Probs)), "0%"
			}
		}
		v.Candidates = append(v.Candidates, cv)
	}
	v.Chosen = view.TokenView{Text: marks.TokenOrID(r.Chosen.Token, r.Chosen.ID), Special: isSpecial(t, r.Chosen.ID)}
	v.ChosenProb = probText(r.Chosen.Prob)
	v.By = byWord(r.Chosen.By, w)
	if d := r.Draw; d != nil {
		v.Draw = w.F(words.KeyDbgDrawFell, "u", fmt.Sprintf("%.3f", d.U), "lo", fmt.Sprintf("%.3f", d.CumBefore), "hi", fmt.Sprintf("%.3f", d.CumAfter))
	}
	if len(s.Rows) > 1 && t.Options.NumBeams <= 1 {
		v.Note = w.F(words.KeyDbgBatchNote, "rows", strconv.Itoa(len(s.Rows)), "row", strconv.Itoa(row))
	}
	if r.Finished {
		v.Note = w.T(words.KeyDbgFinishedNote)
	}
	return v
}

// logitText formats a logit or processed score: "12.31", "-inf".
func logitText(l float32) string {
	if math.IsInf(float64(l), -1) {
		return "-inf"
	}
	return strconv.FormatFloat(float64(l), 'f', 2, 32)
}

// namer returns the run's tokenizer's vocabulary lookup, or nil when the
// run has none (an imported trace, a model without a tokenizer).
func (r *Run) namer() func(int) string {
	if r.Model == nil || r.Model.Tokenizer == nil {
		return nil
	}
	return r.Model.Tokenizer.Token
}

func f64Last(p []float64) float64 {
	if len(p) == 0 {
		return 0
	}
	return p[len(p)-1]
}

// tokensBefore is a row's context before step i of steps: the prompt (with
// its padding) and the tokens chosen at earlier steps, whitespace made
// visible.
func tokensBefore(t *trace.Trace, steps []trace.Step, i, row int) []view.TokenView {
	return namedTokensBefore(t, steps, i, row, nil)
}

// namedTokensBefore is tokensBefore with name, when not nil, naming a batch
// row's prompt tokens (a trace names only a lone prompt's).
func namedTokensBefore(t *trace.Trace, steps []trace.Step, i, row int, name func(int) string) []view.TokenView {
	var out []view.TokenView
	ids := t.Prompt.IDs
	var mask []int
	if row < len(t.Prompt.Rows) {
		ids, mask = t.Prompt.Rows[row].IDs, t.Prompt.Rows[row].AttentionMask
	}
	named := len(t.Prompt.Tokens) == len(ids) && len(t.Prompt.Rows) <= 1
	for k, id := range ids {
		text := "#" + strconv.Itoa(id)
		switch {
		case named:
			text = marks.Token(t.Prompt.Tokens[k])
		case name != nil:
			text = marks.TokenOrID(name(id), id)
		}
		pad := k < len(mask) && mask[k] == 0
		if pad {
			text = "pad"
		}
		out = append(out, view.TokenView{Text: text, Special: isSpecial(t, id), Pad: pad})
	}
	for _, s := range steps[:min(i, len(steps))] {
		if row < len(s.Rows) {
			c := s.Rows[row].Chosen
			out = append(out, view.TokenView{Text: marks.TokenOrID(c.Token, c.ID), Special: isSpecial(t, c.ID)})
		}
	}
	if n := len(out) - maxContext; n > 0 {
		out = append([]view.TokenView{{Text: fmt.Sprintf("… %d earlier", n), Special: true}}, out[n:]...)
	}
	return out
}

func isSpecial(t *trace.Trace, id int) bool {
	return id == t.Model.BOS || id == t.Model.PAD || slices.Contains(t.Model.EOS, id)
}

// specialWords returns the texts of the trace's BOS and EOS tokens, as far
// as the trace names them.
func specialWords(t *trace.Trace) []string {
	var out []string
	for k, id := range t.Prompt.IDs {
		if isSpecial(t, id) && k < len(t.Prompt.Tokens) {
			out = append(out, t.Prompt.Tokens[k])
		}
	}
	for _, s := range t.Steps {
		for _, c := range s.Rows[0].Candidates {
			if isSpecial(t, c.ID) {
				out = append(out, c.Token)
			}
		}
	}
	return out
}

func Chips(words []string, special ...string) []view.TokenView {
	out := make([]view.TokenView, len(words))
	for i, w := range words {
		out[i] = view.TokenView{Text: w, Special: slices.Contains(special, w)}
	}
	return out
}

// toyView shows the table and listing with the moment's row, cell and line.
func toyView(w *lessons.Walkthrough, m lessons.Moment) *view.ToyView {
	v := &view.ToyView{Annotation: m.Text, Rows: TableRows(w, m.Row, m.Cell)}
	for _, l := range w.Listing {
		v.Lines = append(v.Lines, view.CodeLineView{Number: l.Number, Text: l.Text, Active: l.Number == m.Line})
	}
	return v
}

// TableRows is the bigram table with one row and cell highlighted.
func TableRows(w *lessons.Walkthrough, activeRow, activeCell string) []view.TableRowView {
	var out []view.TableRowView
	for _, word := range w.Table.Words {
		entries, ok := w.Table.Rows[word]
		if !ok {
			continue
		}
		row := view.TableRowView{Word: word, Active: word == activeRow}
		for _, e := range entries {
			row.Cells = append(row.Cells, view.TableCellView{
				Word: e.Word, Prob: strconv.FormatFloat(e.P, 'g', -1, 64),
				Active: row.Active && e.Word == activeCell,
			})
		}
		out = append(out, row)
	}
	return out
}

// pairView is the toy lesson's step at index pos, clamped to its steps.
func pairView(lesson *Document, pos int, w words.Words) *view.PairView {
	t := lesson.Runs[0].Trace
	if len(t.Steps) == 0 {
		return nil
	}
	i := min(pos, len(t.Steps)-1)
	v := &view.PairView{Position: w.F(words.KeyDbgToyStep, "n", strconv.Itoa(i+1), "total", strconv.Itoa(len(t.Steps))), Step: BuildStep(t, t.Steps, i, 0, nil, w)}
	if lesson.Walk != nil {
		ctx := v.Step.Tokens
		last := ""
		if len(ctx) > 0 {
			last = ctx[len(ctx)-1].Text
		}
		v.Rows = TableRows(lesson.Walk, last, t.Steps[i].Rows[0].Chosen.Token)
	}
	return v
}

// probText formats a probability for the page: 0.9, 0.43, 0.0012.
func probText(p float64) string {
	switch {
	case p == 0:
		return "0"
	case p >= 0.01:
		return strconv.FormatFloat(p, 'f', 2, 64)
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// percent is a probability as a CSS width.
func percent(p float64) string {
	return strconv.FormatFloat(100*min(max(p, 0), 1), 'f', 1, 64) + "%"
}

// ChartsFor lists the charts of a position: for one run (steps is its
// path along branch) or for the runs of a comparison (steps nil: each
// run's trunk), for o's session, palette and language. It snapshots the
// traces; the caller holds the lock.
func ChartsFor(runs []*Run, branch int, steps []trace.Step, pos int, o BuildOpts) (*view.ChartsView, []view.ChartJob) {
	var traces []*trace.Trace
	var names []string
	for _, r := range runs {
		names = append(names, r.Label)
		t := *r.Trace
		t.Branches = nil
		if steps != nil {
			t.Steps = steps
		}
		t.Steps = slices.Clip(t.Steps)
		traces = append(traces, &t)
	}
	return view.ChartsFor(traces, names, runs[0].id, branch, pos, view.ChartOpts{Session: o.Session, Dark: o.Dark, W: o.Words})
}
