package static

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"codeberg.org/go-fonts/liberation/liberationmonoregular"
	"codeberg.org/go-fonts/liberation/liberationsansregular"

	"tracer/web/sfnt"
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
// starts (PageFonts); an exported file carries each face cut to the
// characters it uses (subsetFont). The charts are measured by gonum/plot
// with Liberation Sans and Mono; the page serves those two fonts unmodified
// from the Go module the binary already holds, as "Liberation Sans" and
// "Liberation Mono", so chart text renders with the metrics it was laid out
// with, and an export carries them cut like the others. All are under the
// SIL Open Font License (static/fonts-OFL.txt).
var ChartFonts = map[string][]byte{
	"font-chart-sans.ttf": liberationsansregular.TTF,
	"font-chart-mono.ttf": liberationmonoregular.TTF,
}

// CSSURL matches url(NAME) in a stylesheet, NAME a bare file name.
var CSSURL = regexp.MustCompile(`url\(([A-Za-z0-9._-]+)\)`)

// VersionCSSURLs points every url(NAME) of a stylesheet at the asset's
// cache-busting URL, so fonts are cached for good like the stylesheet.
func VersionCSSURLs(css []byte, url func(string) (string, bool)) []byte {
	return CSSURL.ReplaceAllFunc(css, func(m []byte) []byte {
		name := string(CSSURL.FindSubmatch(m)[1])
		if u, ok := url(name); ok {
			return bytes.Join([][]byte{[]byte("url("), []byte(u), []byte(")")}, nil)
		}
		return m
	})
}

// PageFonts packs the shipped TrueType faces (static/font-*.ttf) as WOFF
// for the page, by served name (font-sans-regular.woff). The result never
// changes, so it is packed once per process (about 80 ms) and shared by
// every server.
var PageFonts = sync.OnceValues(func() (map[string][]byte, error) {
	names, err := fs.Glob(FS, "font-*.ttf")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, name := range names {
		ttf, err := FS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		w, err := sfnt.WOFF(ttf)
		if err != nil {
			return nil, fmt.Errorf("web/static: pack %s as WOFF: %w", name, err)
		}
		out[strings.TrimSuffix(path.Base(name), ".ttf")+".woff"] = w
	}
	return out, nil
})

// FontSource is the TrueType font behind a stylesheet's url(NAME): a
// shipped face (font-sans-regular.woff is static/font-sans-regular.ttf) or
// a chart font; false when there is none.
func FontSource(name string) ([]byte, bool) {
	if b, ok := ChartFonts[name]; ok {
		return b, true
	}
	base, ok := strings.CutSuffix(name, ".woff")
	if !ok || strings.ContainsAny(base, "/\\") {
		return nil, false
	}
	b, err := FS.ReadFile(base + ".ttf")
	return b, err == nil
}
