// Package plots draws the step-through debugger's charts of a trace with
// gonum/plot: the candidates of one step, the model's confidence over the
// steps, the KV cache's growth and what each step cost. A chart comes back as
// SVG, to inline into the page, or as PNG, to download.
//
// Render takes the main run and, optionally, runs to overlay on it (a
// comparison, or the same prompt with the KV cache on and off). Output is
// deterministic: the same traces, step and options give the same bytes, so
// the server may cache charts and tests may compare them.
//
// Steps are passed as 0-based trace indexes (trace.Step.Index) and shown
// 1-based, as the page shows them ("step 3 of 4"). Tokens are labelled with
// their vocabulary strings, whitespace made visible with the page's marks
// in the SVG (␣ a space or SentencePiece's ▁, ⏎ a newline, → a tab) and
// with marks Liberation draws in the PNG (·, ¶, →). The words a chart
// draws come in Options.Words, in the reader's language.
//
// It imports gonum/plot (and its font packages) and the trace format, and
// nothing of web.
package plots

import (
	"errors"
	"fmt"
	"strconv"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"

	"tracer/trace"
)

// Chart names one of the charts Render draws.
type Chart string

// The charts. Each reads row 0 of every step (the single prompt, or the first
// row of a batch or beam).
const (
	// Candidates is a bar chart of one step's leading candidates: the raw
	// probability of each (softmax of the logits) beside its final
	// probability (after every processor), the chosen token highlighted.
	// Only the main run is drawn.
	Candidates Chart = "candidates"

	// Confidence plots, over the steps, the raw top-1 probability (with the
	// chosen token's final probability for the main run) above the entropy
	// of the raw distribution in nats.
	Confidence Chart = "confidence"

	// KV plots the KV cache's size in bytes after each step.
	KV Chart = "kv"

	// Cost plots what each step cost: bytes moved (weights read plus KV
	// cache read and written), arithmetic, and wall time in milliseconds,
	// the glyph telling prefill, decode and full (cache off) steps apart.
	// Overlay the same run with the cache off to see recomputation grow.
	Cost Chart = "cost"
)

// Charts lists every chart, in the order the page shows them.
func Charts() []Chart { return []Chart{Candidates, Confidence, KV, Cost} }

// Format is an output format.
type Format int

// The formats.
const (
	// SVG is an <svg> element without XML prolog or DOCTYPE, safe to inline
	// into HTML: no scripts, no external fonts or URLs, every text escaped.
	// Its font is Liberation Sans (Mono for tokens), then the page's
	// shipped families "tracer" and "tracer mono" for what Liberation
	// lacks (␣ ⏎, Devanagari), then metric-compatible fallbacks (Arial,
	// Helvetica, Cousine) and the generic family.
	SVG Format = iota

	// PNG is a PNG image of exactly Options.Width × Options.Height pixels,
	// drawn with the embedded Liberation fonts. Token characters they lack
	// (CJK, emoji) are written as escapes, \u65e5, rather than as boxes.
	PNG
)

// ContentType returns the MIME type of f, for the HTTP response.
func (f Format) ContentType() string {
	switch f {
	case SVG:
		return "image/svg+xml"
	case PNG:
		return "image/png"
	}
	return "application/octet-stream"
}

