package web

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"tracer/trace"
)

// handleExport downloads what the session shows as JSON, branches
// included. ?run=K picks one run of a comparison; without it a single run
// downloads as tracer-trace.json and a comparison as a zip archive of every
// run (run-1-greedy.json, run-2-T=0.7.json, ...), so that none is lost.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.sessions.get(r.URL.Query().Get("session"))
	if !ok {
		http.Error(w, "unknown or expired session: reload the page", http.StatusNotFound)
		return
	}
	if r.URL.Query().Get("format") == "html" { // the whole document as one file
		s.handleExportHTML(w, r, sess)
		return
	}
	k := -1 // every run
	if q := r.URL.Query().Get("run"); q != "" {
		var err error
		if k, err = strconv.Atoi(q); err != nil || k < 0 {
			http.Error(w, fmt.Sprintf("run=%.20q: want a run index, 0 or more", q), http.StatusBadRequest)
			return
		}
	}
	src := sess.source()
	src.mu.Lock()
	runs := src.doc.runs
	compare := src.doc.compare
	var ts []*trace.Trace
	var names []string
	var kept []bool
	live := false
	for i, x := range runs {
		if k >= 0 && i != k {
			continue
		}
		ts = append(ts, x.snapshot())
		names = append(names, runFileName(i, x.label))
		kept = append(kept, x.keptLogits)
		live = live || x.live
	}
	src.mu.Unlock()
	switch {
	case len(ts) == 0:
		http.Error(w, fmt.Sprintf("run %d does not exist: this page shows runs 0 to %d", k, len(runs)-1), http.StatusBadRequest)
		return
	case live:
		http.Error(w, "the run is still generating: stop it or wait for it, then export", http.StatusConflict)
		return
	}
	for i, t := range ts {
		if kept[i] {
			ts[i] = withoutLogits(t)
		}
	}
	var b bytes.Buffer
	name, kind := "tracer-trace.json", "application/json"
	switch {
	case k < 0 && compare:
		name, kind = "tracer-compare.zip", "application/zip"
		if err := writeZip(&b, ts, names); err != nil {
			http.Error(w, "could not write the traces: "+err.Error(), http.StatusInternalServerError)
			return
		}
	default:
		if compare {
			name = "tracer-" + names[0]
		}
		if err := trace.Write(&b, ts[0]); err != nil {
			http.Error(w, "could not write the trace: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", kind)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// writeZip writes the traces into one zip archive under their names.
func writeZip(b *bytes.Buffer, ts []*trace.Trace, names []string) error {
	z := zip.NewWriter(b)
	for i, t := range ts {
		f, err := z.Create(names[i])
		if err != nil {
			return err
		}
		if err := trace.Write(f, t); err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
	}
	return z.Close()
}
