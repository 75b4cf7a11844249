package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"tracer/trace"
	"tracer/web/internal/testsupport"
)

// The debugger in a real browser: live generation, the step's panels,
// comparisons, branches, breakpoints and the classroom.

// css selects by CSS.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// evalJS evaluates an expression in the page.
func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS waits until a JavaScript condition holds in the page.
func waitJS(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	expr := `new Promise((resolve) => { const f = () => { try { if (` + cond + `) return resolve(true); } catch (e) {} setTimeout(f, 20); }; f(); })`
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, cond, err)
	}
}

// do runs actions, failing the test with what on error.
func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// doRendered runs actions that make the server send a new view (a
// branch, a jump), and waits until the page has swapped it in, so that
// the next action finds the new nodes, not ones about to be replaced.
func doRendered(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	do(t, ctx, what+": mark the view", chromedp.Evaluate[chromedp.Void](`document.querySelector("[data-testid=step-index]").dataset.stale = "1"`))
	do(t, ctx, what, actions...)
	waitJS(t, ctx, what+": the new view", `!document.querySelector("[data-testid=step-index]").dataset.stale`)
}

// open loads the page and waits for its WebSocket view.
func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	do(t, ctx, "open "+url, chromedp.Navigate(url), chromedp.WaitVisible(css("[data-testid=step-index]")))
	waitJS(t, ctx, "the socket", `document.querySelector("[data-testid=run-status]")`)
}

// fillRun opens the run form and sets its fields; fields not named are
// cleared.
func fillRun(t *testing.T, ctx context.Context, f form) {
	t.Helper()
	actions := []chromedp.Action[chromedp.Void]{
		chromedp.Evaluate[chromedp.Void](`(() => { const p = document.getElementById("run-panel"); p.open = true;
			for (const el of document.querySelectorAll("#run-form input, #run-form textarea:not([name=variants])")) el.value = "";
			for (const el of document.querySelectorAll("#run-form select")) el.selectedIndex = 0; })()`),
	}
	for name, v := range f {
		actions = append(actions, chromedp.SetValue(css(`#run-form [name=`+name+`]`), v))
	}
	do(t, ctx, "fill the run form", actions...)
}

// runAndWait clicks a run button and waits for a new view of the run with
// the status state.
func runAndWait(t *testing.T, ctx context.Context, button, state string) {
	t.Helper()
	click(t, ctx, button)
	waitJS(t, ctx, "the run to be "+state, `(() => { const s = document.querySelector("[data-testid=run-status]"); return !s.dataset.stale && s.dataset.state === "`+state+`"; })()`)
}

// click marks the current view stale and clicks a button by test id.
func click(t *testing.T, ctx context.Context, testID string) {
	t.Helper()
	do(t, ctx, "click "+testID,
		chromedp.Evaluate[chromedp.Void](`document.querySelector("[data-testid=run-status]").dataset.stale = "1"`),
		chromedp.Click(css(`[data-testid=`+testID+`]`)))
}

// index returns the stepper's position and count.
func index(t *testing.T, ctx context.Context) (int, int) {
	t.Helper()
	v := evalJS[[]int](t, ctx, `(() => { const p = document.querySelector("[data-testid=step-index]"); return [Number(p.dataset.index), Number(p.dataset.count)]; })()`)
	return v[0], v[1]
}

// goTo steps to an index with the step message's keyboard-free route: the
// First button, then Next.
func goTo(t *testing.T, ctx context.Context, i int) {
	t.Helper()
	do(t, ctx, "first", chromedp.Click(css("[data-testid=step-first]")))
	waitJS(t, ctx, "index 0", `document.querySelector("[data-testid=step-index]").dataset.index === "0"`)
	for k := 1; k <= i; k++ {
		do(t, ctx, "next", chromedp.Click(css("[data-testid=step-next]"), chromedp.NodeEnabled))
		waitJS(t, ctx, fmt.Sprintf("index %d", k), fmt.Sprintf(`document.querySelector("[data-testid=step-index]").dataset.index === "%d"`, k))
	}
}

