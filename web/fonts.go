package web

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"tracer/web/sfnt"

	"tracer/web/static"

	"codeberg.org/go-fonts/liberation/liberationmonoregular"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
)

// The page ships every font it uses, so English and Hindi look the same on
// any machine, including one with only DejaVu installed (where Devanagari
// would otherwise be a row of boxes). style.css declares them with
// @font-face under two families, "tracer" (text) and "tracer mono" (tokens,
// code), each split by unicode-range into:
//
//   - font-sans-{regular,bold}.ttf: Noto Sans, Latin (U+0020–017F, general
//     punctuation, €, ™, −);
//   - font-devanagari-{regular,bold}.ttf: Noto Sans Devanagari (U+0900–097F,
//     U+1CD0–1CFF, U+A8E0–A8FF, ZWNJ/ZWJ, the dotted circle);
//   - font-mono-{regular,bold}.ttf: Noto Sans Mono, Latin plus arrows,
//     mathematical operators and geometric shapes (also the text family's
//     source for those);
//   - font-symbols-regular.ttf: Noto Sans Symbols 2 for the media-control
//     and check-mark symbols (⏮ ⏭ ⏸ ✓ ✗ ␣ ⏎).
//
// The subsets were made from Debian's fonts-noto-core 20201225-1 with
// fontTools (python3-fonttools, python3-brotli), first as WOFF2:
//
//	pyftsubset NotoSans-Regular.ttf --flavor=woff2 --layout-features='*' \
//	  --unicodes=U+0020-007E,U+00A0-017F,U+0192,U+02C6,U+02DA,U+02DC,U+2000-206F,U+20AC,U+2122,U+2212 \
//	  --output-file=font-sans-regular.woff2
//	pyftsubset NotoSansDevanagari-Regular.ttf ... \
//	  --unicodes=U+0900-097F,U+1CD0-1CFF,U+200C-200D,U+25CC,U+A8E0-A8FF,U+0020-0040,U+00A0
//	pyftsubset NotoSansMono-Regular.ttf ... \
//	  --unicodes=U+0020-007E,U+00A0-017F,U+2000-206F,U+2190-21FF,U+2200-22FF,U+25A0-25FF
//	pyftsubset NotoSansSymbols2-Regular.ttf ... \
//	  --unicodes=U+2190-21FF,U+2300-23FF,U+2400-243F,U+25A0-25FF,U+2600-26FF,U+2700-27BF,U+2B00-2BFF
//
// (and likewise for the bold faces), then each WOFF2 was turned back into
// the TrueType font the repository holds, so tracer can cut it further
// without a Brotli coder (package sfnt):
//
//	python3 -c "from fontTools.ttLib import TTFont; f=TTFont('font-sans-regular.woff2'); f.flavor=None; f.save('font-sans-regular.ttf')"
//
// The page serves each face as WOFF, packed once when the first server
// starts (pageFonts); an exported file carries each face cut to the
// characters it uses (subsetFont). The charts are measured by gonum/plot
// with Liberation Sans and Mono; the page serves those two fonts unmodified
// from the Go module the binary already holds, as "Liberation Sans" and
// "Liberation Mono", so chart text renders with the metrics it was laid out
// with, and an export carries them cut like the others. All are under the
// SIL Open Font License (static/fonts-OFL.txt).
var chartFonts = map[string][]byte{
	"font-chart-sans.ttf": liberationsansregular.TTF,
	"font-chart-mono.ttf": liberationmonoregular.TTF,
}

// cssURL matches url(NAME) in a stylesheet, NAME a bare file name.
var cssURL = regexp.MustCompile(`url\(([A-Za-z0-9._-]+)\)`)

// versionCSSURLs points every url(NAME) of a stylesheet at the asset's
// cache-busting URL, so fonts are cached for good like the stylesheet.
func versionCSSURLs(css []byte, url func(string) (string, bool)) []byte {
	return cssURL.ReplaceAllFunc(css, func(m []byte) []byte {
		name := string(cssURL.FindSubmatch(m)[1])
		if u, ok := url(name); ok {
			return bytes.Join([][]byte{[]byte("url("), []byte(u), []byte(")")}, nil)
		}
		return m
	})
}

// pageFonts packs the shipped TrueType faces (static/font-*.ttf) as WOFF
// for the page, by served name (font-sans-regular.woff). The result never
// changes, so it is packed once per process (about 80 ms) and shared by
// every server.
var pageFonts = sync.OnceValues(func() (map[string][]byte, error) {
	names, err := fs.Glob(static.FS, "font-*.ttf")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, name := range names {
		ttf, err := static.FS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		w, err := sfnt.WOFF(ttf)
		if err != nil {
			return nil, fmt.Errorf("web: pack %s as WOFF: %w", name, err)
		}
		out[strings.TrimSuffix(path.Base(name), ".ttf")+".woff"] = w
	}
	return out, nil
})

