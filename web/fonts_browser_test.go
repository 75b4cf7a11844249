package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	cdpcss "github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"

	"tracer/engine/refdata"
	"tracer/trace"
	"tracer/web/export"
	"tracer/web/internal/testsupport"
)

// fallbacks returns, for every rendered element of the page with text of
// its own, the fonts Chromium drew that text with that are not web fonts
// the page loaded: on a machine without a script's fonts those are boxes
// or a stranger's face. Each entry reads "<tag> "text": Font".
func fallbacks(t *testing.T, ctx context.Context) []string {
	t.Helper()
	var out []string
	if _, err := chromedp.Call(ctx, dom.Enable, dom.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdpcss.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	depth, pierce := int64(-1), true
	doc, err := chromedp.Call(ctx, dom.GetDocument, dom.GetDocumentParams{Depth: &depth, Pierce: &pierce})
	if err != nil {
		t.Fatal(err)
	}
	const element, textNode = 1, 3 // DOM nodeType values
	var walk func(n *cdp.Node)
	walk = func(n *cdp.Node) {
		switch n.NodeName {
		case "SCRIPT", "STYLE", "TITLE", "NOSCRIPT", "TEMPLATE", "HEAD":
			return
		}
		text := ""
		for _, c := range n.Children {
			if c.NodeType == textNode {
				text += c.NodeValue
			}
		}
		if n.NodeType == element && strings.TrimSpace(text) != "" {
			res, err := chromedp.Call(ctx, cdpcss.GetPlatformFontsForNode, cdpcss.GetPlatformFontsForNodeParams{NodeID: n.NodeID})
			if err != nil {
				t.Fatalf("fonts of <%s>: %v", n.LocalName, err)
			}
			for _, f := range res.Fonts {
				if !f.IsCustomFont {
					sample := []rune(strings.TrimSpace(text))
					if len(sample) > 30 {
						sample = sample[:30]
					}
					out = append(out, fmt.Sprintf("<%s> %q: %s (%d glyphs)", n.LocalName, string(sample), f.FamilyName, int(f.GlyphCount)))
				}
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(doc.Root)
	return out
}

// TestBrowserFontsShipped opens the debugger and the lessons in English and
// Hindi and checks that every piece of text is drawn with a font the page
// ships, and that document.fonts.check holds for each of them. On a machine
// with only DejaVu (CI's), Hindi without shipped fonts is a row of boxes.
func TestBrowserFontsShipped(t *testing.T) {
	base, _ := serve(t, Config{}, nil)
	base = strings.TrimSuffix(base, "/")
	ctx := browser(t)
	const fontsReady = `document.fonts.status === "loaded"`
	checks := map[string]string{
		"tracer":          "Tracer चाय ⏮ ⏭ ← → ✓ ✗ −",
		"tracer mono":     "I love chai ← →",
		"Liberation Sans": "Probability 0.9",
		"Liberation Mono": "chai",
	}
	for _, lang := range []string{"en", "hi"} {
		do(t, ctx, "open the debugger in "+lang, chromedp.Navigate(base+"/?lang="+lang))
		waitLoad(t, ctx, "the WebSocket connected", `document.querySelector("[data-testid=step-next]") && !document.querySelector("[data-testid=step-next]").disabled`)
		for range 3 {
			do(t, ctx, "step", chromedp.Click(css("[data-testid=step-next]")))
		}
		waitLoad(t, ctx, "the fonts loaded", fontsReady)
		for family, sample := range checks {
			expr := fmt.Sprintf("document.fonts.check(%q, %q)", "16px \""+family+"\"", sample)
			if !evalJS[bool](t, ctx, expr) {
				t.Errorf("%s: %s is false", lang, expr)
			}
		}
		if bad := fallbacks(t, ctx); len(bad) > 0 {
			t.Errorf("the debugger in %s draws text with fonts it does not ship:\n%s", lang, strings.Join(bad, "\n"))
		}

		do(t, ctx, "open the lessons in "+lang, chromedp.Navigate(base+"/lessons?lang="+lang))
		waitLoad(t, ctx, "the lesson index", `document.querySelector("[data-testid=lesson-index] a")`)
		waitLoad(t, ctx, "the fonts loaded", fontsReady)
		if bad := fallbacks(t, ctx); len(bad) > 0 {
			t.Errorf("the lesson index in %s draws text with fonts it does not ship:\n%s", lang, strings.Join(bad, "\n"))
		}
		do(t, ctx, "open the first lesson", chromedp.Navigate(evalJS[string](t, ctx, `document.querySelector("[data-testid=lesson-index] a").href`)))
		waitLoad(t, ctx, "the lesson page", `document.body.dataset.lang === "`+lang+`"`)
		waitLoad(t, ctx, "the fonts loaded", fontsReady)
		if bad := fallbacks(t, ctx); len(bad) > 0 {
			t.Errorf("the first lesson in %s draws text with fonts it does not ship:\n%s", lang, strings.Join(bad, "\n"))
		}
	}
}

// TestBrowserExportFonts opens exported files from file:// and checks the
// fonts they carry, cut to their characters: Chromium decodes every face
// (a font its sanitizer rejects fails to load), and every piece of text,
// the charts' SVG text included, is drawn with them, in English and Hindi.
func TestBrowserExportFonts(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	model := refdata.Need(t, "models/stories260K/stories260K.bin")
	sampled := testsupport.SampledTrace(t, model, 3)
	toy := testsupport.ToyTrace(t)
	const loadAll = `Promise.all([...document.fonts].map((f) => f.load().then(() => f.family + ": " + f.status, (e) => f.family + " " + f.unicodeRange + ": " + e)))`
	for _, lang := range []string{"en", "hi"} {
		for _, tc := range []struct {
			name    string
			tr      *trace.Trace
			samples map[string]string // family -> text the file shows in it
		}{
			{"toy", toy, map[string]string{"tracer": "I love chai", "tracer mono": "chai"}},
			{"stories260K", sampled, map[string]string{"tracer": "Once", "Liberation Sans": "0.5", "Liberation Mono": "1"}},
		} {
			t.Run(lang+"/"+tc.name, func(t *testing.T) {
				ctx, left := openExport(t, exportOf(t, []export.Run{{Trace: tc.tr}}, export.Options{Lang: lang, Source: tc.name + ".json"}))
				loaded, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](loadAll, chromedp.EvalAwaitPromise))
				if err != nil {
					t.Fatal(err)
				}
				if len(loaded) == 0 {
					t.Fatal("the file declares no fonts")
				}
				for _, s := range loaded {
					if !strings.HasSuffix(s, ": loaded") {
						t.Errorf("a face did not load: %s", s)
					}
				}
				for family, sample := range tc.samples {
					expr := fmt.Sprintf("document.fonts.check(%q, %q)", "16px \""+family+"\"", sample)
					if !evalJS[bool](t, ctx, expr) {
						t.Errorf("%s is false", expr)
					}
				}
				if bad := fallbacks(t, ctx); len(bad) > 0 {
					t.Errorf("the file draws text with fonts it does not carry:\n%s", strings.Join(bad, "\n"))
				}
				if l := left(); len(l) > 0 {
					t.Errorf("requests left the page: %q", l)
				}
			})
		}
	}
}
