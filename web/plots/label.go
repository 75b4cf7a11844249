package plots

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"tracer/web/marks"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font"
)

// maxLabel is the most runes a token label shows before an ellipsis.
const maxLabel = 12

// tokenTextFor decides how tokens read in format f. The SVG uses the
// page's marks (web/marks): ␣ a space, ⏎ a newline, → a tab. Liberation
// lacks ␣ and ⏎, but the SVG's font-family falls back to the page's shipped
// faces (fontFallbacks), which hold them; the layout measures a missing
// rune as Liberation's .notdef, one cell of Liberation Mono, so a token
// label keeps the width it is drawn with. The PNG is drawn with Liberation
// alone and cannot fall back: · for a space, ¶ for a newline, → for a tab,
// and runes Liberation lacks are written as escapes.
func tokenTextFor(f Format) marks.Style {
	if f == PNG {
		return marks.Style{Space: "·", Newline: "¶", Tab: "→", Drawable: newGlyphs(mono).has}
	}
	return marks.Page
}

// tokenLabel returns how a token reads on the candidates axis: as the page
// writes it (web/marks) in style tt, at most maxLabel runes; a token
// without a string (no tokenizer) shows its id as #id.
func tokenLabel(tok string, id int, tt marks.Style) string {
	if tok == "" {
		return "#" + strconv.Itoa(id)
	}
	return tt.Write(tok, maxLabel)
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
			b.WriteString(marks.Visible(r))
		}
	}
	return b.String()
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
