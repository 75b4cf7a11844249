package web

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/lessons"
	"tracer/web/words"
)

// TestBrowserDebuggerLanguage switches the debugger page to Hindi, steps
// (the WebSocket's views come in Hindi too), and finds the choice kept on
// /lessons and on the debugger opened again without ?lang=.
func TestBrowserDebuggerLanguage(t *testing.T) {
	base, s := serve(t, Config{}, nil)
	base = strings.TrimSuffix(base, "/")
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	ui := s.Book
	hi := func(key string) string { return strconv.Quote(ui.Get(key, lessons.Hindi)) }
	generate := `document.querySelector("[data-testid=run-generate]").textContent.trim()`

	do(t, ctx, "open the debugger", chromedp.Navigate(base+"/"), chromedp.WaitReady(css("[data-testid=lang-switch]")))
	if got, want := evalJS[string](t, ctx, generate), ui.Get(words.KeyDbgGenerate, lessons.English); got != want {
		t.Errorf("got the Generate button %q, want %q by default", got, want)
	}
	do(t, ctx, "switch to Hindi", chromedp.Click(css("[data-testid=lang-hi]")))
	waitLoad(t, ctx, "the debugger in Hindi", `document.body.dataset.lang === "hi" && `+generate+` === `+hi(words.KeyDbgGenerate))
	waitLoad(t, ctx, "the WebSocket connected", `document.querySelector("[data-testid=step-next]") && !document.querySelector("[data-testid=step-next]").disabled`)
	do(t, ctx, "step", chromedp.Click(css("[data-testid=step-next]")))
	want := strconv.Quote(lessons.Fill(ui.Get(lessons.KeyMomentNOfTotal, lessons.Hindi), "n", "2", "total", "10"))
	waitLoad(t, ctx, "a Hindi view", `document.querySelector("[data-testid=step-index]").textContent.trim() === `+want)

	do(t, ctx, "open the lessons", chromedp.Click(css("[data-testid=lessons-link]")))
	waitLoad(t, ctx, "the lessons in Hindi", `document.body.dataset.lang === "hi" && document.querySelector("[data-testid=lesson-index]")`)
	do(t, ctx, "open the lessons without ?lang=", chromedp.Navigate(base+"/lessons"))
	waitLoad(t, ctx, "the lessons still in Hindi", `document.body.dataset.lang === "hi" && document.querySelector("[data-testid=lesson-index]")`)
	do(t, ctx, "open the debugger without ?lang=", chromedp.Navigate(base+"/"))
	waitLoad(t, ctx, "the debugger still in Hindi", `document.body.dataset.lang === "hi" && `+generate+` === `+hi(words.KeyDbgGenerate))

	// Back to English, so a browser shared with later tests starts there.
	do(t, ctx, "switch to English", chromedp.Click(css("[data-testid=lang-en]")))
	waitLoad(t, ctx, "the debugger in English", `document.body.dataset.lang === "en"`)
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
