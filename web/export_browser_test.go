package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/engine/refdata"
	"tracer/trace"
	"tracer/web/export"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
	"tracer/web/marks"
	"tracer/web/runs"
)

// openExport writes an exported file into a temporary folder and opens it
// from file:// with every http, https and ws request blocked; it returns
// the browser and a func listing the requests that left the page (any URL
// but the file itself and data: URLs).
func openExport(t *testing.T, html []byte) (context.Context, func() []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export.html")
	if err := os.WriteFile(path, html, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + path
	ctx := browser(t)
	var mu sync.Mutex
	var left []string
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil {
			u := e.Request.URL
			if u != url && !strings.HasPrefix(u, "data:") {
				mu.Lock()
				left = append(left, u)
				mu.Unlock()
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	block := network.SetBlockedURLsParams{URLPatterns: []*network.BlockPattern{
		{URLPattern: "http://*:*/*", Block: true}, {URLPattern: "https://*:*/*", Block: true},
		{URLPattern: "ws://*:*/*", Block: true}, {URLPattern: "wss://*:*/*", Block: true},
	}}
	if _, err := chromedp.Call(ctx, network.SetBlockedURLs, block); err != nil {
		t.Fatalf("block the network: %v", err)
	}
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("[data-testid=step-index]"))); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("opened %s (%d KiB): the first position shown %.0f ms after navigation began (%v with the browser's round trips)", filepath.Base(path), len(html)>>10, shown, time.Since(start))
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("body[data-ready=true]"))); err != nil {
		t.Fatalf("the file's positions did not unpack: %v", err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), left...)
	}
}

// exportOf writes runs as an exported file.
func exportOf(t *testing.T, runs []export.Run, o export.Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := export.HTML(context.Background(), &b, runs, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// press sends a key and waits for the position it leads to.
func press(t *testing.T, ctx context.Context, key string, want int) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.KeyEvent(key),
		chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`[data-testid=step-index][data-index="%d"]`, want))),
	)
	if err != nil {
		t.Fatalf("key %q: want position %d: %v", key, want, err)
	}
}

