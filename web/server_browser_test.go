package web

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tracer/engine/remote/remotetest"
	"tracer/trace"
)

// pacedProxy relays TCP connections to target's host and hands on each
// event of a server-sent event stream ("data: ...") after a pause, as a
// large model on a busy server would write them, so a test can watch
// steps arrive and stop a run midway. It relays bytes, not HTTP, so the
// server's and tracer's connection handling are what they would be.
func pacedProxy(t *testing.T, target string, pause time.Duration) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", u.Host)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, up)
			mu.Unlock()
			wg.Add(2)
			go func() { // client to server; the client hanging up ends both
				defer wg.Done()
				io.Copy(up, c)
				up.Close()
				c.Close()
			}()
			go func() { // server to client, paced
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := up.Read(buf)
					// Each event goes on its own after a pause, however
					// many the server wrote at once: the pieces end where
					// an event (and its HTTP chunk) ends, so that each
					// carries its chunk's header with its data, as the
					// server writes them.
					for rest := buf[:n]; len(rest) > 0; {
						k := len(rest)
						if i := bytes.Index(rest, []byte("\n\n\r\n")); i >= 0 {
							k = i + 4
						}
						if bytes.Contains(rest[:k], []byte("data: ")) {
							time.Sleep(pause)
						}
						if _, werr := c.Write(rest[:k]); werr != nil {
							return
						}
						rest = rest[k:]
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// waitShowing is waitJS that, when the condition never holds, says what
// the page showed: its run status, steps and error.
func waitShowing(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	expr := `new Promise((resolve) => { const f = () => { try { if (` + cond + `) return resolve(true); } catch (e) {} setTimeout(f, 20); }; f(); })`
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise)); err != nil {
		shown := evalJS[string](t, ctx, `(() => { const s = document.querySelector("[data-testid=run-status]"), e = document.querySelector("[data-testid=error-message]"), r = document.querySelector("[data-testid=run-error]");
			return s.dataset.state + " (" + s.textContent.trim() + "), " + document.querySelector("[data-testid=step-index]").dataset.count + " steps, error: " + (e.hidden ? "none" : e.textContent.trim()) + ", refusal: " + (r.hidden ? "none" : r.textContent.trim()); })()`)
		t.Fatalf("waiting for %s: %v; the page shows %s", what, err, shown)
	}
}

// runServer clicks Generate and waits until the run is done.
func runServer(t *testing.T, ctx context.Context) {
	t.Helper()
	click(t, ctx, "run-generate")
	waitShowing(t, ctx, "the run to be done", `(() => { const s = document.querySelector("[data-testid=run-status]"); return !s.dataset.stale && s.dataset.state === "done"; })()`)
}

