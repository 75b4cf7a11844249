package web

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"tracer/lessons"
	"tracer/web/export"
	"tracer/web/internal/testsupport"
)

// TestBrowserNoSidewaysScrollAt360 (issue 37, point 11): at 360 px, the
// narrowest phone in common use, no page scrolls sideways: the debugger
// (the toy, a real run's step with every panel, a comparison), the lesson
// list and every step of every lesson in both languages. A table or chart
// wider than the screen scrolls inside its own panel.
func TestBrowserNoSidewaysScrollAt360(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	do(t, ctx, "phone", chromedp.EmulateViewport(360, 780))
	overflow := func(where string) {
		t.Helper()
		got := evalJS[map[string]any](t, ctx, `(() => {
			const w = document.documentElement.clientWidth, wide = [];
			for (const e of document.querySelectorAll("body *")) {
				const r = e.getBoundingClientRect();
				if (r.right > w + 1 && getComputedStyle(e).position !== "fixed" && !e.closest("[data-scrolls], pre, .scroll-x, table, svg")) wide.push(e.tagName.toLowerCase() + (e.dataset.testid ? "[" + e.dataset.testid + "]" : e.className ? "." + String(e.className).split(" ")[0] : "") + " " + Math.round(r.right));
			}
			return {scroll: document.documentElement.scrollWidth, width: w, wide: wide.slice(0, 6)};
		})()`)
		if got["scroll"].(float64) > got["width"].(float64) {
			t.Errorf("%s: the page is %v px wide at %v px (sticking out: %v)", where, got["scroll"], got["width"], got["wide"])
		}
	}
	open(t, ctx, url)
	overflow("the toy")
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "8", "do_sample": "true", "top_k": "8", "seed": "3"})
	runAndWait(t, ctx, "run-generate", "done")
	goTo(t, ctx, 2)
	overflow("a stories260K run")
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "6", "variants": "greedy\nT=0.7"})
	runAndWait(t, ctx, "run-compare", "done")
	overflow("a comparison")

	cat, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(url, "/")
	for _, lang := range lessons.Languages() {
		do(t, ctx, "lessons", chromedp.Navigate(base+"/lessons?lang="+lang), chromedp.WaitReady(css("[data-testid=lesson-item]")))
		overflow("the lessons, " + lang)
		for _, l := range cat.Lessons {
			for _, st := range l.Steps {
				page := fmt.Sprintf("%s/lessons/%s/%s?lang=%s", base, l.ID, st.ID, lang)
				do(t, ctx, "open "+page, chromedp.Navigate(page), chromedp.WaitReady(css("[data-testid=lesson-text]")))
				overflow(l.ID + "/" + st.ID + " (" + lang + ")")
			}
		}
	}
}

// toolbarSeen is the sticky controls as displayed.
type toolbarSeen struct {
	Height       float64 // CSS px
	Row          []rowItem
	Counter      string // the counter's text, "" when hidden
	Expanded     string // More's aria-expanded
	BoxShown     bool   // the box More unfolds is displayed
	Index, Count int    // the stepper's position
	PageWidth    float64
}

// rowItem is one button (or the counter) of the controls' row.
type rowItem struct {
	ID, Name         string  // test id, accessible name (aria-label)
	Left, Right, Top float64 // CSS px
	Width, Height    float64
	LabelPx          float64 // the visible label's font size; 0 without one
	Clipped, Button  bool    // the label is cut short; a button
}

// readToolbar reads toolbarSeen: the row is the step buttons, the counter
// and More that are displayed.
const readToolbar = `(() => {
	const bar = document.querySelector(".controls"), r = bar.getBoundingClientRect();
	const pos = document.querySelector("[data-testid=step-index]");
	const counter = bar.querySelector("[data-testid=step-counter]");
	const more = bar.querySelector("[data-testid=controls-more]");
	const box = bar.querySelector("[data-testid=more-controls]");
	const row = [...bar.querySelectorAll(".steps button, [data-testid=step-counter], [data-testid=controls-more]")].filter((e) => e.checkVisibility()).map((e) => {
		const q = e.getBoundingClientRect(), l = e.querySelector(".label");
		const shown = l && l.checkVisibility();
		return {ID: e.dataset.testid || "", Name: e.getAttribute("aria-label") || "", Left: q.left, Right: q.right, Top: q.top, Width: q.width, Height: q.height,
			LabelPx: shown ? parseFloat(getComputedStyle(l).fontSize) : 0, Clipped: !!shown && l.scrollWidth > l.clientWidth + 1, Button: e.tagName === "BUTTON"};
	});
	return {Height: r.height, Row: row, Counter: counter && counter.checkVisibility() ? counter.textContent.trim() : "",
		Expanded: more ? more.getAttribute("aria-expanded") || "" : "", BoxShown: !!box && box.checkVisibility() && box.getBoundingClientRect().height > 0,
		Index: Number(pos.dataset.index), Count: Number(pos.dataset.count), PageWidth: document.documentElement.scrollWidth};
})()`

