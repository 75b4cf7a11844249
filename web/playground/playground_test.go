package playground

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"tracer/engine/refdata"
	"tracer/engine/tokenizer"
	"tracer/web/catalog"
	"tracer/web/marks"
	"tracer/web/words"
)

// shared tokenizers, loaded once per test binary: GPT-2 (byte-level BPE),
// Llama's tokenizer.json (SentencePiece-style BPE with byte fallback) and
// llama2.c's tok512.bin (merges by score).
var (
	loadMu sync.Mutex
	loaded = map[string]tokenizer.Tokenizer{}
)

func sharedTokenizer(t testing.TB, rel string) tokenizer.Tokenizer {
	t.Helper()
	p := refdata.Need(t, rel)
	loadMu.Lock()
	defer loadMu.Unlock()
	if tok, ok := loaded[p]; ok {
		return tok
	}
	tok, err := tokenizer.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	loaded[p] = tok
	return tok
}

// fakeModels is a menu of the shared tokenizers and of models without
// one.
type fakeModels struct {
	toks map[string]tokenizer.Tokenizer
}

func (f fakeModels) Menu() []catalog.Entry {
	return []catalog.Entry{
		{Name: "toy", Label: "toy: the lesson's table"},
		{Name: "gpt2", Label: "gpt2 (GPT2LMHeadModel)"},
		{Name: "llama-sp", Label: "llama-sp (LlamaForCausalLM)"},
		{Name: "stories/stories260K.bin", Label: "stories/stories260K.bin (llama2.c)"},
		{Name: "bare", Label: "bare (no tokenizer)"},
		{Name: "broken", Label: "broken"},
		{Name: catalog.ServerPrefix + "gpu/qwen", Label: "gpu: qwen (vLLM server)"},
	}
}

func (f fakeModels) Tokenizer(name string) (tokenizer.Tokenizer, error) {
	switch name {
	case "toy":
		return nil, ErrToy
	case "bare":
		return nil, ErrNoTokenizer
	case "broken":
		return nil, errors.New("model \"broken\": config.json: unexpected end of JSON input")
	case catalog.ServerPrefix + "gpu/qwen":
		return nil, ErrServer
	}
	if tok, ok := f.toks[name]; ok {
		return tok, nil
	}
	return nil, fmt.Errorf("model %q is not on this server's list", name)
}

func testModels(t testing.TB) fakeModels {
	t.Helper()
	return fakeModels{toks: map[string]tokenizer.Tokenizer{
		"gpt2":                    sharedTokenizer(t, "tokenizers/gpt2"),
		"llama-sp":                sharedTokenizer(t, "tokenizers/llama-sp"),
		"stories/stories260K.bin": sharedTokenizer(t, "models/stories260K/tok512.bin"),
	}}
}

func testHandler(t testing.TB, cfg Config) *Handler {
	t.Helper()
	book, err := words.Load()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Models == nil {
		cfg.Models = testModels(t)
	}
	cfg.Book, cfg.Langs = book, []string{"en", "hi"}
	return New(cfg)
}

// get asks the handler for /tokenize?query.
func get(t testing.TB, h http.Handler, query string) (int, string) {
	t.Helper()
	r := httptest.NewRequest("GET", "/tokenize", nil)
	r.URL.RawQuery = query
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("?%.60s: Content-Type %q, want HTML", query, ct)
	}
	return w.Code, w.Body.String()
}

func q(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v.Encode()
}

