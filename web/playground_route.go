package web

import (
	"net/http"

	"tracer/lessons"
	"tracer/web/playground"
)

// tokenizePage is the tokenizer playground (web/playground) on this
// server's models, words and assets: GET /tokenize.
func (s *Server) tokenizePage() http.Handler {
	return playground.New(playground.Config{
		Models: playground.FromCatalog(s.Catalog), Book: s.Book, Langs: lessons.Languages(),
		Asset: s.static.url, Log: s.Log,
	})
}