// checkRow checks the controls' row on a phone width px wide: one row
// within the screen, each button 44 × 44 px or more with an accessible
// name and its label whole at 10 px or more. It returns the buttons' test
// ids.
func checkRow(t *testing.T, bar toolbarSeen, width float64) []string {
	t.Helper()
	var buttons []string
	mid := func(it rowItem) float64 { return it.Top + it.Height/2 }
	for _, it := range bar.Row {
		if math.Abs(mid(it)-mid(bar.Row[0])) > 4 {
			t.Errorf("%s is centred at %.0f px, the row's first at %.0f: want one row", it.ID, mid(it), mid(bar.Row[0]))
		}
		if it.Right > width || it.Left < 0 {
			t.Errorf("%s spans %.0f..%.0f px of a %.0f px screen", it.ID, it.Left, it.Right, width)
		}
		if !it.Button {
			continue
		}
		buttons = append(buttons, it.ID)
		if it.Width < 44 || it.Height < 44 {
			t.Errorf("%s is %.1f × %.1f px, want at least 44 × 44", it.ID, it.Width, it.Height)
		}
		if it.Name == "" {
			t.Errorf("%s has no aria-label", it.ID)
		}
		if it.LabelPx < 10 || it.Clipped {
			t.Errorf("%s: label at %.1f px, cut short %v: want it whole at 10 px or more", it.ID, it.LabelPx, it.Clipped)
		}
	}
	return buttons
}

