package plots

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font"
)

// maxLabel is the most runes a token label shows before an ellipsis.
const maxLabel = 12

// tokenText says how tokens read in one output format: the marks that
// stand for whitespace, and which runes its fonts draw.
type tokenText struct {
	space, newline, tab string
	drawable            func(rune) bool // nil: every rune
}

// tokenTextFor decides how tokens read in format f. The SVG uses the
// page's marks (web/output.go): ␣ a space, ⏎ a newline, → a tab. Liberation
// lacks ␣ and ⏎, but the SVG's font-family falls back to the page's shipped
// faces (fontFallbacks), which hold them; the layout measures a missing
// rune as Liberation's .notdef, one cell of Liberation Mono, so a token
// label keeps the width it is drawn with. The PNG is drawn with Liberation
// alone and cannot fall back: · for a space, ¶ for a newline, → for a tab,
// and runes Liberation lacks are written as escapes.
func tokenTextFor(f Format) tokenText {
	if f == PNG {
		return tokenText{space: "·", newline: "¶", tab: "→", drawable: newGlyphs(mono).has}
	}
	return tokenText{space: "␣", newline: "⏎", tab: "→"}
}

// tokenLabel returns how a token reads on the candidates axis: its
// vocabulary string with what would be invisible made visible. A space and
// SentencePiece's ▁ (which stands for one) read as tt's space mark, a
// newline or carriage return as its newline mark, a tab as its tab mark;
// other control or invisible characters become Go escapes (\u200b), bytes
// that are not UTF-8 \xff. Byte-level BPE's Ġ and Ċ are shown as the
// vocabulary spells them: they are visible already, and in other
// vocabularies they are letters. A token without a string (no tokenizer)
// shows its id as #id. Runes tt's fonts cannot draw are escaped too; long
// labels end in an ellipsis.
func tokenLabel(tok string, id int, tt tokenText) string {
	if tok == "" {
		return "#" + strconv.Itoa(id)
	}
	var b strings.Builder
	n := 0
	for i, w := 0, 0; i < len(tok); i += w {
		r, size := utf8.DecodeRuneInString(tok[i:])
		w = size
		if n == maxLabel {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, tok[i])
		case r == ' ' || r == '▁':
			b.WriteString(tt.space)
		case r == '\n' || r == '\r':
			b.WriteString(tt.newline)
		case r == '\t':
			b.WriteString(tt.tab)
		case tt.drawable != nil && !tt.drawable(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(visibleRune(r))
		}
	}
	return b.String()
}

// cleanText makes s safe to draw as a title or key entry: bytes that are not
// UTF-8 and control or invisible characters other than the space and the
// no-break space (which keeps a unit by its number) become escapes.
func cleanText(s string) string {
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || r == '\u00a0':
			b.WriteRune(r)
		default:
			b.WriteString(visibleRune(r))
		}
	}
	return b.String()
}

// visibleRune returns r, or an escape when r would draw as nothing.
func visibleRune(r rune) string {
	if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r) {
		return escapeRune(r)
	}
	return string(r)
}

// escapeRune writes r as Go would in a string literal: \n, \t, \r, \x00,
// \u200b or \U0001f600.
func escapeRune(r rune) string {
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

// glyphs reports whether a font has a glyph for a rune, for the PNG, whose
// fonts cannot fall back to others as a browser does.
type glyphs struct {
	face *sfnt.Font
	buf  sfnt.Buffer
}

func newGlyphs(f font.Font) *glyphs {
	return &glyphs{face: font.DefaultCache.Lookup(f, tickSize).Face}
}

// has reports whether the font draws r.
func (g *glyphs) has(r rune) bool {
	i, err := g.face.GlyphIndex(&g.buf, r)
	return err == nil && i != 0
}

// Font families the SVG names, with fallbacks. The layout was measured
// with Liberation, which the page serves as a web font. What Liberation
// lacks (the whitespace marks ␣ ⏎, Devanagari) falls back to the page's
// shipped faces, "tracer mono" and "tracer" (web/static/style.css declares
// them with unicode-range), as the page's own text does. They come before
// any installed font, which would otherwise draw those characters (DejaVu
// on a Linux machine, for a page in Hindi). Arial, Helvetica and Cousine
// have Liberation's metrics, for an SVG shown outside the page.
var fontFallbacks = [][2][]byte{
	{[]byte("font-family:Liberation Sans;"), []byte("font-family:Liberation Sans,'tracer',Arial,Helvetica,sans-serif;")},
	{[]byte("font-family:Liberation Mono;"), []byte("font-family:Liberation Mono,'tracer mono','tracer',Cousine,monospace;")},
}

// inlineSVG makes a vgsvg document fit to inline into HTML: it drops the
// XML prolog and the generator's comment before <svg, and gives the font
// families fallbacks.
func inlineSVG(doc []byte) []byte {
	if i := bytes.Index(doc, []byte("<svg")); i > 0 {
		doc = doc[i:]
	}
	for _, f := range fontFallbacks {
		doc = bytes.ReplaceAll(doc, f[0], f[1])
	}
	return doc
}
