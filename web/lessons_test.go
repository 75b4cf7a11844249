package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"tracer/engine/refdata"
	"tracer/lessons"
)

// storiesDir returns a models folder holding stories260K (symlinked from
// the shared reference data), or "" when it is not on this machine, where
// the real runs show the download message instead; in CI its absence fails
// the test.
func storiesDir(t *testing.T) string {
	t.Helper()
	src, err := refdata.Path("models/stories260K")
	if err != nil {
		if refdata.InCI() {
			t.Fatalf("%v (CI must run the real-model checks)", err)
		}
		return ""
	}
	dir := filepath.Join(t.TempDir(), "stories260K")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"stories260K.bin", "tok512.bin"} {
		if err := os.Symlink(filepath.Join(src, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Dir(dir)
}

// hasDevanagari reports whether s holds a letter of the Devanagari script.
func hasDevanagari(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Devanagari, r) })
}

func get(t *testing.T, h http.Handler, url string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+url, nil)) // the server answers to loopback names
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

// TestLessonPagesRender loads the list and every step of every lesson in
// both languages, with a real model when one is on this machine.
func TestLessonPagesRender(t *testing.T) {
	cat, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	models := storiesDir(t)
	if models == "" {
		t.Log("no stories260K in the reference data: real runs show the download message")
	}
	srv, err := New(Config{ModelsDir: models})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	for _, lang := range lessons.Languages() {
		t.Run(lang, func(t *testing.T) {
			if code, body := get(t, h, "/lessons?lang="+lang); code != http.StatusOK || !strings.Contains(body, `data-testid="lesson-item"`) {
				t.Fatalf("/lessons: got %d, want 200 with the lessons", code)
			}
			for _, l := range cat.Lessons {
				for _, st := range l.Steps {
					url := "/lessons/" + l.ID + "/" + st.ID + "?lang=" + lang
					code, body := get(t, h, url)
					if code != http.StatusOK {
						t.Errorf("%s: got %d, want 200", url, code)
						continue
					}
					if strings.Contains(body, `data-testid="lesson-error"`) {
						i := strings.Index(body, `data-testid="lesson-error"`)
						t.Errorf("%s: the runs failed: %.300s", url, body[i:])
					}
					text := body[strings.Index(body, `data-testid="lesson-text"`):]
					text = text[:strings.Index(text, "</div>")]
					if got := hasDevanagari(text); got != (lang == lessons.Hindi) {
						t.Errorf("%s: Devanagari in the lesson's text: %v, want %v", url, got, lang == lessons.Hindi)
					}
					if models != "" && strings.Contains(body, `data-testid="no-real-model"`) {
						t.Errorf("%s: says no real model, but stories260K is in the models folder", url)
					}
				}
			}
		})
	}
	for _, url := range []string{"/lessons/nope/x", "/lessons/kv-cache/nope"} {
		if code, _ := get(t, h, url); code != http.StatusNotFound {
			t.Errorf("%s: got %d, want 404", url, code)
		}
	}
	for _, url := range []string{
		"/lessons/memory-bound/bandwidth?max_new_tokens=9999",
		"/lessons/memory-bound/bandwidth?prompts=a%0Ab",
		"/lessons/batches-and-padding/right-padding-junk?prompts=only+one",
	} {
		if code, _ := get(t, h, url); code != http.StatusBadRequest {
			t.Errorf("%s: got %d, want 400", url, code)
		}
	}
}

// TestLessonNoRealModel checks that a real step says what to download when
// the server has no real model, in the page's language.
func TestLessonNoRealModel(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range []struct{ lang, says string }{
		{"en", "tracer pull"},
		{"hi", "डाउनलोड"},
	} {
		code, body := get(t, srv.Handler(), "/lessons/kv-cache/same-tokens?lang="+tc.lang)
		i := strings.Index(body, `data-testid="no-real-model"`)
		if code != http.StatusOK || i < 0 || !strings.Contains(body[i:], tc.says) {
			t.Errorf("%s: got %d, want 200 with the no-real-model message saying %q", tc.lang, code, tc.says)
		}
	}
}
