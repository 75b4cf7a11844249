package web

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/lessons"
	"tracer/web/internal/testsupport"
	"tracer/web/words"
)

// TestBrowserWhatIf moves the what-if sliders on a sampled step of a
// SmolLM2-shaped model (vocabulary 49152): the candidates, funnel and draw
// redraw from the step's raw logits, without generating again, and a
// button branches on with the settings. It logs the median time from the
// input event to the painted answer over 25 moves; an imported trace
// without its full logits says what is missing.
func TestBrowserWhatIf(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, func(s *Server) {
		s.Catalog.Add("smol", "smol (random, 49152 tokens)", testsupport.RandomModel(t, 49152))
	})
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "smol", "input": "ids", "prompt": "1 17 300", "do_sample": "true", "seed": "5", "max_new_tokens": "4"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 1)
	steps := evalJS[float64](t, ctx, `Number(document.querySelector("[data-testid=step-index]").dataset.count)`)

	do(t, ctx, "open the what-if", chromedp.Evaluate[chromedp.Void](`document.getElementById("whatif-panel").open = true`))
	waitJS(t, ctx, "the step as run", `document.querySelector("#whatif-out [data-testid=whatif-result]")`)
	if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=whatif-temperature-value]").value`); got != "1" {
		t.Errorf("the temperature slider starts at %q, want the run's 1", got)
	}
	// 25 moves of the temperature slider, each waited for.
	move := func(t *testing.T, name string, v float64) {
		t.Helper()
		n := evalJS[float64](t, ctx, `Number(document.getElementById("whatif-out").dataset.answers || 0)`)
		do(t, ctx, "move "+name, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const el = document.querySelector("[data-testid=whatif-%s]"); el.value = %q; el.dispatchEvent(new Event("input", {bubbles: true})); })()`, name, strconv.FormatFloat(v, 'f', -1, 64))))
		waitJS(t, ctx, "the answer to "+name, fmt.Sprintf(`Number(document.getElementById("whatif-out").dataset.answers || 0) > %v`, n))
	}
	for i := range 25 {
		move(t, "temperature", 0.2+0.1*float64(i))
	}
	timings := evalJS[[]float64](t, ctx, `window.tracerWhatIfTimings`)
	if len(timings) < 25 {
		t.Fatalf("got %d timings, want 25", len(timings))
	}
	sorted := slices.Clone(timings)
	slices.Sort(sorted)
	t.Logf("what-if redraw on a 49152-token step, input event to painted candidates: median %.1f ms over %d moves (min %.1f, max %.1f)", sorted[len(sorted)/2], len(sorted), sorted[0], sorted[len(sorted)-1])

	move(t, "temperature", 0.7)
	move(t, "top_k", 1)
	got := evalJS[map[string]any](t, ctx, `(() => {
		const r = document.querySelector("#whatif-out [data-testid=whatif-result]");
		return {
			label: r.dataset.label,
			kept: [...r.querySelectorAll("[data-testid=funnel-kept]")].map((e) => e.textContent.trim()).join("|"),
			finals: r.querySelectorAll("[data-testid=final-prob]").length,
			notes: r.querySelectorAll("[data-testid=whatif-note]").length,
			draw: !!r.querySelector("[data-testid=draw-marker]"),
			choice: r.querySelector("[data-testid=whatif-choice]").textContent,
			chosen: r.dataset.chosen,
			top: r.querySelector("[data-testid=candidates] li").dataset.id,
		};
	})()`)
	if got["label"] != "T=0.7 top_k=1" || got["kept"] != "49152 of 49152|1 of 49152" || got["notes"] != float64(0) || got["draw"] != true || got["chosen"] != got["top"] {
		t.Errorf("top_k 1 at T=0.7: got %v, want the temperature and top-k stages, one kept token (the top one) drawn, no note", got)
	}
	if n := evalJS[float64](t, ctx, `Number(document.querySelector("[data-testid=step-index]").dataset.count)`); n != steps {
		t.Errorf("the what-if changed the run: %v steps, want %v", n, steps)
	}
	shoot(t, ctx, "screenshot-whatif.png")

	// Branch on with the settings: a branch from this step, labelled with them.
	do(t, ctx, "branch with these settings", chromedp.Click(css("[data-testid=whatif-branch]")))
	waitJS(t, ctx, "the what-if branch", `document.querySelector("[data-testid=branch-active]")?.dataset.branch === "1" && document.querySelector("[data-testid=run-status]").dataset.state === "done"`)
	if label := evalJS[string](t, ctx, `document.querySelector("[data-testid=branch-tree]").textContent`); !strings.Contains(label, "(T=0.7 top_k=1)") {
		t.Errorf("the branch tree: got %q, want the what-if's settings", label)
	}

	// An export leaves the kept logits out; imported again, the what-if
	// works on the recorded candidates and says so.
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("[data-testid=trace-export]").href).then((r) => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch the export: %v", err)
	}
	path := filepath.Join(t.TempDir(), "smol.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "import", chromedp.SetUploadFiles(css("[data-testid=trace-import]"), []string{path}))
	waitJS(t, ctx, "the import", `document.querySelector(".source").textContent.includes("smol.json")`)
	goTo(t, ctx, 1)
	waitJS(t, ctx, "the partial what-if", `document.querySelector("#whatif-out [data-testid=whatif-note]")`)
	if note := evalJS[string](t, ctx, `document.querySelector("#whatif-out [data-testid=whatif-note]").textContent`); !strings.Contains(note, "of the 49152 raw logits") {
		t.Errorf("imported: got note %q, want it to say the full vocabulary is missing", note)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// TestBrowserClassroomRoles opens the instructor's link: the secret leaves
// the address bar and appears nowhere in the page, and the page still
// drives. A following student sees the run form disabled with its reason
// and a Detach button, which frees it.
func TestBrowserClassroomRoles(t *testing.T) {
	skipShort(t)
	url, srv := serve(t, Config{Classroom: true}, nil)
	token := srv.TeachToken()
	teacher := browser(t)
	student, cancel := chromedp.NewContext(teacher, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	open(t, teacher, url+"?teach="+token)
	if href := evalJS[string](t, teacher, `location.href`); strings.Contains(href, token) || strings.Contains(href, "teach") {
		t.Errorf("the address bar still shows the secret: %s", href)
	}
	if n := evalJS[float64](t, teacher, fmt.Sprintf(`document.documentElement.outerHTML.split(%q).length - 1`, token)); n != 0 {
		t.Errorf("the instructor's page holds the secret %v times, want 0", n)
	}
	if n := evalJS[float64](t, teacher, `[...document.querySelectorAll("a[href], form[action]")].filter((e) => (e.href || e.action).includes("teach")).length`); n != 0 {
		t.Errorf("%v links carry the secret", n)
	}
	open(t, student, url)
	do(t, teacher, "instructor: next", chromedp.Click(css("[data-testid=step-next]")))
	waitJS(t, student, "the student following to 1", `document.querySelector("[data-testid=step-index]").dataset.index === "1"`)
	// A reload keeps the instructor's role (the cookie), without ?teach=.
	open(t, teacher, url)
	if role := evalJS[string](t, teacher, `document.body.dataset.role`); role != "instructor" {
		t.Errorf("after a reload the instructor's page is %q", role)
	}

	do(t, student, "open the run form", chromedp.Evaluate[chromedp.Void](`document.getElementById("run-panel").open = true`))
	locked := `(() => ({
		disabled: document.getElementById("run-lock").disabled,
		generate: document.querySelector("[data-testid=run-generate]").matches(":disabled"),
		note: !document.querySelector("[data-testid=run-locked]").hidden && document.querySelector("[data-testid=run-locked]").getBoundingClientRect().height > 0,
	}))()`
	if got := evalJS[map[string]bool](t, student, locked); !got["disabled"] || !got["generate"] || !got["note"] {
		t.Errorf("following: got %v, want the form disabled with the reason shown", got)
	}
	if reason := evalJS[string](t, student, `document.querySelector("[data-testid=run-locked]").textContent`); !strings.Contains(reason, "instructor") {
		t.Errorf("the reason: %q", reason)
	}
	do(t, student, "detach from the run form", chromedp.Click(css("[data-testid=run-detach]")))
	waitJS(t, student, "detached", `document.querySelector("[data-testid=classroom-banner]").dataset.following === "false" && !document.getElementById("run-lock").disabled`)
	if got := evalJS[map[string]bool](t, student, locked); got["disabled"] || got["generate"] || got["note"] {
		t.Errorf("detached: got %v, want the form free and the reason gone", got)
	}
	fillRun(t, student, form{"model": "toy", "do_sample": "false"})
	runAndWait(t, student, "run-generate", "done")
	if e := pageError(t, student); e != "" {
		t.Errorf("the detached student's Generate: %q", e)
	}
}

// TestBrowserCompareExports compares three runs: the page's Export saves
// every run, and each run's link downloads under a name of its own.
func TestBrowserCompareExports(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"seed": "2"})
	do(t, ctx, "variants", chromedp.SetValue(css("[data-testid=run-variants]"), "greedy\nT=0.7\nT=1.2"))
	runAndWait(t, ctx, "run-compare", "done")
	names := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=compare-export-run]")].map((a) => a.getAttribute("download"))`)
	if got := strings.Join(names, " "); got != "tracer-run-1-greedy.json tracer-run-2-T=0.7.json tracer-run-3-T=1.2.json" {
		t.Errorf("per-run downloads: got %q, want three distinct names", got)
	}
	disp, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Promise.all([document.querySelector("[data-testid=trace-export]"), ...document.querySelectorAll("[data-testid=compare-export-run]")].map((a) => fetch(a.href).then((r) => r.headers.get("Content-Disposition"))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch the exports: %v", err)
	}
	want := []string{"tracer-compare.zip", "tracer-run-1-greedy.json", "tracer-run-2-T=0.7.json", "tracer-run-3-T=1.2.json"}
	for i, w := range want {
		if i >= len(disp) || !strings.Contains(disp[i], `filename="`+w+`"`) {
			t.Errorf("download %d: got %q, want %s", i, disp, w)
		}
	}
	if d := evalJS[string](t, ctx, `document.querySelector("[data-testid=trace-export]").getAttribute("download")`); d != "" {
		t.Errorf("the page's Export names its file %q itself, hiding the server's name", d)
	}
}

