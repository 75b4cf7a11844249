// Helpers the templates call: test ids, styles and the visible form of a
// token's whitespace.

package view

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/a-h/templ"

	"tracer/lessons"
	"tracer/web/static"
)

// AttnLinks is how many of the strongest earlier keys the attention panel
// draws links to.
const AttnLinks = 3

// testID names an element for tests: "table-row" or "table-row-active".
func testID(base string, active bool) string {
	if active {
		return base + "-active"
	}
	return base
}

// counterText is the step counter of the phone's toolbar: "4 / 10" at
// the fourth of ten positions, "0 / 0" with none. app.js and export.js
// write it the same way as the learner steps.
func counterText(index, count int) string {
	if count == 0 {
		return "0 / 0"
	}
	return strconv.Itoa(index+1) + " / " + strconv.Itoa(count)
}

// lineTestID names a listing line for tests: active lines get activeID.
func lineTestID(active bool, activeID string) string {
	if active {
		return activeID
	}
	return "code-line"
}

// rowTestID names a batch row for tests: "junk-row" when it differs from
// the left-padded run.
func rowTestID(junk bool) string {
	if junk {
		return "junk-row"
	}
	return "batch-row"
}

// sideRowTestID names a side-by-side row for tests: "part-ways" for the
// step where the runs part ways.
func sideRowTestID(first bool) string {
	if first {
		return "part-ways"
	}
	return "side-row"
}

// TintStyle sets a tint's opacity, a number inside.go formats itself.
func TintStyle(tint string) templ.SafeCSS {
	if x, err := strconv.ParseFloat(tint, 64); err != nil || !(x >= 0 && x <= 1) {
		tint = "0"
	}
	return templ.SafeCSS("--tint: " + tint + ";")
}

// gridColumns lays out the head grid: the layer numbers, then n cells.
func gridColumns(n int) templ.SafeCSS {
	return templ.SafeCSS("grid-template-columns: auto repeat(" + strconv.Itoa(n) + ", minmax(2rem, 1fr));")
}

// insideScript is the URL of static/inside.js, the attention panel's
// script, with the content hash staticFiles.url gives it.
func insideScript() string {
	b, err := static.FS.ReadFile("inside.js")
	if err != nil { // built in: cannot fail
		return "/static/inside.js"
	}
	sum := sha256.Sum256(b)
	return "/static/inside.js?v=" + hex.EncodeToString(sum[:6])
}

// LangQuery is the query that keeps a language across links: "" for English.
func LangQuery(lang string) string {
	if lang == lessons.English {
		return ""
	}
	return "?lang=" + lang
}
