package export

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"tracer/web/sfnt"

	"tracer/web/static"
)

// subsetFont is name's font cut to the characters keep holds for, packed
// as WOFF.
func subsetFont(name string, keep func(rune) bool) ([]byte, error) {
	ttf, ok := static.FontSource(name)
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
		m := static.CSSURL.FindSubmatch(rule)
		if m == nil || err != nil || !fontNeeded(string(rule), used) {
			return nil
		}
		if _, chart := static.ChartFonts[string(m[1])]; chart && !charts {
			return nil
		}
		if _, ok := static.FontSource(string(m[1])); !ok {
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
