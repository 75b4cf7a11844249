package web

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
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"tracer/lessons"
	"tracer/toy"
	"tracer/trace"
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

// ExportOptions says how ExportHTML writes a file.
type ExportOptions struct {
	Lang     string // the wording: "en" (default) or "hi"
	Source   string // where the trace came from, shown under the title: "trace.json"
	NoCharts bool   // leave out the charts panel (a smaller, faster file)
}

// ExportRun is one run to export; several runs are shown side by side, as
// the page's comparison.
type ExportRun struct {
	Trace *trace.Trace
	Label string // the run's label in a comparison: "greedy", "T=0.7"
}

// ExportHTML writes runs as one self-contained HTML file that steps through
// them as the page does, offline: no request leaves it (its
// Content-Security-Policy forbids every fetch). A lone toy trace is
// narrated as the page narrates it.
func ExportHTML(w io.Writer, runs []ExportRun, o ExportOptions) error {
	if len(runs) == 0 {
		return errors.New("web: export: no trace to export")
	}
	lang := cmp.Or(o.Lang, lessons.English)
	if !slices.Contains(lessons.Languages(), lang) {
		return fmt.Errorf("web: export: unknown language %q: want one of %s", lang, strings.Join(lessons.Languages(), ", "))
	}
	cat, err := lessons.Load()
	if err != nil {
		return fmt.Errorf("web: export: %w", err)
	}
	d := &document{source: cmp.Or(o.Source, "exported trace")}
	for i, r := range runs {
		if r.Trace == nil {
			return fmt.Errorf("web: export: run %d has no trace", i)
		}
		d.runs = append(d.runs, newRun(uint64(i+1), r.Trace, r.Label))
	}
	if len(runs) > 1 {
		d.compare = true
	} else {
		narrate(d, toy.Lesson())
	}
	return exportDocument(w, d, Words{ui: cat.UI, Lang: lang}, !o.NoCharts)
}

// narrate walks a lone toy trace of d through table when it fits, else
// through the part of the table the trace itself records; a trace neither
// fits is shown step by step with a notice saying why.
func narrate(d *document, table *toy.Table) {
	t := d.runs[0].trace
	if t.Model.Kind != "toy" || len(t.Branches) > 0 {
		return
	}
	w, err := lessons.Walk(t, table)
	if err != nil {
		owned, terr := lessons.TableFromTrace(t)
		if terr == nil {
			w, err = lessons.Walk(t, owned)
		}
	}
	if err != nil {
		d.notice = "This toy trace is shown step by step without the walkthrough: " + strings.TrimPrefix(err.Error(), "lessons: ")
		return
	}
	d.walk = w
}

// exportPageView is what exportPage shows.
type exportPageView struct {
	W       Words
	Title   string
	CSP     string
	Icon    string // a data: URL
	Head    string // trusted: the <style> element
	Tail    string // trusted: the trace, the positions and the script
	Stepper StepperView
}

// exportPosition is one position of the exported document.
type exportPosition struct {
	key string // "branch.row", the script's name for the sequence it belongs to
	cur cursor
}

// exportPositions lists every position the reader can reach: the moments
// of a walkthrough, the steps of a comparison, or each branch's steps for
// each row of a run.
func exportPositions(d *document) ([]exportPosition, error) {
	var out []exportPosition
	add := func(branch, row int) {
		for pos := range d.count(branch) {
			out = append(out, exportPosition{key: strconv.Itoa(branch) + "." + strconv.Itoa(row), cur: cursor{pos: pos, branch: branch, row: row}})
		}
	}
	if d.walk != nil || d.compare {
		add(0, 0)
	} else {
		t := d.runs[0].trace
		branches := []int{0}
		for _, b := range t.Branches {
			branches = append(branches, b.ID)
		}
		total := 0
		for _, b := range branches {
			total += d.count(b) * rowCount(t)
		}
		if total > maxExportViews {
			return nil, fmt.Errorf("web: export: the trace has %d positions (steps × branches × rows), more than the %d one file holds: export fewer branches or steps", total, maxExportViews)
		}
		for _, b := range branches {
			for row := range rowCount(t) {
				add(b, row)
			}
		}
	}
	return out, nil
}