// playgroundTexts are texts with spaces, newlines, tabs, Hindi, emoji and
// digits, and the golden inputs of GPT-2 and Llama.
func playgroundTexts(t *testing.T) []string {
	t.Helper()
	texts := []string{"Hello world", "Hello world! Tokenizers split text.\n\tunbelievably", "  two  spaces\n\n\ttab", "नमस्ते दुनिया",
		"😀 emoji 👍🏽", "12345 3.14", "<|endoftext|> <s> </s>", "x", "\u200b\x00\x7f"}
	for _, name := range []string{"golden-gpt2.json", "golden-llama-sp.json"} {
		data, err := os.ReadFile(refdata.Need(t, path.Join("tokenizers", name)))
		if err != nil {
			t.Fatal(err)
		}
		var g struct {
			Cases []struct {
				Input string `json:"input"`
				IDs   []int  `json:"ids"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatal(err)
		}
		for _, c := range g.Cases {
			texts = append(texts, c.Input)
		}
	}
	return texts
}

// TestPlaygroundTokensAreEncode: the playground's tokens are exactly
// Encode(text, true)'s, as a run's prompt; each shows its bytes in hex and
// as the page writes them, and a merged token's merges end in it.
func TestPlaygroundTokensAreEncode(t *testing.T) {
	m := testModels(t)
	texts := playgroundTexts(t)
	for name, tok := range m.toks {
		t.Run(name, func(t *testing.T) {
			merged := 0
			for _, text := range texts {
				want, err := tok.Encode(text, true)
				if err != nil {
					t.Fatal(err)
				}
				toks, err := Tokenize(tok, text)
				if err != nil {
					t.Fatal(err)
				}
				var ids []int
				for _, x := range toks {
					ids = append(ids, x.ID)
				}
				if !slices.Equal(ids, want) {
					t.Fatalf("Tokenize(%q): ids %v, want Encode's %v", text, ids, want)
				}
				for _, x := range toks {
					raw := tok.TokenBytes(x.ID)
					if x.Hex != hexOf(raw) {
						t.Errorf("id %d: hex %q, want %q", x.ID, x.Hex, hexOf(raw))
					}
					if !tok.IsSpecial(x.ID) && x.Text != marks.Token(string(raw)) {
						t.Errorf("id %d: text %q, want %q", x.ID, x.Text, marks.Token(string(raw)))
					}
					if x.Build.Kind == tokenizer.BuildMerged {
						merged++
						if last := x.Build.Merges[len(x.Build.Merges)-1]; last.Result != x.ID {
							t.Errorf("id %d: the last merge gives %d", x.ID, last.Result)
						}
						var units []byte
						for _, u := range x.Build.Units {
							units = append(units, tok.TokenBytes(u)...)
						}
						if string(units) != string(raw) {
							t.Errorf("id %d: units spell %q, want %q", x.ID, units, raw)
						}
					}
					if x.Build.Kind == tokenizer.BuildUnknown || x.Build.Kind == tokenizer.BuildWhole {
						t.Errorf("id %d (%q): not explained (%v)", x.ID, x.Text, x.Build.Kind)
					}
				}
			}
			if merged == 0 {
				t.Errorf("no merged token in %d texts", len(texts))
			}
		})
	}
	t.Run("golden", func(t *testing.T) {
		toks, err := Tokenize(m.toks["gpt2"], "Hello world")
		if err != nil || len(toks) != 2 || toks[0].ID != 15496 || toks[1].ID != 995 {
			t.Fatalf("gpt2 Hello world: %+v %v, want 15496 995", toks, err)
		}
		if toks[1].Text != "␣world" || toks[1].Vocab != "Ġworld" || toks[1].Hex != "20 77 6f 72 6c 64" {
			t.Errorf("gpt2 ' world': got %q, vocabulary %q, hex %q", toks[1].Text, toks[1].Vocab, toks[1].Hex)
		}
		toks, err = Tokenize(m.toks["stories/stories260K.bin"], "Hi")
		if err != nil || len(toks) < 2 || toks[0].ID != 1 || toks[0].Text != "<s>" || !toks[0].Special {
			t.Errorf("tok512 Hi: %+v %v, want BOS first, written <s>", toks, err)
		}
	})
}

func hexOf(b []byte) string {
	var parts []string
	for _, x := range b {
		parts = append(parts, fmt.Sprintf("%02x", x))
	}
	return strings.Join(parts, " ")
}

var (
	tokIDs     = regexp.MustCompile(`data-testid="pg-tok" data-id="(\d+)"`)
	columnsRe  = regexp.MustCompile(`data-testid="pg-column" data-model="([^"]*)" data-count="(\d+)"`)
	mergeCount = regexp.MustCompile(`data-testid="pg-merge"`)
)

// columns returns each column's model and its token ids, in order.
func columns(body string) (models []string, ids [][]int) {
	parts := strings.Split(body, `data-testid="pg-column"`)
	for _, m := range columnsRe.FindAllStringSubmatch(body, -1) {
		models = append(models, html.UnescapeString(m[1]))
	}
	for _, p := range parts[1:] {
		var col []int
		for _, m := range tokIDs.FindAllStringSubmatch(p, -1) {
			id, _ := strconv.Atoi(m[1])
			col = append(col, id)
		}
		ids = append(ids, col)
	}
	return models, ids
}

// TestPlaygroundPage: the page and its fragment for every kind of model
// and request, with the status each deserves.
func TestPlaygroundPage(t *testing.T) {
	h := testHandler(t, Config{})
	m := h.cfg.Models.(fakeModels)
	text := "Hello world!\n\tunbelievable"

	t.Run("two tokenizers side by side", func(t *testing.T) {
		code, body := get(t, h, q("model", "gpt2", "model2", "stories/stories260K.bin", "text", text))
		if code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		models, ids := columns(body)
		if !slices.Equal(models, []string{"gpt2", "stories/stories260K.bin"}) || len(ids) != 2 {
			t.Fatalf("columns %q, want gpt2 then stories", models)
		}
		for i, name := range models {
			want, _ := m.toks[name].Encode(text, true)
			if !slices.Equal(ids[i], want) {
				t.Errorf("%s: ids %v, want %v", name, ids[i], want)
			}
			if !strings.Contains(body, fmt.Sprintf(`data-model="%s" data-count="%d"`, html.EscapeString(name), len(want))) {
				t.Errorf("%s: no count %d", name, len(want))
			}
		}
		for _, want := range []string{`<form id="pg-form"`, `action="/tokenize" method="get"`, `<option value="gpt2" selected>`,
			`<option value="stories/stories260K.bin" selected>`, `>Hello world!` + "\n\tunbelievable</textarea>", "Tokenizer playground",
			`class="pg-tok even`, `class="pg-tok odd`, "␣world", "built by", `data-kind="merged"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if mergeCount.FindAllStringIndex(body, -1) == nil {
			t.Errorf("no merges listed")
		}
	})
	t.Run("partial", func(t *testing.T) {
		code, body := get(t, h, q("model", "llama-sp", "text", text, "partial", "1"))
		if code != http.StatusOK || !strings.HasPrefix(body, `<section id="pg-result"`) || strings.Contains(body, "<html") {
			t.Fatalf("status %d, body %.100q: want the result fragment alone", code, body)
		}
		want, _ := m.toks["llama-sp"].Encode(text, true)
		if _, ids := columns(body); len(ids) != 1 || !slices.Equal(ids[0], want) {
			t.Errorf("ids %v, want %v", ids, want)
		}
	})
	t.Run("CRLF is a textarea's LF", func(t *testing.T) {
		_, a := get(t, h, q("model", "gpt2", "text", "a\r\nb", "partial", "1"))
		_, b := get(t, h, q("model", "gpt2", "text", "a\nb", "partial", "1"))
		_, ia := columns(a)
		_, ib := columns(b)
		if len(ia) != 1 || len(ib) != 1 || !slices.Equal(ia[0], ib[0]) {
			t.Errorf("CRLF gives %v, LF %v: want the same", ia, ib)
		}
	})
	for _, c := range []struct {
		name, query string
		status      int
		want        string
	}{
		{"the toy has no tokenizer", q("model", "toy", "text", "I love"), http.StatusOK, "The toy has no tokenizer"},
		{"a model without a tokenizer", q("model", "bare", "text", "x"), http.StatusOK, "came without a tokenizer"},
		{"a serving engine's model", q("model", catalog.ServerPrefix+"gpu/qwen", "text", "x"), http.StatusOK, "runs on a serving engine"},
		{"a model that does not open", q("model", "broken", "text", "x"), http.StatusOK, "Could not open the model: model &#34;broken&#34;"},
		{"a model not on the list", q("model", "/etc/passwd", "text", "x"), http.StatusBadRequest, "Model &#34;/etc/passwd&#34; is not on this server&#39;s list"},
		{"a second model not on the list", q("model", "gpt2", "model2", "nope", "text", "x"), http.StatusBadRequest, "is not on this server"},
		{"too long", q("model", "gpt2", "text", strings.Repeat("a", DefaultMaxText+1)), http.StatusRequestEntityTooLarge, "The text is 8.0 KiB: the playground tokenizes at most 8 KiB"},
		{"the longest text", q("model", "gpt2", "text", strings.Repeat("ab ", DefaultMaxText/3)), http.StatusOK, `data-testid="pg-more"`},
		{"address too long", "text=" + strings.Repeat("%41", DefaultMaxText*2), http.StatusRequestURITooLong, "The address is too long"},
		{"empty text", q("model", "gpt2", "text", ""), http.StatusOK, "Type some text above"},
		{"no text: a sample", q("model", "gpt2"), http.StatusOK, `data-testid="pg-tok"`},
		{"no model: the first real one", q("text", "Hello"), http.StatusOK, `data-model="gpt2" data-count="1"`},
		{"Hindi", q("lang", "hi", "model", "gpt2", "text", "नमस्ते"), http.StatusOK, "टोकनाइज़र प्लेग्राउंड"},
		{"an unknown language is English", q("lang", "xx", "model", "gpt2", "text", "x"), http.StatusOK, `<html lang="en">`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := get(t, h, c.query)
			if code != c.status || !strings.Contains(body, c.want) {
				t.Errorf("status %d, want %d; body has %q: %v", code, c.status, c.want, strings.Contains(body, c.want))
			}
			if !utf8.ValidString(body) {
				t.Errorf("the page is not valid UTF-8")
			}
		})
	}
	t.Run("Hindi labels", func(t *testing.T) {
		_, body := get(t, h, q("lang", "hi", "model", "gpt2", "text", "Hello"))
		for _, want := range []string{`<html lang="hi">`, `<input type="hidden" name="lang" value="hi">`, "किस मॉडल का tokenizer", "tokens में बाँटें", "4 merges से बना"} {
			if !strings.Contains(body, want) {
				t.Errorf("Hindi page lacks %q", want)
			}
		}
	})
	t.Run("busy", func(t *testing.T) {
		h := testHandler(t, Config{Slots: 1})
		h.slots <- struct{}{}
		h.waiting.Store(maxQueue)
		code, body := get(t, h, q("model", "gpt2", "text", "x"))
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "try again in a moment") {
			t.Errorf("status %d: want 503 and the busy message", code)
		}
	})
}

// TestPlaygroundSizeText checks the sizes the errors name.
func TestPlaygroundSizeText(t *testing.T) {
	for n, want := range map[int]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 8192: "8 KiB", 9000: "8.8 KiB"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
	if got := clip("नमस्ते", 4); got != "न…" {
		t.Errorf("clip: got %q", got)
	}
}

// FuzzPlaygroundQuery: any query (raw, or a text, models and a language
// as the form sends them) is answered without a panic, with a status the
// handler gives, and HTML in valid UTF-8; a tokenized text's tokens are
// Encode's.
func FuzzPlaygroundQuery(f *testing.F) {
	f.Add("model=gpt2&text=Hello+world", "Hello world", "gpt2", "", "en")
	f.Add("text=%ff%fe&partial=1", "\xff\xfe\n\t", "llama-sp", "stories/stories260K.bin", "hi")
	f.Add("model=%zz&&;=&text", "<|endoftext|><s>", "toy", "bare", "")
	f.Add("lang=hi&model2=server:gpu/qwen", "नमस्ते\r\n", "broken", catalog.ServerPrefix+"gpu/qwen", "xx")
	h := testHandler(f, Config{MaxText: 256})
	m := h.cfg.Models.(fakeModels)
	statuses := []int{http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusRequestURITooLong, http.StatusServiceUnavailable}
	f.Fuzz(func(t *testing.T, raw, text, model, model2, lang string) {
		for _, query := range []string{raw, q("text", text, "model", model, "model2", model2, "lang", lang, "partial", "1")} {
			r := httptest.NewRequest("GET", "/tokenize", nil)
			r.URL.RawQuery = query
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			body, _ := io.ReadAll(w.Body)
			if !slices.Contains(statuses, w.Code) {
				t.Errorf("?%q: status %d", query, w.Code)
			}
			if !utf8.Valid(body) {
				t.Errorf("?%q: the answer is not valid UTF-8", query)
			}
		}
		tok, ok := m.toks[model]
		if !ok || len(text) > 256 || text == "" {
			return
		}
		_, body := get(t, h, q("text", text, "model", model, "partial", "1"))
		want, err := tok.Encode(strings.ReplaceAll(text, "\r\n", "\n"), true)
		if err != nil {
			return
		}
		if _, ids := columns(body); len(ids) != 1 || !slices.Equal(ids[0], want) && !(len(want) == 0 && len(ids[0]) == 0) {
			t.Errorf("text %q under %s: ids %v, want %v", text, model, ids, want)
		}
	})
}