// text returns the text of the first element matching sel, "" for none.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.textContent.trim() ?? ""`, sel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBrowserExportToyWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	tr := testsupport.ToyTrace(t)
	for _, tc := range []struct {
		lang, position string
	}{
		{"en", "Moment 1 of 10"},
		{"hi", "10"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			ctx, left := openExport(t, exportOf(t, []export.Run{{Trace: tr}}, export.Options{Lang: tc.lang, Source: "toy.json"}))
			if got := text(t, ctx, "[data-testid=step-index]"); !strings.Contains(got, tc.position) {
				t.Errorf("got position %q, want it to contain %q", got, tc.position)
			}
			lang, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`))
			if err != nil || lang != tc.lang {
				t.Errorf("got <html lang=%q> (%v), want %q", lang, err, tc.lang)
			}
			walkLesson(t, ctx) // the ten moments with the Next button
			press(t, ctx, kb.ArrowLeft, 8)
			press(t, ctx, kb.Home, 0)
			press(t, ctx, kb.ArrowRight, 1)
			press(t, ctx, kb.End, 9)
			if got := text(t, ctx, "[data-testid=output-text]"); got != "I love chai" {
				t.Errorf("at the end after End: got output %q, want %q", got, "I love chai")
			}
			if l := left(); len(l) > 0 {
				t.Errorf("requests left the page: %q", l)
			}
		})
	}
}

func TestBrowserExportSampledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	model := refdata.Need(t, "models/stories260K/stories260K.bin")
	tr := testsupport.SampledTrace(t, model, 12)
	for _, lang := range []string{"en", "hi"} {
		t.Run(lang, func(t *testing.T) {
			ctx, left := openExport(t, exportOf(t, []export.Run{{Trace: tr}}, export.Options{Lang: lang, Source: "stories.json"}))
			for i := range len(tr.Steps) {
				if i > 0 {
					if i%2 == 0 {
						press(t, ctx, kb.ArrowRight, i)
					} else if err := chromedp.Do(ctx,
						chromedp.Click(chromedp.CSS("[data-testid=step-next]"), chromedp.NodeEnabled),
						chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`[data-testid=step-index][data-index="%d"]`, i))),
					); err != nil {
						t.Fatalf("step %d: %v", i+1, err)
					}
				}
				for _, sel := range []string{"[data-testid=funnel]", "[data-testid=draw-marker]", "[data-testid=charts] svg"} {
					if count(t, ctx, sel) == 0 {
						t.Errorf("step %d: no %s", i+1, sel)
					}
				}
				want := marks.TokenOrID(tr.Steps[i].Rows[0].Chosen.Token, tr.Steps[i].Rows[0].Chosen.ID)
				if got := text(t, ctx, "[data-testid=chosen-token]"); got != strings.TrimSpace(want) {
					t.Errorf("step %d: got chosen %q, want %q", i+1, got, want)
				}
			}
			if l := left(); len(l) > 0 {
				t.Errorf("requests left the page: %q", l)
			}
		})
	}
}

func TestBrowserExportCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	greedy := testsupport.ToyTrace(t)
	sampled := testsupport.ToyTrace(t)
	sampled.Options.DoSample = true // a label's worth of difference: the runs are shown side by side
	runs := []export.Run{{Trace: greedy, Label: "greedy"}, {Trace: sampled, Label: "again"}}
	for _, lang := range []string{"en", "hi"} {
		t.Run(lang, func(t *testing.T) {
			ctx, left := openExport(t, exportOf(t, runs, export.Options{Lang: lang}))
			if n := count(t, ctx, "[data-testid=compare-run]"); n != 2 {
				t.Fatalf("got %d runs side by side, want 2", n)
			}
			press(t, ctx, kb.ArrowRight, 1)
			press(t, ctx, kb.End, len(greedy.Steps)-1)
			if n := count(t, ctx, "[data-testid=compare-run]"); n != 2 {
				t.Errorf("at the end: got %d runs side by side, want 2", n)
			}
			if l := left(); len(l) > 0 {
				t.Errorf("requests left the page: %q", l)
			}
		})
	}
}

// TestBrowserExportBranchTree branches the toy on the page, downloads the
// page's Export HTML, steps through each branch of the file and imports
// the file back into the page.
func TestBrowserExportBranchTree(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	s, sess, c := liveServer(t, Config{}, 0)
	generate(t, s, c, form{"do_sample": "false"})
	sendJSON(t, c, map[string]any{"type": "branch", "step": 1, "id": 5})
	waitFor(t, c, "the branch's end", func(o live.Outbound) bool { return finished(o) && strings.Contains(o.HTML, "branch-tree") })
	settle(t, s, c)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, lang := range []string{"en", "hi"} {
		t.Run(lang, func(t *testing.T) {
			sess.Mu.Lock()
			sess.Lang = lang
			sess.Mu.Unlock()
			res, err := http.Get(ts.URL + "/export?format=html&session=" + sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			html, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("Export HTML: got %s %s: %.300s", res.Status, res.Header.Get("Content-Type"), html)
			}
			tr := sessionTrace(sess)
			ctx, left := openExport(t, html)
			if n := count(t, ctx, "[data-testid=branch-tree] [data-branch]"); n != 2 {
				t.Fatalf("got %d branches in the tree, want the trunk and 1", n)
			}
			press(t, ctx, kb.End, len(tr.Steps)-1)
			trunk := text(t, ctx, "[data-testid=chosen-token]")
			if err := chromedp.Do(ctx,
				chromedp.Click(chromedp.CSS(`[data-testid=branch-tree] [data-branch="1"]`)),
				chromedp.WaitReady(chromedp.CSS(`[data-branch="1"][data-testid=branch-active]`)),
			); err != nil {
				t.Fatalf("select the branch: %v", err)
			}
			steps := runs.PathSteps(tr, 1)
			press(t, ctx, kb.End, len(steps)-1)
			press(t, ctx, kb.Home, 0)
			press(t, ctx, kb.End, len(steps)-1)
			c := steps[len(steps)-1].Rows[0].Chosen
			if got := text(t, ctx, "[data-testid=chosen-token]"); got != marks.TokenOrID(c.Token, c.ID) {
				t.Errorf("the branch's last step: got chosen %q, want %q (the trunk's was %q)", got, marks.TokenOrID(c.Token, c.ID), trunk)
			}
			if l := left(); len(l) > 0 {
				t.Errorf("requests left the page: %q", l)
			}

			// Import takes the file back, branches and all.
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/import?session="+sess.ID, bytes.NewReader(html))
			req.Header.Set("Accept", "application/json")
			res, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("import the HTML: got %s: %s", res.Status, body)
			}
			back := sessionTrace(sess)
			if len(back.Branches) != len(tr.Branches) || back.Output.NewText != tr.Output.NewText || len(back.Steps) != len(tr.Steps) {
				t.Errorf("import: got %d branches, output %q, %d steps; want %d, %q, %d", len(back.Branches), back.Output.NewText, len(back.Steps), len(tr.Branches), tr.Output.NewText, len(tr.Steps))
			}
		})
	}
}

// stepTimes is a script that steps n times with the → key and returns each
// step's time in ms: the key's handler, the swap and the layout it forces.
const stepTimes = `(async (n) => {
	const times = [];
	const where = () => document.querySelector("[data-testid=step-index]").dataset.index;
	for (let i = 0; i < n; i++) {
		const before = where();
		const t0 = performance.now();
		document.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight", bubbles: true}));
		for (let k = 0; where() === before; k++) {
			if (k > 100000) throw new Error("step " + i + " did not happen");
			await null;
		}
		document.getElementById("stepper").getBoundingClientRect();
		times.push(performance.now() - t0);
	}
	return times;
})`

// TestBrowserExportSpeed logs how fast a 1,000-step file opens and steps
// (the budgets: step 1 in under 1 s, a step in under 16 ms). It
// fails only when the file does not step, never on time.
func TestBrowserExportSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	tr, err := trace.Decode(testsupport.LoopTrace(t, 1000))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	html := exportOf(t, []export.Run{{Trace: tr}}, export.Options{})
	t.Logf("exported 1000 steps in %v", time.Since(start))
	ctx, left := openExport(t, html)
	times, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](stepTimes+"(100)", chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 100 {
		t.Fatalf("got %d steps, want 100", len(times))
	}
	slices.Sort(times)
	t.Logf("100 steps: median %.2f ms, 95th percentile %.2f ms, slowest %.2f ms", times[50], times[95], times[99])
	if got := text(t, ctx, "[data-testid=step-index]"); !strings.Contains(got, "101") {
		t.Errorf("after 100 steps: got position %q, want step 101", got)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("requests left the page: %q", l)
	}
}

// TestBrowserPageExportHTML downloads the page's Export HTML (the toy's
// walkthrough, as the page opens) and imports the file through the page's
// Import, which narrates it again.
func TestBrowserPageExportHTML(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("[data-testid=trace-export-html]"))); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`fetch(document.querySelector("[data-testid=trace-export-html]").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch the HTML export: %v", err)
	}
	if tr, err := trace.Decode([]byte(body)); err != nil || tr.Output.NewText != "I love chai" {
		t.Fatalf("the page's HTML export: got %v, want the toy's trace", err)
	}
	if !strings.Contains(body, `data-testid="toy-table"`) {
		t.Error("the page's HTML export has no toy table")
	}
	path := filepath.Join(t.TempDir(), "walk.html")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("[data-testid=step-next]"), chromedp.NodeEnabled),
		chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="1"]`)),
		chromedp.SetUploadFiles(chromedp.CSS("[data-testid=trace-import]"), []string{path}),
		chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="0"]`)),
	)
	if err != nil {
		t.Fatalf("import the HTML file: %v", err)
	}
	if s := state(t, ctx); !strings.Contains(s.Source, "imported walk.html") || s.Error != "" {
		t.Fatalf("after the import: source %q, error %q; want the imported file and no error", s.Source, s.Error)
	}
	walkLesson(t, ctx)
}