// TestBrowserBranchToChosenToken branches to the token a step already
// chose, typed and clicked: the page goes there, and no duplicate branch
// appears.
func TestBrowserBranchToChosenToken(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 1)
	doRendered(t, ctx, "branch love", chromedp.SetValue(css("[data-testid=branch-token]"), "love"), chromedp.Click(css("[data-testid=branch-go]")))
	doRendered(t, ctx, "click the chosen candidate", chromedp.Click(css(`[data-testid=candidate-active] [data-branch-id]`)))
	do(t, ctx, "branch eat", chromedp.SetValue(css("[data-testid=branch-token]"), "eat"), chromedp.Click(css("[data-testid=branch-go]")))
	waitJS(t, ctx, "the eat branch", `document.querySelector("[data-testid=branch-active]")?.dataset.branch === "1" && document.querySelector("[data-testid=run-status]").dataset.state === "done"`)
	doRendered(t, ctx, "trunk", chromedp.Click(css(`[data-branch="0"]`)))
	goTo(t, ctx, 1)
	do(t, ctx, "branch eat again", chromedp.SetValue(css("[data-testid=branch-token]"), "eat"), chromedp.Click(css("[data-testid=branch-go]")))
	waitJS(t, ctx, "back on the eat branch", `document.querySelector("[data-testid=branch-active]")?.dataset.branch === "1"`)
	if n := evalJS[float64](t, ctx, `document.querySelectorAll("[data-testid=branch-tree] li").length`); n != 2 {
		t.Errorf("the tree has %v entries, want the trunk and one branch", n)
	}
	if i, _ := index(t, ctx); i != 1 {
		t.Errorf("at step index %d, want 1 (where eat was chosen)", i)
	}
	if e := pageError(t, ctx); e != "" {
		t.Errorf("error: %q", e)
	}
}

