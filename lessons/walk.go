package lessons

import (
	"errors"
	"fmt"
	"slices"

	"tracer/toy"
	"tracer/trace"
)

// Walkthrough is the narrated run of a toy trace.
type Walkthrough struct {
	Table   *toy.Table
	Listing []Line
	Moments []Moment
	Printed string // what the listing's print line prints
}

// Moment is one stop of the walkthrough: the line that runs and what it
// does to the data.
type Moment struct {
	Title  string   // a short label: "start", "pick love", "stop", ...
	Role   Role     // the role of the line that runs
	Line   int      // its 1-based number in the listing
	Step   int      // the trace step the moment belongs to, -1 for none
	Row    string   // the table row read (the context word); "" for none
	Cell   string   // the cell chosen in that row (the next word); "" for none
	Tokens []string // the token list as it stands at this moment: shared with the other moments, read only
	Text   string   // what happens, in words
}

// Walk narrates a single-prompt toy trace against its table. It fails when
// the trace does not fit the table: a batch, a step whose context word has
// no row, or a chosen word or candidate its row does not hold.
func Walk(t *trace.Trace, table *toy.Table) (*Walkthrough, error) {
	if t == nil || table == nil {
		return nil, errors.New("lessons: walk needs a trace and a table")
	}
	start, err := promptWords(t)
	if err != nil {
		return nil, err
	}
	// Check every step against the table before narrating any of it.
	tokens := slices.Clone(start)
	for i, s := range t.Steps {
		if len(s.Rows) != 1 {
			return nil, fmt.Errorf("lessons: step %d has %d rows: the walkthrough follows a single prompt", i, len(s.Rows))
		}
		last := tokens[len(tokens)-1]
		row, ok := table.Rows[last]
		if !ok {
			return nil, fmt.Errorf("lessons: step %d: the table has no row for %q", i, last)
		}
		inRow := func(w string) bool { return slices.ContainsFunc(row, func(e toy.Entry) bool { return e.Word == w }) }
		chosen := s.Rows[0].Chosen.Token
		if !inRow(chosen) {
			return nil, fmt.Errorf("lessons: step %d: %q is not in the table's row for %q", i, chosen, last)
		}
		for _, c := range s.Rows[0].Candidates {
			if c.Prob > 0 && !inRow(c.Token) {
				return nil, fmt.Errorf("lessons: step %d: candidate %q is not in the table's row for %q", i, c.Token, last)
			}
		}
		tokens = append(tokens, chosen)
	}

	w := &Walkthrough{Table: table}
	w.Listing = Listing(table, ListingOptions{Start: start, MaxLength: capOf(t, len(start)), Sample: t.Options.DoSample})
	w.Printed = printed(tokens, table)
	n := narrator{t: t, table: table, lines: w.Listing, limit: capOf(t, len(start)), all: slices.Clip(tokens)}
	w.Moments = n.moments(len(start))
	return w, nil
}

// promptWords returns the words of the trace's prompt.
func promptWords(t *trace.Trace) ([]string, error) {
	p := t.Prompt
	if len(p.IDs) == 0 || len(p.Tokens) != len(p.IDs) {
		return nil, fmt.Errorf("lessons: the trace's prompt has %d ids and %d tokens: the walkthrough needs the prompt's words", len(p.IDs), len(p.Tokens))
	}
	return slices.Clone(p.Tokens), nil
}

// capOf is the cap on the token list that the run obeyed.
func capOf(t *trace.Trace, promptLen int) int {
	o := t.Options
	switch {
	case o.MaxNewTokens >= 0:
		return promptLen + o.MaxNewTokens
	case o.MaxLength > 0:
		return o.MaxLength
	}
	return 0 // the table's own
}

// printed is what the listing prints: the tokens without the markers.
func printed(tokens []string, table *toy.Table) string {
	var out []byte
	for _, w := range tokens {
		if w == table.BOS || w == table.EOS {
			continue
		}
		if len(out) > 0 {
			out = append(out, ' ')
		}
		out = append(out, w...)
	}
	return string(out)
}

// narrator builds the moments of one walkthrough.
type narrator struct {
	t     *trace.Trace
	table *toy.Table
	lines []Line
	limit int // the cap on len(tokens); 0: the table's own
	// all is the token list at the end of the run: the prompt's words, then
	// every chosen one. Each moment's Tokens is a prefix of it, clipped, so
	// a walkthrough costs memory linear in its steps, not quadratic.
	all []string
	out []Moment
}

func (n *narrator) add(role Role, title string, step int, row, cell string, tokens []string, text string) {
	n.out = append(n.out, Moment{
		Title: title, Role: role, Line: LineOf(n.lines, role), Step: step,
		Row: row, Cell: cell, Tokens: tokens, Text: text,
	})
}

// upTo is the token list as it stands holding k tokens.
func (n *narrator) upTo(k int) []string { return n.all[:k:k] }

// moments lists the walkthrough: start; check; pick and append of the first
// step; the picks of the others; the end marker's append; stop; strip.
// startLen is the number of the prompt's words.
func (n *narrator) moments(startLen int) []Moment {
	start := n.upTo(startLen)
	tokens := start
	n.add(RoleStart, "start", -1, "", "", tokens, n.startText(start))
	n.add(RoleCheck, "check", -1, "", "", tokens, n.checkText(len(start)))
	steps := n.t.Steps
	for i, s := range steps {
		r := s.Rows[0]
		last := tokens[len(tokens)-1]
		word := r.Chosen.Token
		n.add(RolePick, "pick "+word, i, last, word, tokens, n.pickText(i, last, &r))
		tokens = n.upTo(len(tokens) + 1)
		isEnd := i == len(steps)-1 && n.isEOS(r.Chosen)
		switch {
		case i == 0 && isEnd:
			n.add(RoleAppend, "append "+word, i, last, word, tokens, n.appendEndText(tokens))
		case i == 0:
			n.add(RoleAppend, "append "+word, i, last, word, tokens, n.appendText(word, tokens))
		case isEnd:
			n.add(RoleAppend, "append "+word, i, last, word, tokens, n.appendEndText(tokens))
		}
	}
	stopRole := RoleCheck
	if n.t.Output.StopReason == trace.StopNoRow {
		stopRole = RoleLookup // Python fails at the lookup; tracer stops there
	}
	n.add(stopRole, "stop", -1, "", "", tokens, n.stopText(tokens))
	n.add(RolePrint, "strip markers", -1, "", "", tokens, n.stripText(tokens))
	return n.out
}

// isEOS reports whether a chosen token ends the run.
func (n *narrator) isEOS(c trace.Chosen) bool {
	return slices.Contains(n.t.Model.EOS, c.ID) || slices.Contains(n.t.Options.EOSTokenID, c.ID) || c.Token == n.table.EOS
}
