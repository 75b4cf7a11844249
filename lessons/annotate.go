package lessons

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"tracer/trace"
)

// NarrowMargin is the gap in probability under which a pick is called narrow.
const NarrowMargin = 0.25

func (n *narrator) startText(start []string) string {
	if len(start) == 1 {
		return fmt.Sprintf("The list starts with the begin marker %s and nothing else. "+
			"Real tokenizers put a BOS token in front of the text in the same way, so the model always has a first token to read.", start[0])
	}
	return fmt.Sprintf("The list starts with the prompt, %s, behind the begin marker %s, "+
		"just as a real tokenizer puts a BOS token in front of the prompt's text.", strings.Join(start[1:], " "), start[0])
}

func (n *narrator) checkText(promptLen int) string {
	capacity := n.limit
	if capacity <= 0 {
		capacity = n.table.MaxLength
	}
	s := fmt.Sprintf("The loop goes round while the newest token is not the end marker %s and the list holds fewer than %d tokens. ", n.table.EOS, capacity)
	if n.t.Options.MaxNewTokens >= 0 {
		return s + fmt.Sprintf("The cap is the prompt's %d tokens plus max_new_tokens = %d: the cap on how much generate() may add.", promptLen, n.t.Options.MaxNewTokens)
	}
	return s + "The cap counts every token, the markers too, as max_length does; max_new_tokens would count only the new ones."
}

// pickText explains step i's choice in the row of last.
func (n *narrator) pickText(i int, last string, r *trace.StepRow) string {
	c := r.Chosen
	other, otherP, hasOther := runnerUp(r)
	var b strings.Builder
	switch i {
	case 0:
	case 1:
		fmt.Fprintf(&b, "The newest token is now %s, and nothing else matters: a bigram model reads the row of the last word only. ", last)
	default:
		fmt.Fprintf(&b, "With %s appended, its row is read. ", last)
	}
	switch {
	case !hasOther:
		fmt.Fprintf(&b, "%s is the only word the row of %s allows, so it is chosen with probability %s.", c.Token, last, prob(c.Prob))
	case c.By == trace.ByForced:
		fmt.Fprintf(&b, "Forced: the run was told to take %s (%s in this row) whatever the scores say; the distribution is still recorded.", c.Token, prob(c.Prob))
	case c.By == trace.BySample:
		n.sampleText(&b, last, r, other, otherP)
	default:
		n.greedyText(&b, i, last, c, other, otherP)
	}
	return b.String()
}

func (n *narrator) greedyText(b *strings.Builder, i int, last string, c trace.Chosen, other string, otherP float64) {
	if i == 0 {
		fmt.Fprintf(b, "Greedy decoding takes the most probable word in the row of %s: ", last)
	}
	margin := c.Prob - otherP
	switch {
	case math.Abs(margin) < 1e-9:
		fmt.Fprintf(b, "%s and %s tie at %s, and greedy keeps the first of them, %s.", c.Token, other, prob(c.Prob), c.Token)
	case margin < NarrowMargin:
		fmt.Fprintf(b, "%s (%s) beats %s (%s), but only narrowly, by %s.", c.Token, prob(c.Prob), other, prob(otherP), prob(margin))
	default:
		fmt.Fprintf(b, "%s (%s) beats %s (%s).", c.Token, prob(c.Prob), other, prob(otherP))
		return
	}
	b.WriteString(" Greedy never looks ahead: it takes the best word for this step, whatever that word leads to later.")
}

