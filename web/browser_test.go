package web

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	modelhub "tracer/engine/hub"
	"tracer/engine/hub/hubtest"
	"tracer/engine/refdata"
	"tracer/trace"
)

// findChromium returns the browser to drive: $CHROMIUM, /usr/bin/chromium,
// or a Chromium or Chrome on the PATH.
func findChromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// serve runs a server on a random loopback port until the test ends.
// setup, when not nil, prepares the server first (adds models, say). As
// for users, pages may download models (the run form shows its download
// row): a config without a Hub gets a fake one and an empty cache.
func serve(t *testing.T, cfg Config, setup func(*Server)) (string, *Server) {
	t.Helper()
	if cfg.Hub == nil && cfg.HFCache == "" && !cfg.NoPull {
		cfg.Hub = &modelhub.Options{Endpoint: hubtest.New(t).URL}
		cfg.HFCache = t.TempDir()
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/", srv
}

// browser starts headless Chromium for the test; it skips the test when
// none is installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := findChromium()
	if path == "" {
		if refdata.InCI() {
			t.Fatal("no Chromium found: CI must run the browser tests (.ci/run installs chromium)")
		}
		t.Skip("no Chromium found: set $CHROMIUM or install chromium (apt-get install chromium) to run the browser test")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 720),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start the browser without a deadline
		t.Fatalf("start %s: %v", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pageState is what the page shows at one position.
type pageState struct {
	Index, Count    int
	Rows, Cells     int // how many table rows and cells are highlighted
	Row, Cell       string
	Lines, Line     int // how many listing lines are highlighted, and which
	Annotation      string
	Chosen, Output  string
	Source, Error   string
	NextDisabled    bool
	CandidatesShown bool
}

const readState = `(() => {
	const q = (s) => document.querySelector(s);
	const text = (s) => { const e = q(s); return e ? e.textContent.trim() : ""; };
	const all = (s) => document.querySelectorAll(s).length;
	const pos = q("[data-testid=step-index]");
	const err = q("[data-testid=error-message]");
	return {
		Index: Number(pos.dataset.index), Count: Number(pos.dataset.count),
		Rows: all("[data-testid=table-row-active]"), Cells: all("[data-testid=table-cell-active]"),
		Row: q("[data-testid=table-row-active]")?.dataset.word ?? "",
		Cell: q("[data-testid=table-cell-active]")?.dataset.word ?? "",
		Lines: all("[data-testid=code-line-active]"),
		Line: Number(q("[data-testid=code-line-active]")?.dataset.line ?? 0),
		Annotation: text("[data-testid=annotation]"),
		Chosen: text("[data-testid=chosen-token]"),
		Output: text("[data-testid=output-text]"),
		Source: text(".source"),
		Error: err.hidden ? "" : err.textContent.trim(),
		NextDisabled: q("[data-testid=step-next]").disabled,
		CandidatesShown: q("[data-testid=candidates]") !== null,
	};
})()`

func state(t *testing.T, ctx context.Context) pageState {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](readState))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	return s
}

// lessonMoment is what the page must highlight at one moment of the lesson.
type lessonMoment struct {
	row, cell, chosen string
	line              int
	says              string
}

// lessonMoments are the lesson's ten moments as tracer's listing numbers them.
var lessonMoments = []lessonMoment{
	{"", "", "", 9, "begin marker <s>"},
	{"", "", "", 10, "fewer than 6 tokens"},
	{"<s>", "I", "I", 12, "I (0.9) beats you (0.1)"},
	{"<s>", "I", "I", 13, "I goes onto the end"},
	{"I", "love", "love", 12, "love (0.7) beats eat (0.3)"},
	{"love", "chai", "chai", 12, "only narrowly"},
	{"chai", "</s>", "</s>", 12, "</s> (0.8) beats too (0.2)"},
	{"chai", "</s>", "</s>", 13, "end marker </s> is appended"},
	{"", "", "", 10, "Stop reason: eos"},
	{"", "", "", 14, "skip_special_tokens=True"},
}

// walkLesson steps through the ten moments with the Next button and checks
// each one.
func walkLesson(t *testing.T, ctx context.Context) {
	t.Helper()
	for i, want := range lessonMoments {
		if i > 0 {
			err := chromedp.Do(ctx,
				chromedp.Click(chromedp.CSS("[data-testid=step-next]"), chromedp.NodeEnabled),
				chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`[data-testid=step-index][data-index="%d"]`, i))),
			)
			if err != nil {
				t.Fatalf("moment %d: step: %v", i+1, err)
			}
		}
		s := state(t, ctx)
		if s.Index != i || s.Count != len(lessonMoments) {
			t.Fatalf("moment %d: got position %d of %d, want %d of %d", i+1, s.Index, s.Count, i, len(lessonMoments))
		}
		wantRows := 0
		if want.row != "" {
			wantRows = 1
		}
		if s.Rows != wantRows || s.Cells != wantRows || s.Row != want.row || s.Cell != want.cell {
			t.Errorf("moment %d: got %d active rows (%q) and %d cells (%q), want row %q cell %q", i+1, s.Rows, s.Row, s.Cells, s.Cell, want.row, want.cell)
		}
		if s.Lines != 1 || s.Line != want.line {
			t.Errorf("moment %d: got %d active lines, line %d, want line %d", i+1, s.Lines, s.Line, want.line)
		}
		if !strings.Contains(s.Annotation, want.says) {
			t.Errorf("moment %d: annotation %q does not say %q", i+1, s.Annotation, want.says)
		}
		if s.Chosen != want.chosen {
			t.Errorf("moment %d: got chosen token %q, want %q", i+1, s.Chosen, want.chosen)
		}
		if want.chosen != "" && !s.CandidatesShown {
			t.Errorf("moment %d: no candidates shown", i+1)
		}
		last := i == len(lessonMoments)-1
		if last != s.NextDisabled {
			t.Errorf("moment %d: next button disabled = %v, want %v", i+1, s.NextDisabled, last)
		}
		if s.Output != walkTexts[i] {
			t.Errorf("moment %d: got the text so far %q, want %q", i+1, s.Output, walkTexts[i])
		}
	}
}

