package web

import (
	"context"
	"net/url"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/trace"
)

// exportedNewIDs returns the ids the page's current run generated, from its
// export.
func exportedNewIDs(t *testing.T, ctx context.Context) []int {
	t.Helper()
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("[data-testid=trace-export]").href).then((r) => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch the export: %v", err)
	}
	tr, err := trace.Decode([]byte(body))
	if err != nil {
		t.Fatalf("decode the export: %v", err)
	}
	return tr.Output.NewIDs
}

// TestBrowserDeepLinkFillsForm opens a lesson-style deep link: the run
// form holds the link's model, prompt and options, and Generate runs the
// same thing again (the same tokens from the same seed).
func TestBrowserDeepLinkFillsForm(t *testing.T) {
	skipShort(t)
	url0, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	link := url.Values{
		"model": {"stories260K/stories260K.bin"}, "prompt": {"Once upon a time"}, "max_new_tokens": {"8"},
		"do_sample": {"true"}, "temperature": {"1.3"}, "top_k": {"40"}, "top_p": {"0.95"}, "seed": {"11"},
		"repetition_penalty": {"1.1"}, "use_cache": {"false"},
	}
	open(t, ctx, url0+"?"+link.Encode())
	if e := pageError(t, ctx); e != "" {
		t.Fatalf("the link failed: %s", e)
	}
	first := exportedNewIDs(t, ctx)
	if len(first) == 0 {
		t.Fatal("the linked run generated nothing")
	}
	got := evalJS[map[string]string](t, ctx, `Object.fromEntries([...new FormData(document.getElementById("run-form"))].map(([k, v]) => [k, String(v)]))`)
	for name, vs := range link {
		if got[name] != vs[0] {
			t.Errorf("the run form's %s is %q, want the link's %q", name, got[name], vs[0])
		}
	}
	do(t, ctx, "open the run form", chromedp.Evaluate[chromedp.Void](`document.getElementById("run-panel").open = true`))
	click(t, ctx, "run-generate")
	waitJS(t, ctx, "the new run or an error", `(() => { const s = document.querySelector("[data-testid=run-status]"); return !s.dataset.stale && s.dataset.state === "done" || !document.querySelector("[data-testid=error-message]").hidden || !document.querySelector("[data-testid=run-error]").hidden; })()`)
	if e := pageError(t, ctx) + refusal(t, ctx); e != "" {
		t.Fatalf("Generate after the link: %s", e)
	}
	if again := exportedNewIDs(t, ctx); !slices.Equal(again, first) {
		t.Errorf("Generate after the link made %v, want the linked run's %v", again, first)
	}
}

// TestBrowserDeepLinkFillsCompare opens a comparison's deep link (as a
// lesson figure's "compare in the debugger" writes it): the form holds its
// lines, and Compare gives the same outputs again.
func TestBrowserDeepLinkFillsCompare(t *testing.T) {
	skipShort(t)
	url0, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	link := url.Values{
		"model": {"stories260K/stories260K.bin"}, "prompt": {"Once upon a time"}, "seed": {"7"},
		"variants": {"max_new_tokens=6 do_sample=false\nmax_new_tokens=6 do_sample=true temperature=1.4"},
	}
	const outputs = `[...document.querySelectorAll("[data-testid=compare-run] .out")].map((e) => e.textContent)`
	open(t, ctx, url0+"?"+link.Encode())
	if e := pageError(t, ctx); e != "" {
		t.Fatalf("the link failed: %s", e)
	}
	first := evalJS[[]string](t, ctx, outputs)
	if len(first) != 2 {
		t.Fatalf("the link shows %d runs, want 2", len(first))
	}
	if v := evalJS[string](t, ctx, `document.querySelector("[data-testid=run-variants]").value`); v != link.Get("variants") {
		t.Errorf("the compare box holds %q, want the link's %q", v, link.Get("variants"))
	}
	do(t, ctx, "open the run form", chromedp.Evaluate[chromedp.Void](`document.getElementById("run-panel").open = true`))
	runAndWait(t, ctx, "run-compare", "done")
	if again := evalJS[[]string](t, ctx, outputs); !slices.Equal(again, first) {
		t.Errorf("Compare after the link made %q, want the linked runs' %q", again, first)
	}
}