// recordedInside generates n greedy steps from the model recording each
// step's attention and a 5-wide logit lens (tracer run --record-attention
// --record-lens 5).
func recordedInside(t *testing.T, model string, n int) *trace.Trace {
	t.Helper()
	m, err := models.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	sample := false
	req, err := m.Request(models.Input{Texts: []string{"Once upon a time"}}, &engine.Settings{DoSample: &sample, MaxNewTokens: &n, MinNewTokens: &n})
	if err != nil {
		t.Fatal(err)
	}
	req.Record = true
	req.Options.RecordAttention, req.Options.RecordLens = trace.RecordAttentionStep, 5
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// attnDrawn is a script reading what inside.js drew on the attention
// panel: the pick, the keys' weights and tints, and how many pixels the
// grid's small multiples painted.
const attnDrawn = `(() => {
	const p = document.querySelector("[data-testid=attention-panel][data-drawn]");
	if (!p) return null;
	const keys = [...p.querySelectorAll(".attn-key")];
	let ink = 0;
	for (const c of p.querySelectorAll(".attn-cell canvas")) {
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		for (let i = 3; i < d.length; i += 4) if (d[i] > 0) ink++;
	}
	return {
		layer: p.dataset.layer, head: p.dataset.head,
		weights: keys.map((k) => k.dataset.w || "").join(" "),
		tinted: keys.filter((k) => Number(k.style.getPropertyValue("--tint")) > 0).length,
		ink,
	};
})()`

// attnView is what attnDrawn returns.
type attnView struct {
	Layer, Head, Weights string
	Tinted, Ink          int
}

// TestBrowserExportAttention opens an exported run that recorded attention
// and the logit lens: the grid draws, picking a head redraws the context,
// stepping draws the next position's panel with the same pick, and no
// request leaves the file.
func TestBrowserExportAttention(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	tr := recordedInside(t, refdata.Need(t, "models/stories260K/stories260K.bin"), 4)
	ctx, left := openExport(t, exportOf(t, []export.Run{{Trace: tr}}, export.Options{Source: "inside.json"}))
	view := func(what string) attnView {
		t.Helper()
		waitJS(t, ctx, what, attnDrawn+" !== null")
		return evalJS[attnView](t, ctx, attnDrawn)
	}
	if count(t, ctx, "[data-testid=lens-panel]") == 0 {
		t.Error("no lens panel in the file")
	}
	at0 := view("the first position's attention panel")
	if at0.Ink == 0 || at0.Tinted == 0 || at0.Weights == "" {
		t.Fatalf("the first position: got %+v, want the grid painted and the context tinted", at0)
	}

	sel := `[data-testid=attn-cell][data-layer="1"][data-head="3"]`
	do(t, ctx, "pick layer 2 head 4", chromedp.Click(chromedp.CSS(sel)))
	waitJS(t, ctx, "the pick", `document.querySelector(`+strconv.Quote(sel)+`).getAttribute("aria-pressed") === "true"`)
	picked := view("the picked head")
	if picked.Layer != "1" || picked.Head != "3" || picked.Weights == at0.Weights {
		t.Errorf("after the pick: got layer %s head %s weights %q, want layer 1 head 3 with other weights than %q", picked.Layer, picked.Head, picked.Weights, at0.Weights)
	}
	want := tr.Steps[0].Rows[0].Inside.Attention[1][3]
	if got := strings.Fields(picked.Weights); len(got) != len(want) {
		t.Errorf("after the pick: got %d weights, want the trace's %d", len(got), len(want))
	}

	press(t, ctx, kb.ArrowRight, 1)
	waitJS(t, ctx, "the next position's panel drawn", `document.querySelector("[data-testid=attention-panel][data-drawn]") && document.querySelector("[data-testid=attention-panel]").dataset.head === "3"`)
	next := view("the next position's panel")
	if next.Ink == 0 || next.Tinted == 0 || next.Weights == picked.Weights || next.Layer != "1" {
		t.Errorf("after a step: got %+v, want a painted grid, layer 1 head 3 kept, other weights than %q", next, picked.Weights)
	}
	if got, want := len(strings.Fields(next.Weights)), len(tr.Steps[1].Rows[0].Inside.Attention[1][3]); got != want {
		t.Errorf("after a step: got %d weights, want the trace's %d", got, want)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("requests left the page: %q", l)
	}
}
