package words

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tracer/lessons"
)

// TestWordsComplete checks web's embedded words: they load, every
// debugger key has its own text in every language, and every key a
// template or handler names as a literal (T("dbg-…"), F("…")) is found in
// web's words or the lessons' in every language.
func TestWordsComplete(t *testing.T) {
	book, err := Load()
	if err != nil {
		t.Fatalf("got %v, want web's words to load", err)
	}
	for _, k := range Keys() {
		for _, lang := range lessons.Languages() {
			if s := book.own[k][lang]; strings.TrimSpace(s) == "" {
				t.Errorf("key %q: got no %s text, want one", k, lang)
			}
		}
	}
	// Every template and Go file of web and its packages.
	var files []string
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".templ") || strings.HasSuffix(path, ".go")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`\.[TF]\("([a-z0-9-]+)"[,)]`)
	used := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_templ.go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			used++
			k := m[1]
			_, own := book.own[k]
			_, shared := book.lessons[k]
			if !own && !shared {
				t.Errorf("%s: key %q: got no text in web/words/data/words.json or lessons' ui.json, want one", name, k)
			}
			for _, lang := range lessons.Languages() {
				if got := book.Get(k, lang); got == k {
					t.Errorf("%s: key %q: got no %s text, want one", name, k, lang)
				}
			}
		}
	}
	if used == 0 {
		t.Errorf("got no key literals in web's templates, want the page's labels found")
	}
}

// TestParseWordsRefuses feeds broken words files to parseWords: each is
// refused with an error that names the file and what is wrong.
func TestParseWordsRefuses(t *testing.T) {
	cat, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	book, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	// whole writes every key of book.own, with edit's changes.
	whole := func(edit func(m map[string]string) map[string]string) []byte {
		m := map[string]string{}
		for k, v := range book.own {
			m[k] = `{"en": ` + quote(v["en"]) + `, "hi": ` + quote(v["hi"]) + `}`
		}
		m = edit(m)
		var b strings.Builder
		b.WriteString("{\n")
		first := true
		for k, v := range m {
			if !first {
				b.WriteString(",\n")
			}
			first = false
			b.WriteString(quote(k) + ": " + v)
		}
		b.WriteString("\n}\n")
		return []byte(b.String())
	}
	cases := []struct {
		name string
		raw  []byte
		want string
	}{
		{"duplicate key", []byte(`{"dbg-run": {"en": "Run", "hi": "चलाएँ"}, "dbg-run": {"en": "Run", "hi": "चलाएँ"}}`), `key "dbg-run" appears twice`},
		{"not JSON", []byte(`{"dbg-run": `), "web/words/data/words.json"},
		{"missing key", whole(func(m map[string]string) map[string]string { delete(m, KeyDbgGenerate); return m }), `no text for key "dbg-generate"`},
		{"missing Hindi", whole(func(m map[string]string) map[string]string {
			m[KeyDbgBreakpoints] = `{"en": "Breakpoints"}`
			return m
		}), `"dbg-breakpoints": no Hindi (hi) text`},
		{"placeholder lost", whole(func(m map[string]string) map[string]string {
			m[KeyDbgStopReason] = `{"en": "stop reason: {reason}", "hi": "रुकने का कारण"}`
			return m
		}), "hi has placeholders [], English [{reason}]"},
		{"unknown key", whole(func(m map[string]string) map[string]string {
			m["dbg-nxet"] = `{"en": "Next", "hi": "आगे"}`
			return m
		}), `"dbg-nxet": not a key`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseWords(c.raw, cat.UI)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "web/words/data/words.json") {
				t.Errorf("got error %v, want one naming web/words/data/words.json and saying %q", err, c.want)
			}
		})
	}
	t.Run("key also the lessons'", func(t *testing.T) {
		shared := map[string]lessons.Text{KeyDbgGenerate: {"en": "Generate", "hi": "टेक्स्ट बनाएँ"}}
		_, err := parseWords(wordsJSON, shared)
		if want := `key "dbg-generate" is also in lessons' ui.json`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got error %v, want one saying %q", err, want)
		}
	})
}

// quote writes s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}

// FuzzParseWords: any bytes as web/words/data/words.json either are refused with
// an error naming the file, or give words in which every debugger key has
// text in every language; parsing never panics.
func FuzzParseWords(f *testing.F) {
	f.Add(wordsJSON)
	f.Add([]byte(`{"dbg-run": {"en": "Run", "hi": "चलाएँ"}, "dbg-run": {"en": "Run"}}`))
	f.Add([]byte(`{"dbg-run": {"en": "Run {n}", "hi": "चलाएँ"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"dbg-run": null} x`))
	cat, err := lessons.Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		book, err := parseWords(raw, cat.UI)
		if err != nil {
			if !strings.Contains(err.Error(), "web/words/data/words.json") {
				t.Errorf("got error %v, want it to name web/words/data/words.json", err)
			}
			return
		}
		for _, k := range Keys() {
			for _, lang := range lessons.Languages() {
				if strings.TrimSpace(book.own[k][lang]) == "" {
					t.Errorf("accepted words without %s text for %q", lang, k)
				}
			}
		}
	})
}