// pageError returns the visible error message, or "".
func pageError(t *testing.T, ctx context.Context) string {
	t.Helper()
	return evalJS[string](t, ctx, `(() => { const e = document.querySelector("[data-testid=error-message]"); return e.hidden ? "" : e.textContent.trim(); })()`)
}

// refusal returns the message beside the run form of a run the server
// refused, or "".
func refusal(t *testing.T, ctx context.Context) string {
	t.Helper()
	return evalJS[string](t, ctx, `(() => { const e = document.querySelector("[data-testid=run-error]"); return e.hidden ? "" : e.textContent.trim(); })()`)
}

// shoot saves a screenshot to docs/ when TRACER_SCREENSHOTS=1.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("TRACER_SCREENSHOTS") != "1" {
		return
	}
	// The run form folded away, as the page opens.
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`(() => { const p = document.getElementById("run-panel"); if (p) p.open = false; })()`),
		chromedp.Sleep(50*time.Millisecond),
	)
	var png []byte
	if err == nil {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("../docs", 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("../docs", name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
}

func TestBrowserLiveGeneration(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, func(s *Server) {
		s.Catalog.Add("loop", "loop (slow toy)", testsupport.LoopModel(t, 15*time.Millisecond))
	})
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)

	t.Run("toy", func(t *testing.T) {
		fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
		runAndWait(t, ctx, "run-generate", "done")
		if i, n := index(t, ctx); i != 3 || n != 4 {
			t.Errorf("after the run: at %d of %d, want the last of 4 steps", i, n)
		}
		if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=output-text]").textContent`); got != "I love chai" {
			t.Errorf("got output %q, want I love chai", got)
		}
	})

	t.Run("step back while generating", func(t *testing.T) {
		fillRun(t, ctx, form{"model": "loop", "max_new_tokens": "400"})
		click(t, ctx, "run-generate")
		waitJS(t, ctx, "ten steps", `Number(document.querySelector("[data-testid=step-index]").dataset.count) >= 10`)
		do(t, ctx, "back to the first", chromedp.Click(css("[data-testid=step-first]")))
		waitJS(t, ctx, "the first step", `document.querySelector("[data-testid=step-index]").dataset.index === "0"`)
		do(t, ctx, "next", chromedp.Click(css("[data-testid=step-next]")))
		waitJS(t, ctx, "step 2", `document.querySelector("[data-testid=step-index]").dataset.index === "1"`)
		_, n := index(t, ctx)
		waitJS(t, ctx, "more steps", fmt.Sprintf(`Number(document.querySelector("[data-testid=step-index]").dataset.count) >= %d`, n+5))
		if j, _ := index(t, ctx); j != 1 {
			t.Errorf("new steps moved the learner from 1 to %d", j)
		}
		if s := evalJS[string](t, ctx, `document.querySelector("[data-testid=run-status]").dataset.state`); s != "running" {
			t.Errorf("got status %q while generating, want running", s)
		}
		shoot(t, ctx, "screenshot-live.png")
		do(t, ctx, "stop", chromedp.Click(css("[data-testid=stop]")))
		waitJS(t, ctx, "the stop", `document.querySelector("[data-testid=run-status]").dataset.state === "stopped"`)
	})

	t.Run("option error", func(t *testing.T) {
		fillRun(t, ctx, form{"model": "toy", "do_sample": "true", "temperature": "0"})
		click(t, ctx, "run-generate")
		waitJS(t, ctx, "the error", `!document.querySelector("[data-testid=run-error]").hidden`)
		if e := refusal(t, ctx); !strings.Contains(e, "temperature must be strictly positive when sampling") {
			t.Errorf("got error %q, want the engine's message", e)
		}
	})
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

