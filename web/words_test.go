package web

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"tracer/lessons"
	"tracer/web/live"
	"tracer/web/words"
)

// TestDebuggerInHindi renders the debugger page with ?lang=hi and then a
// WebSocket view of its session: both speak Hindi, and a few English
// labels from the catalog are gone.
func TestDebuggerInHindi(t *testing.T) {
	s, ts, _ := wsServer(t)
	ui := s.Book
	res, err := http.Get(ts.URL + "/?lang=hi")
	if err != nil {
		t.Fatal(err)
	}
	html, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	labels := []string{words.KeyDbgGenerate, words.KeyDbgImport, words.KeyDbgBreakpoints, words.KeyDbgRunModel, words.KeyDbgKeys, words.KeyDbgRunToBreakpoint}
	t.Run("page", func(t *testing.T) {
		if !strings.Contains(page, `<html lang="hi">`) {
			t.Errorf("got no <html lang=\"hi\">")
		}
		for _, k := range labels {
			if hi := ui.Get(k, lessons.Hindi); !strings.Contains(page, hi) {
				t.Errorf("%s: got no %q on the Hindi page", k, hi)
			}
			if en := ui.Get(k, lessons.English); strings.Contains(page, ">"+en+"<") || strings.Contains(page, ">"+en+" ") {
				t.Errorf("%s: got English %q on the Hindi page", k, en)
			}
		}
		if !strings.Contains(page, `href="/lessons?lang=hi"`) {
			t.Errorf("got no lessons link in Hindi")
		}
		if !regexp.MustCompile(`class="current"[^>]*data-testid="lang-hi"`).MatchString(page) {
			t.Errorf("got the Hindi switch not current")
		}
	})
	t.Run("websocket", func(t *testing.T) {
		m := regexp.MustCompile(`data-ws="([^"]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatal("got no data-ws on the page")
		}
		c := dial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+strings.ReplaceAll(m[1], "&amp;", "&"))
		o := roundTrip(t, c, `{"type": "next"}`)
		if o.Type != live.MsgView {
			t.Fatalf("got %s %q, want a view", o.Type, o.Message)
		}
		for _, k := range []string{lessons.KeyBigramTable, lessons.KeyPythonLoop, words.KeyDbgWalkStatus} {
			if hi := ui.Get(k, lessons.Hindi); !strings.Contains(o.HTML, hi) {
				t.Errorf("%s: got no %q in the view", k, hi)
			}
			if en := ui.Get(k, lessons.English); strings.Contains(o.HTML, en) {
				t.Errorf("%s: got English %q in the view", k, en)
			}
		}
		if want := lessons.Fill(ui.Get(lessons.KeyMomentNOfTotal, lessons.Hindi), "n", "2", "total", "10"); !strings.Contains(o.HTML, want) {
			t.Errorf("got no %q in the view", want)
		}
	})
}

// TestDebuggerEnglishByDefault keeps English when the page names no language.
func TestDebuggerEnglishByDefault(t *testing.T) {
	_, ts, _ := wsServer(t)
	res, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`<html lang="en">`, ">Generate<", "<span>Import trace</span>", `data-testid="lang-hi"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("got no %q on the default page", want)
		}
	}
}
