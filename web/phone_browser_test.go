package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/lessons"
)

// TestBrowserNoSidewaysScrollAt360 (issue 37, point 11): at 360 px, the
// narrowest phone in common use, no page scrolls sideways: the debugger
// (the toy, a real run's step with every panel, a comparison), the lesson
// list and every step of every lesson in both languages. A table or chart
// wider than the screen scrolls inside its own panel.
func TestBrowserNoSidewaysScrollAt360(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	do(t, ctx, "phone", chromedp.EmulateViewport(360, 780))
	overflow := func(where string) {
		t.Helper()
		got := evalJS[map[string]any](t, ctx, `(() => {
			const w = document.documentElement.clientWidth, wide = [];
			for (const e of document.querySelectorAll("body *")) {
				const r = e.getBoundingClientRect();
				if (r.right > w + 1 && getComputedStyle(e).position !== "fixed" && !e.closest("[data-scrolls], pre, .scroll-x, table, svg")) wide.push(e.tagName.toLowerCase() + (e.dataset.testid ? "[" + e.dataset.testid + "]" : e.className ? "." + String(e.className).split(" ")[0] : "") + " " + Math.round(r.right));
			}
			return {scroll: document.documentElement.scrollWidth, width: w, wide: wide.slice(0, 6)};
		})()`)
		if got["scroll"].(float64) > got["width"].(float64) {
			t.Errorf("%s: the page is %v px wide at %v px (sticking out: %v)", where, got["scroll"], got["width"], got["wide"])
		}
	}
	open(t, ctx, url)
	overflow("the toy")
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "8", "do_sample": "true", "top_k": "8", "seed": "3"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 2)
	overflow("a stories260K run")
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "6", "variants": "greedy\nT=0.7"})
	runAndWait(t, ctx, "run-compare", "done")
	overflow("a comparison")

	cat, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(url, "/")
	for _, lang := range lessons.Languages() {
		do(t, ctx, "lessons", chromedp.Navigate(base+"/lessons?lang="+lang), chromedp.WaitReady(css("[data-testid=lesson-item]")))
		overflow("the lessons, " + lang)
		for _, l := range cat.Lessons {
			for _, st := range l.Steps {
				page := fmt.Sprintf("%s/lessons/%s/%s?lang=%s", base, l.ID, st.ID, lang)
				do(t, ctx, "open "+page, chromedp.Navigate(page), chromedp.WaitReady(css("[data-testid=lesson-text]")))
				overflow(l.ID + "/" + st.ID + " (" + lang + ")")
			}
		}
	}
}
