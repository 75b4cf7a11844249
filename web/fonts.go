package web

import (
	"bytes"
	"regexp"

	"codeberg.org/go-fonts/liberation/liberationmonoregular"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
)

// The page ships every font it uses, so English and Hindi look the same on
// any machine, including one with only DejaVu installed (where Devanagari
// would otherwise be a row of boxes). style.css declares them with
// @font-face under two families, "tracer" (text) and "tracer mono" (tokens,
// code), each split by unicode-range into:
//
//   - font-sans-{regular,bold}.woff2: Noto Sans, Latin (U+0020–017F, general
//     punctuation, €, ™, −);
//   - font-devanagari-{regular,bold}.woff2: Noto Sans Devanagari (U+0900–097F,
//     U+1CD0–1CFF, U+A8E0–A8FF, ZWNJ/ZWJ, the dotted circle);
//   - font-mono-{regular,bold}.woff2: Noto Sans Mono, Latin plus arrows,
//     mathematical operators and geometric shapes (also the text family's
//     source for those);
//   - font-symbols-regular.woff2: Noto Sans Symbols 2 for the media-control
//     and check-mark symbols (⏮ ⏭ ⏸ ✓ ✗ ␣ ⏎).
//
// The subsets were made from Debian's fonts-noto-core 20201225-1 with
// fontTools (python3-fonttools, python3-brotli):
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
// (and likewise for the bold faces). The charts are measured by gonum/plot
// with Liberation Sans and Mono; the page serves those two fonts unmodified
// from the Go module the binary already holds, as "Liberation Sans" and
// "Liberation Mono", so chart text renders with the metrics it was laid out
// with. All are under the SIL Open Font License (static/fonts-OFL.txt).
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