// fontSource is the TrueType font behind a stylesheet's url(NAME): a
// shipped face (font-sans-regular.woff is static/font-sans-regular.ttf) or
// a chart font; false when there is none.
func fontSource(name string) ([]byte, bool) {
	if b, ok := chartFonts[name]; ok {
		return b, true
	}
	base, ok := strings.CutSuffix(name, ".woff")
	if !ok || strings.ContainsAny(base, "/\\") {
		return nil, false
	}
	b, err := static.FS.ReadFile(base + ".ttf")
	return b, err == nil
}

// subsetFont is name's font cut to the characters keep holds for, packed
// as WOFF.
func subsetFont(name string, keep func(rune) bool) ([]byte, error) {
	ttf, ok := fontSource(name)
	if !ok {
		return nil, fmt.Errorf("web: no font behind url(%s)", name)
	}
	sub, err := sfnt.Subset(ttf, keep)
	if err != nil {
		return nil, fmt.Errorf("web: subset %s: %w", name, err)
	}
	w, err := sfnt.WOFF(sub)
	if err != nil {
		return nil, fmt.Errorf("web: pack %s as WOFF: %w", name, err)
	}
	return w, nil
}

// fontFace matches one @font-face rule of style.css.
var fontFace = regexp.MustCompile(`@font-face \{[^}]*\}`)

// fontRange matches one range of a unicode-range: U+0900-097F or U+25CC.
var fontRange = regexp.MustCompile(`U\+([0-9A-Fa-f]+)(?:-([0-9A-Fa-f]+))?`)

// inlineFonts puts the page's fonts, and the charts' when the file has
// charts, into the stylesheet as WOFF data: URLs, each cut to the
// characters the file uses that its unicode-range covers (see charsFor).
// A rule whose face the file does not need is dropped, as is one whose
// font tracer does not hold.
func inlineFonts(css []byte, used map[rune]bool, charts bool) ([]byte, error) {
	var err error
	out := fontFace.ReplaceAllFunc(css, func(rule []byte) []byte {
		m := cssURL.FindSubmatch(rule)
		if m == nil || err != nil || !fontNeeded(string(rule), used) {
			return nil
		}
		if _, chart := chartFonts[string(m[1])]; chart && !charts {
			return nil
		}
		if _, ok := fontSource(string(m[1])); !ok {
			return nil
		}
		font, ferr := subsetFont(string(m[1]), charsFor(string(rule), used))
		if ferr != nil {
			err = ferr
			return nil
		}
		rule = bytes.Replace(rule, m[0], []byte("url(data:font/woff;base64,"+base64.StdEncoding.EncodeToString(font)+")"), 1)
		return fontFormat.ReplaceAll(rule, []byte(`format("woff")`))
	})
	return out, err
}

// fontFormat matches a @font-face rule's format("...") hint.
var fontFormat = regexp.MustCompile(`format\("[a-z0-9-]*"\)`)

// charsFor is what a face keeps: the characters of used its rule's
// unicode-range covers, and printable ASCII (what the scripts write:
// digits, the error box's message), and the dotted circle with any
// Devanagari (the shaper draws a mark that has no base on it).
func charsFor(rule string, used map[rune]bool) func(rune) bool {
	ranges := unicodeRanges(rule)
	devanagari := false
	for r := range used {
		devanagari = devanagari || r >= 0x0900 && r <= 0x097F
	}
	return func(r rune) bool {
		if ranges != nil && !slices.ContainsFunc(ranges, func(x [2]rune) bool { return r >= x[0] && r <= x[1] }) {
			return false
		}
		return used[r] || r >= 0x20 && r < 0x7F || r == 0x25CC && devanagari
	}
}

// unicodeRanges is a @font-face rule's unicode-range as [lo, hi] pairs;
// nil when it has none (the face covers every character) or one that does
// not parse.
func unicodeRanges(rule string) [][2]rune {
	i := strings.Index(rule, "unicode-range:")
	if i < 0 {
		return nil
	}
	var out [][2]rune
	for _, m := range fontRange.FindAllStringSubmatch(rule[i:], -1) {
		lo, err1 := strconv.ParseUint(m[1], 16, 21)
		hi := lo
		var err2 error
		if m[2] != "" {
			hi, err2 = strconv.ParseUint(m[2], 16, 21)
		}
		if err1 != nil || err2 != nil {
			return nil
		}
		out = append(out, [2]rune{rune(lo), rune(hi)})
	}
	return out
}

// fontNeeded reports whether a @font-face rule's unicode-range covers a
// character in used, or ASCII letters (the text every file has); a rule
// without a range covers everything.
func fontNeeded(rule string, used map[rune]bool) bool {
	ranges := unicodeRanges(rule)
	if ranges == nil {
		return true
	}
	for _, x := range ranges {
		if x[0] <= 'z' && x[1] >= 'a' {
			return true
		}
		for r := range used {
			if r >= x[0] && r <= x[1] {
				return true
			}
		}
	}
	return false
}
