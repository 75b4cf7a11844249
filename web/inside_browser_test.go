package web

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/engine/refdata"
	"tracer/lessons"
	"tracer/trace"
	"tracer/web/runs"
	"tracer/web/view"
)

// The attention and logit-lens panels in a real browser, on stories260K.

// exported fetches the page's trace through its Export link.
func exported(t *testing.T, ctx context.Context) (*trace.Trace, string) {
	t.Helper()
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("[data-testid=trace-export]").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch the export: %v", err)
	}
	tr, err := trace.Decode([]byte(body))
	if err != nil {
		t.Fatalf("the export is not a valid trace: %v", err)
	}
	return tr, body
}

// shownAs reports whether the page shows the weights want: each to four
// decimals (attnWeights).
func shownAs(got, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for k := range got {
		if d := math.Abs(float64(got[k]) - float64(want[k])); d > 0.5e-4+1e-7 {
			return false
		}
	}
	return true
}

// shownWeights reads the weights the attention panel shows on the context.
func shownWeights(t *testing.T, ctx context.Context) []float32 {
	t.Helper()
	texts := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=attention-panel] .attn-key")].map(e => e.dataset.w)`)
	out := make([]float32, len(texts))
	for i, s := range texts {
		x, err := strconv.ParseFloat(s, 32)
		if err != nil {
			t.Fatalf("key %d shows weight %q: %v", i, s, err)
		}
		out[i] = float32(x)
	}
	return out
}

// topKeys is the n keys before the last with the largest weights (ties:
// the earlier key), weight 0 left out: where the panel must draw links.
func topKeys(w []float32, n int) []int {
	var ks []int
	for k := range len(w) - 1 {
		if w[k] > 0 {
			ks = append(ks, k)
		}
	}
	slices.SortStableFunc(ks, func(a, b int) int { return cmp.Compare(w[b], w[a]) })
	return ks[:min(n, len(ks))]
}

