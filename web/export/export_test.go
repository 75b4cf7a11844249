package export

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	stdhtml "html"
	"io"
	"regexp"
	"strings"
	"testing"

	"tracer/toy"

	"tracer/engine/refdata"
	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/runs"
	"tracer/web/sfnt"
	"tracer/web/static"
	"tracer/web/view"
)

// unpack decodes an exported file's positions as export.js does.
func unpack(t *testing.T, html []byte) (frags []string, seqs map[string][][]int) {
	t.Helper()
	m := regexp.MustCompile(`<script type="application/octet-stream" id="tracer-views" data-first="[^"]*">([^<]*)</script>`).FindSubmatch(html)
	if m == nil {
		t.Fatal("no packed positions in the file")
	}
	z, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Frags []string           `json:"frags"`
		Seqs  map[string][][]int `json:"seqs"`
	}
	if err := json.NewDecoder(zr).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v.Frags, v.Seqs
}

func position(frags []string, deltas []int) string {
	var b strings.Builder
	id := -1
	for _, d := range deltas {
		id += d
		b.WriteString(frags[id])
	}
	return b.String()
}

// TestExportPositionsAreThePagesViews checks every packed position against
// the page's own rendering of the same cursor.
func TestExportPositionsAreThePagesViews(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []Run
		key  string
		n    int
	}{
		{"walkthrough", []Run{{Trace: testsupport.ToyTrace(t)}}, "0.0", 10},
		{"compare", []Run{{Trace: testsupport.ToyTrace(t), Label: "a"}, {Trace: testsupport.ToyTrace(t), Label: "b"}}, "0.0", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			html := htmlOf(t, tc.runs, Options{NoCharts: true})
			frags, seqs := unpack(t, html)
			if got := len(seqs[tc.key]); got != tc.n {
				t.Fatalf("got %d positions, want %d", got, tc.n)
			}
			d := &runs.Document{Source: "exported trace"}
			for i, r := range tc.runs {
				d.Runs = append(d.Runs, runs.NewRun(uint64(i+1), r.Trace, r.Label))
			}
			d.Compare = len(d.Runs) > 1
			if !d.Compare {
				runs.Narrate(d, toy.Lesson())
			}
			for pos, deltas := range seqs[tc.key] {
				v, _ := runs.BuildStepper(d, runs.Cursor{Pos: pos}, runs.BuildOpts{Words: testsupport.Words(t, "en")})
				for k := range runsOrNil(v.Compare) {
					v.Compare.Runs[k].Export = ""
				}
				var want bytes.Buffer
				if err := view.Stepper(v).Render(context.Background(), &want); err != nil {
					t.Fatal(err)
				}
				if got := position(frags, deltas); got != want.String() {
					t.Errorf("position %d: got %.200q, want %.200q", pos, got, want.String())
				}
			}
		})
	}
}

// runsOrNil lets a test range over a comparison's runs, none when nil.
func runsOrNil(c *view.CompareView) []view.CompareRunView {
	if c == nil {
		return nil
	}
	return c.Runs
}

func TestExportFileCarriesTheTrace(t *testing.T) {
	tr := testsupport.ToyTrace(t)
	tr.Prompt.Text = `</script><script>alert(1)</script> & <!--`
	html := htmlOf(t, []Run{{Trace: tr}}, Options{})
	back, err := trace.Decode(html)
	if err != nil {
		t.Fatalf("the file's trace does not read back: %v", err)
	}
	if back.Prompt.Text != tr.Prompt.Text || len(back.Steps) != len(tr.Steps) {
		t.Errorf("got prompt %q and %d steps, want %q and %d", back.Prompt.Text, len(back.Steps), tr.Prompt.Text, len(tr.Steps))
	}
	if bytes.Contains(html, []byte("<script>alert(1)")) {
		t.Error("the prompt's markup reached the file unescaped")
	}
}

func TestExportIsSelfContained(t *testing.T) {
	for _, lang := range []string{"en", "hi"} {
		t.Run(lang, func(t *testing.T) {
			html := string(htmlOf(t, []Run{{Trace: testsupport.ToyTrace(t)}}, Options{Lang: lang}))
			csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(html)
			if csp == nil || !strings.Contains(stdhtml.UnescapeString(csp[1]), "default-src 'none'") || !strings.Contains(stdhtml.UnescapeString(csp[1]), "connect-src 'none'") {
				t.Errorf("got CSP %q, want one that forbids every fetch", csp)
			}
			for _, ref := range regexp.MustCompile(`(?:src|href)="([^"#]+)"|url\(([^)]*)\)`).FindAllStringSubmatch(html, -1) {
				u := ref[1] + ref[2]
				if !strings.HasPrefix(u, "data:") {
					t.Errorf("the file refers to %q, outside itself", u)
				}
			}
			if !strings.Contains(html, "url(data:font/woff;base64,") {
				t.Error("no font inlined")
			}
		})
	}
}

