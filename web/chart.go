package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"tracer/web/live"
	"tracer/web/plots"
	"tracer/web/view"
)

// handleChart downloads one chart of the session's current run as SVG or
// PNG: /chart?session=&chart=&step=&format=svg|png.
func (s *Server) handleChart(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sess, ok := s.Sessions.Get(q.Get("session"))
	if !ok {
		http.Error(w, "unknown or expired session: reload the page", http.StatusNotFound)
		return
	}
	format := q.Get("format")
	if format == "" {
		format = "svg"
	}
	if format != "svg" && format != "png" {
		http.Error(w, fmt.Sprintf("format %q: want svg or png", format), http.StatusBadRequest)
		return
	}
	step, err := strconv.Atoi(q.Get("step"))
	if err != nil {
		http.Error(w, "step: want a step index", http.StatusBadRequest)
		return
	}
	name := q.Get("chart")
	job, err := live.ChartRequest(sess, name, step, s.Words)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, err := view.Chart(s.Charts, job.As(format))
	switch {
	case errors.Is(err, plots.ErrNoData):
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, "could not draw the chart: "+err.Error(), http.StatusInternalServerError)
		return
	}
	ct := "image/svg+xml"
	if format == "png" {
		ct = "image/png"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="tracer-%s-step%d.%s"`, name, step+1, format))
	w.Write(b)
}
