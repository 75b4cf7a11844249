package web

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tracer/lessons"
	"tracer/web/lessonpage"
)

// lessonPage is what a lesson step's page shows, read by readLessonPage.
type lessonPage struct {
	Lesson, Step    string
	Index, Count    int
	Lang, Text      string
	Moment          int // the moment's index, -1 when the page shows none
	Line            int // the active listing line
	Cell            string
	Options         int // quiz options
	Junk            int // junk rows
	Figure, NoModel bool
	FLOPs           string
	Error           string
}

const readLessonPage = `(() => {
	const q = (s) => document.querySelector(s);
	const m = q("[data-testid=lesson-step]");
	return {
		Lesson: m.dataset.lesson, Step: m.dataset.step,
		Index: Number(m.dataset.index), Count: Number(m.dataset.count),
		Lang: document.body.dataset.lang, Text: q("[data-testid=lesson-text]").textContent.trim(),
		Moment: Number(q("[data-testid=moment-position]")?.dataset.index ?? -1),
		Line: Number(q("[data-testid=moment-line]")?.dataset.line ?? 0),
		Cell: q("[data-testid=table-cell-active]")?.dataset.word ?? "",
		Options: document.querySelectorAll("[data-testid=quiz-option]").length,
		Junk: document.querySelectorAll("[data-testid=junk-row]").length,
		Figure: q("[data-testid=lesson-figure]") !== null,
		NoModel: q("[data-testid=no-real-model]") !== null,
		FLOPs: [...document.querySelectorAll("[data-testid=flops]")].map((e) => e.textContent).join(" "),
		Error: q("[data-testid=lesson-error]")?.textContent ?? "",
	};
})()`