func TestBrowserSampledStep(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"do_sample": "true", "temperature": "0.7", "top_k": "2", "seed": "5"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 1)
	got := evalJS[map[string]any](t, ctx, `(() => ({
		stages: [...document.querySelectorAll("[data-testid=funnel-stage]")].map(e => e.dataset.stage).join(" "),
		kept: [...document.querySelectorAll("[data-testid=funnel-kept]")].map(e => e.textContent).join(" | "),
		marker: document.querySelector("[data-testid=draw-marker]")?.style.left ?? "",
		u: document.querySelector("[data-testid=draw-marker]")?.dataset.u ?? "",
		by: document.querySelector("[data-testid=chosen-by]").textContent,
		segs: document.querySelectorAll("[data-testid=draw-bar] .seg").length,
	}))()`)
	if got["stages"] != "temperature top_k" || got["kept"] != "2 of 8 | 2 of 8" {
		t.Errorf("funnel: got stages %q kept %q, want temperature and top_k keeping 2 of 8", got["stages"], got["kept"])
	}
	u, _ := strconv.ParseFloat(fmt.Sprint(got["u"]), 64)
	if got["by"] != "sampled" || got["marker"] != strconv.FormatFloat(100*u, 'f', 1, 64)+"%" || got["segs"] != float64(2) {
		t.Errorf("draw: got %v, want a sampled step with the marker at u on two segments", got)
	}
	shoot(t, ctx, "screenshot-funnel.png")
}

func TestBrowserCompare(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	seed, div := divergentSeed(t)
	fillRun(t, ctx, form{"seed": strconv.FormatUint(seed, 10)})
	do(t, ctx, "variants", chromedp.SetValue(css("[data-testid=run-variants]"), "greedy\nT=0.7\nT=1.2"))
	runAndWait(t, ctx, "run-compare", "done")
	waitJS(t, ctx, "the divergence", `document.querySelector("[data-testid=divergence]")`)
	got := evalJS[map[string]any](t, ctx, `(() => ({
		div: document.querySelector("[data-testid=divergence-text]").dataset.divergence,
		says: document.querySelector("[data-testid=divergence-text]").textContent,
		runs: document.querySelectorAll("[data-testid=compare-run]").length,
		marked: document.querySelectorAll("[data-testid=divergence]").length,
		bg: getComputedStyle(document.querySelector("[data-testid=divergence]")).backgroundColor,
	}))()`)
	if got["div"] != strconv.Itoa(div) || got["runs"] != float64(3) || got["marked"] != float64(3) || !strings.Contains(fmt.Sprint(got["says"]), "first differ") {
		t.Errorf("got %v, want 3 runs diverging at %d, marked in each row", got, div)
	}
	if bg := fmt.Sprint(got["bg"]); bg == "" || bg == "rgba(0, 0, 0, 0)" {
		t.Errorf("the divergence is not highlighted: background %q", bg)
	}
	goTo(t, ctx, div)
	shoot(t, ctx, "screenshot-compare.png")
}

