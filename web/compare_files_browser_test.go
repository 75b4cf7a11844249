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

// TestBrowserCompareQuantizedCopy (issue 36): Compare's second model
// offers the form's own model quantized as it loads, so F32 runs beside
// Q8_0 of the same weights without a second file; the run form's quantize
// select runs a model quantized too, and a model with nothing to quantize
// is refused with the field marked.
func TestBrowserCompareQuantizedCopy(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "8", "compare_model": "=q8_0"})
	do(t, ctx, "clear the lines", chromedp.Evaluate[chromedp.Void](`document.querySelector("#run-form [name=variants]").value = ""`))
	runAndWait(t, ctx, "run-compare", "done")
	if e := pageError(t, ctx); e != "" {
		t.Fatalf("Compare: got error %q, want none", e)
	}
	labels := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=compare-run] h3")].map((h) => h.firstChild.textContent.trim())`)
	if got, want := strings.Join(labels, " | "), "stories260K.bin (f32) | stories260K.bin quantized to q8_0 (f32, q8_0)"; got != want {
		t.Errorf("got runs %q, want %q", got, want)
	}
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "4", "quantize": "q4_k"})
	runAndWait(t, ctx, "run-generate", "done")
	if read := evalJS[string](t, ctx, `document.querySelector("[data-testid=traffic] dd")?.textContent ?? ""`); read == "" || strings.HasPrefix(read, "1016") {
		t.Errorf("a q4_k run reads %q of weights a step, want fewer than f32's 1016 KiB", read)
	}
	fillRun(t, ctx, form{"model": "toy", "quantize": "q4_k"})
	click(t, ctx, "run-generate")
	waitJS(t, ctx, "the refusal", `document.querySelector("[data-testid=run-error]")?.hidden === false`)
	if says := refusal(t, ctx); !strings.Contains(says, "no float weight matrices to quantize") {
		t.Errorf("the toy quantized: %q, want a refusal saying it has nothing to quantize", says)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
