package web

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/chromedp/cdproto/cdp"
	cdpcss "github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/words"
)

// whitespaceTrace runs the toy and returns its trace with step 0's
// candidates made whitespace tokens (" the", "\n", "\t"), saved to a file
// to import.
func whitespaceTrace(t *testing.T, ctx context.Context) string {
	t.Helper()
	fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("[data-testid=trace-export]").href).then((r) => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch the export: %v", err)
	}
	tr, err := trace.Decode([]byte(body))
	if err != nil {
		t.Fatalf("decode the export: %v", err)
	}
	tr.Model.Kind, tr.Model.Name = "hf", "whitespace" // not the toy, which an import narrates without charts
	row := &tr.Steps[0].Rows[0]
	ids := []int{row.Candidates[0].ID, row.Candidates[1].ID, 2}
	if ids[2] == ids[0] || ids[2] == ids[1] {
		ids[2] = 3
	}
	toks, probs := []string{" the", "\n", "\t"}, []float64{0.5, 0.3, 0.2}
	row.Candidates = nil
	for k := range ids {
		row.Candidates = append(row.Candidates, trace.Candidate{ID: ids[k], Token: toks[k], Prob: probs[k]})
	}
	row.Final = &trace.Final{KeptCount: 3, IDs: ids, Probs: probs}
	row.Chosen.ID, row.Chosen.Token, row.Chosen.Prob, row.Chosen.Rank = ids[0], toks[0], probs[0], 1
	var b strings.Builder
	if err := trace.Write(&b, tr); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "whitespace.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// importAt imports a trace file into the page and waits for its first step.
func importAt(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	do(t, ctx, "import", chromedp.SetUploadFiles(css("[data-testid=trace-import]"), []string{path}))
	waitJS(t, ctx, "the import or an error", `document.querySelector(".source").textContent.includes("whitespace.json") || !document.querySelector("[data-testid=error-message]").hidden`)
	if e := pageError(t, ctx); e != "" {
		t.Fatalf("import: %s", e)
	}
	waitJS(t, ctx, "the import", `document.querySelector(".source").textContent.includes("whitespace.json") && document.querySelector("[data-testid=chart-candidates] svg")`)
}