func (n *narrator) sampleText(b *strings.Builder, last string, r *trace.StepRow, other string, otherP float64) {
	c := r.Chosen
	fmt.Fprintf(b, "Sampled, not greedy: in the row of %s, ", last)
	if d := r.Draw; d != nil {
		fmt.Fprintf(b, "the draw u = %s falls in [%s, %s), the share of %s, ", num(d.U), num(d.CumBefore), num(d.CumAfter), c.Token)
	} else {
		fmt.Fprintf(b, "the draw lands on %s, ", c.Token)
	}
	if c.Rank <= 1 {
		fmt.Fprintf(b, "so %s (%s), the likeliest word, is chosen; %s had %s.", c.Token, prob(c.Prob), other, prob(otherP))
		return
	}
	fmt.Fprintf(b, "so %s (%s) is chosen over the likelier %s (%s). Greedy would have taken %s.", c.Token, prob(c.Prob), other, prob(otherP), other)
}

// runnerUp returns the strongest word other than the chosen one in the
// distribution the step chose from (the final one when recorded).
func runnerUp(r *trace.StepRow) (word string, p float64, ok bool) {
	c := r.Chosen
	if f := r.Final; f != nil && len(f.IDs) > 0 {
		for k, id := range f.IDs {
			if id != c.ID && f.Probs[k] > 0 {
				return tokenOf(r, id), f.Probs[k], true
			}
		}
		return "", 0, false
	}
	for _, cand := range r.Candidates {
		if cand.ID != c.ID && cand.Prob > 0 {
			return cand.Token, cand.Prob, true
		}
	}
	return "", 0, false
}

// tokenOf finds the text of id among the step's candidates.
func tokenOf(r *trace.StepRow, id int) string {
	for _, cand := range r.Candidates {
		if cand.ID == id {
			return cand.Token
		}
	}
	for _, s := range r.Stages {
		for _, cand := range s.Top {
			if cand.ID == id {
				return cand.Token
			}
		}
	}
	return "#" + strconv.Itoa(id)
}

func (n *narrator) appendText(word string, tokens []string) string {
	return fmt.Sprintf("%s goes onto the end of the list, so tokens is now %s. The next pass reads the row of %s.", word, pyList(tokens), word)
}

func (n *narrator) appendEndText(tokens []string) string {
	return fmt.Sprintf("The end marker %s is appended like any other word: tokens is now %s.", tokens[len(tokens)-1], pyList(tokens))
}

func (n *narrator) stopText(tokens []string) string {
	reason := n.t.Output.StopReason
	last := tokens[len(tokens)-1]
	switch reason {
	case trace.StopEOS:
		return fmt.Sprintf("Back at the check: the newest token is %s, so the condition is false and the loop ends. Stop reason: eos.", last)
	case trace.StopMaxLength, trace.StopMaxNewTokens:
		return fmt.Sprintf("Back at the check: the list holds %d tokens, the cap, so the loop ends without an end marker. Stop reason: %s.", len(tokens), reason)
	case trace.StopNoRow:
		return fmt.Sprintf("The table has no row for %s, so probs[tokens[-1]] would raise KeyError in Python; tracer stops the run here instead. Stop reason: no_row.", last)
	case trace.StopCancelled:
		return "The run was cancelled before the loop finished. Stop reason: cancelled."
	}
	return fmt.Sprintf("The loop ends. Stop reason: %s.", reason)
}

func (n *narrator) stripText(tokens []string) string {
	out := printed(tokens, n.table)
	if out == "" {
		return fmt.Sprintf("Printing drops the markers %s and %s, and nothing is left: the output is empty.", n.table.BOS, n.table.EOS)
	}
	return fmt.Sprintf("Printing drops the markers %s and %s and joins what is left: %q. "+
		"A real tokenizer does the same with decode(ids, skip_special_tokens=True).", n.table.BOS, n.table.EOS, out)
}

// prob formats a probability with two significant digits: 0.9, 0.43, 0.012.
func prob(p float64) string {
	if p == 0 {
		return "0"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// num formats a number in [0, 1] with three decimals at most: 0.731, 0.6.
func num(x float64) string {
	s := strconv.FormatFloat(x, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// pyList writes tokens as a Python list: ["<s>", "I"].
func pyList(tokens []string) string {
	q := make([]string, len(tokens))
	for i, w := range tokens {
		q[i] = pyString(w)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
