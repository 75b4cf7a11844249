package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserTokenBoundaries (issue 37, point 6): in "Text so far" every
// token is told apart from its neighbours (outlined in alternating
// shades), a one-character token (a space, a full stop) is at least a
// tap wide, and a token says its id and probability on hover or tap.
func TestBrowserTokenBoundaries(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "40", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	for _, width := range []int64{1280, 360} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			do(t, ctx, "viewport", chromedp.EmulateViewport(width, 800))
			waitJS(t, ctx, "the layout", fmt.Sprintf(`window.innerWidth === %d`, width))
			type tok struct {
				Text, Shadow, Alts, Label, ID string
				Width, FontPx                 float64
			}
			toks := evalJS[[]tok](t, ctx, `[...document.querySelectorAll("[data-testid=output-text] .otok")].map((e) => {
				const s = getComputedStyle(e);
				return {Text: e.textContent, Shadow: s.boxShadow, Alts: e.dataset.alts ?? "", Label: e.getAttribute("aria-label") ?? "", ID: e.dataset.id ?? "",
					Width: e.getBoundingClientRect().width, FontPx: parseFloat(s.fontSize)};
			})`)
			if len(toks) < 30 {
				t.Fatalf("got %d tokens in the text so far, want the 40 generated (less specials)", len(toks))
			}
			narrow := 0
			for i, k := range toks {
				if i > 0 && k.Shadow == toks[i-1].Shadow {
					t.Errorf("tokens %d and %d (%q, %q) are outlined alike (%s): want neighbours told apart", i-1, i, toks[i-1].Text, k.Text, k.Shadow)
				}
				if k.Shadow == "none" || k.Shadow == "" {
					t.Errorf("token %d (%q) has no outline", i, k.Text)
				}
				if len([]rune(k.Text)) == 1 {
					narrow++
					if k.Width < 0.7*k.FontPx {
						t.Errorf("token %d (%q) is %.1f px wide at %.1f px type: want at least a tap's width (0.7 em)", i, k.Text, k.Width, k.FontPx)
					}
				}
				if k.ID == "" || !strings.Contains(k.Alts, "#"+k.ID) || !strings.Contains(k.Alts, "p = ") || !strings.Contains(k.Label, "#"+k.ID) {
					t.Errorf("token %d (%q): tooltip %q, label %q: want its id #%s and probability", i, k.Text, k.Alts, k.Label, k.ID)
				}
			}
			if narrow == 0 {
				t.Error("no one-character token in 40 tokens of a story: the width check ran on nothing")
			}
		})
	}
	// A tap (focus) shows the token's tooltip.
	do(t, ctx, "focus a token", chromedp.Focus(css("[data-testid=output-text] .otok")))
	after := evalJS[string](t, ctx, `getComputedStyle(document.activeElement, "::after").content`)
	if !strings.Contains(after, "p = ") {
		t.Errorf("a focused token's tooltip reads %q, want its id and probability", after)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
