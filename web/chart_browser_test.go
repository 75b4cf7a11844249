package web

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/web/plots"
)

// The charts and the funnel as a reader sees them, in real Chromium, on a
// sampled step of a real model (stories260K: a 512-token vocabulary, so
// top-k 8 keeps "8 of 512", the example).

// chartGeometry is what readChartGeometry measures of one chart.
type chartGeometry struct {
	Name     string
	Scale    float64 // displayed width over the chart's own width (viewBox px)
	MinText  float64 // the smallest text as displayed, CSS px
	MinWhat  string  // which text that is
	Filled   float64 // share of the chart's area its drawing covers (background left out)
	Overflow float64 // CSS px the chart sticks out of the charts panel, left or right
	Text     string  // every text of the chart
}

// readChartGeometry measures every inlined chart: each <text>'s font size
// times its screen transform (what it displays at, in CSS px), the chart's
// displayed scale, how much of its area its drawing covers, and whether it
// fits the charts panel.
const readChartGeometry = `(() => {
	const panel = document.querySelector("[data-testid=charts]").getBoundingClientRect();
	return [...document.querySelectorAll("[data-testid=charts] figure.chart")].map((fig) => {
		const svg = fig.querySelector("svg");
		const r = svg.getBoundingClientRect();
		const vb = svg.viewBox.baseVal;
		let minText = Infinity, minWhat = "";
		for (const t of svg.querySelectorAll("text")) {
			const m = t.getScreenCTM();
			const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
			if (px < minText) { minText = px; minWhat = t.textContent; }
		}
		// The union of what is drawn, less the first path: the background.
		let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
		[...svg.querySelectorAll("path, text")].slice(1).forEach((e) => {
			const b = e.getBoundingClientRect();
			if (b.width === 0 && b.height === 0) return;
			x0 = Math.min(x0, b.left); y0 = Math.min(y0, b.top); x1 = Math.max(x1, b.right); y1 = Math.max(y1, b.bottom);
		});
		return {
			Name: fig.dataset.testid.replace("chart-", ""),
			Scale: r.width / (vb.width * 4 / 3),
			MinText: minText, MinWhat: minWhat,
			Filled: Math.max(0, (x1 - x0) * (y1 - y0)) / (r.width * r.height),
			Overflow: Math.max(0, panel.left - r.left, r.right - panel.right),
			Text: [...svg.querySelectorAll("text")].map((t) => t.textContent).join(" | "),
		};
	});
})()`

// openSampledStory runs stories260K sampled with top-k 8 and goes to its
// second step.
func openSampledStory(t *testing.T) context.Context {
	t.Helper()
	dir := realModels(t)
	url, _ := serve(t, Config{ModelsDir: dir}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "8",
		"do_sample": "true", "top_k": "8", "temperature": "0.8", "seed": "3"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 1)
	return ctx
}

func TestBrowserChartsReadAtTheirSize(t *testing.T) {
	skipShort(t)
	ctx := openSampledStory(t)
	for _, size := range []struct {
		name          string
		width, height int64
	}{
		{"desktop", 1280, 720},
		{"phone", 390, 844},
	} {
		t.Run(size.name, func(t *testing.T) {
			do(t, ctx, "viewport", chromedp.EmulateViewport(size.width, size.height))
			waitJS(t, ctx, "the layout", fmt.Sprintf(`window.innerWidth === %d && document.readyState === "complete"`, size.width))
			charts := evalJS[[]chartGeometry](t, ctx, readChartGeometry)
			if len(charts) != 4 {
				t.Fatalf("got %d charts, want candidates, confidence, KV and cost", len(charts))
			}
			kvPanel := evalJS[string](t, ctx, `document.querySelector("[data-testid=kv-total]")?.textContent ?? ""`)
			if !strings.Contains(kvPanel, "KiB") && !strings.Contains(kvPanel, "MiB") {
				t.Fatalf("the KV panel reads %q, want binary units (KiB, MiB) to compare the charts with", kvPanel)
			}
			for _, c := range charts {
				if c.MinText < 11-0.01 {
					t.Errorf("%s: text %q displays at %.1f px, want at least 11", c.Name, c.MinWhat, c.MinText)
				}
				if c.Scale < plots.MinScale-0.01 || c.Scale > 1.5+0.01 {
					t.Errorf("%s: shown at %.2f of its size, want %.2f to 1.5 (no thumbnail, no poster)", c.Name, c.Scale, plots.MinScale)
				}
				if c.Filled < 0.7 {
					t.Errorf("%s: its drawing covers %.0f %% of it, want most of it", c.Name, 100*c.Filled)
				}
				if c.Overflow > 0.5 {
					t.Errorf("%s: sticks %.1f px out of the charts panel, want it inside", c.Name, c.Overflow)
				}
				for _, u := range []string{"kB", "MB", "GB"} {
					if strings.Contains(" "+c.Text+" ", " "+u) || strings.Contains(c.Text, "("+u+")") {
						t.Errorf("%s: writes %s, want the panels' binary units (KiB, MiB): %q", c.Name, u, c.Text)
					}
				}
				if c.Name == "kv" && !strings.Contains(c.Text, "KiB") && !strings.Contains(c.Text, "MiB") {
					t.Errorf("kv chart: got text %q, want the cache in KiB or MiB as the panel writes it (%q)", c.Text, kvPanel)
				}
			}
			if w := evalJS[[]float64](t, ctx, `(() => { const p = document.querySelector("[data-testid=charts]"); return [p.scrollWidth, p.clientWidth]; })()`); w[0] > w[1] {
				t.Errorf("the charts panel scrolls %v px in %v, want no horizontal overflow", w[0], w[1])
			}
		})
	}
}