// String returns "svg" or "png", the file extension.
func (f Format) String() string {
	switch f {
	case SVG:
		return "svg"
	case PNG:
		return "png"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Options size and colour a chart.
type Options struct {
	// Width and Height are the chart's size in CSS pixels (1/96 inch); the
	// PNG has exactly this many pixels. Zero picks the default: 640 wide,
	// and 160 px high per panel plus 160 for the title, key and axes
	// (Candidates and KV 320, Confidence 480, Cost 640 at 640 wide); a
	// narrower chart has lower panels, down to 120 px at 320 wide. Width
	// may be 320 to 4096, height 5/8 of the default to 4096.
	//
	// Text is 13 px or more at this size: shown on a page, the chart should
	// be scaled to no less than MinScale of it to keep text at 11 px.
	Width, Height int

	// Dark draws light ink on the page's dark panel colour; otherwise dark
	// ink on white. The palettes are the page's own (web/static/style.css).
	Dark bool

	// Names label the runs in the key: Names[i] is runs[i]'s. Missing names
	// are derived: "cache on" and "cache off" when the runs differ in
	// use_cache, the model names when those differ, else "run 1", "run 2"
	// (in Words).
	Names []string

	// Words are the chart's words in the reader's language; empty fields
	// read in English. The SVG draws any script through the page's fonts;
	// the PNG, drawn with Liberation alone, keeps English for a text that
	// has a character Liberation lacks (Devanagari, say).
	Words Words
}

// MinScale is the least a page may shrink a chart (displayed width over
// Options.Width) and keep its smallest text at 11 CSS px or more.
const MinScale = minTextScale

// NoStep asks a chart over the steps (Confidence, KV, Cost) for no
// current-step marker: the page's position is before the first step.
const NoStep = -1

// Errors Render wraps; test for them with errors.Is.
var (
	// ErrUnknownChart means the chart name is none of Charts().
	ErrUnknownChart = errors.New("unknown chart")

	// ErrStep means the step is outside the main run's steps.
	ErrStep = errors.New("step out of range")

	// ErrNoData means the main run lacks what the chart plots: no steps,
	// no candidates, or no KV cache or traffic records (the toy model has
	// neither: a table lookup keeps no cache and moves no weights). The
	// server should leave the chart out rather than draw an empty one.
	ErrNoData = errors.New("no data")
)

// Limits on the requested size, in CSS pixels: narrower cannot hold the
// axes and the key, larger is a mistake (and a memory bill for the PNG).
// The least height is 5/8 of the chart's default.
const (
	minWidth = 320
	maxSide  = 4096
)

// Render draws chart c of runs at step and encodes it as f. runs[0] is the
// main run; the others are overlaid on the charts over steps (Candidates
// draws the main run only). step is a 0-based index into runs[0].Steps, or
// NoStep for a chart over steps without a marker.
//
// Errors wrap ErrUnknownChart, ErrStep or ErrNoData, or say what is wrong
// with the arguments; Render does not panic on any trace, empty ones
// included. It is safe for concurrent use and does not modify runs.
func Render(c Chart, runs []*trace.Trace, step int, f Format, opts Options) ([]byte, error) {
	if f != SVG && f != PNG {
		return nil, fmt.Errorf("plots: unknown format %d", int(f))
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("plots: %s: no trace to draw", c)
	}
	for i, r := range runs {
		if r == nil {
			return nil, fmt.Errorf("plots: %s: run %d is nil", c, i)
		}
	}
	if err := checkStep(c, runs[0], step); err != nil {
		return nil, err
	}
	if w := opts.Width; w != 0 && (w < minWidth || w > maxSide) {
		return nil, fmt.Errorf("plots: %s: width %d px: want 0 (default) or %d…%d", c, w, minWidth, maxSide)
	}
	if h := opts.Height; h < 0 || h > maxSide {
		return nil, fmt.Errorf("plots: %s: height %d px: want 0 (default) or at most %d", c, h, maxSide)
	}
	pal := lightPalette
	if opts.Dark {
		pal = darkPalette
	}
	if f == SVG {
		pal.handler = svgText{text.Plain{Fonts: font.DefaultCache}}
	}
	w := opts.Width
	if w == 0 {
		w = defaultWidth
	}
	fr, err := build(c, runs, step, f, w, pal, opts.Names, opts.Words.forFormat(f))
	if err != nil {
		return nil, err
	}
	h := opts.Height
	if h == 0 {
		h = fr.defaultHeight(w)
	}
	if least := fr.defaultHeight(w) * 5 / 8; h < least {
		return nil, fmt.Errorf("plots: %s: height %d px: want 0 (default) or %d…%d for its %d panels", c, h, least, maxSide, len(fr.panels))
	}
	return fr.encode(f, w, h, pal)
}

// build lays out chart c for a canvas w pixels wide.
func build(c Chart, runs []*trace.Trace, step int, f Format, w int, pal palette, given []string, words Words) (*frame, error) {
	switch c {
	case Candidates:
		return candidatesChart(runs[0], step, w, pal, words, tokenTextFor(f))
	case Confidence:
		return confidenceChart(runs, names(runs, given, words), step, pal, words)
	case KV:
		return kvChart(runs, names(runs, given, words), step, pal, words)
	case Cost:
		return costChart(runs, names(runs, given, words), step, pal, words)
	}
	return nil, fmt.Errorf("plots: %w %q", ErrUnknownChart, string(c))
}

// checkStep validates the chart name and the step against the main run.
func checkStep(c Chart, t *trace.Trace, step int) error {
	n := len(t.Steps)
	switch c {
	case Candidates:
		if n == 0 {
			return fmt.Errorf("plots: %s: %w: the trace records no steps", c, ErrNoData)
		}
		if step < 0 || step >= n {
			return fmt.Errorf("plots: %s: %w: step %d, want 0…%d", c, ErrStep, step, n-1)
		}
	case Confidence, KV, Cost:
		if n == 0 {
			return fmt.Errorf("plots: %s: %w: the trace records no steps", c, ErrNoData)
		}
		if step != NoStep && (step < 0 || step >= n) {
			return fmt.Errorf("plots: %s: %w: step %d, want 0…%d or NoStep", c, ErrStep, step, n-1)
		}
	default:
		return fmt.Errorf("plots: %w %q: want one of %q", ErrUnknownChart, string(c), Charts())
	}
	return nil
}

// names returns the key's name for each run: given ones first, then derived.
func names(runs []*trace.Trace, given []string, words Words) []string {
	out := make([]string, len(runs))
	cacheDiffers, modelDiffers := false, false
	for _, r := range runs[1:] {
		cacheDiffers = cacheDiffers || r.Options.UseCache != runs[0].Options.UseCache
		modelDiffers = modelDiffers || r.Model.Name != runs[0].Model.Name
	}
	for i, r := range runs {
		switch {
		case i < len(given) && given[i] != "":
			out[i] = cleanText(given[i])
		case cacheDiffers && r.Options.UseCache:
			out[i] = words.CacheOn
		case cacheDiffers:
			out[i] = words.CacheOff
		case modelDiffers && r.Model.Name != "":
			out[i] = cleanText(r.Model.Name)
		default:
			out[i] = fill(words.RunN, "n", strconv.Itoa(i+1))
		}
	}
	return out
}
