package lessonpage

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
)

// tempBarsShown is how many leading candidates the temperature figure
// draws.
const tempBarsShown = 8

// stageFigures adds to the step a lesson points at what its text asks to
// look at: the raw probabilities beside those after temperature, the
// tokens each stage left, and where the random number fell.
func stageFigures(a *view.AtStepView, t *trace.Trace, st *lessons.Step, ui lessons.Strings, lang string) {
	i := st.At.Index
	if i >= len(t.Steps) || len(t.Steps[i].Rows) == 0 {
		return
	}
	row := &t.Steps[i].Rows[0]
	if st.Highlights("stage:temperature") {
		a.Temp = tempBars(row, ui, lang)
	}
	if slices.ContainsFunc(st.Highlight, func(h string) bool {
		return strings.HasPrefix(h, "stage:") && h != "stage:temperature"
	}) {
		a.Funnel = funnel(row, t.Model.VocabSize, ui, lang)
	}
	if st.Highlights("draw") && row.Draw != nil {
		a.Draw = lessons.Fill(ui.Get(lessons.KeyDrawFell, lang),
			"u", prob4(row.Draw.U), "from", prob4(row.Draw.CumBefore), "to", prob4(row.Draw.CumAfter),
			"token", marks.TokenOrID(row.Chosen.Token, row.Chosen.ID))
	}
}

// tempBars draws the leading raw candidates' probabilities beside their
// probabilities after the temperature stage, on one scale; nil when the
// run had no temperature stage (T = 1 leaves it out).
func tempBars(row *trace.StepRow, ui lessons.Strings, lang string) *view.TempBarsView {
	k := slices.IndexFunc(row.Stages, func(s trace.Stage) bool { return s.Name == "temperature" })
	if k < 0 {
		return nil
	}
	stage := row.Stages[k]
	after := map[int]float64{}
	for _, c := range stage.Top {
		after[c.ID] = c.Prob
	}
	cands := slices.Clone(row.Candidates)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Prob > cands[j].Prob })
	cands = cands[:min(len(cands), tempBarsShown)]
	top := 0.0
	for _, c := range cands {
		top = max(top, c.Prob, after[c.ID])
	}
	v := &view.TempBarsView{
		Title: ui.Get(lessons.KeyRawVsTemperature, lang), Raw: ui.Get(lessons.KeyRawProbs, lang),
		After: lessons.Fill(ui.Get(lessons.KeyAfterTemperature, lang), "t", strconv.FormatFloat(stage.Params["temperature"], 'g', -1, 64)),
	}
	for _, c := range cands {
		p, ok := after[c.ID]
		b := view.TempBarView{Token: marks.TokenOrID(c.Token, c.ID), Raw: prob4(c.Prob), RawWidth: width(c.Prob, top), AftWidth: width(p, top), After: prob4(p)}
		if !ok {
			b.After = "–" // not among the recorded leaders after the stage
		}
		v.Rows = append(v.Rows, b)
	}
	return v
}

// funnel lists how many tokens were left after each stage of the step, on
// a linear scale of the vocabulary.
func funnel(row *trace.StepRow, vocab int, ui lessons.Strings, lang string) *view.StageFunnelView {
	if vocab <= 0 {
		return nil
	}
	of := ui.Get(lessons.KeyNOfVocab, lang)
	v := &view.StageFunnelView{Title: ui.Get(lessons.KeyFunnel, lang)}
	add := func(stage string, kept int) {
		v.Rows = append(v.Rows, view.StageFunnelRowView{
			Stage: stage, Kept: kept, Width: width(float64(kept), float64(vocab)),
			Text: lessons.Fill(of, "n", strconv.Itoa(kept), "total", strconv.Itoa(vocab)),
		})
	}
	add(ui.Get(lessons.KeyVocabulary, lang), vocab)
	for _, s := range row.Stages {
		add(stageName(s), s.Kept)
	}
	if row.Final != nil {
		add(ui.Get(lessons.KeyFinalDist, lang), row.Final.KeptCount)
	}
	return v
}

// stageName writes a stage with its parameters: "top_k (k=20)".
func stageName(s trace.Stage) string {
	if len(s.Params) == 0 {
		return s.Name
	}
	names := make([]string, 0, len(s.Params))
	for k := range s.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		names[i] = k + "=" + strconv.FormatFloat(s.Params[k], 'g', -1, 64)
	}
	return s.Name + " (" + strings.Join(names, ", ") + ")"
}

// width is x as a CSS percentage of top.
func width(x, top float64) string {
	if top <= 0 || x <= 0 {
		return "0%"
	}
	return strconv.FormatFloat(100*min(x/top, 1), 'f', 1, 64) + "%"
}

// prob4 writes a probability with four decimals.
func prob4(p float64) string { return strconv.FormatFloat(p, 'f', 4, 64) }

// sideBySide lines up two runs step by step.
func sideBySide(ui lessons.Strings, lang string, cols []view.RunColumnView, traces []*trace.Trace) *view.SideBySideView {
	a, b := traces[0], traces[1]
	v := &view.SideBySideView{Runs: []string{cols[0].Label, cols[1].Label}}
	firstChosen, firstFed := 0, 0
	for i := range max(len(a.Steps), len(b.Steps)) {
		r := view.SideRowView{Number: i + 1}
		var ids, fed [2]int
		var has [2]bool
		for k, t := range []*trace.Trace{a, b} {
			if i >= len(t.Steps) || len(t.Steps[i].Rows) == 0 {
				r.Cells = append(r.Cells, view.SideCellView{})
				continue
			}
			row := t.Steps[i].Rows[0]
			has[k], ids[k], fed[k] = true, row.Chosen.ID, len(row.InputIDs)
			cell := view.SideCellView{Fed: strconv.Itoa(fed[k]), Chosen: marks.TokenOrID(row.Chosen.Token, row.Chosen.ID)}
			if row.Draw != nil {
				cell.Draw = "u = " + prob4(row.Draw.U)
			}
			r.Cells = append(r.Cells, cell)
		}
		if has[0] && has[1] {
			if ids[0] != ids[1] {
				r.Cells[0].ChosenDiffers, r.Cells[1].ChosenDiffers = true, true
				if firstChosen == 0 {
					firstChosen = i + 1
				}
			}
			if fed[0] != fed[1] {
				r.Cells[0].FedDiffers, r.Cells[1].FedDiffers = true, true
				if firstFed == 0 {
					firstFed = i + 1
				}
			}
		}
		v.Rows = append(v.Rows, r)
	}
	switch {
	case firstChosen > 0:
		v.First = firstChosen
		c := v.Rows[firstChosen-1].Cells
		v.Verdict = lessons.Fill(ui.Get(lessons.KeyPartWaysChosen, lang), "n", strconv.Itoa(firstChosen),
			"a", v.Runs[0], "x", c[0].Chosen, "b", v.Runs[1], "y", c[1].Chosen)
	case firstFed > 0:
		v.First = firstFed
		c := v.Rows[firstFed-1].Cells
		v.Verdict = lessons.Fill(ui.Get(lessons.KeyPartWaysFed, lang), "n", strconv.Itoa(firstFed),
			"a", v.Runs[0], "x", c[0].Fed, "b", v.Runs[1], "y", c[1].Fed)
	default:
		v.Verdict = ui.Get(lessons.KeyNeverPart, lang)
	}
	if v.First > 0 {
		v.Rows[v.First-1].First = true
	}
	return v
}