// TestBrowserLessons walks through every lesson in English and in Hindi
// with the Next button, answers the quizzes wrongly then rightly, checks
// the toy walkthrough's moments, and changes the input of lessons 7 and 8.
func TestBrowserLessons(t *testing.T) {
	models := storiesDir(t)
	base, _ := serve(t, Config{ModelsDir: models}, nil)
	base = strings.TrimSuffix(base, "/")
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	cat, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	real := models != ""
	if !real {
		t.Log("skipping the real-model checks: no stories260K in the reference data (real steps must say what to download)")
	}
	for _, lang := range lessons.Languages() {
		t.Run(lang, func(t *testing.T) {
			for _, l := range cat.Lessons {
				walkLessonSteps(t, ctx, base, l, lang, real)
			}
			do(t, ctx, "open the list", chromedp.Navigate(base+"/lessons?lang="+lang), chromedp.WaitReady(css("[data-testid=lesson-index]")))
			done := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=lesson-progress]")].map((p) => p.dataset.done + "/" + p.dataset.steps.split(" ").length)`)
			for i, d := range done {
				if n := len(cat.Lessons[i].Steps); d != fmt.Sprintf("%d/%d", n, n) {
					t.Errorf("lesson %d: progress %s, want all %d steps done", i+1, d, n)
				}
			}
		})
	}
	t.Run("remembers-language", func(t *testing.T) {
		// The last walk was in Hindi: the list without ?lang= opens in Hindi.
		do(t, ctx, "open the list", chromedp.Navigate(base+"/lessons"))
		waitLoad(t, ctx, "the list in Hindi", `document.body.dataset.lang === "hi" && document.querySelector("[data-testid=lesson-index]")`)
		do(t, ctx, "switch to English", chromedp.Click(css("[data-testid=lang-en]")))
		waitLoad(t, ctx, "the list in English", `document.body.dataset.lang === "en"`)
		do(t, ctx, "back to the debugger", chromedp.Click(css("[data-testid=debugger-link]")), chromedp.WaitReady(css("[data-testid=lessons-link]")))
	})
	if real {
		t.Run("live-inputs", func(t *testing.T) { liveInputs(t, ctx, base) })
	}
	if os.Getenv("TRACER_SCREENSHOTS") == "1" {
		do(t, ctx, "open lesson 2", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/lessons/greedy-on-the-toy/pick-love"), chromedp.WaitReady(css("[data-testid=moment-line]")))
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../docs/screenshot-lesson.png", png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// waitLoad waits until a condition holds on the page, across a page load
// (an evaluation during navigation fails and is tried again).
func waitLoad(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("(() => { try { return !!("+cond+"); } catch (e) { return false; } })()"))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s (%s): %v", what, cond, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// walkLessonSteps opens a lesson's first step and goes through the rest
// with Next, checking each page.
func walkLessonSteps(t *testing.T, ctx context.Context, base string, l lessons.Lesson, lang string, real bool) {
	t.Helper()
	do(t, ctx, "open "+l.ID, chromedp.Navigate(base+lessonpage.StepURL(l.ID, l.Steps[0].ID, lang)), chromedp.WaitReady(css("[data-testid=lesson-step]")))
	for i, st := range l.Steps {
		where := fmt.Sprintf("%s/%s (%s)", l.ID, st.ID, lang)
		if i > 0 {
			do(t, ctx, where+": next", chromedp.Click(css("[data-testid=lesson-next]")))
			waitLoad(t, ctx, where, fmt.Sprintf(`document.querySelector("[data-testid=lesson-step]")?.dataset.step === %q`, st.ID))
		}
		waitLoad(t, ctx, where+": the script", `document.body.dataset.ready === "true"`)
		p, err := chromedp.Run(ctx, chromedp.Evaluate[lessonPage](readLessonPage))
		if err != nil {
			t.Fatalf("%s: read the page: %v", where, err)
		}
		if p.Lang != lang || p.Index != i || p.Count != len(l.Steps) || p.Text == "" {
			t.Errorf("%s: got lang %q, step %d of %d, %d bytes of text; want %q, %d of %d, some text", where, p.Lang, p.Index, p.Count, len(p.Text), lang, i, len(l.Steps))
		}
		if lang == lessons.Hindi && l.ID == "greedy-on-the-toy" && i == 3 {
			shoot(t, ctx, "screenshot-lesson-hi.png")
		}
		if got := hasDevanagari(p.Text); got != (lang == lessons.Hindi) {
			t.Errorf("%s: Devanagari in the text: %v, want %v", where, got, lang == lessons.Hindi)
		}
		if p.Error != "" {
			t.Errorf("%s: the runs failed: %s", where, p.Error)
		}
		if len(st.Runs) > 0 && !p.Figure {
			t.Errorf("%s: no figure for the step's runs", where)
		}
		if usesReal(&st) && p.NoModel == real {
			t.Errorf("%s: says no real model = %v, with a real model = %v", where, p.NoModel, real)
		}
		if mi, ok := st.Moment(); ok {
			want := lessonMoments[mi]
			if p.Moment != mi || p.Line != want.line || p.Cell != want.cell {
				t.Errorf("%s: got moment %d, line %d, cell %q; want moment %d, line %d, cell %q", where, p.Moment, p.Line, p.Cell, mi, want.line, want.cell)
			}
		}
		if len(st.Questions) > 0 {
			answerQuiz(t, ctx, where, &st.Questions[0])
		}
	}
	// The last step leads on to the next lesson's first; the last lesson's
	// to none.
	cat, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	if n := slices.IndexFunc(cat.Lessons, func(x lessons.Lesson) bool { return x.ID == l.ID }) + 1; n < len(cat.Lessons) {
		want = lessonpage.StepURL(cat.Lessons[n].ID, cat.Lessons[n].Steps[0].ID, lang)
	}
	got := evalJS[string](t, ctx, `document.querySelector("[data-testid=next-lesson]")?.getAttribute("href") ?? ""`)
	if got != want {
		t.Errorf("%s, last step: the next lesson's link is %q, want %q", l.ID, got, want)
	}
}

// usesReal reports whether a step runs a real model.
func usesReal(st *lessons.Step) bool {
	return len(st.Runs) > 0 && st.Runs[0].Model == lessons.ModelReal
}

// answerQuiz picks a wrong option, then the right one, checking the
// feedback each time.
func answerQuiz(t *testing.T, ctx context.Context, where string, q *lessons.Question) {
	t.Helper()
	right := q.Correct()
	wrong := (right + 1) % len(q.Options)
	for _, pick := range []int{wrong, right} {
		sel := fmt.Sprintf(`[data-testid=quiz-option][data-option=%q]`, q.Options[pick].ID)
		do(t, ctx, where+": answer", chromedp.Click(css(sel)))
		got := evalJS[string](t, ctx, `(() => { const f = document.querySelector("[data-testid=quiz-feedback]"); return f.hidden ? "" : f.dataset.right + ":" + f.textContent; })()`)
		wantRight := fmt.Sprint(pick == right)
		if !strings.HasPrefix(got, wantRight+":") || len(got) < len(wantRight)+10 {
			t.Errorf("%s: option %d: got feedback %q, want right=%s with the option's feedback", where, pick, got, wantRight)
		}
	}
	answered := evalJS[bool](t, ctx, `Object.values(JSON.parse(localStorage.getItem("tracer.lessons")).quiz).includes(true)`)
	if !answered {
		t.Errorf("%s: the right answer was not recorded", where)
	}
}

// liveInputs changes lesson 7's prompts and lesson 8's max_new_tokens and
// checks that the figures follow.
func liveInputs(t *testing.T, ctx context.Context, base string) {
	read := func() lessonPage {
		p, err := chromedp.Run(ctx, chromedp.Evaluate[lessonPage](readLessonPage))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	do(t, ctx, "lesson 7", chromedp.Navigate(base+"/lessons/batches-and-padding/right-padding-junk"), chromedp.WaitReady(css("[data-testid=lesson-figure]")))
	before := read()
	if before.Junk == 0 {
		t.Errorf("lesson 7: no right-padding junk highlighted")
	}
	texts := `[...document.querySelectorAll(".new-text")].map((e) => e.textContent).join("|")`
	was := evalJS[string](t, ctx, texts)
	do(t, ctx, "lesson 7: new prompts",
		chromedp.SetValue(css("[data-testid=lesson-prompts]"), "Once upon a time\nSam"),
		chromedp.Click(css("[data-testid=lesson-run]")))
	waitLoad(t, ctx, "lesson 7's new run", `location.search.includes("prompts=")`)
	do(t, ctx, "lesson 7: loaded", chromedp.WaitReady(css("[data-testid=lesson-figure]")))
	if now := evalJS[string](t, ctx, texts); now == was {
		t.Errorf("lesson 7: new prompts, same new texts %q", now)
	}

	do(t, ctx, "lesson 8", chromedp.Navigate(base+"/lessons/memory-bound/bytes-per-token"), chromedp.WaitReady(css("[data-testid=bytes-per-token]")))
	before = read()
	do(t, ctx, "lesson 8: max_new_tokens 5",
		chromedp.SetValue(css("[data-testid=lesson-max-new]"), "5"),
		chromedp.Click(css("[data-testid=lesson-run]")))
	waitLoad(t, ctx, "lesson 8's new run", `location.search.includes("max_new_tokens=5")`)
	do(t, ctx, "lesson 8: loaded", chromedp.WaitReady(css("[data-testid=bytes-per-token]")))
	if after := read(); after.FLOPs == "" || after.FLOPs == before.FLOPs {
		t.Errorf("lesson 8: FLOPs %q before, %q after max_new_tokens 32 → 5; want them to change", before.FLOPs, after.FLOPs)
	}
}
