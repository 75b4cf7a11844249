package plots

import (
	"math"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// svgText is the SVG's text handler: text.Plain, except that a character
// Liberation lacks, which the page draws from its shipped faces through
// the SVG's font-family fallback (fontFallbacks), is measured as those
// faces draw it rather than as Liberation's .notdef box (0.75 em in Sans,
// 0.6 em in Mono). Centred and right-aligned text is placed by the same
// measure, so a label stays centred on its tick.
type svgText struct{ text.Plain }

// fallbackAdvance is the advance, in em, of a character Liberation lacks as
// the page's shipped faces draw it (measured in Chromium): the whitespace
// marks from Noto Sans Symbols 2, and Devanagari from Noto Sans Devanagari,
// where a vowel sign above or below (a nonspacing mark: ु े ं ्) takes no
// room, one beside its consonant (a spacing mark: ा ि ी) about a quarter
// em, and a letter about 0.62 em (क 0.76, च र ण 0.59 on average; a
// conjunct, narrower than its letters, is overestimated). ok is false for
// other characters, which keep Liberation's measure.
func fallbackAdvance(r rune) (em float64, ok bool) {
	switch {
	case r == '␣':
		return 0.695, true
	case r == '⏎':
		return 0.749, true
	case r < 0x0900 || r > 0x097f:
		return 0, false
	case unicode.Is(unicode.Mn, r):
		return 0, true
	case unicode.Is(unicode.Mc, r):
		return 0.26, true
	}
	return 0.62, true
}

// width is txt's width in fnt, the characters Liberation lacks measured by
// fallbackAdvance.
func (h svgText) width(txt string, fnt font.Font) vg.Length {
	face := h.Fonts.Lookup(fnt, fnt.Size)
	w := face.Width(txt)
	var buf sfnt.Buffer
	for _, r := range txt {
		if i, err := face.Face.GlyphIndex(&buf, r); err == nil && i != 0 {
			continue
		}
		if em, ok := fallbackAdvance(r); ok {
			w += vg.Length(em)*fnt.Size - face.Width(string(r))
		}
	}
	return w
}

// Box implements text.Handler. Measures are memoized (boxes).
func (h svgText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	key := boxKey{fonts: h.Fonts, font: fnt, txt: txt}
	if b, ok := boxes.get(key); ok {
		return b[0], b[1], b[2]
	}
	_, height, depth = h.Plain.Box(txt, fnt)
	width = h.width(txt, fnt)
	boxes.put(key, [3]vg.Length{width, height, depth})
	return width, height, depth
}

// boxes memoizes svgText.Box. Measuring a text walks its glyphs and kerning
// pairs in the font, allocating as it goes; a chart measures its tick
// labels and titles several times while it lays out, and the charts of a
// class's pages share most of them. Up to maxBoxes measures are kept; the
// memo starts afresh when full.
var boxes = &boxMemo{m: map[boxKey][3]vg.Length{}}

const maxBoxes = 1 << 14

type boxKey struct {
	fonts *font.Cache
	font  font.Font
	txt   string
}

type boxMemo struct {
	mu sync.Mutex
	m  map[boxKey][3]vg.Length
}

func (b *boxMemo) get(k boxKey) ([3]vg.Length, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

func (b *boxMemo) put(k boxKey, v [3]vg.Length) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) >= maxBoxes {
		clear(b.m)
	}
	b.m[k] = v
}

// Draw implements text.Handler. text.Plain aligns a line by Liberation's
// measure; the point moves along the text's direction by the difference.
func (h svgText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	line := strings.TrimRight(txt, "\n")
	if sty.XAlign != 0 && !strings.Contains(line, "\n") {
		face := h.Fonts.Lookup(sty.Font, sty.Font.Size)
		plain := face.Width(line)
		shift := vg.Length(sty.XAlign) * (h.width(line, sty.Font) - plain)
		sin, cos := math.Sincos(sty.Rotation)
		pt.X += shift * vg.Length(cos)
		pt.Y += shift * vg.Length(sin)
	}
	h.Plain.Draw(c, txt, sty, pt)
}
