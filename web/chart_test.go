package web

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tracer/web/view"
)

func TestChartsInlineAndDownload(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	o := generate(t, s, c, form{"do_sample": "true", "top_k": "3", "seed": "1"})
	for _, want := range []string{`data-testid="chart-candidates"`, `data-testid="chart-confidence"`, "<svg"} {
		if !strings.Contains(o.HTML, want) {
			t.Errorf("the view has no %s", want)
		}
	}
	// The toy keeps no KV cache and moves no weights: no such charts.
	if strings.Contains(o.HTML, `data-testid="chart-kv"`) || strings.Contains(o.HTML, `data-testid="chart-cost"`) {
		t.Errorf("the toy's view has a KV or cost chart")
	}
	if n := s.Charts.Len(); n == 0 {
		t.Errorf("no chart cached after a view")
	}

	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	cases := []struct {
		name, query string
		status      int
		ctype       string
		magic       string
	}{
		{"svg", "chart=candidates&step=1&format=svg", http.StatusOK, "image/svg+xml", "<svg"},
		{"png", "chart=confidence&step=0&format=png", http.StatusOK, "image/png", "\x89PNG"},
		{"default svg", "chart=confidence&step=1", http.StatusOK, "image/svg+xml", "<svg"},
		{"bad format", "chart=candidates&step=1&format=gif", http.StatusBadRequest, "", ""},
		{"bad step", "chart=candidates&step=99&format=svg", http.StatusBadRequest, "", ""},
		{"no step", "chart=candidates&format=svg", http.StatusBadRequest, "", ""},
		{"unknown chart", "chart=pie&step=0", http.StatusBadRequest, "", ""},
		{"no data", "chart=kv&step=0", http.StatusBadRequest, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := http.Get(ts.URL + "/chart?session=" + sess.ID + "&" + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("got %d %s, want %d", res.StatusCode, b, tc.status)
			}
			if tc.status != http.StatusOK {
				return
			}
			if ct := res.Header.Get("Content-Type"); ct != tc.ctype || !bytes.HasPrefix(b, []byte(tc.magic)) {
				t.Errorf("got %s starting %q, want %s", ct, b[:min(8, len(b))], tc.ctype)
			}
			if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
				t.Errorf("Content-Disposition %q, want an attachment", cd)
			}
		})
	}
	res, err := http.Get(ts.URL + "/chart?session=nope&chart=candidates&step=0")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: got %d, want 404", res.StatusCode)
	}
}

func TestChartsOff(t *testing.T) {
	s, _, c := liveServer(t, Config{}, 0)
	roundTrip(t, c, `{"type": "charts", "on": false}`)
	if o := generate(t, s, c, form{}); strings.Contains(o.HTML, `data-testid="charts"`) {
		t.Errorf("charts off: the view still has charts")
	}
}

func TestChartsDark(t *testing.T) {
	s, _, c := liveServer(t, Config{}, 0)
	generate(t, s, c, form{})
	if o := roundTrip(t, c, `{"type": "charts", "on": true, "dark": true}`); !strings.Contains(o.HTML, "fill:#1E2125") {
		t.Errorf("dark charts: the view's SVG is not in the dark palette")
	}
	if o := roundTrip(t, c, `{"type": "charts", "on": true, "dark": false}`); strings.Contains(o.HTML, "fill:#1E2125") {
		t.Errorf("light charts: the view's SVG is in the dark palette")
	}
}

// TestChartsAtPageWidth wants the inlined charts drawn view.PageChartWidth wide,
// the width the stylesheet shows them at (so their text reads at 11 px or
// more), and the PNG download at the plots default, a larger image.
func TestChartsAtPageWidth(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	o := generate(t, s, c, form{"do_sample": "true", "top_k": "3", "seed": "1"})
	want := fmt.Sprintf(`<svg width="%gpt"`, view.PageChartWidth*0.75)
	if n := strings.Count(o.HTML, "<svg"); n == 0 || strings.Count(o.HTML, want) != n {
		t.Errorf("got %d charts inlined, %d of them starting %s, want all", n, strings.Count(o.HTML, want), want)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	res, err := http.Get(ts.URL + "/chart?session=" + sess.ID + "&chart=candidates&step=1&format=png")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	img, err := png.DecodeConfig(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if img.Width != 640 {
		t.Errorf("the PNG download is %d px wide, want the plots default 640", img.Width)
	}
}
