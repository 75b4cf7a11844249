package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/lessonpage"
)

// TestBrowserLessonModels serves the lessons with a model that cannot run
// them first in the list (tiny-gpt2 has no tokenizer) and two copies of
// stories260K, and checks in English and Hindi: the lessons pick
// stories260K, the picker switches and the choice persists; 6.2 draws raw
// beside after-temperature bars, 6.3 a count per stage, 4.2 and 6.1 mark
// where the runs part ways; every figure's link opens the same run in the
// debugger; no page shows a server path or --prompt-ids.
func TestBrowserLessonModels(t *testing.T) {
	dir := twoModelsDir(t)
	base, _ := serve(t, Config{ModelsDir: dir}, nil)
	base = strings.TrimSuffix(base, "/")
	top := browser(t)
	consoleErrors := collectConsole(top)
	var ctx context.Context // each part's own deadline, in the same tab
	part := func(t *testing.T) {
		c, cancel := context.WithTimeout(context.WithoutCancel(top), 40*time.Second)
		t.Cleanup(cancel)
		ctx = c
	}
	cat, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	clean := func(t *testing.T, where string) {
		t.Helper()
		html := evalJS[string](t, ctx, `document.documentElement.outerHTML`)
		for _, bad := range []string{dir, "--prompt-ids"} {
			if strings.Contains(html, bad) {
				t.Errorf("%s: the page holds %q", where, bad)
			}
		}
	}
	runModel := `(document.querySelector("[data-testid=run-model]")?.textContent ?? "")`
	pick := func(t *testing.T, name string) {
		t.Helper()
		// The picker acts once the page's script is ready; a change sent
		// before that would be lost.
		waitLoad(t, ctx, "the page's script", `document.body.dataset.ready === "true"`)
		evalJS[bool](t, ctx, fmt.Sprintf(`(() => { const s = document.querySelector("[data-testid=model-select]"); s.value = %q; s.dispatchEvent(new Event("change")); return true; })()`, name))
		waitLoad(t, ctx, "the run on "+name, fmt.Sprintf(`new URLSearchParams(location.search).get("model") === %q && %s === %q`, name, runModel, name))
	}
	for _, lang := range lessons.Languages() {
		q := "?lang=" + lang
		t.Run(lang+"/picker", func(t *testing.T) {
			part(t)
			do(t, ctx, "open the list", chromedp.Navigate(base+"/lessons"+q), chromedp.WaitReady(css("[data-testid=lesson-index]")))
			evalJS[bool](t, ctx, `(localStorage.clear(), true)`)
			do(t, ctx, "open 3.1", chromedp.Navigate(base+"/lessons/generate-with-a-small-lm/the-call"+q), chromedp.WaitReady(css("[data-testid=model-picker]")))
			if got := evalJS[string](t, ctx, runModel); got != storiesName {
				t.Errorf("got the run on %q, want %q (the first model that has a tokenizer)", got, storiesName)
			}
			clean(t, "3.1")
			pick(t, copyName)
			do(t, ctx, "open 4.2 without a model", chromedp.Navigate(base+"/lessons/kv-cache/cache-on-and-off"+q))
			waitLoad(t, ctx, "4.2 on the chosen model", runModel+` === "`+copyName+`"`)
			if got := evalJS[string](t, ctx, `JSON.parse(localStorage.getItem("tracer.lessons")).model`); got != copyName {
				t.Errorf("got %q remembered, want %q", got, copyName)
			}
			do(t, ctx, "next page", chromedp.Click(css("[data-testid=lesson-next]")))
			waitLoad(t, ctx, "4.3 on the chosen model", `document.querySelector("[data-testid=lesson-step]")?.dataset.step === "same-tokens" && `+runModel+` === "`+copyName+`"`)
			pick(t, storiesName)
		})
		t.Run(lang+"/temperature", func(t *testing.T) {
			part(t)
			do(t, ctx, "open 6.2", chromedp.Navigate(base+"/lessons/greedy-and-sampling/temperature"+q), chromedp.WaitReady(css("[data-testid=temp-bars]")))
			type bar struct {
				Raw, After           string
				RawWidth, AfterWidth float64
			}
			bars := evalJS[[]bar](t, ctx, `[...document.querySelectorAll("[data-testid=temp-bar-row]")].map((r) => {
				const w = (s) => r.querySelector(s + " > span").getBoundingClientRect().width;
				return { Raw: r.querySelector("[data-testid=raw-bar]").dataset.prob, After: r.querySelector("[data-testid=after-bar]").dataset.prob, RawWidth: w("[data-testid=raw-bar]"), AfterWidth: w("[data-testid=after-bar]") };
			})`)
			if len(bars) < 3 {
				t.Fatalf("got %d pairs of bars, want the leading candidates raw and after temperature", len(bars))
			}
			raw, _ := strconv.ParseFloat(bars[0].Raw, 64)
			after, _ := strconv.ParseFloat(bars[0].After, 64)
			if !(after > raw) || !(bars[0].AfterWidth > bars[0].RawWidth) || bars[0].RawWidth <= 0 {
				t.Errorf("top candidate: got raw %v (%.1f px), after T=0.7 %v (%.1f px); want the bar after temperature longer", raw, bars[0].RawWidth, after, bars[0].AfterWidth)
			}
		})
		t.Run(lang+"/funnel", func(t *testing.T) {
			part(t)
			do(t, ctx, "open 6.3", chromedp.Navigate(base+"/lessons/greedy-and-sampling/top-k-and-top-p"+q), chromedp.WaitReady(css("[data-testid=stage-funnel]")))
			type row struct {
				Stage string
				Kept  int
			}
			rows := evalJS[[]row](t, ctx, `[...document.querySelectorAll("[data-testid=funnel-row]")].map((r) => ({ Stage: r.querySelector("th").textContent, Kept: Number(r.dataset.kept) }))`)
			var stages []string
			for i, r := range rows {
				stages = append(stages, fmt.Sprintf("%s:%d", r.Stage, r.Kept))
				if i > 0 && r.Kept > rows[i-1].Kept {
					t.Errorf("%s keeps %d, more than the stage before (%d)", r.Stage, r.Kept, rows[i-1].Kept)
				}
			}
			want := []string{"512", "temperature", "top_k (k=20):20", "top_p", "final"}
			if len(rows) != 5 || rows[0].Kept != 512 || !strings.HasPrefix(stages[1], "temperature") || stages[2] != want[2] || !strings.HasPrefix(stages[3], "top_p") {
				t.Errorf("got the stages %v, want the vocabulary (512), temperature, top_k (k=20):20, top_p, final", stages)
			}
			if d := evalJS[string](t, ctx, `document.querySelector("[data-testid=lesson-draw]")?.textContent ?? ""`); d == "" {
				t.Errorf("got no draw, want where the random number fell")
			}
		})
		for _, tc := range []struct{ path, differs string }{
			{"/lessons/kv-cache/cache-on-and-off", "side-fed"},
			{"/lessons/greedy-and-sampling/greedy-vs-sampled", "side-chosen"},
		} {
			t.Run(lang+"/part-ways"+tc.path, func(t *testing.T) {
				part(t)
				do(t, ctx, "open", chromedp.Navigate(base+tc.path+q), chromedp.WaitReady(css("[data-testid=side-by-side]")))
				got := evalJS[[]string](t, ctx, `(() => { const r = document.querySelector("[data-testid=part-ways]"); if (!r) return []; return [...r.querySelectorAll("[data-testid=`+tc.differs+`]")].map((c) => c.textContent + "|" + c.className + "|" + getComputedStyle(r).backgroundColor); })()`)
				if len(got) != 2 || got[0] == got[1] || !strings.Contains(got[0], "differs") || strings.HasSuffix(got[0], "rgba(0, 0, 0, 0)") {
					t.Errorf("got the part-ways row's %s cells %q, want two that differ, marked, on a highlighted row", tc.differs, got)
				}
				if evalJS[string](t, ctx, `document.querySelector("[data-testid=compare-link]")?.getAttribute("href") ?? ""`) == "" {
					t.Errorf("got no link to Compare in the debugger")
				}
			})
		}
		for _, l := range cat.Lessons {
			t.Run(lang+"/links/"+l.ID, func(t *testing.T) {
				part(t)
				for _, st := range l.Steps {
					if len(st.Runs) > 0 {
						checkFigureLinks(t, ctx, base, l.ID+"/"+st.ID, lessonpage.StepURL(l.ID, st.ID, lang), &st, clean)
					}
				}
			})
		}
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// figureLink is one "open in the debugger" link of a figure, with what the
// lesson's run generated.
type figureLink struct {
	Href, NewIDs, TraceModel string
}

// checkFigureLinks opens every debugger link of a step's figure and checks
// that the debugger holds the same run: same model, prompt, settings and
// tokens; and that the comparison link holds every run.
func checkFigureLinks(t *testing.T, ctx context.Context, base, where, path string, st *lessons.Step, clean func(*testing.T, string)) {
	t.Helper()
	runs := st.Runs
	do(t, ctx, where, chromedp.Navigate(base+path), chromedp.WaitReady(css("[data-testid=lesson-figure]")))
	clean(t, where)
	links := evalJS[[]figureLink](t, ctx, `[...document.querySelectorAll("[data-testid=debugger-run-link]")].map((a) => ({ Href: a.getAttribute("href"), NewIDs: a.dataset.newIds, TraceModel: a.dataset.traceModel ?? "" }))`)
	if len(links) != len(runs) {
		t.Errorf("%s: got %d links into the debugger, want one per run (%d)", where, len(links), len(runs))
		return
	}
	compare := evalJS[string](t, ctx, `document.querySelector("[data-testid=compare-link]")?.getAttribute("href") ?? ""`)
	for i, l := range links {
		tr := openLink(t, ctx, base, where, l.Href, 0, lessonpage.FigureStep(st), clean)
		if tr == nil {
			continue
		}
		checkSameRun(t, where+" run "+runs[i].ID, tr, &runs[i], l)
	}
	if compare != "" {
		for i := range runs {
			if tr := openLink(t, ctx, base, where+" (compare)", compare, i, lessonpage.FigureStep(st), clean); tr != nil {
				checkSameRun(t, where+" compare run "+runs[i].ID, tr, &runs[i], links[i])
			}
		}
	}
}

// openLink opens a link in the browser, checks that the debugger's stepper
// stands at the lesson's step, and exports run k of the debugger's page.
func openLink(t *testing.T, ctx context.Context, base, where, href string, k, step int, clean func(*testing.T, string)) *trace.Trace {
	t.Helper()
	do(t, ctx, where+": open "+href, chromedp.Navigate(base+href), chromedp.WaitReady(css("body[data-session]")))
	clean(t, where+" in the debugger")
	if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=step-index]")?.dataset.index ?? ""`); got != strconv.Itoa(step) {
		t.Errorf("%s: the debugger stands at %q, want the lesson's step %d", where, got, step)
	}
	if e := evalJS[string](t, ctx, `document.querySelector("[role=alert]")?.textContent?.trim() ?? ""`); e != "" {
		t.Errorf("%s: the debugger says %q", where, e)
	}
	id := evalJS[string](t, ctx, `document.body.dataset.session`)
	resp, err := http.Get(base + "/export?session=" + id + "&run=" + strconv.Itoa(k))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("%s: export run %d of %s: %d %s", where, k, href, resp.StatusCode, body)
		return nil
	}
	tr, err := trace.Read(bytes.NewReader(body), 1<<26)
	if err != nil {
		t.Errorf("%s: export: %v", where, err)
		return nil
	}
	return tr
}