// collectConsole gathers the page's console errors and exceptions.
func collectConsole(ctx context.Context) func() []string {
	var mu sync.Mutex
	var msgs []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// Failed imports answer 400 or 413 on purpose.
			expected := m.Source == "network" && (strings.Contains(m.Text, "status of 400") || strings.Contains(m.Text, "status of 413"))
			if m.IsException() || m.Type == chromedp.ConsoleError && !expected {
				mu.Lock()
				msgs = append(msgs, m.String())
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), msgs...)
	}
}

func TestBrowserToyWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped in -short mode")
	}
	url, _ := serve(t, Config{}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("[data-testid=step-index]"))); err != nil {
		t.Fatal(err)
	}

	t.Run("keyboard", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.KeyEvent(kb.ArrowRight),
			chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="1"]`)),
			chromedp.KeyEvent(kb.ArrowLeft),
			chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="0"]`)),
		)
		if err != nil {
			t.Fatalf("arrow keys: %v", err)
		}
	})

	t.Run("play", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS("[data-testid=step-play]")),
			chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="2"]`)),
			chromedp.Click(chromedp.CSS("[data-testid=step-play]")),
			chromedp.WaitReady(chromedp.CSS(`[data-testid=step-play][aria-pressed="false"]`)),
			chromedp.Click(chromedp.CSS("[data-testid=step-first]"), chromedp.NodeEnabled),
			chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="0"]`)),
		)
		if err != nil {
			t.Fatalf("play, pause and back to the first: %v", err)
		}
	})

	t.Run("walk", func(t *testing.T) { walkLesson(t, ctx) })

	dir := t.TempDir()
	exported := filepath.Join(dir, "exported.json")
	t.Run("export", func(t *testing.T) {
		body, err := chromedp.Run(ctx, chromedp.Evaluate[string](
			`fetch(document.querySelector("[data-testid=trace-export]").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("fetch the export: %v", err)
		}
		tr, err := trace.Decode([]byte(body))
		if err != nil {
			t.Fatalf("the export is not a valid trace: %v", err)
		}
		if tr.Output.NewText != "I love chai" || len(tr.Steps) != 4 {
			t.Errorf("got export with %d steps and text %q, want 4 steps and %q", len(tr.Steps), tr.Output.NewText, "I love chai")
		}
		if err := os.WriteFile(exported, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("reimport", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.SetUploadFiles(chromedp.CSS("[data-testid=trace-import]"), []string{exported}),
			chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="0"]`)),
		)
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		if s := state(t, ctx); !strings.Contains(s.Source, "imported exported.json") || s.Error != "" {
			t.Fatalf("after the import: source %q, error %q; want the imported file and no error", s.Source, s.Error)
		}
		walkLesson(t, ctx)
	})

	t.Run("malformed", func(t *testing.T) {
		good, err := os.ReadFile(exported)
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, body, says string
		}{
			{"truncated.json", string(good[:len(good)/2]), "truncated JSON"},
			{"outside.json", strings.Replace(string(good), `"new_ids": [`, `"new_ids": [ 99,`, 1), "outside the vocabulary"},
		}
		for _, c := range cases {
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			err := chromedp.Do(ctx,
				chromedp.SetUploadFiles(chromedp.CSS("[data-testid=trace-import]"), []string{path}),
				chromedp.WaitVisible(chromedp.CSS("[data-testid=error-message]")),
			)
			if err != nil {
				t.Fatalf("%s: no visible error: %v", c.name, err)
			}
			s := state(t, ctx)
			if !strings.Contains(s.Error, c.name) || !strings.Contains(s.Error, c.says) {
				t.Errorf("%s: got error %q, want it to name the file and say %q", c.name, s.Error, c.says)
			}
			if s.Output != "I love chai" {
				t.Errorf("%s: the page lost its trace: output %q", c.name, s.Output)
			}
		}
	})

	if os.Getenv("TRACER_SCREENSHOTS") == "1" {
		t.Run("screenshots", func(t *testing.T) { screenshots(t, ctx, url) })
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}

// screenshots saves the page at the narrow pick (moment 6) for the README,
// at 1280x720 and at phone width.
func screenshots(t *testing.T, ctx context.Context, url string) {
	shoot := func(name string) {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", name)
	}
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 720),
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("[data-testid=step-index]")),
		chromedp.Click(chromedp.CSS("[data-testid=step-next]")), chromedp.Click(chromedp.CSS("[data-testid=step-next]")),
		chromedp.Click(chromedp.CSS("[data-testid=step-next]")), chromedp.Click(chromedp.CSS("[data-testid=step-next]")),
		chromedp.Click(chromedp.CSS("[data-testid=step-next]")),
		chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="5"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("../docs", 0o755); err != nil {
		t.Fatal(err)
	}
	shoot("../docs/screenshot-toy.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2))); err != nil {
		t.Fatal(err)
	}
	shoot(filepath.Join(os.TempDir(), "tracer-screenshot-phone.png"))
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 720),
		chromedp.Click(chromedp.CSS("[data-testid=step-last]")),
		chromedp.WaitReady(chromedp.CSS(`[data-testid=step-index][data-index="9"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	shoot(filepath.Join(os.TempDir(), "tracer-screenshot-end.png"))
}