// exportDocument renders every position of d and writes the file.
func exportDocument(w io.Writer, d *document, words Words, charts bool) error {
	ps, err := exportPositions(d)
	if err != nil {
		return err
	}
	if charts && len(ps) > maxChartedViews {
		charts = false
		d.notice = strings.TrimSpace(d.notice + fmt.Sprintf(" This file leaves out the charts: it has %d positions, more than the %d it draws charts for (tracer export --html draws them for shorter traces).", len(ps), maxChartedViews))
	}
	o := buildOpts{charts: charts, words: words}
	cache := newChartCache(chartCacheSize)
	ctx := context.Background()
	pack := newFragments()
	var first StepperView
	var buf bytes.Buffer
	attention := false // a position shows the attention panel, which inside.js draws
	charted := false   // a position shows charts, whose text needs the charts' fonts
	for i, p := range ps {
		v, jobs := stepperView(d, p.cur, o)
		if v.Charts != nil {
			charted = charted || len(v.Charts.Charts) > 0
			renderCharts(cache, v.Charts, jobs)
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
			first = v
		}
		buf.Reset()
		if err := Stepper(v).Render(ctx, &buf); err != nil {
			return fmt.Errorf("web: export: render position %d: %w", p.cur.pos, err)
		}
		pack.add(p.key, buf.Bytes())
		attention = attention || bytes.Contains(buf.Bytes(), []byte(`data-testid="attention-panel"`))
	}
	packed, err := pack.encode()
	if err != nil {
		return err
	}
	css, err := assets.ReadFile("static/style.css")
	if err != nil {
		return fmt.Errorf("web: export: %w", err)
	}
	scripts := []string{"static/export.js"}
	if attention {
		scripts = append(scripts, "static/inside.js")
	}
	icon, err := assets.ReadFile("static/favicon.svg")
	if err != nil {
		return fmt.Errorf("web: export: %w", err)
	}

	var tail strings.Builder
	for k, r := range d.runs {
		b, err := json.Marshal(r.trace) // json escapes <, > and &: the element cannot end early
		if err != nil {
			return fmt.Errorf("web: export: encode run %d: %w", k, err)
		}
		if k == 0 {
			tail.WriteString(trace.HTMLMarker)
		} else {
			fmt.Fprintf(&tail, `<script type="application/json" id="tracer-trace-%d" data-label="%s">`, k, htmlAttr(r.label))
		}
		tail.Write(b)
		tail.WriteString(trace.HTMLEnd)
	}
	fmt.Fprintf(&tail, `<script type="application/octet-stream" id="tracer-views" data-first="%s">`, ps[0].key)
	tail.WriteString(packed)
	tail.WriteString(`</script>`)
	csp := "default-src 'none'; script-src"
	for _, name := range scripts {
		js, err := assets.ReadFile(name)
		if err != nil {
			return fmt.Errorf("web: export: %w", err)
		}
		tail.WriteString("<script>" + string(js) + "</script>")
		pack.addRunes(string(js)) // what the scripts write: "Layer 2 · Head 1"
		sum := sha256.Sum256(js)
		csp += " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	csp += "; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'"
	pv := exportPageView{
		W: words, Title: d.source, CSP: csp,
		Icon:    "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(icon),
		Stepper: first,
	}

	// The fonts are cut to the characters of everything the page shows:
	// the positions (above), the page around them (title, tagline,
	// controls, keys, rendered here without its head and tail) and the
	// stylesheet's own text.
	buf.Reset()
	if err := exportPage(pv).Render(ctx, &buf); err != nil {
		return fmt.Errorf("web: export: %w", err)
	}
	pack.addRunes(buf.String())
	pack.addRunes(string(css))
	css, err = inlineFonts(css, pack.runes, charted)
	if err != nil {
		return fmt.Errorf("web: export: %w", err)
	}
	css = append(css, exportCSS...)
	pv.Head = "<style>" + string(css) + "</style>"
	pv.Tail = tail.String()
	if err := exportPage(pv).Render(ctx, w); err != nil {
		return fmt.Errorf("web: export: %w", err)
	}
	return nil
}

// exportCSS hides what needs tracer's server: branching, breakpoints, the
// toggles, stopping a generation and the page's download links.
const exportCSS = `
.exported #branch-form, .exported #until-panel, .exported .controls .toggle, .exported .controls .stop,
.exported .chart figcaption a, .exported .run-col h3 a { display: none; }
`

// htmlAttr escapes s for a double-quoted attribute.
func htmlAttr(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;").Replace(s)
}

// fragments deduplicates the positions' markup: each position's HTML is
// cut before every tag into fragments, each distinct fragment is kept once,
// and a position is the list of its fragments' numbers.
type fragments struct {
	ids   map[string]int
	list  []string
	seqs  map[string][][]int // key -> positions -> fragment numbers, as differences from the previous number
	order []string           // keys in first-seen order
	runes map[rune]bool      // every character the positions use, for the fonts
}

func newFragments() *fragments {
	return &fragments{ids: map[string]int{}, seqs: map[string][][]int{}, runes: map[rune]bool{}}
}

// add appends a position's HTML to the sequence key.
func (f *fragments) add(key string, html []byte) {
	if _, ok := f.seqs[key]; !ok {
		f.order = append(f.order, key)
	}
	var seq []int
	prev := -1
	for len(html) > 0 {
		n := bytes.IndexByte(html[1:], '<') + 1
		if n == 0 {
			n = len(html)
		}
		frag := string(html[:n])
		html = html[n:]
		id, ok := f.ids[frag]
		if !ok {
			id = len(f.list)
			f.ids[frag] = id
			f.list = append(f.list, frag)
			f.addRunes(frag)
		}
		seq = append(seq, id-prev)
		prev = id
	}
	f.seqs[key] = append(f.seqs[key], seq)
}

// addRunes notes the characters beyond ASCII that s uses.
func (f *fragments) addRunes(s string) {
	for _, r := range s {
		if r >= utf8.RuneSelf {
			f.runes[r] = true
		}
	}
}

// encode is the fragments and sequences as gzip-compressed JSON in base64:
// {"frags": [...], "seqs": {"0.0": [[...], ...]}}.
func (f *fragments) encode() (string, error) {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	if err := enc.Encode(struct {
		Frags []string           `json:"frags"`
		Seqs  map[string][][]int `json:"seqs"`
	}{f.list, f.seqs}); err != nil {
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
// character in used, or ASCII (the text every file has).
func fontNeeded(rule string, used map[rune]bool) bool {
	i := strings.Index(rule, "unicode-range:")
	if i < 0 {
		return true
	}
	for _, m := range fontRange.FindAllStringSubmatch(rule[i:], -1) {
		lo, err1 := strconv.ParseUint(m[1], 16, 32)
		hi := lo
		var err2 error
		if m[2] != "" {
			hi, err2 = strconv.ParseUint(m[2], 16, 32)
		}
		if err1 != nil || err2 != nil {
			return true
		}
		if lo <= 'z' && hi >= 'a' {
			return true
		}
		for r := range used {
			if uint64(r) >= lo && uint64(r) <= hi {
				return true
			}
		}
	}
	return false
}

// handleExportHTML downloads what the session shows (a run with its
// branches, a walkthrough or a comparison) as one self-contained HTML
// file in the page's language.
func (s *Server) handleExportHTML(w http.ResponseWriter, r *http.Request, sess *session) {
	sess.mu.Lock()
	lang := sess.lang
	sess.mu.Unlock()
	src := sess.source()
	src.mu.Lock()
	d := src.doc
	live := d.live()
	c := &document{walk: d.walk, compare: d.compare, source: d.source, notice: d.notice}
	for _, x := range d.runs {
		c.runs = append(c.runs, &run{id: x.id, label: x.label, trace: x.snapshot(), err: x.err})
	}
	src.mu.Unlock()
	if live {
		http.Error(w, "the run is still generating: stop it or wait for it, then export", http.StatusConflict)
		return
	}
	var b bytes.Buffer
	if err := exportDocument(&b, c, s.words(cmp.Or(lang, lessons.English)), true); err != nil {
		http.Error(w, "could not export the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="tracer-trace.html"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}
