package web

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestPageServesFontsAsWOFF follows every url(...) of the page's
// stylesheet: each face comes back as WOFF 1.0 (packed from the shipped
// TrueType font), under a cache-busting URL that may be cached for good.
func TestPageServesFontsAsWOFF(t *testing.T) {
	base, _ := serve(t, Config{}, nil)
	base = strings.TrimSuffix(base, "/")
	get := func(url string) (*http.Response, []byte) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, b
	}
	page, html := get(base + "/")
	if page.StatusCode != http.StatusOK {
		t.Fatalf("the page: got %s", page.Status)
	}
	m := regexp.MustCompile(`href="(/static/style\.css\?v=[0-9a-f]+)"`).FindSubmatch(html)
	if m == nil {
		t.Fatal("the page links no stylesheet")
	}
	_, css := get(base + string(m[1]))
	faces := 0
	for _, u := range regexp.MustCompile(`url\(([^)]*)\)`).FindAllSubmatch(css, -1) {
		url := string(u[1])
		name := strings.TrimPrefix(url[:strings.Index(url+"?", "?")], "/static/")
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(url, "?v=") {
				t.Errorf("got url(%s), want a cache-busting URL", url)
			}
			res, b := get(base + url)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("got %s", res.Status)
			}
			if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
				t.Errorf("got Cache-Control %q, want immutable", cc)
			}
			if !strings.HasPrefix(name, "font-chart-") {
				faces++
				if ct := res.Header.Get("Content-Type"); ct != "font/woff" {
					t.Errorf("got Content-Type %q, want font/woff", ct)
				}
				if len(b) < 4 || string(b[:4]) != "wOFF" {
					t.Errorf("got %.4q…, want a WOFF file", b)
				}
			}
		})
	}
	if faces != 9 {
		t.Errorf("got %d url(...)s of shipped faces in the stylesheet, want 9", faces)
	}
}
