package web

import (
	"io"
	"net/http"
	"net/http/httptest"
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