func TestBrowserBranchExportImport(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 2)
	// Click </s> among the candidates of step 3: the branch ends there.
	do(t, ctx, "click a candidate", chromedp.Click(css(`[data-branch-id="1"]`)))
	waitJS(t, ctx, "the branch", `document.querySelector("[data-testid=branch-active]")?.dataset.branch === "1" && document.querySelector("[data-testid=run-status]").dataset.state === "done"`)
	if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=output-text]")?.textContent ?? ""`); got != "I love" {
		t.Errorf("the branch's output: got %q, want I love", got)
	}
	// Typing a token branches too; one outside the vocabulary is refused.
	do(t, ctx, "branch #99", chromedp.SetValue(css("[data-testid=branch-token]"), "99"), chromedp.Click(css("[data-testid=branch-go]")))
	waitJS(t, ctx, "the error", `!document.querySelector("[data-testid=error-message]").hidden`)
	if e := pageError(t, ctx); !strings.Contains(e, "outside the vocabulary") {
		t.Errorf("branch 99: got error %q", e)
	}
	doRendered(t, ctx, "trunk", chromedp.Click(css(`[data-branch="0"]`)))
	goTo(t, ctx, 1)
	do(t, ctx, "branch eat", chromedp.SetValue(css("[data-testid=branch-token]"), "eat"), chromedp.Click(css("[data-testid=branch-go]")))
	waitJS(t, ctx, "the second branch", `document.querySelectorAll("[data-testid=branch-tree] li").length === 3 && document.querySelector("[data-testid=run-status]").dataset.state === "done"`)
	shoot(t, ctx, "screenshot-branch.png")

	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("[data-testid=trace-export]").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch the export: %v", err)
	}
	tr, err := trace.Decode([]byte(body))
	if err != nil {
		t.Fatalf("the export is not a valid trace: %v", err)
	}
	if len(tr.Branches) != 2 || tr.Branches[0].At != 2 || tr.Branches[1].Output.NewText != "I eat" {
		t.Fatalf("export: got branches %+v, want </s> at step 2 and eat at step 1", tr.Branches)
	}
	path := filepath.Join(t.TempDir(), "tree.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "import the tree", chromedp.SetUploadFiles(css("[data-testid=trace-import]"), []string{path}))
	waitJS(t, ctx, "the imported tree", `document.querySelector(".source").textContent.includes("imported tree.json") && document.querySelectorAll("[data-testid=branch-tree] li").length === 3`)
	do(t, ctx, "select the eat branch", chromedp.Click(css(`[data-branch="2"]`)))
	waitJS(t, ctx, "the eat branch", `document.querySelector("[data-testid=branch-active]").dataset.branch === "2"`)
	if _, n := index(t, ctx); n != 2 {
		t.Errorf("the imported eat branch has %d steps, want 2", n)
	}
}

func TestBrowserBreakpoints(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	// The form says which distribution its thresholds test (the raw one:
	// "top-1 below 0.3" once fired where the processed top-1 was 0.30).
	do(t, ctx, "open the breakpoints", chromedp.Evaluate[chromedp.Void](`document.getElementById("until-panel").open = true`))
	if says := evalJS[string](t, ctx, `document.querySelector("[data-testid=until-raw]")?.innerText ?? ""`); !strings.Contains(says, "raw distribution") {
		t.Errorf("the breakpoint form says %q, want it to name the raw distribution", says)
	}
	until := func(t *testing.T, fields map[string]string) (int, string) {
		t.Helper()
		goTo(t, ctx, 0)
		actions := []chromedp.Action[chromedp.Void]{chromedp.Evaluate[chromedp.Void](`(() => { document.getElementById("until-panel").open = true;
			for (const el of document.querySelectorAll("#until-form input")) el.value = ""; })()`)}
		for k, v := range fields {
			actions = append(actions, chromedp.SetValue(css("[data-testid=until-"+k+"]"), v))
		}
		actions = append(actions, chromedp.Click(css("[data-testid=until-run]")))
		do(t, ctx, "run to a breakpoint", actions...)
		waitJS(t, ctx, "the breakpoint", `document.querySelector("[data-testid=breakpoint-hit]")`)
		i, _ := index(t, ctx)
		return i, evalJS[string](t, ctx, `document.querySelector("[data-testid=breakpoint-hit]").textContent`)
	}
	cases := []struct {
		name   string
		fields map[string]string
		index  int
		says   string
	}{
		{"top-1", map[string]string{"top1": "0.65"}, 2, "raw top-1 probability (before the processors) is 0.60"},
		{"entropy", map[string]string{"entropy": "0.65"}, 2, "entropy is 0.673"},
		{"token", map[string]string{"token": "</s>", "topk": "1"}, 3, "entered the top 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if i, says := until(t, tc.fields); i != tc.index || !strings.Contains(says, tc.says) {
				t.Errorf("got index %d %q, want %d saying %q", i, says, tc.index, tc.says)
			}
		})
	}
	t.Run("rank", func(t *testing.T) {
		goTo(t, ctx, 1)
		do(t, ctx, "branch eat", chromedp.SetValue(css("[data-testid=branch-token]"), "eat"), chromedp.Click(css("[data-testid=branch-go]")))
		waitJS(t, ctx, "the branch", `document.querySelector("[data-testid=branch-active]")?.dataset.branch === "1" && document.querySelector("[data-testid=run-status]").dataset.state === "done"`)
		if i, says := until(t, map[string]string{"rank": "1"}); i != 1 || !strings.Contains(says, "rank 2, above 1") {
			t.Errorf("got index %d %q, want 1 with rank 2", i, says)
		}
	})
}

