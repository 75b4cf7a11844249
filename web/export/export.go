// Package export writes a document as one self-contained HTML file that
// steps through it offline as the page does (HTML, Document: every
// position rendered by web/view, packed by web/pack, with the page's
// stylesheet and fonts cut to the characters used), and as JSON traces
// (JSON: a run, or a comparison's runs in a zip archive). It imports
// web/runs for the documents and their views, and web/view, web/words,
// web/static, web/pack and web/sfnt; nothing below web imports it.
package export

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"tracer/lessons"
	"tracer/toy"
	"tracer/trace"
	"tracer/web/pack"
	"tracer/web/runs"
	"tracer/web/static"
	"tracer/web/view"
	"tracer/web/words"
)

// An exported file (tracer export --html, the page's Export HTML) is the
// page frozen: every position of the trace is rendered by the page's own
// components (Stepper, controls, keys) and a small script (export.js) swaps
// them as the reader steps. The first position is in the document itself,
// so it shows before any script runs; the others travel as one gzip stream
// of deduplicated fragments (a position repeats most of its neighbour's
// markup: the table, the listing, the chart axes), which the browser
// unpacks with DecompressionStream. The trace travels too, as JSON, so
// tracer validate and the page's Import read the file back.

// maxExportViews bounds the positions an export renders (steps × branches
// × rows): beyond it the file would take minutes to write and seconds to
// open.
const maxExportViews = 20000

// maxChartedViews bounds the positions an export draws charts for: each
// position's charts take milliseconds to draw, and the page's Export HTML
// draws them on the server.
const maxChartedViews = 2000

// Options says how ExportHTML writes a file.
type Options struct {
	Lang     string // the wording: "en" (default) or "hi"
	Source   string // where the trace came from, shown under the title: "trace.json"
	NoCharts bool   // leave out the charts panel (a smaller, faster file)
}

// Run is one run to export; several runs are shown side by side, as
// the page's comparison.
type Run struct {
	Trace *trace.Trace
	Label string // the run's label in a comparison: "greedy", "T=0.7"
}

// HTML writes runs as one self-contained HTML file that steps through
// them as the page does, offline: no request leaves it (its
// Content-Security-Policy forbids every fetch). A lone toy trace is
// narrated as the page narrates it.
func HTML(ctx context.Context, w io.Writer, rs []Run, o Options) error {
	if len(rs) == 0 {
		return errors.New("web: export: no trace to export")
	}
	lang := cmp.Or(o.Lang, lessons.English)
	if !slices.Contains(lessons.Languages(), lang) {
		return fmt.Errorf("web: export: unknown language %q: want one of %s", lang, strings.Join(lessons.Languages(), ", "))
	}
	book, err := words.Load()
	if err != nil {
		return fmt.Errorf("web: export: %w", err)
	}
	d := &runs.Document{Source: cmp.Or(o.Source, "exported trace")}
	for i, r := range rs {
		if r.Trace == nil {
			return fmt.Errorf("web: export: run %d has no trace", i)
		}
		d.Runs = append(d.Runs, runs.NewRun(uint64(i+1), r.Trace, r.Label))
	}
	if len(rs) > 1 {
		d.Compare = true
	} else {
		runs.Narrate(d, toy.Lesson())
	}
	return Document(ctx, w, d, book.In(lang), !o.NoCharts)
}

// exportPosition is one position of the exported document.
type exportPosition struct {
	key string // "branch.row", the script's name for the sequence it belongs to
	cur runs.Cursor
}

// exportPositions lists every position the reader can reach: the moments
// of a walkthrough, the steps of a comparison, or each branch's steps for
// each row of a run.
func exportPositions(d *runs.Document) ([]exportPosition, error) {
	var out []exportPosition
	add := func(branch, row int) {
		for pos := range d.Count(branch) {
			out = append(out, exportPosition{key: strconv.Itoa(branch) + "." + strconv.Itoa(row), cur: runs.Cursor{Pos: pos, Branch: branch, Row: row}})
		}
	}
	if d.Walk != nil || d.Compare {
		add(0, 0)
	} else {
		t := d.Runs[0].Trace
		branches := []int{0}
		for _, b := range t.Branches {
			branches = append(branches, b.ID)
		}
		total := 0
		for _, b := range branches {
			total += d.Count(b) * runs.RowCount(t)
		}
		if total > maxExportViews {
			return nil, fmt.Errorf("web: export: the trace has %d positions (steps × branches × rows), more than the %d one file holds: export fewer branches or steps", total, maxExportViews)
		}
		for _, b := range branches {
			for row := range runs.RowCount(t) {
				add(b, row)
			}
		}
	}
	return out, nil
}

