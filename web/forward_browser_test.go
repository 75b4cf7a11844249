package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserForwardPanel (issue 38): on a stories260K run and on a GGUF
// run, the forward-pass panel at the first step, the second and the last
// shows the embedding row, one box per layer with attention and the MLP
// at the model's shapes and the bytes each read, the final norm and the
// unembedding; picking a layer opens its attention (all heads) and marks
// its lens row.
func TestBrowserForwardPanel(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	for _, tc := range []struct {
		model                     string
		layers                    int
		embed, attn, mlp, unembed string
	}{
		// stories260K: 5 layers, hidden 64, 8 heads of 8 over 4 kv heads, MLP 172, vocab 512.
		{"stories260K/stories260K.bin", 5, "row of [512, 64]", "[1, 64] × [64, 64+2·32], [1, 64] × [64, 64]", "[1, 64] × [64, 2·172], [1, 172] × [172, 64]", "[1, 64] × [64, 512]"},
		{"stories260K/stories260K-f16.gguf", 5, "row of [512, 64]", "[1, 64] × [64, 64+2·32], [1, 64] × [64, 64]", "[1, 64] × [64, 2·172], [1, 172] × [172, 64]", "[1, 64] × [64, 512]"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			fillRun(t, ctx, form{"model": tc.model, "prompt": "Once upon a time", "max_new_tokens": "6", "do_sample": "false"})
			runAndWait(t, ctx, "run-generate", "done")
			_, count := index(t, ctx)
			for _, step := range []int{0, 1, count - 1} {
				goTo(t, ctx, step)
				waitJS(t, ctx, "the forward panel", `!!document.querySelector("[data-testid=forward-panel]")`)
				got := evalJS[map[string]any](t, ctx, `(() => {
					const p = document.querySelector("[data-testid=forward-panel]"), sh = (sel) => p.querySelector(sel + " [data-testid=forward-shape]")?.textContent ?? "";
					const layers = [...p.querySelectorAll("[data-testid=forward-layer]")];
					return {
						layers: layers.length,
						embed: sh("[data-testid=forward-embedding]"), unembed: sh("[data-testid=forward-unembed]"),
						attn: layers.map((l) => l.querySelector("[data-testid=forward-attn] [data-testid=forward-shape]")?.textContent ?? ""),
						mlp: layers.map((l) => l.querySelector("[data-testid=forward-mlp] [data-testid=forward-shape]")?.textContent ?? ""),
						bytes: layers.every((l) => l.querySelector("[data-testid=forward-attn] [data-testid=forward-bytes]") && l.querySelector("[data-testid=forward-mlp] [data-testid=forward-bytes]")),
						norms: [...p.querySelectorAll("[data-testid=forward-norm]")].map((n) => +n.textContent),
					};
				})()`)
				if int(got["layers"].(float64)) != tc.layers {
					t.Fatalf("step %d: %v layer boxes, want %d", step, got["layers"], tc.layers)
				}
				if got["embed"] != tc.embed || got["unembed"] != tc.unembed || got["bytes"] != true {
					t.Errorf("step %d: embedding %q, unembedding %q, bytes on every box %v; want %q, %q, true", step, got["embed"], got["unembed"], got["bytes"], tc.embed, tc.unembed)
				}
				for _, k := range []string{"attn", "mlp"} {
					want := tc.attn
					if k == "mlp" {
						want = tc.mlp
					}
					for i, s := range got[k].([]any) {
						if s != want {
							t.Errorf("step %d, layer %d: %s shape %q, want %q", step, i+1, k, s, want)
						}
					}
				}
				for _, n := range got["norms"].([]any) {
					if f := n.(float64); !(f > 0) {
						t.Errorf("step %d: a norm of %v, want every box's vector to have length", step, n)
					}
				}
			}
			if strings.HasSuffix(tc.model, ".bin") {
				goTo(t, ctx, 2)
				shootPanel(t, ctx, "[data-testid=forward-panel]", "screenshot-forward.png")
			}
			// Picking layer 2 opens its attention, all heads, and marks lens row 2.
			do(t, ctx, "pick layer 2", chromedp.Click(css(`[data-testid=forward-layer-open][data-layer="1"]`)))
			picked := evalJS[map[string]string](t, ctx, `({
				attn: document.querySelector("[data-testid=attn-selected]")?.textContent ?? "",
				lens: [...document.querySelectorAll("[data-testid=lens-row].picked")].map((r) => r.dataset.layer).join(","),
				open: [...document.querySelectorAll("[data-testid=forward-layer].open")].map((r) => r.dataset.layer).join(","),
			})`)
			if !strings.HasPrefix(picked["attn"], "layer 2") || !strings.Contains(picked["attn"], "all") || picked["lens"] != "2" || picked["open"] != "1" {
				t.Errorf("after picking layer 2: attention shows %q, lens rows marked %q, layers open %q; want layer 2 all heads, lens row 2", picked["attn"], picked["lens"], picked["open"])
			}
		})
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// shootPanel saves a screenshot of the element sel to docs/ when
// TRACER_SCREENSHOTS=1, at a desktop width.
func shootPanel(t *testing.T, ctx context.Context, sel, name string) {
	t.Helper()
	if os.Getenv("TRACER_SCREENSHOTS") != "1" {
		return
	}
	do(t, ctx, "desktop", chromedp.EmulateViewport(1280, 900))
	png, err := chromedp.Run(ctx, chromedp.Screenshot(css(sel)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("../docs", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
