// Package marks writes a token as every part of tracer's page shows it:
// the page's panels, its charts, its lessons and its one-file export. What
// would be invisible is made visible: a space (and SentencePiece's ▁,
// which stands for one) reads ␣, a newline or carriage return ⏎, a tab →;
// other control and invisible characters are written as Go escapes
// (\u200b), bytes that are not UTF-8 as \xff. Byte-level BPE's Ġ and Ċ
// stay as the vocabulary spells them: they are visible already, and in
// other vocabularies they are letters. The page's script reads the marks
// back the same way (static/app.js, plainToken).
//
// marks imports nothing of tracer's: every room of web/ may use it.
package marks

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The page's marks. The fonts tracer ships (web/static) hold all three.
const (
	Space   = "␣" // U+2423 OPEN BOX: a space, or SentencePiece's ▁
	Newline = "⏎" // U+23CE RETURN SYMBOL: a newline or carriage return
	Tab     = "→" // U+2192 RIGHTWARDS ARROW: a tab
)

// Style is how whitespace reads in one medium, and which runes its fonts
// draw (nil: every rune); runes it cannot draw are escaped.
type Style struct {
	Space, Newline, Tab string
	Drawable            func(rune) bool
}

// Page is the style of the page, its SVG charts and the export.
var Page = Style{Space: Space, Newline: Newline, Tab: Tab}

// Token returns tok as the page shows it.
func Token(tok string) string { return Page.Write(tok, 0) }

// TokenOrID returns tok as the page shows it, or #id when the trace has
// no string for it (a model without a tokenizer).
func TokenOrID(tok string, id int) string {
	if tok == "" {
		return "#" + strconv.Itoa(id)
	}
	return Token(tok)
}

// Write returns tok written in style s, at most max runes and then an
// ellipsis (0: no limit).
func (s Style) Write(tok string, max int) string {
	if !needsMarks(tok, s.Drawable != nil) {
		if max == 0 || utf8.RuneCountInString(tok) <= max {
			return tok
		}
	}
	var b strings.Builder
	n := 0
	for i, w := 0, 0; i < len(tok); i += w {
		r, size := utf8.DecodeRuneInString(tok[i:])
		w = size
		if max > 0 && n == max {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, tok[i])
		case r == ' ' || r == '▁':
			b.WriteString(s.Space)
		case r == '\n' || r == '\r':
			b.WriteString(s.Newline)
		case r == '\t':
			b.WriteString(s.Tab)
		case s.Drawable != nil && !s.Drawable(r):
			b.WriteString(Escape(r))
		default:
			b.WriteString(Visible(r))
		}
	}
	return b.String()
}

// needsMarks reports whether tok holds anything Write changes; with
// drawable every rune must be checked against the fonts.
func needsMarks(tok string, drawable bool) bool {
	if drawable || !utf8.ValidString(tok) {
		return true
	}
	for _, r := range tok {
		if r == '▁' || r < 0x80 && (r <= ' ' || r == 0x7f) || r >= 0x80 && Visible(r) != string(r) {
			return true
		}
	}
	return false
}

// Visible returns r, or its escape when r would draw as nothing.
func Visible(r rune) string {
	if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r) {
		return Escape(r)
	}
	return string(r)
}

// Escape writes r as Go would in a string literal: \n, \t, \r, \x00,
// \u200b or \U0001f600.
func Escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}
