package web

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"tracer/web/live"

	"github.com/gorilla/websocket"
)

// The instructor's page never writes the secret into a link or the socket's
// address; the cookie set on /?teach= carries it.
func TestClassroomSecretStaysOffThePage(t *testing.T) {
	s, ts := startServer(t, Config{Classroom: true}, nil)
	token := s.TeachToken()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	get := func(t *testing.T, path string) (int, string, *http.Response) {
		t.Helper()
		res, err := browser.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res
	}
	status, page, res := get(t, "/?teach="+token)
	if status != http.StatusOK || !strings.Contains(page, `data-role="instructor"`) {
		t.Fatalf("instructor page: got %d", status)
	}
	if n := strings.Count(page, token); n != 0 {
		t.Errorf("the instructor's page holds the secret %d times, want 0", n)
	}
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == live.TeachCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value != token {
		t.Fatalf("cookie: got %+v, want the secret, HttpOnly, SameSite=Strict", cookie)
	}
	cases := []struct{ name, path string }{
		{"the language link", "/?session=" + s.Class.Leader.ID + "&lang=hi"},
		{"a plain reload", "/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, page, _ := get(t, tc.path)
			if !strings.Contains(page, `data-role="instructor"`) || strings.Contains(page, token) {
				t.Errorf("%s: got no instructor page without the secret in it", tc.path)
			}
		})
	}
	wsURL := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws?session=" + s.Class.Leader.ID
	h := http.Header{"Cookie": {live.TeachCookie + "=" + token}}
	c, _, err := websocket.DefaultDialer.Dial(wsURL, h)
	if err != nil {
		t.Fatalf("the instructor's socket with the cookie: %v", err)
	}
	c.Close()
	bad := http.Header{"Cookie": {live.TeachCookie + "=" + strings.Repeat("0", 64)}}
	if _, res, err := websocket.DefaultDialer.Dial(wsURL, bad); err == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("a wrong cookie: got %v, want 403", err)
	}
	// A student's page: the run form is locked, with Detach beside the reason.
	_, student, _ := getPage(t, ts.URL+"/")
	if !strings.Contains(student, `id="run-lock" class="run-lock" disabled`) || !strings.Contains(student, `data-testid="run-detach"`) {
		t.Errorf("the following student's run form is not locked with a Detach button")
	}
}
