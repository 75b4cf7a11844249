package runs

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"tracer/engine/tokenizer"
	"tracer/lessons"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
)

// Sizes of the text so far.
const (
	maxOutputTokens = 400 // generated tokens the text shows, the latest ones
	outputAlts      = 5   // candidates a token's tooltip lists
	altTokens       = 64  // the latest tokens that carry their alternatives (a view of 400 would weigh ~100 kB)
)

// tintBand is the probability band a chosen token is tinted with.
func tintBand(p float64) string {
	switch {
	case p >= 0.8:
		return "p4"
	case p >= 0.5:
		return "p3"
	case p >= 0.2:
		return "p2"
	case p >= 0.05:
		return "p1"
	}
	return "p0"
}

// alts lists a step row's leading candidates for a token's tooltip.
func alts(r trace.StepRow) []view.AltView {
	var out []view.AltView
	for k, c := range r.Candidates {
		if k == outputAlts {
			break
		}
		out = append(out, view.AltView{Token: marks.TokenOrID(c.Token, c.ID), Prob: probText(c.Prob), Chosen: c.ID == r.Chosen.ID})
	}
	return out
}

// runOutput is the text a run's row generated up to and including step pos
// of steps. With the model's tokenizer each token reads as its bytes decode
// (a character split over tokens shows with the token that completes it);
// without one (an imported trace) as its vocabulary string.
func runOutput(r *Run, steps []trace.Step, pos, row int) view.OutputView {
	t := r.Trace
	v := view.OutputView{Prompt: promptText(t, row)}
	var tok tokenizer.Tokenizer
	if r.Model != nil {
		tok = r.Model.Tokenizer
	}
	toy := t.Model.Kind == "toy"
	var held []byte // bytes of an unfinished character
	first := max(0, pos+1-maxOutputTokens)
	for i := 0; i <= pos && i < len(steps); i++ {
		if row >= len(steps[i].Rows) {
			break
		}
		sr := steps[i].Rows[row]
		if sr.Finished || isSpecial(t, sr.Chosen.ID) {
			continue
		}
		var text string
		switch {
		case toy: // the toy's words print with a space between, as its listing does
			text = sr.Chosen.Token
			if len(v.Tokens) > 0 {
				text = " " + text
			}
		case tok != nil:
			held = append(held, tok.TokenBytes(sr.Chosen.ID)...)
			n := completeUTF8(held)
			text = string(held[:n])
			held = slices.Clone(held[n:])
		default:
			text = sr.Chosen.Token // the vocabulary's string, read as text
			if text == "" {
				text = "#" + strconv.Itoa(sr.Chosen.ID)
			}
		}
		if i < first {
			continue
		}
		ov := view.OutputTokenView{Text: text, ID: sr.Chosen.ID, Odd: i%2 == 1, Shape: tokenShape(text), Jump: i, Tint: tintBand(sr.Chosen.Prob), Prob: probText(sr.Chosen.Prob), Current: i == pos}
		if pos-i < altTokens {
			ov.Alts = alts(sr)
		}
		v.Tokens = append(v.Tokens, ov)
	}
	v.Legend = len(v.Tokens) > 0
	return v
}

// tokenShape says how a token of the text so far needs help to be seen
// and tapped: "newline" for whitespace holding a line break (its ⏎ is
// drawn faint before the break), "narrow" for a single character (a
// space, a comma), given a minimum width; "" otherwise.
func tokenShape(text string) string {
	switch {
	case strings.TrimSpace(text) == "" && strings.ContainsAny(text, "\n\r"):
		return "newline"
	case utf8.RuneCountInString(text) <= 1:
		return "narrow"
	}
	return ""
}

// completeUTF8 returns how many leading bytes of b form whole characters:
// an unfinished character at the end (at most 3 bytes) waits for the next
// token; anything else invalid counts as complete and shows as U+FFFD.
func completeUTF8(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		start := len(b) - k
		if !utf8.RuneStart(b[start]) {
			continue
		}
		if !utf8.FullRune(b[start:]) {
			return start
		}
		break
	}
	return len(b)
}

// promptText is the prompt of a row as text: the trace's text for a lone
// prompt, a batch row's text, or "" when the trace has none.
func promptText(t *trace.Trace, row int) string {
	if len(t.Prompt.Texts) > 1 {
		if row < len(t.Prompt.Texts) {
			return t.Prompt.Texts[row]
		}
		return ""
	}
	return t.Prompt.Text
}

// walkOutput is the walkthrough's text at moment m: the words generated so
// far, each tinted by the probability its step chose it with and leading to
// the first moment of that step.
func walkOutput(d *Document, m lessons.Moment) view.OutputView {
	t := d.Runs[0].Trace
	var v view.OutputView
	k := 0 // generated words so far
	for _, word := range m.Tokens {
		if word == d.Walk.Table.BOS || word == d.Walk.Table.EOS {
			continue
		}
		text := word
		if k > 0 {
			text = " " + word
		}
		ov := view.OutputTokenView{Text: text, Jump: -1, Current: k == m.Step}
		if k < len(t.Steps) {
			sr := t.Steps[k].Rows[0]
			ov.Tint, ov.Prob, ov.Alts = tintBand(sr.Chosen.Prob), probText(sr.Chosen.Prob), alts(sr)
			ov.Jump = slices.IndexFunc(d.Walk.Moments, func(x lessons.Moment) bool { return x.Step == k })
		}
		v.Tokens = append(v.Tokens, ov)
		k++
	}
	v.Legend = len(v.Tokens) > 0
	return v
}