func TestBrowserInsidePanels(t *testing.T) {
	skipShort(t)
	dir := realModels(t)
	url, _ := serve(t, Config{ModelsDir: dir}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	if !evalJS[bool](t, ctx, `!!document.querySelector("[data-testid=pull-repo]")`) {
		t.Fatal("the page lacks the download row: this test needs it shown")
	}
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "6", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	const at = 2 // the third step
	goTo(t, ctx, at)
	waitJS(t, ctx, "the attention panel", `document.querySelector("[data-testid=attention-panel][data-drawn]")`)
	tr, body := exported(t, ctx)
	row := tr.Steps[at].Rows[0]
	if row.Inside == nil || len(row.Inside.Attention) == 0 || len(row.Inside.Lens) == 0 {
		t.Fatalf("step %d recorded inside %+v, want attention and lens (a live run on a small model records both)", at, row.Inside)
	}
	att := row.Inside.Attention

	t.Run("a head picked from the grid", func(t *testing.T) {
		for _, c := range []struct{ layer, head int }{{1, 3}, {4, 0}, {0, 7}} {
			sel := fmt.Sprintf(`[data-testid=attn-cell][data-layer="%d"][data-head="%d"]`, c.layer, c.head)
			do(t, ctx, "pick "+sel, chromedp.Click(css(sel)))
			waitJS(t, ctx, "the pick", `document.querySelector(`+strconv.Quote(sel)+`).getAttribute("aria-pressed") === "true"`)
			want := att[c.layer][c.head]
			got := shownWeights(t, ctx)
			if !shownAs(got, want) {
				t.Errorf("layer %d head %d: got weights %v, want the trace's %v to four decimals", c.layer, c.head, got, want)
			}
			label := evalJS[string](t, ctx, `document.querySelector("[data-testid=attn-selected]").textContent`)
			if wantLabel := fmt.Sprintf("layer %d · head %d", c.layer+1, c.head+1); label != wantLabel {
				t.Errorf("got the label %q, want %q", label, wantLabel)
			}
			links := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=attn-link]")].filter(p => p.getAttribute("d")).map(p => p.dataset.k)`)
			var wantLinks []string
			for _, k := range topKeys(want, view.AttnLinks) {
				wantLinks = append(wantLinks, strconv.Itoa(k))
			}
			if !slices.Equal(links, wantLinks) {
				t.Errorf("layer %d head %d: got links to keys %v, want the strongest %v", c.layer, c.head, links, wantLinks)
			}
		}
	})

	t.Run("all heads", func(t *testing.T) {
		do(t, ctx, "pick layer 3's all heads", chromedp.Click(css(`[data-testid=attn-cell][data-layer="2"][data-head="8"]`)))
		got := shownWeights(t, ctx)
		for k := range got {
			var sum float32
			for _, w := range att[2] {
				sum += w[k]
			}
			if !shownAs(got[k:k+1], []float32{sum / float32(len(att[2]))}) {
				t.Errorf("key %d: got %v, want the heads' mean %v", k, got[k], sum/float32(len(att[2])))
			}
		}
	})

	t.Run("the pick stays as the page steps", func(t *testing.T) {
		do(t, ctx, "pick", chromedp.Click(css(`[data-testid=attn-cell][data-layer="3"][data-head="5"]`)))
		do(t, ctx, "next", chromedp.Click(css("[data-testid=step-next]")))
		waitJS(t, ctx, "the next step", fmt.Sprintf(`document.querySelector("[data-testid=step-index]").dataset.index === "%d" && document.querySelector("[data-testid=attention-panel][data-drawn]")`, at+1))
		if got, want := shownWeights(t, ctx), tr.Steps[at+1].Rows[0].Inside.Attention[3][5]; !shownAs(got, want) {
			t.Errorf("got weights %v at the next step, want layer 4 head 6's %v", got, want)
		}
		do(t, ctx, "back", chromedp.Click(css("[data-testid=step-prev]")))
		waitJS(t, ctx, "the step again", fmt.Sprintf(`document.querySelector("[data-testid=step-index]").dataset.index === "%d" && document.querySelector("[data-testid=attention-panel][data-drawn]")`, at))
		shoot(t, ctx, "screenshot-inside.png")
	})

	t.Run("the lens", func(t *testing.T) {
		first := 0
		for l, cs := range row.Inside.Lens {
			if cs[0].ID == row.Chosen.ID {
				first = l + 1
				break
			}
		}
		if first == 0 {
			t.Fatalf("the chosen token %q is top-1 at no layer of %v", row.Chosen.Token, row.Inside.Lens)
		}
		got := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=lens-cell-active]")].map(c => c.closest("tr").dataset.layer + ":" + c.dataset.id)`)
		var want []string
		for l, cs := range row.Inside.Lens[first-1:] {
			for _, c := range cs[:min(runs.LensShown, len(cs))] {
				if c.ID == row.Chosen.ID {
					want = append(want, fmt.Sprintf("%d:%d", first+l, c.ID))
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("got highlighted cells %v, want %v (from layer %d, the first where it is top-1)", got, want, first)
		}
		sentence := evalJS[string](t, ctx, `document.querySelector("[data-testid=lens-settled]").textContent`)
		if w := fmt.Sprintf("the answer is settled from layer %d of %d", first, len(row.Inside.Lens)); !strings.Contains(sentence, w) {
			t.Errorf("got the sentence %q, want it to say %q", sentence, w)
		}
	})

	t.Run("an imported trace without inside", func(t *testing.T) {
		var bare trace.Trace = *tr
		bare.Options.RecordAttention, bare.Options.RecordLens = "", 0
		bare.Steps = slices.Clone(tr.Steps)
		for i := range bare.Steps {
			bare.Steps[i].Rows = slices.Clone(bare.Steps[i].Rows)
			for r := range bare.Steps[i].Rows {
				bare.Steps[i].Rows[r].Inside = nil
			}
		}
		var b bytes.Buffer
		if err := trace.Write(&b, &bare); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(body, `"inside"`) || strings.Contains(b.String(), `"inside"`) {
			t.Fatal("the bare trace still holds inside, or the export never did")
		}
		path := filepath.Join(t.TempDir(), "bare.json")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		do(t, ctx, "import", chromedp.SetUploadFiles(css("[data-testid=trace-import]"), []string{path}))
		waitJS(t, ctx, "the imported trace", `document.querySelector(".source").textContent.includes("imported bare.json") && document.querySelector("[data-testid=inside-missing]")`)
		missing := evalJS[string](t, ctx, `document.querySelector("[data-testid=inside-missing]").textContent`)
		for _, w := range []string{"No attention recorded", "No logit lens recorded", "tracer run --record-attention --record-lens 5"} {
			if !strings.Contains(missing, w) {
				t.Errorf("got %q, want it to say %q", missing, w)
			}
		}
		if n := evalJS[float64](t, ctx, `document.querySelectorAll("[data-testid=attention-panel], [data-testid=lens-panel]").length`); n != 0 {
			t.Errorf("got %v inside panels for a trace without inside, want 0", n)
		}
	})
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// TestBrowserLessonInside opens the lesson step on the inside of a step,
// in English and in Hindi, on stories260K: both panels, a head picked from
// the grid, the lens's sentence in the page's language.
func TestBrowserLessonInside(t *testing.T) {
	skipShort(t)
	models := refdata.Need(t, "models/stories260K/stories260K.bin")
	url, _ := serve(t, Config{ModelsDir: filepath.Dir(models)}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	cases := []struct {
		lang, settled, head string
	}{
		{lessons.English, "the answer is settled from layer", "layer 2 · head 3"},
		{lessons.Hindi, "से तय है", "layer 2 · head 3"},
	}
	for _, tc := range cases {
		t.Run(tc.lang, func(t *testing.T) {
			page := strings.TrimSuffix(url, "/") + "/lessons/generate-with-a-small-lm/inside-one-step?lang=" + tc.lang
			do(t, ctx, "open "+page, chromedp.Navigate(page), chromedp.WaitReady(css("[data-testid=lesson-figure]")))
			waitJS(t, ctx, "the panels", `document.querySelector("[data-testid=attention-panel][data-drawn]") && document.querySelector("[data-testid=lens-panel]")`)
			if lang := evalJS[string](t, ctx, `document.body.dataset.lang`); lang != tc.lang {
				t.Fatalf("got the page in %q, want %q", lang, tc.lang)
			}
			settled := evalJS[string](t, ctx, `document.querySelector("[data-testid=lens-settled]").textContent`)
			if !strings.Contains(settled, tc.settled) {
				t.Errorf("got the lens sentence %q, want it to hold %q", settled, tc.settled)
			}
			sel := `[data-testid=attn-cell][data-layer="1"][data-head="2"]`
			before := shownWeights(t, ctx)
			do(t, ctx, "pick a head", chromedp.Click(css(sel)))
			if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=attn-selected]").textContent`); got != tc.head {
				t.Errorf("got the label %q, want %q", got, tc.head)
			}
			if after := shownWeights(t, ctx); slices.Equal(after, before) {
				t.Errorf("picking layer 2 head 3 left the weights as they were: %v", after)
			}
			if n := evalJS[float64](t, ctx, `document.querySelectorAll("[data-testid=attn-link]").length`); n == 0 {
				t.Error("no links drawn")
			}
		})
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
