package lessons

import (
	"errors"
	"fmt"
	"slices"

	"tracer/toy"
	"tracer/trace"
)

// TableFromTrace rebuilds the part of a toy table that a trace saw: one row
// per context word the run read, holding the candidates that step recorded
// with their probabilities. It lets a toy trace from an unknown table be
// walked through; rows the run never read are missing, and a row holds only
// as many words as the trace recorded (Options.RecordTop).
func TableFromTrace(t *trace.Trace) (*toy.Table, error) {
	if t == nil {
		return nil, errors.New("lessons: no trace")
	}
	start, err := promptWords(t)
	if err != nil {
		return nil, err
	}
	table := &toy.Table{Name: t.Model.Name, Rows: map[string][]toy.Entry{}, MaxLength: capOf(t, len(start))}
	table.BOS, table.EOS = start[0], "</s>"
	seen := map[string]bool{}
	word := func(w string) {
		if !seen[w] {
			seen[w] = true
			table.Words = append(table.Words, w)
		}
	}
	word(table.BOS)
	tokens := slices.Clone(start)
	for i, s := range t.Steps {
		if len(s.Rows) != 1 {
			return nil, fmt.Errorf("lessons: step %d has %d rows: the walkthrough follows a single prompt", i, len(s.Rows))
		}
		r := s.Rows[0]
		last := tokens[len(tokens)-1]
		word(last)
		if _, ok := table.Rows[last]; !ok {
			for _, c := range r.Candidates {
				if c.Prob > 0 {
					word(c.Token)
					table.Rows[last] = append(table.Rows[last], toy.Entry{Word: c.Token, P: c.Prob})
				}
			}
		}
		for _, c := range r.Candidates {
			if slices.Contains(t.Model.EOS, c.ID) {
				table.EOS = c.Token
			}
		}
		tokens = append(tokens, r.Chosen.Token)
	}
	if table.MaxLength <= 0 {
		table.MaxLength = len(tokens)
	}
	return table, nil
}
