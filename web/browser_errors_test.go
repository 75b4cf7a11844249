package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Errors on the debugger page (issue 37, points 8 and 9): a run the server
// refuses before it starts, and one that fails after it started.

// TestBrowserRefusedRun asks for runs the server refuses before they
// start: the run form stays open with the refusal beside it, the field the
// message names marked (aria-invalid, a red border) and focused; the run
// shown before stays, and no banner over it repeats the error. Editing the
// field takes its mark away; the next run clears the refusal and folds the
// form.
func TestBrowserRefusedRun(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")

	for _, tc := range []struct {
		name, button string
		form         form
		field, says  string
	}{
		{"max_new_tokens", "run-generate", form{"model": "toy", "max_new_tokens": "100000"}, "max_new_tokens", "max_new_tokens 100000 is more than this server allows (1024)"},
		{"temperature", "run-generate", form{"model": "toy", "do_sample": "true", "temperature": "0"}, "temperature", "temperature must be strictly positive when sampling"},
		{"prompt", "run-generate", form{"model": "toy", "input": "ids", "prompt": "0 x"}, "prompt", `"x" is not a token id`},
		{"compare line", "run-compare", form{"model": "toy", "variants": "greedy\nT=0.7 top_k=x"}, "variants", "top_k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fillRun(t, ctx, tc.form)
			click(t, ctx, tc.button)
			waitJS(t, ctx, "the refusal", `document.querySelector("[data-testid=run-error]")?.hidden === false || !document.querySelector("[data-testid=error-message]").hidden`)
			got := evalJS[map[string]any](t, ctx, `(() => {
				const f = document.getElementById("run-form"), marked = f.querySelector("[aria-invalid=true]");
				return {
					open: document.getElementById("run-panel").open,
					says: document.querySelector("[data-testid=run-error]")?.textContent ?? "",
					banner: document.querySelector("[data-testid=error-message]").hidden,
					marked: [...f.querySelectorAll("[aria-invalid=true]")].map(e => e.name).join(" "),
					focused: document.activeElement?.name ?? "",
					describedBy: marked?.getAttribute("aria-describedby") ?? "",
					border: marked ? getComputedStyle(marked).borderTopColor : "",
					plain: getComputedStyle(f.elements.seed).borderTopColor,
					output: document.querySelector("[data-testid=output-text]")?.textContent ?? "",
					status: document.querySelector("[data-testid=run-status]").dataset.state,
				};
			})()`)
			if got["open"] != true {
				t.Error("the refusal folded the run form away")
			}
			if says := got["says"].(string); !strings.Contains(says, tc.says) || !strings.Contains(says, tc.field) && tc.field != "variants" {
				t.Errorf("beside the form: %q, want the server's message naming %s (%q)", says, tc.field, tc.says)
			}
			if got["banner"] != true {
				t.Errorf("the refusal also shows in the banner: %q", pageError(t, ctx))
			}
			if got["marked"] != tc.field || got["focused"] != tc.field || got["describedBy"] != "run-error" {
				t.Errorf("marked %q, focused %q, described by %q: want %s marked, focused and described by the message", got["marked"], got["focused"], got["describedBy"], tc.field)
			}
			if got["border"] == got["plain"] {
				t.Errorf("the marked field's border is %v, as a plain field's: want it marked", got["border"])
			}
			if got["output"] != "I love chai" || got["status"] != "done" {
				t.Errorf("the run before: output %q, status %q, want I love chai, done", got["output"], got["status"])
			}
		})
	}

	// Typing in the marked field takes its mark away; the message stays.
	do(t, ctx, "type in the field", chromedp.SendKeys(css("#run-form [name=variants]"), "0"))
	if n := evalJS[float64](t, ctx, `document.querySelectorAll("#run-form [aria-invalid]").length`); n != 0 {
		t.Errorf("after an edit %v fields are still marked", n)
	}
	fillRun(t, ctx, form{"model": "toy", "do_sample": "false", "max_new_tokens": "2"})
	runAndWait(t, ctx, "run-generate", "done")
	got := evalJS[map[string]any](t, ctx, `({
		open: document.getElementById("run-panel").open,
		refusal: document.querySelector("[data-testid=run-error]")?.hidden === false,
		output: document.querySelector("[data-testid=output-text]")?.textContent ?? "",
	})`)
	if got["open"] != false || got["refusal"] != false || got["output"] != "I love" {
		t.Errorf("the next run: %v, want the form folded, no refusal, output I love", got)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// TestBrowserFailedRun runs a prompt the model cannot read: the run starts
// and fails before its first step. Starting it takes the error shown
// before away; the page then says the run's error once, in its status, and
// the stepper agrees with it: no "Step 1 of 1", no stop reason (the run
// was not cancelled), no "This trace records no steps". The next run
// clears it all.
func TestBrowserFailedRun(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	do(t, ctx, "branch #99", chromedp.SetValue(css("[data-testid=branch-token]"), "99"), chromedp.Click(css("[data-testid=branch-go]")))
	waitJS(t, ctx, "the branch's error", `!document.querySelector("[data-testid=error-message]").hidden`)

	do(t, ctx, "count the errors", chromedp.Evaluate[chromedp.Void](`document.addEventListener("tracer:error", () => { window.errorsSeen = (window.errorsSeen || 0) + 1; })`))
	fillRun(t, ctx, form{"model": "toy", "input": "ids", "prompt": "99999"})
	runAndWait(t, ctx, "run-generate", "failed")
	waitJS(t, ctx, "the run's error message", `window.errorsSeen === 1`)
	got := evalJS[map[string]any](t, ctx, `(() => {
		const st = document.getElementById("stepper");
		return {
			status: document.querySelector("[data-testid=run-status]").textContent,
			position: document.querySelector("[data-testid=step-index]").textContent,
			stepper: st.innerText,
			page: document.body.innerText,
			refusal: document.querySelector("[data-testid=run-error]")?.hidden === false,
		};
	})()`)
	if e := pageError(t, ctx); e != "" {
		t.Errorf("the banner shows %q, want the error in the run's status alone", e)
	}
	if got["refusal"] != false {
		t.Error("a run that started shows a refusal beside the form")
	}
	status, stepper := got["status"].(string), got["stepper"].(string)
	if !strings.Contains(status, "generation failed") || !strings.Contains(status, "token id 99999") {
		t.Errorf("status %q, want it to say the generation failed on token id 99999", status)
	}
	if n := strings.Count(got["page"].(string), "99999"); n != 1 {
		t.Errorf("the page says the error %d times, want once:\n%s", n, got["page"])
	}
	if got["position"] != "0 steps" {
		t.Errorf("position %q, want 0 steps", got["position"])
	}
	var wrong []string
	for _, no := range []string{"Step 1 of 1", "stop reason", "cancelled", "This trace records no steps"} {
		if strings.Contains(stepper, no) {
			wrong = append(wrong, fmt.Sprintf("says %q", no))
		}
	}
	if !strings.Contains(stepper, "Generation failed before the first step.") {
		wrong = append(wrong, "does not say the run failed before its first step")
	}
	if len(wrong) > 0 {
		t.Errorf("the failed run's stepper %s:\n%s", strings.Join(wrong, ", "), stepper)
	}

	fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	if e := pageError(t, ctx); e != "" || strings.Contains(evalJS[string](t, ctx, `document.body.innerText`), "99999") {
		t.Errorf("after the next run: banner %q, or the failed run's error still on the page", e)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
