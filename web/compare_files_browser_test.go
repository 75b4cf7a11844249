package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserCompareTwoFiles compares tiny-random-llama's F32 and Q4_0
// files from the page (the download row shown, as on every server not
// offline): the form's second model select runs the prompt on both, and
// the comparison shows both runs labelled by file and weight type, and the
// first step where quantization changed the greedy choice.
func TestBrowserCompareTwoFiles(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: ggufModels(t)}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	fillRun(t, ctx, twoFiles)
	// No lines of settings: the form's own settings on both files.
	do(t, ctx, "clear the lines", chromedp.Evaluate[chromedp.Void](`document.querySelector("#run-form [name=variants]").value = ""`))
	if !evalJS[bool](t, ctx, `!!document.querySelector("[data-testid=pull-repo]")`) {
		t.Fatal("the page lacks the download row: this test needs it shown")
	}
	runAndWait(t, ctx, "run-compare", "done")
	if e := pageError(t, ctx); e != "" {
		t.Fatalf("Compare: got error %q, want none", e)
	}
	labels := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=compare-run] h3")].map((h) => h.firstChild.textContent.trim())`)
	if got, want := strings.Join(labels, " | "), "model-f32.gguf (f32) | model-q4_0.gguf (q4_0)"; got != want {
		t.Errorf("got runs %q, want %q", got, want)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=divergence-text]").dataset.divergence`); got != "1" {
		t.Errorf("got divergence at index %q, want 1 (the second step)", got)
	}
	if n := count(t, ctx, "[data-testid=compare-table] [data-testid=divergence]"); n != 2 {
		t.Errorf("got %d highlighted cells, want 2 (both runs' choices at the divergence)", n)
	}
	if says := evalJS[string](t, ctx, `document.querySelector("[data-testid=divergence-text]").textContent`); !strings.Contains(says, "step 2") {
		t.Errorf("the page says %q, want the first divergence at step 2", says)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