// funnelBar is one funnel stage as displayed.
type funnelBar struct {
	Stage       string
	Kept        string  // "8 of 512"
	Bar, Filled float64 // the track's and its fill's widths, CSS px
}

func TestBrowserFunnelScale(t *testing.T) {
	skipShort(t)
	ctx := openSampledStory(t)
	for _, width := range []int64{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			do(t, ctx, "viewport", chromedp.EmulateViewport(width, 844))
			waitJS(t, ctx, "the layout", fmt.Sprintf(`window.innerWidth === %d`, width))
			bars := evalJS[[]funnelBar](t, ctx, `[...document.querySelectorAll("[data-testid=funnel-stage]")].map((s) => {
				const bar = s.querySelector("[data-testid=funnel-bar], .bar");
				return {
					Stage: s.dataset.stage,
					Kept: s.querySelector("[data-testid=funnel-kept]")?.textContent.trim() ?? "",
					Bar: bar ? bar.clientWidth : 0,
					Filled: bar ? bar.firstElementChild.getBoundingClientRect().width : 0,
				};
			})`)
			var stages []string
			for _, b := range bars {
				stages = append(stages, b.Stage+" "+b.Kept)
			}
			if got := strings.Join(stages, ", "); got != "temperature 512 of 512, top_k 8 of 512" {
				t.Fatalf("got stages %q, want temperature keeping 512 of 512 and top_k 8 of 512", got)
			}
			for _, b := range bars {
				if math.Abs(b.Bar-bars[0].Bar) > 0.5 {
					t.Errorf("%s: the track is %.1f px, %s's %.1f, want one scale for every stage", b.Stage, b.Bar, bars[0].Stage, bars[0].Bar)
				}
				var kept, vocab int
				if _, err := fmt.Sscanf(b.Kept, "%d of %d", &kept, &vocab); err != nil || vocab <= 0 {
					t.Fatalf("%s: kept label %q, want \"K of V\"", b.Stage, b.Kept)
				}
				if b.Bar < 100 {
					t.Fatalf("%s: the bar is %v px wide, want room to read a share", b.Stage, b.Bar)
				}
				want := math.Max(2, b.Bar*float64(kept)/float64(vocab)) // a sliver at least
				if math.Abs(b.Filled-want) > 1 {
					t.Errorf("%s: %s fills %.1f of %.1f px, want %.1f (a linear share)", b.Stage, b.Kept, b.Filled, b.Bar, want)
				}
			}
		})
	}
}

// TestBrowserFunnelShowsRemoved (issue 37, point 7): with top-k 8 the
// funnel lists the eight candidates that survive and, below them, faded,
// the leading ones top-k removed, each saying which stage removed it.
func TestBrowserFunnelShowsRemoved(t *testing.T) {
	skipShort(t)
	ctx := openSampledStory(t)
	type row struct {
		Rank, Token, RemovedBy, Fate, Marks string
		Opacity                             float64
	}
	rows := evalJS[[]row](t, ctx, `[...document.querySelectorAll("[data-testid=funnel] [data-testid=funnel-token]")].map((tr) => ({
		Rank: tr.querySelector(".rank").textContent.trim(),
		Token: tr.querySelector("th").textContent,
		RemovedBy: tr.dataset.removedBy ?? "",
		Fate: tr.querySelector(".fate").textContent.trim(),
		Marks: [...tr.querySelectorAll(".mark")].map((m) => m.textContent).join(""),
		Opacity: +getComputedStyle(tr.querySelector("th")).opacity,
	}))`)
	if len(rows) != 12 {
		t.Fatalf("got %d funnel rows %+v, want the 8 kept and 4 removed", len(rows), rows)
	}
	for i, r := range rows {
		wantRank := fmt.Sprint(i + 1)
		if r.Rank != wantRank {
			t.Errorf("row %d: rank %q, want %s (kept and removed follow the raw order here)", i, r.Rank, wantRank)
		}
		if i < 8 {
			if r.RemovedBy != "" || r.Fate != "kept" || r.Marks != "✓✓" || r.Opacity != 1 {
				t.Errorf("row %d (%q): removed by %q, fate %q, marks %q, opacity %v: want kept by both stages, not faded", i, r.Token, r.RemovedBy, r.Fate, r.Marks, r.Opacity)
			}
			continue
		}
		if r.RemovedBy != "top_k" || r.Fate != "removed by top_k" || r.Marks != "✓✗" || r.Opacity >= 1 {
			t.Errorf("row %d (%q): removed by %q, fate %q, marks %q, opacity %v: want removed by top_k, faded", i, r.Token, r.RemovedBy, r.Fate, r.Marks, r.Opacity)
		}
	}
}