// Document renders every position of d and writes the file.
func Document(ctx context.Context, w io.Writer, d *runs.Document, words words.Words, charts bool) error {
	ps, err := exportPositions(d)
	if err != nil {
		return err
	}
	if charts && len(ps) > maxChartedViews {
		charts = false
		d.Notice = strings.TrimSpace(d.Notice + fmt.Sprintf(" This file leaves out the charts: it has %d positions, more than the %d it draws charts for (tracer export --html draws them for shorter traces).", len(ps), maxChartedViews))
	}
	r, err := renderPositions(ctx, d, ps, runs.BuildOpts{Charts: charts, Words: words})
	if err != nil {
		return err
	}
	tail, csp, err := exportTail(d, r, ps[0].key)
	if err != nil {
		return err
	}
	icon, err := static.FS.ReadFile("favicon.svg")
	if err != nil {
		return fmt.Errorf("web: export: %w", err)
	}
	pv := view.ExportPageView{
		W: words, Title: d.Source, CSP: csp,
		Icon:    "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(icon),
		Stepper: r.first,
	}
	if pv.Head, err = exportHead(pv, r); err != nil {
		return err
	}
	pv.Tail = tail
	if err := view.ExportPage(pv).Render(context.Background(), w); err != nil {
		return fmt.Errorf("web: export: %w", err)
	}
	return nil
}

// renderedPositions are the positions of an export, rendered.
type renderedPositions struct {
	pack      *positions
	first     view.StepperView // the position the document itself shows
	attention bool             // a position shows the attention panel, which inside.js draws
	panes     bool             // a position shows the toy's table-or-listing switch, which panes.js works
	charted   bool             // a position shows charts, whose text needs the charts' fonts
}

// renderPositions renders every position with the page's Stepper and
// packs them.
func renderPositions(ctx context.Context, d *runs.Document, ps []exportPosition, o runs.BuildOpts) (*renderedPositions, error) {
	cache := view.NewChartCache(view.ChartCacheSize, view.ChartCacheBytes)
	r := &renderedPositions{pack: newPositions()}
	var buf bytes.Buffer
	for i, p := range ps {
		if err := ctx.Err(); err != nil { // the reader left: the work stops with it
			return nil, err
		}
		v, jobs := runs.BuildStepper(d, p.cur, o)
		if v.Charts != nil {
			r.charted = r.charted || len(v.Charts.Charts) > 0
			view.RenderCharts(cache, v.Charts, jobs)
			for k := range v.Charts.Charts { // the page's download links need its server
				v.Charts.Charts[k].SVGURL, v.Charts.Charts[k].PNGURL = "", ""
			}
		}
		if v.Compare != nil {
			for k := range v.Compare.Runs {
				v.Compare.Runs[k].Export = ""
			}
		}
		if i == 0 {
			r.first = v
		}
		buf.Reset()
		if err := view.Stepper(v).Render(context.Background(), &buf); err != nil {
			return nil, fmt.Errorf("web: export: render position %d: %w", p.cur.Pos, err)
		}
		r.pack.add(p.key, buf.Bytes())
		r.attention = r.attention || bytes.Contains(buf.Bytes(), []byte(`data-testid="attention-panel"`))
		r.panes = r.panes || bytes.Contains(buf.Bytes(), []byte(`data-testid="pane-switch"`))
	}
	return r, nil
}