// TestBrowserPhoneToolbar (issue 37, point 11): at 390 × 844, on the toy,
// the sticky controls are one row at most 64 px high: the step buttons,
// the counter "n / N" and More, each button a touch target of 44 × 44 px
// or more with an accessible name and a label not cut short. More unfolds
// the rest (aria-expanded) below the row without making it higher; its
// breakpoint form runs to a step; Escape and the u key fold and unfold
// it. In Hindi too, nothing wider than the screen. At 1280 px the row is
// as it was: no counter, no More, the branch box, breakpoints and toggles
// beside the step buttons.
func TestBrowserPhoneToolbar(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	for _, lang := range []string{"en", "hi"} {
		t.Run(lang, func(t *testing.T) {
			do(t, ctx, "phone", chromedp.EmulateViewport(390, 844))
			open(t, ctx, url+"?lang="+lang)
			goTo(t, ctx, 3)
			bar := evalJS[toolbarSeen](t, ctx, readToolbar)
			if bar.Height > 64 {
				t.Errorf("the sticky controls are %.1f px high, want at most 64", bar.Height)
			}
			if want := fmt.Sprintf("%d / %d", bar.Index+1, bar.Count); bar.Counter != want {
				t.Errorf("the counter reads %q, want %q", bar.Counter, want)
			}
			buttons := checkRow(t, bar, 390)
			if want := "step-first step-prev step-play step-next step-last controls-more"; strings.Join(buttons, " ") != want {
				t.Fatalf("the row's buttons are %q, want %q", buttons, want)
			}
			if bar.PageWidth > 390 {
				t.Errorf("the page is %v px wide at 390", bar.PageWidth)
			}
			if bar.Expanded != "false" || bar.BoxShown {
				t.Errorf("at first More is aria-expanded=%q and its box shown %v, want it folded", bar.Expanded, bar.BoxShown)
			}

			do(t, ctx, "unfold", chromedp.Click(css("[data-testid=controls-more]")))
			bar = evalJS[toolbarSeen](t, ctx, readToolbar)
			if bar.Expanded != "true" || !bar.BoxShown {
				t.Fatalf("after More: aria-expanded=%q, box shown %v, want it unfolded", bar.Expanded, bar.BoxShown)
			}
			if bar.Height > 64 {
				t.Errorf("unfolded, the sticky row is %.1f px high, want at most 64 (the box lies over the page)", bar.Height)
			}
			small := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=more-controls] :is(button, summary, label.toggle)")].filter((e) => e.checkVisibility())
				.filter((e) => e.getBoundingClientRect().height < 44).map((e) => e.dataset.testid || e.textContent.trim())`)
			if len(small) > 0 {
				t.Errorf("in the box, %q are under 44 px high", small)
			}
			// The breakpoint form works from the box, on a greedy run of the
			// toy: top-1 below 0.65 stops at step 3 (as in
			// TestBrowserBreakpoints), and the box folds away to show it.
			fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
			runAndWait(t, ctx, "run-generate", "done")
			goTo(t, ctx, 0)
			if !evalJS[bool](t, ctx, `document.querySelector("[data-testid=more-controls]").checkVisibility()`) {
				do(t, ctx, "unfold", chromedp.Click(css("[data-testid=controls-more]")))
			}
			do(t, ctx, "breakpoints", chromedp.Click(css("[data-testid=until-toggle]")),
				chromedp.SetValue(css("[data-testid=until-top1]"), "0.65"), chromedp.Click(css("[data-testid=until-run]")))
			waitJS(t, ctx, "the breakpoint", `document.querySelector("[data-testid=breakpoint-hit]")`)
			bar = evalJS[toolbarSeen](t, ctx, readToolbar)
			if bar.Index != 2 || bar.Expanded != "false" || bar.BoxShown {
				t.Errorf("after Run to breakpoint: position %d, More aria-expanded=%q, box shown %v; want 2 and the box folded", bar.Index, bar.Expanded, bar.BoxShown)
			}
			if want := fmt.Sprintf("%d / %d", bar.Index+1, bar.Count); bar.Counter != want {
				t.Errorf("after the breakpoint the counter reads %q, want %q", bar.Counter, want)
			}
			// The keyboard: u unfolds the box into the breakpoint form, Escape
			// leaves the field and then folds the box, back on More.
			do(t, ctx, "u", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`), chromedp.KeyEvent("u"))
			if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=controls-more]").getAttribute("aria-expanded") + " " + document.activeElement.dataset.testid`); got != "true until-top1" {
				t.Errorf("after u: More's aria-expanded and the focus are %q, want %q", got, "true until-top1")
			}
			do(t, ctx, "Escape twice", chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent(kb.Escape))
			if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=controls-more]").getAttribute("aria-expanded") + " " + document.activeElement.dataset.testid`); got != "false controls-more" {
				t.Errorf("after Escape twice: More's aria-expanded and the focus are %q, want %q", got, "false controls-more")
			}
		})
	}

	t.Run("desktop", func(t *testing.T) {
		do(t, ctx, "desktop", chromedp.EmulateViewport(1280, 720))
		open(t, ctx, url+"?lang=en") // named: the page remembers Hindi
		goTo(t, ctx, 3)
		bar := evalJS[toolbarSeen](t, ctx, readToolbar)
		if bar.Height > 56 {
			t.Errorf("the controls are %.1f px high at 1280 px, want their one row (about 50 px)", bar.Height)
		}
		if bar.Counter != "" || len(bar.Row) != 5 {
			t.Errorf("at 1280 px the row shows counter %q and %d buttons, want no counter and the five step buttons (no More)", bar.Counter, len(bar.Row))
		}
		beside := evalJS[[]string](t, ctx, `(() => {
			const mid = (e) => { const r = e.getBoundingClientRect(); return (r.top + r.bottom) / 2; };
			const next = mid(document.querySelector("[data-testid=step-next]"));
			return ["branch-token", "branch-go", "until-toggle", "pair-toggle", "charts-toggle"].filter((id) => {
				const e = document.querySelector("[data-testid=" + id + "]");
				return !e.checkVisibility() || Math.abs(mid(e) - next) > 8;
			});
		})()`)
		if len(beside) > 0 {
			t.Errorf("at 1280 px %q are not beside the step buttons", beside)
		}
	})
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// panesSeen is the toy's table and listing as displayed.
type panesSeen struct {
	Switch         bool     // the switch is displayed
	Pressed        []string // its buttons' aria-pressed, table then code
	Labels         []string // their text
	SwitchHeight   float64
	Table, Listing paneSeen
	PageWidth      float64
}

// paneSeen is one pane: whether it shows, its box, and its highlighted
// row, cell or line: how many there are and whether the first lies in the
// window below the sticky controls.
type paneSeen struct {
	Shown       bool
	Left, Right float64
	Top         float64
	Active      int
	InView      bool
}

