package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/lessons"
	"tracer/web/words"
)

// TestBrowserBranchQuotedHindi types a malformed quoted token into the
// Branch box of the Hindi page: the error is the language's own text.
func TestBrowserBranchQuotedHindi(t *testing.T) {
	skipShort(t)
	url, s := serve(t, Config{}, nil)
	ui := s.Book
	ctx := browser(t)
	for _, lang := range []string{lessons.Hindi, lessons.English} {
		t.Run(lang, func(t *testing.T) {
			open(t, ctx, url+"?lang="+lang)
			const typed = `" the`
			do(t, ctx, "branch on a quoted token without its closing quote",
				chromedp.SetValue(css("[data-testid=branch-token]"), typed), chromedp.Click(css("[data-testid=branch-go]")))
			waitJS(t, ctx, "the error", `!document.querySelector("[data-testid=error-message]").hidden`)
			want := lessons.Fill(ui.Get(words.KeyDbgBranchQuoted, lang), "text", typed)
			if got := pageError(t, ctx); got != want {
				t.Errorf("got error %q, want %q", got, want)
			}
		})
	}
}

// headingCase is a heading as the page shows it.
type headingCase struct {
	Tag, Text, Shown, Transform string
}

// readHeadings lists every heading with Latin letters: its text, what the
// page renders of it (innerText follows text-transform) and its computed
// text-transform.
const readHeadings = `[...document.querySelectorAll("h1, h2, h3, h4")]
	.filter((h) => /[A-Za-z]/.test(h.textContent) && h.getClientRects().length > 0)
	.map((h) => ({Tag: h.tagName, Text: h.textContent.replace(/\s+/g, " ").trim(), Shown: h.innerText.replace(/\s+/g, " ").trim(), Transform: getComputedStyle(h).textTransform}))`

// checkHeadings fails for a heading that changes the case of its words,
// and when no heading holds want (the test would check nothing).
func checkHeadings(t *testing.T, hs []headingCase, want string) {
	t.Helper()
	found := false
	for _, h := range hs {
		found = found || strings.Contains(h.Text, want)
		if h.Transform != "none" || h.Shown != h.Text {
			t.Errorf("<%s> %q shows as %q (text-transform %s), want its words in their own case", h.Tag, h.Text, h.Shown, h.Transform)
		}
	}
	if !found {
		t.Errorf("no heading holds %q: %v", want, hs)
	}
}

// TestBrowserHindiHeadingsKeepCase: Latin words in Hindi headings keep
// their case ("greedy ने कम अंतर से chai चुना", not "GREEDY … CHAI") on the
// debugger and on a lesson page.
func TestBrowserHindiHeadingsKeepCase(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url+"?lang=hi")
	fillRun(t, ctx, form{"model": "toy", "do_sample": "true", "seed": "4"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 1)
	checkHeadings(t, evalJS[[]headingCase](t, ctx, readHeadings), "sampling")

	do(t, ctx, "open the lesson step", chromedp.Navigate(url+"lessons/greedy-on-the-toy/pick-chai?lang=hi"))
	waitLoad(t, ctx, "the lesson step", `document.querySelector("[data-testid=lesson-title]")`)
	checkHeadings(t, evalJS[[]headingCase](t, ctx, readHeadings), "greedy ने कम अंतर से chai चुना")
}