// TestBrowserDebuggerTranslated runs a sampled toy in Hindi: the chosen
// line, the chart titles and the run's source are in Hindi too; at phone
// width the step buttons keep their labels; with only the toy the run
// form says how to get a real model.
func TestBrowserDebuggerTranslated(t *testing.T) {
	skipShort(t)
	url, s := serve(t, Config{}, nil)
	ui := s.Book
	ctx := browser(t)
	open(t, ctx, url+"?lang=hi")
	fillRun(t, ctx, form{"model": "toy", "do_sample": "true", "seed": "4"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 1)
	got := evalJS[map[string]string](t, ctx, `(() => ({
		chosen: document.querySelector("[data-testid=chosen-token]").parentElement.textContent,
		charts: [...document.querySelectorAll("[data-testid=charts] figcaption")].map((f) => f.firstChild.textContent.trim()).join("|"),
		source: document.querySelector(".source").textContent,
	}))()`)
	for _, want := range []struct{ where, key string }{
		{"chosen", words.KeyDbgBySampled},
		{"charts", words.KeyDbgChartCandidates},
		{"charts", words.KeyDbgChartConfidence},
	} {
		if w := ui.Get(want.key, lessons.Hindi); !strings.Contains(got[want.where], w) {
			t.Errorf("%s: got %q, want %q", want.where, got[want.where], w)
		}
	}
	for _, english := range []string{"sampled;", "the draw", "Candidates at this step", "run of"} {
		for k, v := range got {
			if strings.Contains(v, english) {
				t.Errorf("%s in Hindi still says %q: %q", k, english, v)
			}
		}
	}
	if !strings.Contains(got["source"], "toy का run") {
		t.Errorf("source: got %q", got["source"])
	}

	do(t, ctx, "phone width", chromedp.EmulateViewport(390, 844))
	labels := evalJS[[]map[string]any](t, ctx, `[...document.querySelectorAll(".controls .steps button")].filter((b) => b.getBoundingClientRect().width > 0).map((b) => {
		const l = b.querySelector(".label");
		return {aria: b.getAttribute("aria-label") || "", shown: !!l && getComputedStyle(l).display !== "none" && l.getBoundingClientRect().width > 0};
	})`)
	if len(labels) != 5 { // ⏮ ◀ ▶ ▶ ⏭; Stop shows while generating
		t.Fatalf("got %d step buttons shown, want 5", len(labels))
	}
	for i, l := range labels {
		if l["aria"] == "" || l["shown"] != true {
			t.Errorf("step button %d at phone width: %v, want an accessible name and a visible label", i, l)
		}
	}
	if w := evalJS[float64](t, ctx, `document.documentElement.scrollWidth`); w > 391 {
		t.Errorf("the page is %v px wide at 390", w)
	}
	do(t, ctx, "open the run form", chromedp.Evaluate[chromedp.Void](`document.getElementById("run-panel").open = true`))
	advice := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=no-real-model] [data-testid=download-command]")].map((c) => c.textContent)`)
	if len(advice) != len(s.lessons.Cat.Downloads) || len(advice) == 0 || !strings.HasPrefix(advice[0], "tracer pull ") {
		t.Errorf("with only the toy the run form advises %q, want the lessons' downloads", advice)
	}
	do(t, ctx, "desktop", chromedp.EmulateViewport(1280, 720))
}
