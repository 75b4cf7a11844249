package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	forwardLessonAgrees(t, h)
	quantizedLessonAgrees(t, h)
	for _, s := range tr.Steps[1:] {
		if got, want := s.Traffic.WeightBytes, info.WeightBytes+row; got != want {
			t.Errorf("decode step %d reads %d weight bytes, want the model's %d plus one %d-byte row of the (shared) embedding table", s.Index, got, info.WeightBytes, row)
		}
	}
}

// forwardLessonAgrees checks the lesson on the forward pass against its
// figures on stories260K: the shapes and bytes its sentences cite are the
// forward panel's, and the stream leaving every layer is longer than the
// stream entering it, as the text says.
func forwardLessonAgrees(t *testing.T, h http.Handler) {
	t.Helper()
	page := func(step string) (text, figure string) {
		code, body := get(t, h, "/lessons/inside-the-forward-pass/"+step)
		if code != http.StatusOK {
			t.Fatalf("%s: got %d", step, code)
		}
		i, j := strings.Index(body, `data-testid="lesson-text"`), strings.Index(body, `data-testid="forward-panel"`)
		if i < 0 || j < 0 {
			t.Fatalf("%s: no text or no forward panel", step)
		}
		return body[i:j], body[j:]
	}
	boxes := func(fig, box string) (shapes, bytes []string) {
		for _, part := range strings.Split(fig, `data-testid="`+box+`"`)[1:] {
			if m := regexp.MustCompile(`data-testid="forward-shape">([^<]*)<`).FindStringSubmatch(part); m != nil {
				shapes = append(shapes, m[1])
			}
			if m := regexp.MustCompile(`data-testid="forward-bytes">read ([^<]*)<`).FindStringSubmatch(part); m != nil {
				bytes = append(bytes, m[1])
			}
		}
		return
	}
	says := func(step, text string, want ...string) {
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the text does not say %q", step, w)
			}
		}
	}
	text, fig := page("embedding-row")
	says("embedding-row", text, "<code>[512, 64]</code>", "256 B")
	if sh, b := boxes(fig, "forward-embedding"); len(sh) != 1 || sh[0] != "row of [512, 64]" || len(b) != 1 || b[0] != "256 B" {
		t.Errorf("embedding-row: the figure's first box is %v reading %v, want row of [512, 64] reading 256 B", sh, b)
	}

	text, fig = page("a-layer-adds")
	says("a-layer-adds", text, "<code>[64, 64+2·32]</code>", "<code>[64, 64]</code>", "<code>[64, 2·172]</code>", "<code>[172, 64]</code>", "5 layers")
	attn, _ := boxes(fig, "forward-attn")
	mlp, _ := boxes(fig, "forward-mlp")
	if len(attn) != 5 || len(mlp) != 5 {
		t.Fatalf("a-layer-adds: %d attention and %d MLP boxes, want the 5 layers'", len(attn), len(mlp))
	}
	for i := range attn {
		if attn[i] != "[1, 64] × [64, 64+2·32], [1, 64] × [64, 64]" || mlp[i] != "[1, 64] × [64, 2·172], [1, 172] × [172, 64]" {
			t.Errorf("layer %d: attention %q, MLP %q: not the shapes the text cites", i+1, attn[i], mlp[i])
		}
	}
	stream := regexp.MustCompile(`(?s)<span class="lbl">(stream in|stream out)</span>.*?<span class="num">([0-9.]+)</span>`).FindAllStringSubmatch(fig, -1)
	if len(stream) != 10 {
		t.Fatalf("a-layer-adds: %d stream lengths, want in and out of 5 layers", len(stream))
	}
	for l := 0; l < 5; l++ {
		in, _ := strconv.ParseFloat(stream[2*l][2], 64)
		out, _ := strconv.ParseFloat(stream[2*l+1][2], 64)
		if !(out > in) {
			t.Errorf("layer %d: the stream leaves at %v, entered at %v: the text says every layer lengthens it", l+1, out, in)
		}
	}

	text, fig = page("unembedding")
	says("unembedding", text, "<code>[64, 512]</code>", "about 128 KiB", "256 B")
	if sh, b := boxes(fig, "forward-unembed"); len(sh) != 1 || sh[0] != "[1, 64] × [64, 512]" || len(b) != 1 || !strings.HasPrefix(b[0], "128.") || !strings.HasSuffix(b[0], " KiB") {
		t.Errorf("unembedding: the last box is %v reading %v, want [1, 64] × [64, 512] reading about 128 KiB", sh, b)
	}
}

// quantizedLessonAgrees checks lesson 8's step on quantization against its
// figure: the model as stored, as Q8_0 and as Q4_K, each quantized run
// moving fewer bytes per decode step than the one before it, as the text
// says.
func quantizedLessonAgrees(t *testing.T, h http.Handler) {
	t.Helper()
	code, body := get(t, h, "/lessons/memory-bound/fewer-bytes-per-weight")
	if code != http.StatusOK || strings.Contains(body, `data-testid="lesson-error"`) {
		t.Fatalf("lesson 8, fewer-bytes-per-weight: got %d or a failed run", code)
	}
	if !strings.Contains(body, "each quantized run moves fewer bytes per decode step than the run as stored, and Q4_K fewer than Q8_0") {
		t.Fatal("lesson 8's step no longer says what this test checks")
	}
	cols := strings.Split(body, "<h3>")[1:]
	var names []string
	var bytes []float64
	row := regexp.MustCompile(`data-testid="run-step"><td>\d+</td><td>decode</td>(?:<td>[^<]*</td>){1}<td><code>[^<]*</code></td><td>[^<]*</td><td>([0-9.]+) (k|M)?B</td>`)
	for _, c := range cols {
		name := strings.TrimSpace(c[:strings.Index(c, "<")])
		m := row.FindStringSubmatch(c)
		if m == nil {
			continue
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		v *= map[string]float64{"": 1, "k": 1e3, "M": 1e6}[m[2]]
		names, bytes = append(names, name), append(bytes, v)
	}
	if strings.Join(names, ",") != "as stored,Q8_0,Q4_K" {
		t.Fatalf("the figure's columns are %v, want as stored, Q8_0 and Q4_K", names)
	}
	if !(bytes[0] > bytes[1] && bytes[1] > bytes[2]) {
		t.Errorf("bytes per decode step: as stored %v, Q8_0 %v, Q4_K %v; the text says each quantized run moves fewer, Q4_K fewest", bytes[0], bytes[1], bytes[2])
	}
}
