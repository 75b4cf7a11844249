package web

import (
	"net/http"
	"slices"

	"tracer/lessons"
)

// Words is the debugger page's wording in one language, as the templates
// read it: T("dbg-generate") is "Generate" or "टेक्स्ट बनाएँ". A zero Words
// (a view built without a catalog) shows the keys, so a forgotten one is seen.
type Words struct {
	ui   lessons.Strings
	Lang string // "en" or "hi"
}

// T returns the wording of key.
func (w Words) T(key string) string {
	if w.ui == nil {
		return key
	}
	return w.ui.Get(key, w.Lang)
}

// F returns the wording of key with its {placeholders} filled, as lessons.Fill.
func (w Words) F(key string, pairs ...string) string {
	return lessons.Fill(w.T(key), pairs...)
}

// words is the server's wording in lang.
func (s *Server) words(lang string) Words {
	return Words{ui: s.lessons.cat.UI, Lang: lang}
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
		ls = append(ls, LangLinkView{Code: l, Name: w.ui.Get("lang-"+l, l), URL: url(l), Current: l == w.Lang})
	}
	return ls
}
