// Package static holds the page's assets, built into the binary so that
// the page works offline: its stylesheet and scripts, the icon, and the
// shipped fonts (Noto Sans, Noto Sans Devanagari, Noto Sans Mono and
// Symbols 2 subsets, under the SIL Open Font License in fonts-OFL.txt).
// The server serves them under content-hashed URLs (the page's faces
// packed as WOFF, PageFonts); the one-file export inlines them. It imports
// only web/sfnt (the font packer) of tracer.
package static

import "embed"

// FS holds every asset by its file name: "style.css", "font-sans-regular.ttf".
//
//go:embed *.css *.js *.svg *.ttf *.txt
var FS embed.FS
