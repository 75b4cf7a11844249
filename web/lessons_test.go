package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"tracer/engine"
	"tracer/engine/models"
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

// TestLessonFiguresAgreeWithTheirText (issue 37, point 2): a figure shows
// what its sentence says. Lesson 1's first step says the toy gives "I" and
// "you" finite logits and every other word of its eight minus infinity: the
// figure lists all eight, six at minus infinity with probability 0. Lesson
// 8's first step says a decode step reads every matrix in full and of the
// embedding table one row: on stories260K (whose output layer shares the
// table) a decode step's weight bytes are the model's plus one row of the
// table, and the text says where a step's bytes come from.
func TestLessonFiguresAgreeWithTheirText(t *testing.T) {
	srv, err := New(Config{ModelsDir: storiesDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()

	code, body := get(t, h, "/lessons/one-token-at-a-time/forward-pass")
	if code != http.StatusOK {
		t.Fatalf("lesson 1: got %d", code)
	}
	if !strings.Contains(body, "gives <code>I</code> and <code>you</code> finite logits; every other word gets minus infinity") {
		t.Fatalf("lesson 1's text no longer says what this test checks: %.400s", body[strings.Index(body, `data-testid="lesson-text"`):])
	}
	cands := regexp.MustCompile(`(?s)<li class="cand[^"]*" data-testid="candidate[^"]*"><span class="tok">([^<]*)</span>\s*<span class="logit muted" data-testid="candidate-logit">[^<]* ([^<]*)</span>.*?<span class="p">([^<]*)</span>`).FindAllStringSubmatch(body, -1)
	var finite, minusInf []string
	for _, c := range cands {
		if c[2] == "−∞" {
			if c[3] != "0.00" {
				t.Errorf("%s: minus infinity with probability %s, want 0.00", c[1], c[3])
			}
			minusInf = append(minusInf, c[1])
		} else {
			finite = append(finite, c[1])
		}
	}
	if len(cands) != 8 || strings.Join(finite, " ") != "I you" || len(minusInf) != 6 {
		t.Errorf("lesson 1's figure lists %d candidates, finite %v, minus infinity %v; want the toy's 8 words, I and you finite, the other 6 at minus infinity", len(cands), finite, minusInf)
	}

	code, body = get(t, h, "/lessons/memory-bound/bytes-per-token")
	if code != http.StatusOK {
		t.Fatalf("lesson 8: got %d", code)
	}
	if !strings.Contains(body, "of the embedding table only the newest token") || !strings.Contains(body, "the difference is the embedding table") {
		t.Errorf("lesson 8's first step does not say that a step reads one row of the embedding table")
	}
	m, err := models.Open(refdata.Need(t, "models/stories260K/stories260K.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	info := m.Model.Info()
	n, no := 3, false
	req, err := m.Request(models.Input{Texts: []string{"Once upon a time"}}, &engine.Settings{MaxNewTokens: &n, DoSample: &no})
	if err != nil {
		t.Fatal(err)
	}
	req.Record = true
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	row := int64(info.Hidden * 4) // one f32 row of the embedding table
	for _, s := range tr.Steps[1:] {
		if got, want := s.Traffic.WeightBytes, info.WeightBytes+row; got != want {
			t.Errorf("decode step %d reads %d weight bytes, want the model's %d plus one %d-byte row of the (shared) embedding table", s.Index, got, info.WeightBytes, row)
		}
	}
}