// chartTextFonts returns the fonts Chromium drew the first <text> of the
// candidates chart that contains what with, and whether each is a web
// font the page loaded.
func chartTextFonts(t *testing.T, ctx context.Context, what string) []*cdpcss.PlatformFontUsage {
	t.Helper()
	found := evalJS[bool](t, ctx, `(() => {
		for (const e of document.querySelectorAll("[data-probe]")) e.removeAttribute("data-probe");
		const e = [...document.querySelectorAll("[data-testid=chart-candidates] svg text")].find((e) => e.textContent.includes(`+jsString(what)+`));
		if (e) e.setAttribute("data-probe", "1");
		return !!e;
	})()`)
	if !found {
		t.Fatalf("no text of the candidates chart holds %q", what)
	}
	waitLoad(t, ctx, "the fonts loaded", `document.fonts.status === "loaded"`)
	if _, err := chromedp.Call(ctx, dom.Enable, dom.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdpcss.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	depth := int64(0)
	doc, err := chromedp.Call(ctx, dom.GetDocument, dom.GetDocumentParams{Depth: &depth})
	if err != nil {
		t.Fatal(err)
	}
	node, err := chromedp.Call(ctx, dom.QuerySelector, dom.QuerySelectorParams{NodeID: doc.Root.NodeID, Selector: "[data-probe]"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := chromedp.Call(ctx, cdpcss.GetPlatformFontsForNode, cdpcss.GetPlatformFontsForNodeParams{NodeID: node.NodeID})
	if err != nil {
		t.Fatal(err)
	}
	return res.Fonts
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// checkShipped fails unless every font is a web font the page loaded and
// one of them is not Liberation (what drew the character Liberation lacks).
func checkShipped(t *testing.T, what string, fonts []*cdpcss.PlatformFontUsage) {
	t.Helper()
	other := false
	var names []string
	for _, f := range fonts {
		names = append(names, f.FamilyName)
		if !f.IsCustomFont {
			t.Errorf("the chart's %q is drawn with %s, a font the page does not ship", what, f.FamilyName)
		}
		other = other || !strings.HasPrefix(f.FamilyName, "Liberation")
	}
	if !other {
		t.Errorf("the chart's %q is drawn with %v only, which has no glyph for it", what, names)
	}
}

// TestBrowserChartWhitespace: the candidates chart of a step whose
// candidates are " the", "\n" and "\t" marks them as the page does, ␣ ⏎ →,
// and draws ␣ with a font the page ships.
func TestBrowserChartWhitespace(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	importAt(t, ctx, whitespaceTrace(t, ctx))
	text := evalJS[string](t, ctx, `[...document.querySelectorAll("[data-testid=chart-candidates] svg text")].map((e) => e.textContent).join("|")`)
	for _, want := range []string{"|␣the|", "|⏎|", "|→|", `"␣the"`} {
		if !strings.Contains("|"+text+"|", want) {
			t.Errorf("the candidates chart's text lacks %q: %s", strings.Trim(want, "|"), text)
		}
	}
	checkShipped(t, "␣the", chartTextFonts(t, ctx, "␣the"))
	checkShipped(t, "⏎", chartTextFonts(t, ctx, "⏎"))
}

// TestBrowserChartWordsHindi: the Hindi debugger's charts draw their
// titles, axes and keys in Hindi, with no English chart word, and the
// Devanagari with a font the page ships.
func TestBrowserChartWordsHindi(t *testing.T) {
	skipShort(t)
	url, s := serve(t, Config{}, nil)
	ui := s.Book
	ctx := browser(t)
	open(t, ctx, url+"?lang=hi")
	importAt(t, ctx, whitespaceTrace(t, ctx))
	// Lines of a wrapped title are <text> elements in a row.
	text := evalJS[string](t, ctx, `[...document.querySelectorAll("[data-testid=charts] svg text")].map((e) => e.textContent).join(" ")`)
	steps := evalJS[string](t, ctx, `document.querySelector("[data-testid=step-index]").dataset.count`)
	title := lessons.Fill(ui.Get(words.KeyDbgPlotStepChose, lessons.Hindi), "n", "1", "total", steps, "token", "␣the")
	title = strings.TrimSpace(title[:strings.Index(title, "{how}")-1]) // the chart fills {how}
	if !strings.Contains(text, title) {
		t.Errorf("the charts' text lacks the Hindi title %q: %s", title, text)
	}
	words := letters(strings.ReplaceAll(text, "␣the", "")) // the token is no chart word
	for _, w := range englishChartWords(ui) {
		if slices.Contains(words, w) {
			t.Errorf("the Hindi charts write the English word %q: %s", w, text)
		}
	}
	checkShipped(t, "चरण", chartTextFonts(t, ctx, "चरण"))
	// The layout measured the Devanagari as the shipped face draws it: no
	// text runs past its chart's right edge.
	over := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=charts] svg")].flatMap((svg) => {
		const right = svg.getBoundingClientRect().right;
		return [...svg.querySelectorAll("text")].filter((e) => e.getBoundingClientRect().right > right + 0.5).map((e) => e.textContent);
	})`)
	if len(over) > 0 {
		t.Errorf("chart text runs past the chart's edge: %q", over)
	}
}

// englishChartWords are the words of the charts' English texts that their
// Hindi texts do not keep (terms like "probability" or "KV cache" stay in
// Latin letters in every Hindi text of the page).
func englishChartWords(ui *words.Book) []string {
	var keys []string
	for _, k := range words.Keys() {
		if strings.HasPrefix(k, "dbg-plot-") {
			keys = append(keys, k)
		}
	}
	kept := map[string]bool{}
	for _, k := range keys {
		for _, f := range letters(ui.Get(k, lessons.Hindi)) {
			kept[f] = true
		}
	}
	var out []string
	for _, k := range keys {
		for _, f := range letters(ui.Get(k, lessons.English)) {
			if !kept[f] && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// letters splits s into its runs of letters (and hyphens).
func letters(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' })
}
