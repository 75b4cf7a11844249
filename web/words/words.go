// Package words is the debugger page's wording in every language it
// speaks (English and Hindi): the page's own words (data/words.json, one
// key a constant in keys.go) beside the lessons' words it shares, checked
// together when they load. The templates read a Words, T("dbg-generate").
// It imports only the lessons' word files, and every package of web may
// import it.
package words

import (
	_ "embed"
	"fmt"
	"sync"

	"tracer/lessons"
)

// wordsJSON is the debugger's own wording: {"key": {"en": ..., "hi": ...}},
// one key per constant in keys.go.
//
//go:embed data/words.json
var wordsJSON []byte

// Book holds every word the page shows: the debugger's own (web's
// data/words.json) and the lessons' (the top bar, step positions, language
// names), which the debugger shares with the lesson pages. No key is in both.
type Book struct {
	own     lessons.Strings // the debugger's, by key
	lessons lessons.Strings // the lessons' page wording, by key
}

// Load reads and checks the page's words once: every key of
// Keys in every language with the same placeholders, nothing else,
// and no key the lessons also define. An error means the embedded words are
// broken, which the package's tests catch before a release.
var Load = sync.OnceValues(func() (*Book, error) {
	cat, err := lessons.Load()
	if err != nil {
		return nil, err
	}
	return parseWords(wordsJSON, cat.UI)
})

// parseWords reads web's words from raw (the bytes of data/words.json) and
// checks them against Keys, beside the lessons' words shared.
func parseWords(raw []byte, shared lessons.Strings) (*Book, error) {
	var own lessons.Strings
	if err := lessons.DecodeStrict("web/words/data/words.json", raw, &own); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	if err := own.Check("web/words/data/words.json", Keys()); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	for _, k := range Keys() {
		if _, ok := shared[k]; ok {
			return nil, fmt.Errorf("web: web/words/data/words.json: key %q is also in lessons' ui.json: keep it in one place", k)
		}
	}
	return &Book{own: own, lessons: shared}, nil
}

// Get returns the wording of key in lang: the debugger's own, else the
// lessons' shared with it; English when lang has none, and the key itself
// when neither has it, so a missing word shows up on the page.
func (b *Book) Get(key, lang string) string {
	if _, ok := b.own[key]; ok {
		return b.own.Get(key, lang)
	}
	return b.lessons.Get(key, lang)
}

// Words is the page's wording in one language, as the templates read it:
// T("dbg-generate") is "Generate" or "टेक्स्ट बनाएँ". A zero Words (a view
// built without the words) shows the keys, so a forgotten one is seen.
type Words struct {
	book *Book
	Lang string // "en" or "hi"
}

// In returns the wording in lang.
func (b *Book) In(lang string) Words { return Words{book: b, Lang: lang} }

// In returns the same words in another language.
func (w Words) In(lang string) Words { return Words{book: w.book, Lang: lang} }

// Known reports whether w holds the words (a zero Words shows the keys).
func (w Words) Known() bool { return w.book != nil }

// T returns the wording of key (see Book.Get).
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
