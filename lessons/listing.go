package lessons

import (
	"fmt"
	"strconv"
	"strings"

	"tracer/toy"
)

// Role says what a line of the listing does in the generation loop.
type Role string

// The roles of the listing's lines. Moments point at the line of their role.
const (
	RoleComment Role = "comment" // a comment or an import
	RoleTable   Role = "table"   // the bigram table, one line per row
	RoleSetup   Role = "setup"   // the markers and the cap
	RoleStart   Role = "start"   // tokens = [BOS]: the list generation grows
	RoleCheck   Role = "check"   // the while condition: not at the end marker, under the cap
	RoleLookup  Role = "lookup"  // the table row of the newest token: the "forward pass"
	RolePick    Role = "pick"    // choose the next word from the row
	RoleAppend  Role = "append"  // put it on the list
	RolePrint   Role = "print"   // drop the markers and print
)

// Line is one line of the Python listing.
type Line struct {
	Number int    // 1-based
	Text   string // Python source, indented with spaces
	Role   Role
}

// ListingOptions shape the listing after the run it narrates.
type ListingOptions struct {
	Start     []string // the prompt's tokens; empty means just the begin marker
	MaxLength int      // the cap on len(tokens); 0 means the table's own
	Sample    bool     // the run sampled: pick with random.choices instead of max
}

// Listing writes tracer's Python version of the generation loop for a table:
// one dictionary line per row of the table, then the loop. The line numbers
// and roles let a Moment point at the line that runs.
func Listing(t *toy.Table, o ListingOptions) []Line {
	var lines []Line
	add := func(role Role, format string, args ...any) {
		lines = append(lines, Line{Number: len(lines) + 1, Text: fmt.Sprintf(format, args...), Role: role})
	}
	if o.Sample {
		add(RoleComment, "import random")
	}
	add(RoleComment, "# A bigram model: only the last word sets the odds of the next.")
	add(RoleTable, "probs = {")
	for _, row := range orderedRows(t) {
		cells := make([]string, len(row.entries))
		for i, e := range row.entries {
			cells[i] = pyString(e.Word) + ": " + strconv.FormatFloat(e.P, 'g', -1, 64)
		}
		add(RoleTable, "    %s: {%s},", pyString(row.word), strings.Join(cells, ", "))
	}
	add(RoleTable, "}")
	maxLen := o.MaxLength
	if maxLen <= 0 {
		maxLen = t.MaxLength
	}
	add(RoleSetup, "BOS, EOS, CAP = %s, %s, %d", pyString(t.BOS), pyString(t.EOS), maxLen)
	start := []string{"BOS"}
	for i, w := range o.Start {
		if i == 0 && w == t.BOS {
			continue
		}
		start = append(start, pyString(w))
	}
	add(RoleStart, "tokens = [%s]", strings.Join(start, ", "))
	add(RoleCheck, "while tokens[-1] != EOS and len(tokens) < CAP:")
	add(RoleLookup, "    row = probs[tokens[-1]]")
	if o.Sample {
		add(RolePick, "    word = random.choices(list(row), weights=list(row.values()))[0]")
	} else {
		add(RolePick, "    word = max(row, key=row.get)  # greedy")
	}
	add(RoleAppend, "    tokens.append(word)")
	add(RolePrint, "print(\" \".join(w for w in tokens if w not in (BOS, EOS)))")
	return lines
}

// LineOf returns the number of the first line with the role, or 0.
func LineOf(lines []Line, r Role) int {
	for _, l := range lines {
		if l.Role == r {
			return l.Number
		}
	}
	return 0
}

// tableRow is one row of a table in the order the table lists it.
type tableRow struct {
	word    string
	entries []toy.Entry
}

// orderedRows returns the rows of t in a stable order: t.Rows is a map, so
// rows follow t.Words, the order in which words first appear in the table.
// That is the file's order whenever each row's word appears before the next
// row, as in the lesson's table.
func orderedRows(t *toy.Table) []tableRow {
	rows := make([]tableRow, 0, len(t.Rows))
	for _, w := range t.Words {
		if e, ok := t.Rows[w]; ok {
			rows = append(rows, tableRow{w, e})
		}
	}
	return rows
}

// pyString quotes s as a Python string literal.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