func TestExportFontsFollowTheText(t *testing.T) {
	const latin = "@font-face { src: url(x.woff); unicode-range: U+0020-007E; }"
	const devanagari = "@font-face { src: url(x.woff); unicode-range: U+0900-097F, U+25CC; }"
	for _, tc := range []struct {
		name, rule, used string
		want             bool
	}{
		{"latin always", latin, "", true},
		{"devanagari when used", devanagari, "हिन्दी", true},
		{"devanagari unused", devanagari, "é", false},
		{"no range", "@font-face { src: url(x.woff); }", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			used := map[rune]bool{}
			for _, r := range tc.used {
				used[r] = true
			}
			if got := fontNeeded(tc.rule, used); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// exportedFaces returns the @font-face rules of an exported file, each
// with its font's bytes and the name of the page's font behind it (the
// stylesheet's rule with the same family, weight and range).
func exportedFaces(t *testing.T, html []byte) (faces []exportedFace) {
	t.Helper()
	css, err := static.FS.ReadFile("style.css")
	if err != nil {
		t.Fatal(err)
	}
	dataURL := regexp.MustCompile(`url\(data:font/woff;base64,([A-Za-z0-9+/=]*)\)`)
	format := regexp.MustCompile(`format\("[a-z0-9]*"\)`)
	key := func(rule string) string { // the rule without its source
		return format.ReplaceAllString(static.CSSURL.ReplaceAllString(dataURL.ReplaceAllString(rule, ""), ""), "")
	}
	names := map[string]string{}
	for _, rule := range fontFace.FindAll(css, -1) {
		names[key(string(rule))] = string(static.CSSURL.FindSubmatch(rule)[1])
	}
	for _, rule := range fontFace.FindAll(html, -1) {
		m := dataURL.FindSubmatch(rule)
		if m == nil {
			t.Fatalf("a face is not a WOFF data: URL: %.200s", rule)
		}
		font, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		name, ok := names[key(string(rule))]
		if !ok {
			t.Fatalf("a face matches no rule of style.css: %.200s", rule)
		}
		faces = append(faces, exportedFace{name: name, rule: string(rule), font: font})
	}
	return faces
}

// exportedFace is one @font-face of an exported file.
type exportedFace struct {
	name string // the page's font: "font-sans-regular.woff", "font-chart-mono.ttf"
	rule string
	font []byte
}

// TestExportFontsAreCut checks the faces an exported file carries: WOFF
// fonts cut smaller than the whole faces the page serves, the charts'
// Liberation fonts when the file has charts, Devanagari in Hindi only.
func TestExportFontsAreCut(t *testing.T) {
	whole, err := static.PageFonts()
	if err != nil {
		t.Fatal(err)
	}
	for name, ttf := range static.ChartFonts {
		if whole[name], err = sfnt.WOFF(ttf); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := trace.Decode(testsupport.LoopTrace(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, lang string
		noCharts   bool
		want       []string // the faces the file needs
	}{
		{"english with charts", "en", false, []string{"font-sans-regular.woff", "font-mono-regular.woff", "font-chart-sans.ttf", "font-chart-mono.ttf"}},
		{"hindi with charts", "hi", false, []string{"font-sans-regular.woff", "font-devanagari-regular.woff", "font-devanagari-bold.woff", "font-chart-sans.ttf"}},
		{"english without charts", "en", true, []string{"font-sans-regular.woff", "font-sans-bold.woff", "font-mono-regular.woff"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faces := exportedFaces(t, htmlOf(t, []Run{{Trace: tr}}, Options{Lang: tc.lang, NoCharts: tc.noCharts}))
			got := map[string]bool{}
			for _, f := range faces {
				got[f.name] = true
				if string(f.font[:4]) != "wOFF" {
					t.Errorf("%s: got a %.4q font, want WOFF", f.name, f.font)
				}
				if len(f.font) >= len(whole[f.name]) {
					t.Errorf("%s: got %d bytes, want fewer than the whole face's %d", f.name, len(f.font), len(whole[f.name]))
				}
				if strings.Contains(f.rule, "U+0900") && tc.lang != "hi" {
					t.Errorf("%s: a Devanagari face in a file in %s", f.name, tc.lang)
				}
				if strings.HasPrefix(f.name, "font-chart-") && tc.noCharts {
					t.Errorf("%s: a chart font in a file without charts", f.name)
				}
			}
			for _, name := range tc.want {
				if !got[name] {
					t.Errorf("no %s in the file", name)
				}
			}
		})
	}
}

// TestExportFontsKeepTheirCharacters checks which characters a face keeps:
// those the file uses within the face's range, wherever they appear (the
// charts' SVG text too), and ASCII, which the scripts write.
func TestExportFontsKeepTheirCharacters(t *testing.T) {
	const symbols = "@font-face { src: url(x.woff); unicode-range: U+2300-23FF, U+2400-243F; }"
	const devanagari = "@font-face { src: url(x.woff); unicode-range: U+0900-097F, U+25CC; }"
	const chart = "@font-face { src: url(x.ttf); }"
	pack := newPositions()
	pack.add("0.0", []byte(`<div class="chart"><svg><text style="font-family:tracer mono,tracer">a␣b</text></svg></div>`))
	pack.add("0.0", []byte(`<p>नमस्ते <b>⏮</b></p>`))
	for _, tc := range []struct {
		name, rule string
		r          rune
		want       bool
	}{
		{"symbol from SVG text", symbols, '␣', true},
		{"symbol from HTML", symbols, '⏮', true},
		{"symbol not used", symbols, '⏭', false},
		{"ASCII outside the range", symbols, 'a', false},
		{"devanagari used", devanagari, 'न', true},
		{"devanagari not used", devanagari, 'क', false},
		{"dotted circle with devanagari", devanagari, 0x25CC, true},
		{"no range: SVG symbol", chart, '␣', true},
		{"no range: ASCII", chart, 'Z', true},
		{"no range: unused", chart, '✓', false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := charsFor(tc.rule, pack.frags.Runes())(tc.r); got != tc.want {
				t.Errorf("keeps %q: got %v, want %v", tc.r, got, tc.want)
			}
		})
	}
}

func TestExportErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []Run
		o    Options
		want string
	}{
		{"no runs", nil, Options{}, "no trace"},
		{"nil trace", []Run{{}}, Options{}, "run 0 has no trace"},
		{"language", []Run{{Trace: testsupport.ToyTrace(t)}}, Options{Lang: "fr"}, `unknown language "fr"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := HTML(context.Background(), io.Discard, tc.runs, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// BenchmarkExportSize reports the file's size against the budget: for a
// 256-step run at top-20, at most 1.5 times its JSON trace plus 400 KB.
// The SmolLM2-shaped run is stood in for by stories260K (its
// vocabulary is smaller, the recorded top-20 the same).
func BenchmarkExportSize(b *testing.B) {
	model := refdata.Need(b, "models/stories260K/stories260K.bin")
	tr := testsupport.SampledTrace(b, model, 256)
	var js bytes.Buffer
	if err := trace.Write(&js, tr); err != nil {
		b.Fatal(err)
	}
	for _, charts := range []bool{true, false} {
		b.Run(fmt.Sprintf("charts=%v", charts), func(b *testing.B) {
			var html bytes.Buffer
			for b.Loop() {
				html.Reset()
				if err := HTML(context.Background(), &html, []Run{{Trace: tr}}, Options{NoCharts: !charts}); err != nil {
					b.Fatal(err)
				}
			}
			budget := 1.5*float64(js.Len()) + 400e3
			b.ReportMetric(float64(html.Len()), "html-bytes")
			b.ReportMetric(float64(js.Len()), "json-bytes")
			b.ReportMetric(float64(html.Len())/budget, "of-budget")
			b.Logf("%d steps: HTML %d bytes, JSON %d bytes, budget %.0f bytes (%.0f%% used)", len(tr.Steps), html.Len(), js.Len(), budget, 100*float64(html.Len())/budget)
		})
	}
}

// FuzzExport checks that any trace the reader accepts exports without a
// panic or a hang, and that the file reads back to the same trace.
func FuzzExport(f *testing.F) {
	f.Add(testsupport.ToyJSON(f))
	f.Add([]byte(`{"format":"tracer/v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Decode(data)
		if err != nil {
			return
		}
		var html bytes.Buffer
		if err := HTML(context.Background(), &html, []Run{{Trace: tr}}, Options{NoCharts: true}); err != nil {
			return
		}
		back, err := trace.Decode(html.Bytes())
		if err != nil {
			t.Fatalf("the exported file does not read back: %v", err)
		}
		a, _ := json.Marshal(tr)
		z, _ := json.Marshal(back)
		if !bytes.Equal(a, z) {
			t.Errorf("the file's trace differs from the exported one")
		}
	})
}

func TestExportChartsOnlyForShorterTraces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		steps  int
		charts bool
	}{
		{"short", 3, true},
		{"past the limit", maxChartedViews + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := trace.Decode(testsupport.LoopTrace(t, tc.steps))
			if err != nil {
				t.Fatal(err)
			}
			html := htmlOf(t, []Run{{Trace: tr}}, Options{})
			frags, seqs := unpack(t, html)
			last := position(frags, seqs["0.0"][len(seqs["0.0"])-1])
			if got := strings.Contains(last, `data-testid="charts"`); got != tc.charts {
				t.Errorf("charts shown: got %v, want %v", got, tc.charts)
			}
			if got := strings.Contains(last, "leaves out the charts"); got == tc.charts {
				t.Errorf("notice about the charts: got %v, want %v", got, !tc.charts)
			}
		})
	}
}

// htmlOf is the export of runs with o.
func htmlOf(t *testing.T, runs []Run, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(context.Background(), &b, runs, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestExportStopsWhenItsReaderLeaves: an export whose reader has gone (the
// request's context ended) stops instead of rendering every position.
func TestExportStopsWhenItsReaderLeaves(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := HTML(ctx, io.Discard, []Run{{Trace: testsupport.ToyTrace(t)}}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("an export for a reader that left: got %v, want context.Canceled", err)
	}
}
