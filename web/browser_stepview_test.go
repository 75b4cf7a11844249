package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"tracer/engine/refdata"
	"tracer/trace"
)

// The step view in a real browser: the text as it grows, visible
// whitespace, logits, beams as a tree, the KV panel without a cache, sticky
// controls and the folded form after Generate.

// outputTextJS reads the text so far as the page shows it.
const outputTextJS = `document.querySelector("[data-testid=output-text]")?.textContent ?? null`

// walkTexts is the walkthrough's text so far at each of its ten moments.
var walkTexts = []string{"", "", "", "I", "I", "I love", "I love chai", "I love chai", "I love chai", "I love chai"}

// storiesModels is a models folder holding stories260K (it has a tokenizer:
// its tokens carry real spaces).
func storiesModels(t *testing.T) string {
	t.Helper()
	bin := refdata.Need(t, "models/stories260K/stories260K.bin")
	dir := t.TempDir()
	if err := os.Symlink(filepath.Dir(bin), filepath.Join(dir, "stories260K")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// exportedTrace fetches the page's export of the current run.
func exportedTrace(t *testing.T, ctx context.Context) *trace.Trace {
	t.Helper()
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`fetch(document.querySelector("[data-testid=trace-export]").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch the export: %v", err)
	}
	tr, err := trace.Decode([]byte(body))
	if err != nil {
		t.Fatalf("the export is not a valid trace: %v", err)
	}
	return tr
}

func TestBrowserTextSoFar(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)

	t.Run("walkthrough", func(t *testing.T) {
		for i, want := range walkTexts {
			goToFast(t, ctx, i)
			got := evalJS[*string](t, ctx, outputTextJS)
			if got == nil {
				t.Fatalf("moment %d: no output-text on the page", i+1)
			}
			if *got != want {
				t.Errorf("moment %d: got text %q, want %q", i+1, *got, want)
			}
		}
	})

	t.Run("tint and legend", func(t *testing.T) {
		goToFast(t, ctx, 6)
		got := evalJS[map[string]any](t, ctx, `(() => ({
			tints: [...document.querySelectorAll("[data-testid=output-text] .otok")].map(e => [...e.classList].find(c => /^p\d$/.test(c)) + "@" + e.dataset.p).join(" "),
			legend: document.querySelector("[data-testid=tint-legend]")?.textContent ?? "",
			bg: getComputedStyle(document.querySelector("[data-testid=output-text] .otok")).backgroundColor,
		}))()`)
		if got["tints"] != "p4@0.90 p3@0.70 p3@0.60" {
			t.Errorf("got tints %q, want I p4 (0.90), love p3 (0.70), chai p3 (0.60)", got["tints"])
		}
		if !strings.Contains(fmt.Sprint(got["legend"]), "probability") || !strings.Contains(fmt.Sprint(got["legend"]), "≥ 0.8") {
			t.Errorf("got legend %q, want one naming the probability bands", got["legend"])
		}
		if bg := fmt.Sprint(got["bg"]); bg == "" || bg == "rgba(0, 0, 0, 0)" {
			t.Errorf("a token's background is %q: not tinted", bg)
		}
	})

	t.Run("hover or focus shows alternatives", func(t *testing.T) {
		goToFast(t, ctx, 6)
		before := evalJS[string](t, ctx, `getComputedStyle(document.querySelector("[data-testid=output-token]"), "::after").content`)
		if before != "none" && before != "normal" {
			t.Errorf("before focus the alternatives show: %q", before)
		}
		// Headless Chromium matches :focus only in a page that has the
		// window's focus: emulate it, as a learner's window has.
		if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
			t.Fatal(err)
		}
		focusJS := `(() => { const b = document.querySelector("[data-testid=output-token]"); if (document.activeElement !== b) b.focus(); return getComputedStyle(b, "::after").content; })()`
		waitJS(t, ctx, "the alternatives on focus", focusJS+` !== "none"`)
		after := evalJS[string](t, ctx, focusJS)
		if !strings.Contains(after, "you") || !strings.Contains(after, "0.10") {
			t.Errorf("focused, the first token shows %q, want its alternative you (0.10)", after)
		}
		// Hover: the mouse over the second token.
		do(t, ctx, "blur", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		xy := evalJS[[]float64](t, ctx, `(() => { const r = document.querySelectorAll("[data-testid=output-token]")[1].getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
		do(t, ctx, "hover", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0], xy[1]))
		hover := evalJS[string](t, ctx, `getComputedStyle(document.querySelectorAll("[data-testid=output-token]")[1], "::after").content`)
		if !strings.Contains(hover, "eat") || !strings.Contains(hover, "0.30") {
			t.Errorf("hovered, the second token shows %q, want its alternative eat (0.30)", hover)
		}
	})

	t.Run("click a token to go to its step", func(t *testing.T) {
		goToFast(t, ctx, 8)
		do(t, ctx, "click love", chromedp.Click(css(`[data-testid=output-token]:nth-child(2)`)))
		waitJS(t, ctx, "the moment that picks love", `document.querySelector("[data-testid=step-index]").dataset.index === "4"`)
		if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=chosen-token]").textContent`); got != "love" {
			t.Errorf("after the click: chosen %q, want love", got)
		}
	})

	t.Run("live run", func(t *testing.T) {
		fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
		runAndWait(t, ctx, "run-generate", "done")
		for i, want := range []string{"I", "I love", "I love chai", "I love chai"} {
			goToFast(t, ctx, i)
			if got := evalJS[*string](t, ctx, outputTextJS); got == nil || *got != want {
				t.Errorf("step %d: got text %v, want %q", i+1, deref(got), want)
			}
		}
		do(t, ctx, "click I", chromedp.Click(css(`[data-testid=output-token]`)))
		waitJS(t, ctx, "step 1", `document.querySelector("[data-testid=step-index]").dataset.index === "0"`)
	})

	for _, size := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 720}, {"phone", 390, 844}} {
		t.Run("after Generate the form folds, "+size.name, func(t *testing.T) {
			do(t, ctx, "viewport", chromedp.EmulateViewport(size.width, size.height))
			fillRun(t, ctx, form{"model": "toy", "do_sample": "true", "seed": "3"})
			do(t, ctx, "scroll down", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 400)`))
			runAndWait(t, ctx, "run-generate", "done")
			got := evalJS[map[string]any](t, ctx, `(() => ({
				open: document.getElementById("run-panel").open,
				top: document.getElementById("stepper").getBoundingClientRect().top,
				controls: document.querySelector(".controls").getBoundingClientRect().bottom,
			}))()`)
			top, controls := got["top"].(float64), got["controls"].(float64)
			if got["open"] != false {
				t.Errorf("the run form is still open after Generate")
			}
			if top < controls-1 || top > controls+24 {
				t.Errorf("the stepper starts at %v px, the controls end at %v: want the new run just below them", top, controls)
			}
		})
	}
	do(t, ctx, "viewport", chromedp.EmulateViewport(1280, 720))
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

func TestBrowserStickyControls(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "toy", "do_sample": "true", "top_k": "3", "seed": "4"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 1)
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 720}, {"phone", 390, 844}} {
		t.Run(size.name, func(t *testing.T) {
			do(t, ctx, "viewport", chromedp.EmulateViewport(size.width, size.height))
			h := evalJS[float64](t, ctx, `document.documentElement.scrollHeight`)
			if h < 2*float64(size.height) {
				t.Fatalf("the page is %v px high: too short to test scrolling", h)
			}
			do(t, ctx, "scroll to the end", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`))
			waitJS(t, ctx, "the scroll", `window.scrollY > 500`)
			r := evalJS[[]float64](t, ctx, `(() => { const r = document.querySelector("[data-testid=step-next]").getBoundingClientRect(); return [r.top, r.bottom]; })()`)
			if r[0] < 0 || r[1] > float64(size.height) {
				t.Errorf("scrolled to the end, Next spans %v..%v px of a %d px window", r[0], r[1], size.height)
			}
			do(t, ctx, "next", chromedp.Click(css("[data-testid=step-next]"), chromedp.NodeEnabled))
			waitJS(t, ctx, "step 3", `document.querySelector("[data-testid=step-index]").dataset.index === "2"`)
			goTo(t, ctx, 1)
		})
	}
	do(t, ctx, "viewport", chromedp.EmulateViewport(1280, 720))
}

