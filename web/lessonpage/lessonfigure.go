package lessonpage

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracer/engine/tokenizer"
	"tracer/lessons"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/runs"
	"tracer/web/view"
	"tracer/web/words"
)

// figureLabels is the figure's wording in lang.
func figureLabels(ui lessons.Strings, lang string) view.FigureLabels {
	g := func(k string) string { return ui.Get(k, lang) }
	return view.FigureLabels{
		Model: g(lessons.KeyModel), PromptIDs: g(lessons.KeyPromptIDs), NewIDs: g(lessons.KeyNewIDs),
		Output: g(lessons.KeyOutput), StopReason: g(lessons.KeyStopReason), Notices: g(lessons.KeyNotices),
		Steps: g(lessons.KeySteps), Phase: g(lessons.KeyPhase), Fed: g(lessons.KeyFed), Chosen: g(lessons.KeyChosen),
		Candidates: g(lessons.KeyCandidates), FLOPs: g(lessons.KeyFLOPs), Bytes: g(lessons.KeyBytes),
		Time: g(lessons.KeyTime), TimePerStep: g(lessons.KeyTimePerStep), BytesPerToken: g(lessons.KeyBytesPerToken),
		Intensity: g(lessons.KeyIntensity), Bandwidth: g(lessons.KeyBandwidth), Sequences: g(lessons.KeySequences),
		Junk: g(lessons.KeyJunk), Command: g(lessons.KeyTracerCommand), Diverge: g(lessons.KeySideBySide),
		Logit: g(lessons.KeyLogit),
	}
}

// runsFigure shows a step's runs side by side. For a right-padded batch
// beside a left-padded one, the rows that differ are junk.
// w is the page's words in lang, for the columns the debugger draws too.
// tok, when not nil, names the ids a small vocabulary's figure lists
// beyond the recorded candidates (see runColumn).
func runsFigure(w words.Words, ui lessons.Strings, st *lessons.Step, runs []lessons.Run, model string, traces []*trace.Trace, lang string, tok tokenizer.Tokenizer) *view.FigureView {
	f := &view.FigureView{Labels: figureLabels(ui, lang)}
	var left *trace.Trace
	for _, t := range traces {
		if len(t.Prompt.Rows) > 1 && t.Options.Padding != "right" {
			left = t
			break
		}
	}
	for i, t := range traces {
		run := &runs[i]
		label := run.Label.In(lang)
		if label == "" {
			label = run.ID
		}
		var ref *trace.Trace
		if t.Options.Padding == "right" && left != nil {
			ref = left
		}
		c := runColumn(t, ref, traces[0], st.At, label, w, tok)
		c.Command = run.Command(model)
		c.Model = model
		if c.At != nil {
			stageFigures(c.At, t, st, ui, lang)
		}
		columnExtras(&c, t, st, ui, lang)
		f.Runs = append(f.Runs, c)
	}
	if len(traces) > 1 {
		f.Same = sameOutput(traces)
		key := lessons.KeyDifferentOut
		if f.Same {
			key = lessons.KeySameOutput
		}
		f.Compare = ui.Get(key, lang)
		if st.At.Kind == lessons.AtEachStep && len(traces) == 2 {
			f.Side = sideBySide(ui, lang, f.Runs, traces)
		}
	}
	return f
}

// smallVocab is the largest vocabulary whose every token a lesson figure
// lists at a step: the toy's eight words, minus infinity included.
const smallVocab = 16