// exportTail is what follows the page in the file: each run's trace, the
// packed positions and the scripts (export.js; inside.js when a position
// shows attention; panes.js when one shows the toy's table and listing),
// with the Content-Security-Policy that lets exactly those scripts run and
// nothing be fetched.
func exportTail(d *runs.Document, r *renderedPositions, firstKey string) (tail, csp string, err error) {
	packed, err := r.pack.encode()
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	for k, run := range d.Runs {
		js, err := json.Marshal(run.Trace) // json escapes <, > and &: the element cannot end early
		if err != nil {
			return "", "", fmt.Errorf("web: export: encode run %d: %w", k, err)
		}
		if k == 0 {
			b.WriteString(trace.HTMLMarker)
		} else {
			fmt.Fprintf(&b, `<script type="application/json" id="tracer-trace-%d" data-label="%s">`, k, htmlAttr(run.Label))
		}
		b.Write(js)
		b.WriteString(trace.HTMLEnd)
	}
	fmt.Fprintf(&b, `<script type="application/octet-stream" id="tracer-views" data-first="%s">`, firstKey)
	b.WriteString(packed)
	b.WriteString(`</script>`)
	scripts := []string{"export.js"}
	if r.attention {
		scripts = append(scripts, "inside.js")
	}
	if r.panes {
		scripts = append(scripts, "panes.js")
	}
	csp = "default-src 'none'; script-src"
	for _, name := range scripts {
		js, err := static.FS.ReadFile(name)
		if err != nil {
			return "", "", fmt.Errorf("web: export: %w", err)
		}
		b.WriteString("<script>" + string(js) + "</script>")
		r.pack.frags.AddRunes(string(js)) // what the scripts write: "layer 2 · head 1"
		sum := sha256.Sum256(js)
		csp += " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	csp += "; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'"
	return b.String(), csp, nil
}

// exportHead is the file's <style>: the page's stylesheet with its fonts
// cut to the characters of everything the file shows: the positions, the
// scripts' words, the page around them (title, tagline, controls, keys:
// pv rendered here without its head and tail) and the stylesheet's own
// text.
func exportHead(pv view.ExportPageView, r *renderedPositions) (string, error) {
	css, err := static.FS.ReadFile("style.css")
	if err != nil {
		return "", fmt.Errorf("web: export: %w", err)
	}
	var page strings.Builder
	if err := view.ExportPage(pv).Render(context.Background(), &page); err != nil {
		return "", fmt.Errorf("web: export: %w", err)
	}
	r.pack.frags.AddRunes(page.String())
	r.pack.frags.AddRunes(string(css))
	css, err = inlineFonts(css, r.pack.frags.Runes(), r.charted)
	if err != nil {
		return "", fmt.Errorf("web: export: %w", err)
	}
	return "<style>" + string(css) + exportCSS + "</style>", nil
}

// exportCSS hides what needs tracer's server: branching, breakpoints, the
// toggles, stopping a generation and the page's download links; and the
// phone's More button, which would fold only those.
const exportCSS = `
.exported #branch-form, .exported #until-panel, .exported .controls .toggle, .exported .controls .stop, .exported .controls .more-toggle,
.exported .chart figcaption a, .exported .run-col h3 a { display: none; }
`

// htmlAttr escapes s for a double-quoted attribute.
func htmlAttr(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;").Replace(s)
}

// positions are an export's positions, packed: the fragments and, per
// sequence key, each position's fragment numbers (pack.Fragments.Cut).
type positions struct {
	frags *pack.Fragments
	seqs  map[string][][]int // key -> positions -> fragment numbers
}

func newPositions() *positions {
	return &positions{frags: pack.New(), seqs: map[string][][]int{}}
}

// add appends a position's HTML to the sequence key.
func (p *positions) add(key string, html []byte) {
	p.seqs[key] = append(p.seqs[key], p.frags.Cut(html))
}

// encode is the fragments and sequences as gzip-compressed JSON in base64:
// {"frags": [...], "seqs": {"0.0": [[...], ...]}}.
func (p *positions) encode() (string, error) {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	if err := enc.Encode(struct {
		Frags []string           `json:"frags"`
		Seqs  map[string][][]int `json:"seqs"`
	}{p.frags.From(0), p.seqs}); err != nil {
		return "", fmt.Errorf("web: export: %w", err)
	}
	var z bytes.Buffer
	zw, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return "", fmt.Errorf("web: export: %w", err)
	}
	zw.Write(raw.Bytes()) // a bytes.Buffer does not fail
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("web: export: %w", err)
	}
	return base64.StdEncoding.EncodeToString(z.Bytes()), nil
}