func TestBrowserStepViewRealModel(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: storiesModels(t)}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	const model = "stories260K/stories260K.bin"

	t.Run("text so far and whitespace", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time", "max_new_tokens": "8"})
		runAndWait(t, ctx, "run-generate", "done")
		tr := exportedTrace(t, ctx)
		_, n := index(t, ctx)
		prev := ""
		for i := range n {
			goTo(t, ctx, i)
			got := deref(evalJS[*string](t, ctx, outputTextJS))
			if !strings.HasPrefix(tr.Output.NewText, strings.TrimLeft(got, " ")) || len(got) < len(prev) {
				t.Errorf("step %d: got text %q after %q, want a growing prefix of %q", i+1, got, prev, tr.Output.NewText)
			}
			prev = got
		}
		if strings.TrimLeft(prev, " ") != tr.Output.NewText {
			t.Errorf("at the last step: got text %q, want %q", prev, tr.Output.NewText)
		}
		if p := evalJS[string](t, ctx, `document.querySelector("[data-testid=output-prompt]")?.textContent ?? ""`); p != "Once upon a time" {
			t.Errorf("got prompt %q set apart, want Once upon a time", p)
		}
		goTo(t, ctx, 1)
		got := evalJS[map[string]any](t, ctx, `(() => ({
			chips: [...document.querySelectorAll("[data-testid=context-tokens] .chip")].map(e => e.textContent).join("|"),
			cands: [...document.querySelectorAll("[data-testid=candidates] .tok")].map(e => e.textContent).join("|"),
			legend: document.querySelector("[data-testid=ws-legend]")?.textContent ?? "",
			logits: [...document.querySelectorAll("[data-testid=logit]")].map(e => e.textContent.trim()).join("|"),
		}))()`)
		if !strings.Contains(fmt.Sprint(got["chips"]), "␣upon") || strings.Contains(fmt.Sprint(got["chips"]), " ") {
			t.Errorf("got context chips %q, want ␣upon and no bare space", got["chips"])
		}
		if !strings.Contains(fmt.Sprint(got["cands"]), "␣") || strings.Contains(fmt.Sprint(got["cands"]), " ") {
			t.Errorf("got candidates %q, want leading spaces marked ␣", got["cands"])
		}
		if !strings.Contains(fmt.Sprint(got["legend"]), "␣") || !strings.Contains(fmt.Sprint(got["legend"]), "⏎") {
			t.Errorf("got whitespace legend %q, want ␣ and ⏎ explained", got["legend"])
		}
		logits := strings.Split(fmt.Sprint(got["logits"]), "|")
		if len(logits) < 2 || logits[0] == "" {
			t.Errorf("got logits %q, want one per candidate", got["logits"])
		}
	})

	t.Run("processed logits beside the raw ones", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time", "max_new_tokens": "3", "do_sample": "true", "temperature": "0.5", "top_k": "3", "seed": "1"})
		runAndWait(t, ctx, "run-generate", "done")
		goTo(t, ctx, 0)
		finals := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=final-logit]")].map(e => e.textContent.trim())`)
		if len(finals) < 4 || !strings.HasPrefix(finals[0], "→ ") || finals[len(finals)-1] != "→ -inf" {
			t.Errorf("got processed logits %q, want the kept ones rescaled and the removed ones -inf", finals)
		}
	})

	t.Run("branch to a quoted token", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time", "max_new_tokens": "6"})
		runAndWait(t, ctx, "run-generate", "done")
		goTo(t, ctx, 1)
		do(t, ctx, "type a quoted token", chromedp.SetValue(css("[data-testid=branch-token]"), `" the"`))
		click(t, ctx, "branch-go")
		waitJS(t, ctx, "the branch", `document.querySelector("[data-testid=branch-active]")?.textContent.includes("the") && document.querySelector("[data-testid=run-status]").dataset.state === "done"`)
		if e := pageError(t, ctx); e != "" {
			t.Fatalf("branching to \" the\": %s", e)
		}
		goTo(t, ctx, 1)
		if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=chosen-token]").textContent`); got != "␣the" {
			t.Errorf("the branch chose %q at step 2, want ␣the", got)
		}
		do(t, ctx, "a bad quote", chromedp.SetValue(css("[data-testid=branch-token]"), `" the`), chromedp.Click(css("[data-testid=branch-go]")))
		if e := pageError(t, ctx); !strings.Contains(e, "JSON string") {
			t.Errorf("an unclosed quote: got error %q, want one saying how to quote", e)
		}
	})

	t.Run("beams as a tree", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time", "max_new_tokens": "6", "num_beams": "3"})
		runAndWait(t, ctx, "run-generate", "done")
		tr := exportedTrace(t, ctx)
		_, n := index(t, ctx)
		goTo(t, ctx, n-1)
		got := evalJS[map[string]any](t, ctx, `(() => ({
			steps: document.querySelectorAll("[data-testid=beam-step]").length,
			kept: document.querySelectorAll("[data-testid=beam-step]:last-child [data-beam]:not([data-beam='-1'])").length,
			pruned: document.querySelectorAll("[data-testid=beam-node-pruned]").length,
			winnerPath: document.querySelectorAll("[data-testid=beam-node-winner]").length,
			winner: document.querySelectorAll("[data-testid=hypothesis-active]").length,
			winnerScore: document.querySelector("[data-testid=hypothesis-active]")?.dataset.score ?? "",
			scores: [...document.querySelectorAll("[data-testid=beam-tree] [data-score]")].every(e => /^-?\d+\.\d\d$/.test(e.dataset.score)),
			page: document.getElementById("stepper").textContent,
		}))()`)
		if got["steps"] != float64(n) || got["kept"] != float64(3) || got["pruned"] == float64(0) || got["scores"] != true {
			t.Errorf("tree: got %v steps, %v beams at the last, %v pruned, scores well-formed %v; want %d steps, 3 beams, some pruned", got["steps"], got["kept"], got["pruned"], got["scores"], n)
		}
		want := ""
		if len(tr.Output.SequencesScores) > 0 {
			want = fmt.Sprintf("%.2f", tr.Output.SequencesScores[0])
		}
		if got["winner"] != float64(1) || got["winnerScore"] != want || got["winnerPath"] == float64(0) {
			t.Errorf("winner: got %v marked with score %q and %v nodes on its path, want one with %q", got["winner"], got["winnerScore"], got["winnerPath"], want)
		}
		page := fmt.Sprint(got["page"])
		if strings.Contains(page, "A batch of") || strings.Contains(page, "pad_token_id") {
			t.Errorf("a beam search still reads as a batch or warns about pad_token_id")
		}
		shoot(t, ctx, "screenshot-beams.png")
	})

	t.Run("batch rows as text", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time\nThe cat", "max_new_tokens": "3"})
		runAndWait(t, ctx, "run-generate", "done")
		goTo(t, ctx, 0)
		chips := evalJS[string](t, ctx, `[...document.querySelectorAll("[data-testid=context-tokens] .chip")].map(e => e.textContent).join("|")`)
		if strings.Contains(chips, "#") || !strings.Contains(chips, "upon") {
			t.Errorf("row 0's context: got %q, want its tokens as text", chips)
		}
	})

	t.Run("cache off", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time", "max_new_tokens": "3", "use_cache": "false"})
		runAndWait(t, ctx, "run-generate", "done")
		goTo(t, ctx, 1)
		got := evalJS[map[string]any](t, ctx, `(() => ({
			off: document.querySelector("[data-testid=kv-off]")?.textContent ?? "",
			total: document.querySelector("[data-testid=kv-total]")?.textContent ?? "",
			kv: document.querySelector("[data-testid=kv]").textContent,
		}))()`)
		if !strings.Contains(fmt.Sprint(got["off"]), "No KV cache") || !strings.Contains(fmt.Sprint(got["off"]), "recomputed") {
			t.Errorf("got %q, want the panel to say there is no cache and why each step recomputes", got["off"])
		}
		if got["total"] != "" || strings.Contains(fmt.Sprint(got["kv"]), "since the previous step") {
			t.Errorf("with the cache off the panel still shows a size: %q", got["kv"])
		}
	})
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// goToFast goes to position i with one step message (as a click on a token
// of the text does) and waits for the view the server answers with.
func goToFast(t *testing.T, ctx context.Context, i int) {
	t.Helper()
	do(t, ctx, "go to", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		document.querySelector("[data-testid=step-index]").dataset.stale = "1";
		const b = document.createElement("button"); b.type = "button"; b.dataset.jump = "%d";
		document.getElementById("stepper").appendChild(b); b.click(); b.remove(); })()`, i)))
	waitJS(t, ctx, fmt.Sprintf("index %d", i), fmt.Sprintf(`(() => { const p = document.querySelector("[data-testid=step-index]"); return !p.dataset.stale && p.dataset.index === "%d"; })()`, i))
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}