// TestBrowserServerModel drives the page against the shared llama.cpp
// server: its model in the menu, a run that streams, one stopped midway
// (the partial trace kept and marked), a branch typed at a step (step
// mode: the continuation starts with the typed token), and an export that
// validates. Servers that are down or refuse the key show a clear message
// and the page goes on working.
func TestBrowserServerModel(t *testing.T) {
	skipShort(t)
	llama := pacedProxy(t, remotetest.StartLlamaServer(t), 20*time.Millisecond)
	down := refusedURL(t)
	base, _ := serve(t, Config{Servers: []ServerConfig{{Name: "llama", URL: llama}, {Name: "down", URL: down}, {Name: "locked", URL: authServer(t)}}}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, base)

	model := evalJS[string](t, ctx, `[...document.querySelectorAll("[data-testid=run-model] option")].map(o => o.value).find(v => v.startsWith("server:llama/")) ?? ""`)
	if !strings.HasSuffix(model, "stories260K-f32.gguf") {
		t.Fatalf("the menu offers %q, want the llama server's stories260K-f32.gguf", model)
	}
	// Every view the page shows, as (state, steps) pairs.
	do(t, ctx, "watch the views", chromedp.Evaluate[chromedp.Void](`(() => {
		window.seen = [];
		new MutationObserver(() => {
			const s = document.querySelector("[data-testid=run-status]"), i = document.querySelector("[data-testid=step-index]");
			if (s && i) window.seen.push(s.dataset.state + ":" + i.dataset.count);
		}).observe(document.body, {subtree: true, childList: true, attributes: true});
	})()`))

	t.Run("streams", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time", "max_new_tokens": "16", "do_sample": "false"})
		do(t, ctx, "clear the views", chromedp.Evaluate[chromedp.Void](`window.seen = []`))
		runServer(t, ctx)
		seen := evalJS[[]string](t, ctx, `window.seen`)
		streamed := false
		for _, v := range seen {
			if state, n, _ := strings.Cut(v, ":"); state == "running" && n != "0" && n != "1" && n != "16" {
				streamed = true
			}
		}
		if !streamed {
			t.Errorf("no view showed the run with some but not all of its steps while it ran: %v", seen)
		}
		if _, n := index(t, ctx); n != 16 {
			t.Errorf("the run has %d steps, want 16", n)
		}
		html := evalJS[string](t, ctx, `document.body.textContent`)
		for _, want := range []string{"serving engine (llama.cpp)", "The KV cache lives on the serving engine"} {
			if !strings.Contains(html, want) {
				t.Errorf("the page does not say %q", want)
			}
		}
	})

	t.Run("stops", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time", "max_new_tokens": "400", "do_sample": "false"})
		click(t, ctx, "run-generate")
		waitShowing(t, ctx, "a few steps", `(() => { const s = document.querySelector("[data-testid=run-status]"); return s.dataset.state === "running" && Number(document.querySelector("[data-testid=step-index]").dataset.count) >= 3; })()`)
		do(t, ctx, "stop", chromedp.Click(css("[data-testid=stop]")))
		waitShowing(t, ctx, "the stopped run", `document.querySelector("[data-testid=run-status]").dataset.state === "stopped"`)
		_, n := index(t, ctx)
		if n < 3 || n >= 400 {
			t.Errorf("the stopped run kept %d steps, want the ones streamed (3 or more, fewer than 400)", n)
		}
		if notes := evalJS[string](t, ctx, `[...document.querySelectorAll(".notice")].map(e => e.textContent).join(" | ")`); !strings.Contains(notes, "this trace is partial") {
			t.Errorf("the notices %q do not mark the trace as partial", notes)
		}
	})

	var picked string
	t.Run("branches in step mode", func(t *testing.T) {
		fillRun(t, ctx, form{"model": model, "prompt": "Once upon a time", "max_new_tokens": "10", "do_sample": "false"})
		runServer(t, ctx)
		goTo(t, ctx, 2)
		// The runner-up among step 3's candidates, typed as the page shows it.
		picked = evalJS[string](t, ctx, `[...document.querySelectorAll("[data-branch-id]")].map(b => b.textContent.trim())[1] ?? ""`)
		if picked == "" {
			t.Fatal("step 3 lists no second candidate")
		}
		do(t, ctx, "branch "+picked, chromedp.SetValue(css("[data-testid=branch-token]"), picked), chromedp.Click(css("[data-testid=branch-go]")))
		waitShowing(t, ctx, "the branch", `document.querySelector("[data-testid=branch-active]")?.dataset.branch === "1" && document.querySelector("[data-testid=run-status]").dataset.state === "done"`)
		goTo(t, ctx, 2)
		if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=chosen-token]").textContent.trim()`); got != picked {
			t.Errorf("the branch's step 3 chose %q, want the typed %q", got, picked)
		}
		if e := pageError(t, ctx); e != "" {
			t.Errorf("the branch shows an error: %q", e)
		}
	})

	t.Run("exports a valid trace", func(t *testing.T) {
		body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("[data-testid=trace-export]").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("fetch the export: %v", err)
		}
		tr, err := trace.Decode([]byte(body))
		if err != nil {
			t.Fatalf("the export is not a valid trace: %v", err)
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("the export does not validate: %v", err)
		}
		if src := tr.Model.Source; src == nil || src.Kind != trace.SourceServer || src.Engine != "llama.cpp" || src.Mode != "plain" {
			t.Errorf("model.source %+v, want a llama.cpp server in plain mode", src)
		}
		if len(tr.Branches) != 1 || len(tr.Branches[0].Steps) == 0 {
			t.Fatalf("got %d branches, want 1 with steps", len(tr.Branches))
		}
		b := tr.Branches[0].Steps[0].Rows[0]
		if b.Chosen.By != trace.ByForced || len(b.Candidates) == 0 || strings.ReplaceAll(b.Chosen.Token, " ", "␣") != picked {
			t.Errorf("the branch's first step chose %q by %q with %d candidates, want %q forced with the server's distribution", b.Chosen.Token, b.Chosen.By, len(b.Candidates), picked)
		}
		if strings.Contains(body, "Bearer") {
			t.Error("the export holds an Authorization header")
		}
	})

	t.Run("unavailable servers", func(t *testing.T) {
		for _, tc := range []struct{ model, says string }{
			{"server:down", "server down is unavailable: connection refused"},
			{"server:locked", "server locked is unavailable: the server refused the API key"},
		} {
			fillRun(t, ctx, form{"model": tc.model, "prompt": "Once"})
			click(t, ctx, "run-generate")
			waitJS(t, ctx, "the error", `!document.querySelector("[data-testid=run-error]").hidden`)
			if e := refusal(t, ctx); !strings.Contains(e, tc.says) {
				t.Errorf("%s: got error %q, want it to say %q", tc.model, e, tc.says)
			}
		}
		fillRun(t, ctx, form{"model": "toy", "do_sample": "false"})
		runServer(t, ctx)
		if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=output-text]")?.textContent ?? ""`); got != "" && !strings.Contains(got, "I") {
			t.Errorf("the toy's run after the errors: output %q", got)
		}
		if _, n := index(t, ctx); n != 4 {
			t.Errorf("the toy's run after the errors has %d steps, want 4", n)
		}
	})

	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