const readPanes = `(() => {
	const below = document.querySelector(".controls").getBoundingClientRect().bottom;
	const pane = (box, active) => {
		const r = box.getBoundingClientRect(), a = box.querySelectorAll(active);
		const q = a.length ? a[0].getBoundingClientRect() : null;
		return {Shown: box.checkVisibility() && r.height > 0, Left: r.left, Right: r.right, Top: r.top, Active: a.length,
			InView: !!q && q.height > 0 && q.top >= below - 1 && q.bottom <= innerHeight + 1};
	};
	const sw = document.querySelector("[data-testid=pane-switch]");
	const buttons = sw ? [...sw.querySelectorAll("button")] : [];
	return {Switch: !!sw && sw.checkVisibility(), Pressed: buttons.map((b) => b.getAttribute("aria-pressed")), Labels: buttons.map((b) => b.textContent.trim()),
		SwitchHeight: sw ? sw.getBoundingClientRect().height : 0,
		Table: pane(document.querySelector("[data-testid=toy-table]").closest("section"), "[data-testid=table-cell-active]"),
		Listing: pane(document.querySelector("[data-testid=listing]").closest("section"), "[data-testid=code-line-active]"),
		PageWidth: document.documentElement.scrollWidth};
})()`

// TestBrowserPhoneToyPanes (issue 37, point 11): at 390 × 844 the toy's
// table and listing, which never shared a phone's screen, take turns
// behind a switch. Code shows the listing with the current line
// highlighted and in view below the sticky controls, and keeps showing it,
// the line followed, as the learner steps and after a reload; Table shows
// the table with the current cell highlighted and in view. In Hindi the
// switch reads तालिका | कोड and nothing is wider than the screen. At 1280 px
// there is no switch and both stand side by side.
func TestBrowserPhoneToyPanes(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	do(t, ctx, "phone", chromedp.EmulateViewport(390, 844))
	open(t, ctx, url+"?lang=en")
	goTo(t, ctx, 3)
	p := evalJS[panesSeen](t, ctx, readPanes)
	if !p.Switch || len(p.Pressed) != 2 {
		t.Fatalf("at 390 px the toy shows no switch between its table and listing (%+v)", p)
	}
	if !p.Table.Shown || p.Listing.Shown || strings.Join(p.Pressed, " ") != "true false" {
		t.Errorf("at first: table shown %v, listing shown %v, pressed %q; want the table alone", p.Table.Shown, p.Listing.Shown, p.Pressed)
	}
	if p.SwitchHeight < 44 {
		t.Errorf("the switch is %.1f px high, want 44 or more", p.SwitchHeight)
	}

	// The learner taps the switch at the window's foot: the pane it shows
	// would start below the window.
	tapAtFoot := func(testID string) {
		t.Helper()
		do(t, ctx, "tap "+testID, chromedp.Evaluate[chromedp.Void](`(() => {
			const b = document.querySelector("[data-testid=`+testID+`]");
			window.scrollBy({top: b.getBoundingClientRect().bottom - innerHeight + 2, behavior: "instant"});
			b.click();
		})()`))
	}
	tapAtFoot("pane-listing")
	listing := func(when string) {
		t.Helper()
		p := evalJS[panesSeen](t, ctx, readPanes)
		if !p.Listing.Shown || p.Table.Shown || strings.Join(p.Pressed, " ") != "false true" {
			t.Errorf("%s: listing shown %v, table shown %v, pressed %q; want the listing alone", when, p.Listing.Shown, p.Table.Shown, p.Pressed)
		}
		if p.Listing.Active != 1 || !p.Listing.InView {
			t.Errorf("%s: %d lines highlighted, in view %v; want the current line highlighted and in view", when, p.Listing.Active, p.Listing.InView)
		}
	}
	listing("after Code")
	// Stepping follows the line: each step starts with the line just below
	// the sticky controls (the page padded to scroll that far), where a line
	// above it would be hidden.
	do(t, ctx, "pad the page", chromedp.Evaluate[chromedp.Void](`document.body.style.paddingBottom = "1000px"`))
	for i := 4; i <= 7; i++ {
		do(t, ctx, "line at the top", chromedp.Evaluate[chromedp.Void](`window.scrollBy({top: document.querySelector("[data-testid=code-line-active]").getBoundingClientRect().top -
			document.querySelector(".controls").getBoundingClientRect().bottom, behavior: "instant"})`))
		do(t, ctx, "next", chromedp.Click(css("[data-testid=step-next]"), chromedp.NodeEnabled))
		waitJS(t, ctx, fmt.Sprintf("index %d", i), fmt.Sprintf(`document.querySelector("[data-testid=step-index]").dataset.index === "%d"`, i))
		listing(fmt.Sprintf("at index %d", i))
	}
	open(t, ctx, url+"?lang=en")
	goTo(t, ctx, 6)
	if p := evalJS[panesSeen](t, ctx, readPanes); !p.Listing.Shown || p.Table.Shown {
		t.Errorf("after a reload: listing shown %v, table shown %v; want the learner's pick kept", p.Listing.Shown, p.Table.Shown)
	}

	tapAtFoot("pane-table")
	p = evalJS[panesSeen](t, ctx, readPanes)
	if !p.Table.Shown || p.Listing.Shown || strings.Join(p.Pressed, " ") != "true false" {
		t.Errorf("after Table: table shown %v, listing shown %v, pressed %q; want the table alone", p.Table.Shown, p.Listing.Shown, p.Pressed)
	}
	if p.Table.Active != 1 || !p.Table.InView {
		t.Errorf("after Table: %d cells highlighted, in view %v; want the current cell highlighted and in view", p.Table.Active, p.Table.InView)
	}

	open(t, ctx, url+"?lang=hi")
	goTo(t, ctx, 3)
	do(t, ctx, "कोड", chromedp.Click(css("[data-testid=pane-listing]")))
	p = evalJS[panesSeen](t, ctx, readPanes)
	if strings.Join(p.Labels, " | ") != "तालिका | कोड" || !p.Listing.Shown || !p.Listing.InView {
		t.Errorf("in Hindi: switch %q, listing shown %v, line in view %v; want तालिका | कोड and the listing with its line", p.Labels, p.Listing.Shown, p.Listing.InView)
	}
	if p.PageWidth > 390 {
		t.Errorf("in Hindi the page is %v px wide at 390", p.PageWidth)
	}

	do(t, ctx, "desktop", chromedp.EmulateViewport(1280, 720))
	open(t, ctx, url+"?lang=en")
	goTo(t, ctx, 3)
	p = evalJS[panesSeen](t, ctx, readPanes)
	if p.Switch || !p.Table.Shown || !p.Listing.Shown {
		t.Errorf("at 1280 px: switch shown %v, table %v, listing %v; want no switch and both", p.Switch, p.Table.Shown, p.Listing.Shown)
	}
	if p.Listing.Left < p.Table.Right {
		t.Errorf("at 1280 px the listing (from %.0f px) is not beside the table (to %.0f px)", p.Listing.Left, p.Table.Right)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// TestBrowserExportAtPhoneWidth (issue 37, point 11): the one-file export
// of the toy's walkthrough at 390 × 844 has the page's one-row controls
// (no More: what it folds needs the server) with a counter that follows
// the steps, and the table-or-code switch, its pick kept as the file steps.
func TestBrowserExportAtPhoneWidth(t *testing.T) {
	skipShort(t)
	ctx, left := openExport(t, exportOf(t, []export.Run{{Trace: testsupport.ToyTrace(t)}}, export.Options{Lang: "en", Source: "toy.json"}))
	do(t, ctx, "phone", chromedp.EmulateViewport(390, 844))
	waitJS(t, ctx, "the layout", `window.innerWidth === 390`)
	bar := evalJS[toolbarSeen](t, ctx, readToolbar)
	buttons := checkRow(t, bar, 390)
	if bar.Height > 64 || strings.Join(buttons, " ") != "step-first step-prev step-play step-next step-last" || bar.Counter != "1 / 10" {
		t.Errorf("the controls: %.1f px high, buttons %q, counter %q; want at most 64 px, the five step buttons and 1 / 10", bar.Height, buttons, bar.Counter)
	}
	press(t, ctx, kb.End, 9)
	if !evalJS[bool](t, ctx, `!!document.querySelector("[data-testid=pane-switch]")?.checkVisibility()`) {
		t.Fatal("the export shows no table-or-code switch at 390 px")
	}
	do(t, ctx, "Code", chromedp.Click(css("[data-testid=pane-listing]")))
	press(t, ctx, kb.ArrowLeft, 8)
	p := evalJS[panesSeen](t, ctx, readPanes)
	if !p.Listing.Shown || p.Table.Shown || strings.Join(p.Pressed, " ") != "false true" || !p.Listing.InView {
		t.Errorf("after Code and a step back: listing shown %v (line in view %v), table shown %v, pressed %q; want the listing alone", p.Listing.Shown, p.Listing.InView, p.Table.Shown, p.Pressed)
	}
	if got := evalJS[toolbarSeen](t, ctx, readToolbar).Counter; got != "9 / 10" {
		t.Errorf("after End and ←: the counter reads %q, want 9 / 10", got)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("requests left the page: %q", l)
	}
}