// runColumn shows one run: its output, the step At points at, its steps
// and its costs. ref, when not nil, is the run whose rows it is judged by;
// first is the step's first run, whose choices each step is compared with.
// For a vocabulary of at most smallVocab tokens the step lists them all:
// the ids the trace does not record (it records only finite scores) get
// minus infinity and a probability of 0, named by tok.
func runColumn(t, ref, first *trace.Trace, at lessons.At, label string, w words.Words, tok tokenizer.Tokenizer) view.RunColumnView {
	c := view.RunColumnView{Label: label, Model: t.Model.Name, TraceModel: t.Model.Name, NewIDList: NewIDList(t), StopReason: t.Output.StopReason, Notices: t.Notices}
	if len(t.Prompt.Rows) > 1 {
		c.Rows = batchRows(t, ref)
	} else {
		c.PromptIDs = idViews(t.Prompt.IDs, len(t.Prompt.IDs))
		c.NewIDs = idViews(t.Output.NewIDs, 0)
		c.Text = t.Output.NewText
	}
	active := -1
	if at.Kind == lessons.AtStep && at.Index < len(t.Steps) {
		active = at.Index
		s := t.Steps[active]
		sv := runs.BuildStep(t, t.Steps, active, 0, nil, w)
		c.At = &view.AtStepView{Title: "#" + strconv.Itoa(active+1), Candidates: sv.Candidates, Chosen: s.Rows[0].Chosen.Token}
		logits := map[int]float32{}
		for _, k := range s.Rows[0].Candidates {
			logits[k.ID] = k.Logit
		}
		for _, k := range sv.Candidates {
			l, ok := logits[k.ID]
			text := "–"
			if ok {
				text = strconv.FormatFloat(float64(l), 'g', 4, 32)
			}
			c.At.Logits = append(c.At.Logits, text)
		}
		if v := t.Model.VocabSize; v <= smallVocab && tok != nil && len(s.Rows[0].Candidates) < min(v, t.Options.RecordTop) {
			for id := range v {
				if _, ok := logits[id]; ok {
					continue
				}
				c.At.Candidates = append(c.At.Candidates, view.CandidateView{ID: id, Token: marks.TokenOrID(tok.Token(id), id), Prob: "0.00", Width: "0%"})
				c.At.Logits = append(c.At.Logits, "−∞")
			}
		}
	}
	for i, s := range t.Steps {
		row := view.StepRowView{Number: i + 1, Phase: s.Phase, Active: i == active}
		fed := 0
		for _, r := range s.Rows {
			fed += len(r.InputIDs)
		}
		row.Fed = strconv.Itoa(fed)
		if len(s.Rows) > 0 {
			row.Chosen = marks.TokenOrID(s.Rows[0].Chosen.Token, s.Rows[0].Chosen.ID)
			if first != t && i < len(first.Steps) && len(first.Steps[i].Rows) > 0 && first.Steps[i].Rows[0].Chosen.ID != s.Rows[0].Chosen.ID {
				row.Differs = true
			}
		}
		if s.Traffic != nil {
			row.FLOPs = siCount(float64(s.Traffic.FLOPs))
			row.Bytes = siCount(float64(s.Traffic.WeightBytes+s.Traffic.KVReadBytes+s.Traffic.KVWriteBytes)) + "B"
		}
		if s.ElapsedNS > 0 {
			row.Time = time.Duration(s.ElapsedNS).Round(time.Microsecond).String()
		}
		c.Steps = append(c.Steps, row)
	}
	for _, pc := range lessons.Costs(t) {
		c.Costs = append(c.Costs, view.CostView{
			Phase: pc.Phase, Steps: pc.Steps, Tokens: pc.Tokens,
			FLOPs: siCount(float64(pc.FLOPs)), Bytes: siCount(float64(pc.Bytes)) + "B",
			BytesPerToken: siCount(pc.BytesPerToken()) + "B",
			Intensity:     strconv.FormatFloat(pc.Intensity(), 'f', 2, 64),
			Bandwidth:     strconv.FormatFloat(pc.BytesPerSecond()/1e9, 'f', 2, 64) + " GB/s",
			TimePerStep:   pc.TimePerStep().Round(time.Microsecond).String(),
		})
	}
	return c
}

// sameOutput reports whether every trace generated the same new tokens.
func sameOutput(traces []*trace.Trace) bool {
	for _, t := range traces[1:] {
		if !slices.Equal(t.Output.NewIDs, traces[0].Output.NewIDs) ||
			!slices.EqualFunc(t.Output.Sequences, traces[0].Output.Sequences, slices.Equal[[]int]) {
			return false
		}
	}
	return true
}

// siCount writes a quantity with an SI prefix: 1.53 M, 812 k, 96.
func siCount(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.3g G", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.3g M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.3g k", x/1e3)
	}
	return fmt.Sprintf("%.3g ", x)
}

// NewIDList writes what a run generated, for tests to compare with the
// same run in the debugger: the new ids space-separated, or for a batch
// every row of the output, rows separated by ";".
func NewIDList(t *trace.Trace) string {
	ids := func(xs []int) string { return strings.Trim(fmt.Sprint(xs), "[]") }
	if len(t.Prompt.Rows) > 1 {
		rows := make([]string, len(t.Output.Sequences))
		for i, seq := range t.Output.Sequences {
			rows[i] = ids(seq)
		}
		return strings.Join(rows, ";")
	}
	return ids(t.Output.NewIDs)
}
