package web

import (
	"fmt"
	"slices"
	"strconv"

	"tracer/lessons"
	"tracer/trace"
)

// maxCandidates is how many candidates a step shows.
const maxCandidates = 10

// stepperView translates a document at a position into the stepper's view.
// pos must be in range (sessions keep it so).
func stepperView(d *document, pos int) StepperView {
	t := d.trace
	n := d.count()
	v := StepperView{
		Source: d.source, ModelName: t.Model.Name, Notices: slices.Clone(t.Notices),
		Index: pos, Count: n, AtStart: pos == 0, AtEnd: pos == n-1,
		StopReason: t.Output.StopReason,
	}
	if d.notice != "" {
		v.Notices = append(v.Notices, d.notice)
	}
	v.ShowOutput = v.AtEnd
	if d.walk == nil {
		v.Position = fmt.Sprintf("Step %d of %d", pos+1, n)
		v.Output = t.Output.NewText
		if len(t.Output.NewTexts) > 0 {
			v.Output = t.Output.NewTexts[0]
		}
		if pos < len(t.Steps) {
			v.Step = stepView(t, pos, nil)
		} else {
			v.Step = StepView{Label: "Prompt", Tokens: tokensBefore(t, 0), Note: "This trace records no steps."}
		}
		return v
	}
	m := d.walk.Moments[pos]
	v.Position = fmt.Sprintf("Moment %d of %d", pos+1, n)
	v.Title = m.Title
	v.Output = d.walk.Printed
	if m.Step >= 0 {
		v.Step = stepView(t, m.Step, m.Tokens)
	} else {
		v.Step = StepView{Label: "tokens", Tokens: chips(m.Tokens, d.walk.Table.BOS, d.walk.Table.EOS), Note: "This line runs no forward pass: there is no step to show."}
	}
	v.Toy = toyView(d.walk, m)
	return v
}

// stepView shows step i of row 0. words, when given, is the token list to
// show instead of the context before the step.
func stepView(t *trace.Trace, i int, words []string) StepView {
	s := t.Steps[i]
	r := s.Rows[0]
	v := StepView{Present: true, Number: i + 1, Of: len(t.Steps), Label: "Context"}
	if words != nil {
		v.Label = "tokens"
		v.Tokens = chips(words, specialWords(t)...)
	} else {
		v.Tokens = tokensBefore(t, i)
	}
	for k, c := range r.Candidates {
		if k == maxCandidates {
			break
		}
		v.Candidates = append(v.Candidates, CandidateView{
			Token: c.Token, Prob: probText(c.Prob), Width: strconv.FormatFloat(100*c.Prob, 'f', 1, 64) + "%",
			Chosen: c.ID == r.Chosen.ID,
		})
	}
	v.Chosen = TokenView{Text: r.Chosen.Token, Special: isSpecial(t, r.Chosen.ID)}
	v.ChosenProb = probText(r.Chosen.Prob)
	v.By = r.Chosen.By
	if v.By == trace.BySample {
		v.By = "sampled"
	}
	if d := r.Draw; d != nil {
		v.Draw = fmt.Sprintf("u = %.3f fell in [%.3f, %.3f)", d.U, d.CumBefore, d.CumAfter)
	}
	if len(s.Rows) > 1 {
		v.Note = fmt.Sprintf("A batch of %d rows: showing row 0.", len(s.Rows))
	}
	return v
}

// tokensBefore is row 0's context before step i: the prompt and the tokens
// chosen at earlier steps.
func tokensBefore(t *trace.Trace, i int) []TokenView {
	var out []TokenView
	ids := t.Prompt.IDs
	if len(t.Prompt.Rows) > 0 {
		ids = t.Prompt.Rows[0].IDs
	}
	named := len(t.Prompt.Tokens) == len(ids)
	for k, id := range ids {
		text := "#" + strconv.Itoa(id)
		if named {
			text = t.Prompt.Tokens[k]
		}
		out = append(out, TokenView{Text: text, Special: isSpecial(t, id)})
	}
	for _, s := range t.Steps[:min(i, len(t.Steps))] {
		c := s.Rows[0].Chosen
		out = append(out, TokenView{Text: c.Token, Special: isSpecial(t, c.ID)})
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

func chips(words []string, special ...string) []TokenView {
	out := make([]TokenView, len(words))
	for i, w := range words {
		out[i] = TokenView{Text: w, Special: slices.Contains(special, w)}
	}
	return out
}

// toyView shows the table and listing with the moment's row, cell and line.
func toyView(w *lessons.Walkthrough, m lessons.Moment) *ToyView {
	v := &ToyView{Annotation: m.Text}
	for _, word := range w.Table.Words {
		entries, ok := w.Table.Rows[word]
		if !ok {
			continue
		}
		row := TableRowView{Word: word, Active: word == m.Row}
		for _, e := range entries {
			row.Cells = append(row.Cells, TableCellView{
				Word: e.Word, Prob: strconv.FormatFloat(e.P, 'g', -1, 64),
				Active: row.Active && e.Word == m.Cell,
			})
		}
		v.Rows = append(v.Rows, row)
	}
	for _, l := range w.Listing {
		v.Lines = append(v.Lines, CodeLineView{Number: l.Number, Text: l.Text, Active: l.Number == m.Line})
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

// testID names an element for tests: "table-row" or "table-row-active".
func testID(base string, active bool) string {
	if active {
		return base + "-active"
	}
	return base
}
