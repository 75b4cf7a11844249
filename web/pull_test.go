package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	modelhub "tracer/engine/hub"
	"tracer/engine/hub/hubtest"
	"tracer/web/live"
)

// TestPullFromThePage downloads a model from a fake Hub at a page's
// request: progress streams to the page, and the model joins the menu.
func TestPullFromThePage(t *testing.T) {
	h := hubtest.New(t,
		hubtest.Repo{ID: "org/tiny", Files: hubtest.TinyModel()},
		hubtest.Repo{ID: "org/gated", Files: hubtest.TinyModel(), Gated: true},
	)
	cache := t.TempDir()
	s, _, c := liveServer(t, Config{HFCache: cache, Hub: &modelhub.Options{Endpoint: h.URL}}, 0)
	if !s.formView(nil).CanPull {
		t.Fatal("the run form offers no download although the server has a Hub")
	}
	sendJSON(t, c, map[string]string{"type": "pull", "repo": "org/tiny"})
	var progress []string
	waitFor(t, c, "the download to finish", func(o live.Outbound) bool {
		if o.Type == live.MsgProgress {
			progress = append(progress, o.Message)
		}
		return o.Type == live.MsgPulled
	})
	if len(progress) < 2 || !strings.Contains(strings.Join(progress, "\n"), "model.safetensors") {
		t.Errorf("progress %q, want the start and the files", progress)
	}
	found := false
	for _, m := range s.formView(nil).Models {
		found = found || strings.Contains(m.Label, "org/tiny") || strings.Contains(m.Value, "org--tiny")
	}
	if !found {
		t.Errorf("the menu %+v lacks the downloaded org/tiny", s.formView(nil).Models)
	}

	// A gated model without a token, and a bad name, come back as errors.
	sendJSON(t, c, map[string]string{"type": "pull", "repo": "org/gated"})
	o := waitFor(t, c, "the gated error", func(o live.Outbound) bool { return o.Type == live.MsgError })
	if !strings.Contains(o.Message, "HF_TOKEN") {
		t.Errorf("gated: %q, want a message naming HF_TOKEN", o.Message)
	}
	sendJSON(t, c, map[string]string{"type": "pull", "repo": "../../etc"})
	if o := waitFor(t, c, "the name error", func(o live.Outbound) bool { return o.Type == live.MsgError }); o.Message == "" {
		t.Error("a bad name got an empty error")
	}
}

func TestPullNeedsAHub(t *testing.T) {
	s, _, c := liveServer(t, Config{}, 0)
	if s.formView(nil).CanPull {
		t.Error("the run form offers a download without a Hub")
	}
	sendJSON(t, c, map[string]string{"type": "pull", "repo": "org/tiny"})
	o := waitFor(t, c, "an error", func(o live.Outbound) bool { return o.Type == live.MsgError })
	if !strings.Contains(o.Message, "does not download") {
		t.Errorf("got %q, want a clear refusal", o.Message)
	}
}

// TestBrowserPull downloads a model from the run form in Chromium: the
// progress shows on the page, and after the download the model is on the
// menu of the same session.
func TestBrowserPull(t *testing.T) {
	skipShort(t)
	h := hubtest.New(t, hubtest.Repo{ID: "org/tiny", Files: hubtest.TinyModel()})
	url, _ := serve(t, Config{HFCache: t.TempDir(), Hub: &modelhub.Options{Endpoint: h.URL}}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	do(t, ctx, "open the run form", chromedp.Click(css("[data-testid=run-panel] summary")))
	do(t, ctx, "name the model", chromedp.SendKeys(css("[data-testid=pull-repo]"), "org/tiny"))
	click(t, ctx, "pull-start")
	waitJS(t, ctx, "the download's end on the page", `document.querySelector("[data-testid=pull-progress]").textContent.includes("org/tiny is downloaded")`)
	do(t, ctx, "the reload", chromedp.Sleep(1500*time.Millisecond), chromedp.WaitVisible(css("[data-testid=step-index]")))
	if !evalJS[bool](t, ctx, `[...document.querySelectorAll("[data-testid=run-model] option")].some(o => o.textContent.includes("org/tiny"))`) {
		t.Error("after the download the model menu lacks org/tiny")
	}
	if !strings.Contains(evalJS[string](t, ctx, `location.search`), "session=") {
		t.Error("the page did not come back on its session")
	}
}
