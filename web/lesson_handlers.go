package web

import (
	"errors"
	"net/http"

	"github.com/a-h/templ"

	"tracer/web/lessonpage"
	"tracer/web/view"
)

// handleLessons serves the list of lessons.
func (s *Server) handleLessons(w http.ResponseWriter, r *http.Request) {
	s.renderLesson(w, r, view.LessonIndex(s.lessons.Index(lessonpage.Lang(r))))
}

// handleLessonStep serves one step of a lesson, generating its runs.
func (s *Server) handleLessonStep(w http.ResponseWriter, r *http.Request) {
	v, err := s.lessons.StepPage(r)
	switch {
	case errors.Is(err, lessonpage.ErrNotFound):
		http.NotFound(w, r)
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		if v.Quiz != nil && s.StudentPage(w, r) { // a classroom counts its students' answers
			v.Quiz.AnswerURL = "/quiz"
		}
		s.renderLesson(w, r, view.LessonStep(v))
	}
}

// renderLesson writes a lesson page.
func (s *Server) renderLesson(w http.ResponseWriter, r *http.Request, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := c.Render(r.Context(), w); err != nil {
		s.Log.Warn("render lesson", "err", err)
	}
}