func TestBrowserClassroom(t *testing.T) {
	skipShort(t)
	url, srv := serve(t, Config{Classroom: true}, nil)
	teacher := browser(t)
	student, cancel := chromedp.NewContext(teacher, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	open(t, teacher, url+"?teach="+srv.TeachToken())
	open(t, student, url)
	if role := evalJS[string](t, student, `document.body.dataset.role`); role != "student" {
		t.Fatalf("the plain URL's role: %q, want student", role)
	}
	if html := evalJS[string](t, student, `document.documentElement.outerHTML`); strings.Contains(html, srv.TeachToken()) {
		t.Fatal("the student's page holds the instructor's token")
	}

	do(t, teacher, "instructor: next", chromedp.Click(css("[data-testid=step-next]")), chromedp.Click(css("[data-testid=step-next]")))
	waitJS(t, student, "the student following to 2", `document.querySelector("[data-testid=step-index]").dataset.index === "2"`)

	// Without the token, the student cannot drive.
	do(t, student, "student: next", chromedp.Click(css("[data-testid=step-next]")))
	waitJS(t, student, "the refusal", `!document.querySelector("[data-testid=error-message]").hidden`)
	if e := pageError(t, student); !strings.Contains(e, "following the instructor") {
		t.Errorf("student's next: got %q", e)
	}
	if i, _ := index(t, teacher); i != 2 {
		t.Errorf("the student moved the instructor to %d", i)
	}
	shoot(t, student, "screenshot-classroom.png")

	// Detached, the student explores; rejoined, follows again.
	do(t, student, "detach", chromedp.Click(css("[data-testid=detach]")))
	waitJS(t, student, "detached", `document.querySelector("[data-testid=classroom-banner]").dataset.following === "false"`)
	do(t, student, "next", chromedp.Click(css("[data-testid=step-next]")))
	waitJS(t, student, "the student at 3", `document.querySelector("[data-testid=step-index]").dataset.index === "3"`)
	do(t, teacher, "instructor: first", chromedp.Click(css("[data-testid=step-first]")))
	waitJS(t, teacher, "the instructor at 0", `document.querySelector("[data-testid=step-index]").dataset.index === "0"`)
	if i, _ := index(t, student); i != 3 {
		t.Errorf("the detached student moved with the instructor to %d", i)
	}
	do(t, student, "rejoin", chromedp.Click(css("[data-testid=rejoin]")))
	waitJS(t, student, "following at 0", `document.querySelector("[data-testid=step-index]").dataset.index === "0" && document.querySelector("[data-testid=classroom-banner]").dataset.following === "true"`)
}

func TestBrowserRealModels(t *testing.T) {
	skipShort(t)
	dir := realModels(t)
	url, _ := serve(t, Config{ModelsDir: dir}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	cases := []struct {
		name string
		form form
	}{
		{"tiny-gpt2", form{"model": "tiny-gpt2", "input": "ids", "prompt": "15496 11 616 1438 318", "max_new_tokens": "8", "do_sample": "true", "top_k": "20", "seed": "2"}},
		{"stories260K", form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "12"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fillRun(t, ctx, tc.form)
			runAndWait(t, ctx, "run-generate", "done")
			goTo(t, ctx, 1)
			got := evalJS[map[string]any](t, ctx, `(() => ({
				kv: document.querySelector("[data-testid=kv-total]")?.textContent ?? "",
				achieved: document.querySelector("[data-testid=traffic-achieved]")?.textContent ?? "",
				charts: document.querySelectorAll("[data-testid=charts] svg").length,
			}))()`)
			if got["kv"] == "" || !strings.HasSuffix(fmt.Sprint(got["achieved"]), "GB/s") || got["charts"] != float64(4) {
				t.Errorf("got %v, want the KV cache, achieved bandwidth and four charts", got)
			}
			if tc.name == "tiny-gpt2" {
				shoot(t, ctx, "screenshot-real.png")
			}
		})
	}
}

func TestBrowserLayouts(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"do_sample": "true", "top_k": "3", "seed": "4"})
	runAndWait(t, ctx, "run-generate", "done")
	if keys := evalJS[string](t, ctx, `document.querySelector("[data-testid=shortcuts]").textContent`); !strings.Contains(keys, "branch") || !strings.Contains(keys, "Space") {
		t.Errorf("the shortcuts shown: %q", keys)
	}
	// Keyboard: Home goes to the first step, → on, c turns the charts off.
	do(t, ctx, "keys", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`), chromedp.KeyEvent(kb.Home))
	waitJS(t, ctx, "Home", `document.querySelector("[data-testid=step-index]").dataset.index === "0"`)
	do(t, ctx, "→", chromedp.KeyEvent(kb.ArrowRight))
	waitJS(t, ctx, "→", `document.querySelector("[data-testid=step-index]").dataset.index === "1"`)
	do(t, ctx, "c", chromedp.KeyEvent("c"))
	waitJS(t, ctx, "charts off", `!document.querySelector("[data-testid=charts]")`)
	do(t, ctx, "c", chromedp.KeyEvent("c"))
	waitJS(t, ctx, "charts on", `document.querySelector("[data-testid=charts]")`)
	for _, size := range []struct {
		name          string
		width, height int64
		dark          bool
	}{
		{"desktop", 1280, 720, false},
		{"phone", 390, 844, false},
		{"dark", 1280, 720, true},
	} {
		t.Run(size.name, func(t *testing.T) {
			scheme := "light"
			if size.dark {
				scheme = "dark"
			}
			do(t, ctx, "viewport", chromedp.EmulateViewport(size.width, size.height))
			media := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, media); err != nil {
				t.Fatal(err)
			}
			waitJS(t, ctx, "the layout", `document.readyState === "complete"`)
			if size.dark { // the page asks for charts in the dark palette (at its next view, should the browser not say)
				do(t, ctx, "a view", chromedp.Click(css("[data-testid=step-first]")))
				waitJS(t, ctx, "dark charts", `document.querySelector("[data-testid=charts] svg").outerHTML.toUpperCase().includes("#1E2125")`)
			}
			if w := evalJS[float64](t, ctx, `document.documentElement.scrollWidth`); w > float64(size.width)+1 {
				t.Errorf("%s: the page is %v px wide in a %d px window", size.name, w, size.width)
			}
			if size.name != "desktop" {
				shoot(t, ctx, "screenshot-"+size.name+".png")
			}
		})
	}
}

// TestBrowserRunsWithDownloadRow presses Generate and Compare on a page
// that shows the download row, as every server not offline does: the
// row's box once travelled with the run form and the server refused it.
func TestBrowserRunsWithDownloadRow(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
	if !evalJS[bool](t, ctx, `!!document.querySelector("[data-testid=pull-repo]")`) {
		t.Fatal("the page lacks the download row: this test needs it shown")
	}
	do(t, ctx, "type a repository", chromedp.SetValue(css("[data-testid=pull-repo]"), "org/not-asked-for"))
	runAndWait(t, ctx, "run-generate", "done")
	if e := pageError(t, ctx); e != "" {
		t.Errorf("Generate: got error %q, want none", e)
	}
	// Generate folded the form away: open it again, as a learner does.
	do(t, ctx, "open the form", chromedp.Click(css("[data-testid=run-panel] summary")))
	do(t, ctx, "variants", chromedp.SetValue(css("[data-testid=run-variants]"), "greedy\nT=0.7"))
	runAndWait(t, ctx, "run-compare", "done")
	if e := pageError(t, ctx); e != "" {
		t.Errorf("Compare: got error %q, want none", e)
	}
	if n := evalJS[float64](t, ctx, `document.querySelectorAll("[data-testid=compare-run]").length`); n != 2 {
		t.Errorf("got %v runs compared, want 2", n)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
