package web

import (
	"net/http"
	"slices"

	"tracer/lessons"
	"tracer/web/view"
	"tracer/web/words"
)

// pageLang returns the language a page asks for with ?lang=, or "" when it
// names none of the lessons' languages.
func pageLang(r *http.Request) string {
	if l := r.URL.Query().Get("lang"); slices.Contains(lessons.Languages(), l) {
		return l
	}
	return ""
}

// langLinks are the language switch's links; url(code) is where each goes.
func langLinks(w words.Words, url func(code string) string) []view.LangLinkView {
	var ls []view.LangLinkView
	for _, l := range lessons.Languages() {
		ls = append(ls, view.LangLinkView{Code: l, Name: w.In(l).T("lang-" + l), URL: url(l), Current: l == w.Lang})
	}
	return ls
}
