package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tracer/trace"
)

func TestExportHTMLFromThePage(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	generate(t, s, c, form{"do_sample": "false"})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, tc := range []struct {
		name, query string
		status      int
	}{
		{"ok", "?format=html&session=" + sess.ID, http.StatusOK},
		{"unknown session", "?format=html&session=nope", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := http.Get(ts.URL + "/export" + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("got %s, want %d: %.200s", res.Status, tc.status, body)
			}
			if tc.status == http.StatusOK {
				if _, err := trace.Decode(body); err != nil {
					t.Errorf("the page's HTML export does not read back: %v", err)
				}
			}
		})
	}
}

// TestExportDrawsTheForwardPass (issue 38): a stories260K run on the page
// records the forward pass (a small model: recorded at every step), and
// its one-file export draws the forward-pass panel offline, one box per
// layer, from the trace it carries.
func TestExportDrawsTheForwardPass(t *testing.T) {
	s, sess, c := liveServer(t, Config{ModelsDir: realModels(t)}, 0)
	generate(t, s, c, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "4", "do_sample": "false"})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	res, err := http.Get(ts.URL + "/export?format=html&session=" + sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	tr, err := trace.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Options.RecordForward == 0 || tr.Steps[1].Rows[0].Inside == nil || tr.Steps[1].Rows[0].Inside.Forward == nil {
		t.Fatalf("the page's run recorded no forward pass (record_forward %d)", tr.Options.RecordForward)
	}
	html := string(body)
	if n := strings.Count(html, `data-testid="forward-panel"`); n == 0 {
		t.Error("the export draws no forward-pass panel")
	}
	if n := strings.Count(html, `data-testid="forward-layer"`); n == 0 || n%5 != 0 {
		t.Errorf("the export draws %d layer boxes, want 5 for each step drawn (stories260K has 5 layers)", n)
	}
}