// checkSameRun compares the debugger's run with the lesson's.
func checkSameRun(t *testing.T, where string, tr *trace.Trace, run *lessons.Run, l figureLink) {
	t.Helper()
	if got := lessonpage.NewIDList(tr); got != l.NewIDs {
		t.Errorf("%s: the debugger generated %q, the lesson %q", where, got, l.NewIDs)
	}
	if l.TraceModel != "" && tr.Model.Name != l.TraceModel {
		t.Errorf("%s: the debugger ran %q, the lesson %q", where, tr.Model.Name, l.TraceModel)
	}
	prompts := tr.Prompt.Texts
	if len(prompts) == 0 && tr.Prompt.Text != "" {
		prompts = []string{tr.Prompt.Text}
	}
	if !reflect.DeepEqual(prompts, run.Prompts) && !(len(prompts) == 0 && len(run.Prompts) == 0) {
		t.Errorf("%s: the debugger's prompts %q, the lesson's %q", where, prompts, run.Prompts)
	}
	var opts map[string]any
	b, _ := json.Marshal(tr.Options)
	json.Unmarshal(b, &opts)
	for _, o := range run.Options {
		var want any
		json.Unmarshal([]byte(o.Value), &want)
		if !reflect.DeepEqual(opts[o.Name], want) {
			t.Errorf("%s: the debugger's %s is %v, the lesson's %v", where, o.Name, opts[o.Name], want)
		}
	}
	if len(run.Prompts) > 1 && tr.Options.Padding != cmpOr(run.Padding, "left") {
		t.Errorf("%s: the debugger pads %q, the lesson %q", where, tr.Options.Padding, run.Padding)
	}
}

// cmpOr returns s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
