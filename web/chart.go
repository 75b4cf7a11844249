package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"tracer/trace"
	"tracer/web/plots"
	"tracer/web/view"
	"tracer/web/words"
)

// chartsFor lists the charts of a position: for one run (steps is its
// path along branch) or for the runs of a comparison (steps nil: each
// run's trunk), for o's session, palette and language. It snapshots the
// traces; the caller holds the lock.
func chartsFor(runs []*run, branch int, steps []trace.Step, pos int, o buildOpts) (*view.ChartsView, []view.ChartJob) {
	var traces []*trace.Trace
	var names []string
	for _, r := range runs {
		names = append(names, r.label)
		t := *r.trace
		t.Branches = nil
		if steps != nil {
			t.Steps = steps
		}
		t.Steps = slices.Clip(t.Steps)
		traces = append(traces, &t)
	}
	return view.ChartsFor(traces, names, runs[0].id, branch, pos, view.ChartOpts{Session: o.session, Dark: o.dark, W: o.words})
}

// handleChart downloads one chart of the session's current run as SVG or
// PNG: /chart?session=&chart=&step=&format=svg|png.
func (s *Server) handleChart(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sess, ok := s.sessions.get(q.Get("session"))
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
	job, err := chartRequest(sess, name, step, s.words)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, err := view.Chart(s.charts, job.As(format))
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

// chartRequest finds the chart named name at step of what the session
// shows, worded in the session's language (words gives a language's).
func chartRequest(sess *session, name string, step int, words func(lang string) words.Words) (view.ChartJob, error) {
	sess.mu.Lock()
	o := buildOpts{session: sess.id, dark: sess.dark, words: words(sess.lang)}
	sess.mu.Unlock()
	src := sess.source()
	src.mu.Lock()
	defer src.mu.Unlock()
	d, cur := src.doc, src.cur
	runs, branch := d.runs[:1], cur.branch
	var steps []trace.Step
	if d.compare {
		runs, branch = d.runs, 0
	} else {
		steps = pathSteps(d.runs[0].trace, branch)
	}
	n := d.count(branch)
	if d.walk != nil {
		n = len(d.runs[0].trace.Steps)
	}
	if step < 0 || step >= n {
		return view.ChartJob{}, fmt.Errorf("step index %d is out of range: this run has steps 0 to %d", step, n-1)
	}
	v, jobs := chartsFor(runs, branch, steps, step, o)
	for i, c := range v.Charts {
		if c.Name == name {
			return jobs[i], nil
		}
	}
	return view.ChartJob{}, fmt.Errorf("no chart %q for this run", name)
}
