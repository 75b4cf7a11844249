package web

import (
	_ "embed"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"tracer/lessons"
)

// wordsJSON is the debugger's own wording: {"key": {"en": ..., "hi": ...}},
// one key per constant in words_keys.go.
//
//go:embed data/words.json
var wordsJSON []byte

// wordBook holds every word the page shows: the debugger's own (web's
// data/words.json) and the lessons' (the top bar, step positions, language
// names), which the debugger shares with the lesson pages. No key is in both.
type wordBook struct {
	own     lessons.Strings // the debugger's, by key
	lessons lessons.Strings // the lessons' page wording, by key
}

// loadWords reads and checks the page's words once: every key of
// debuggerKeys in every language with the same placeholders, nothing else,
// and no key the lessons also define. An error means the embedded words are
// broken, which the package's tests catch before a release.
var loadWords = sync.OnceValues(func() (*wordBook, error) {
	cat, err := lessons.Load()
	if err != nil {
		return nil, err
	}
	return parseWords(wordsJSON, cat.UI)
})

// parseWords reads web's words from raw (the bytes of data/words.json) and
// checks them against debuggerKeys, beside the lessons' words shared.
func parseWords(raw []byte, shared lessons.Strings) (*wordBook, error) {
	var own lessons.Strings
	if err := lessons.DecodeStrict("web/data/words.json", raw, &own); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	if err := own.Check("web/data/words.json", debuggerKeys()); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	for _, k := range debuggerKeys() {
		if _, ok := shared[k]; ok {
			return nil, fmt.Errorf("web: web/data/words.json: key %q is also in lessons' ui.json: keep it in one place", k)
		}
	}
	return &wordBook{own: own, lessons: shared}, nil
}

// Get returns the wording of key in lang: the debugger's own, else the
// lessons' shared with it; English when lang has none, and the key itself
// when neither has it, so a missing word shows up on the page.
func (b *wordBook) Get(key, lang string) string {
	if _, ok := b.own[key]; ok {
		return b.own.Get(key, lang)
	}
	return b.lessons.Get(key, lang)
}

// Words is the page's wording in one language, as the templates read it:
// T("dbg-generate") is "Generate" or "टेक्स्ट बनाएँ". A zero Words (a view
// built without the words) shows the keys, so a forgotten one is seen.
type Words struct {
	book *wordBook
	Lang string // "en" or "hi"
}

// T returns the wording of key (see wordBook.Get).
func (w Words) T(key string) string {
	if w.book == nil {
		return key
	}
	return w.book.Get(key, w.Lang)
}

// F returns the wording of key with its {placeholders} filled, as lessons.Fill.
func (w Words) F(key string, pairs ...string) string {
	return lessons.Fill(w.T(key), pairs...)
}

// words is the server's wording in lang.
func (s *Server) words(lang string) Words {
	return Words{book: s.book, Lang: lang}
}

// pageLang returns the language a page asks for with ?lang=, or "" when it
// names none of the lessons' languages.
func pageLang(r *http.Request) string {
	if l := r.URL.Query().Get("lang"); slices.Contains(lessons.Languages(), l) {
		return l
	}
	return ""
}

// langLinks are the language switch's links; url(code) is where each goes.
func langLinks(w Words, url func(code string) string) []LangLinkView {
	var ls []LangLinkView
	for _, l := range lessons.Languages() {
		ls = append(ls, LangLinkView{Code: l, Name: Words{book: w.book, Lang: l}.T("lang-" + l), URL: url(l), Current: l == w.Lang})
	}
	return ls
}
