package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/lessons"
	"tracer/trace"
)

// firstRun runs the server's toy greedily, as the page does on opening.
func (s *Server) firstRun(ctx context.Context) (*document, error) {
	req, err := s.model.Request(models.Input{}, nil)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	req.Record = true
	t, err := engine.Generate(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("web: run %s: %w", s.model.Spec, err)
	}
	return s.newDocument(t, "run of "+s.model.Spec+", greedy"), nil
}

// newDocument prepares a trace for showing. A single-prompt toy trace is
// narrated against the server's table when it fits, else against the part
// of the table the trace itself records.
func (s *Server) newDocument(t *trace.Trace, source string) *document {
	d := &document{trace: t, source: source}
	if t.Model.Kind != "toy" {
		return d
	}
	w, err := lessons.Walk(t, s.model.Toy.Table())
	if err != nil {
		table, terr := lessons.TableFromTrace(t)
		if terr == nil {
			w, err = lessons.Walk(t, table)
		}
	}
	if err != nil {
		d.notice = "This toy trace is shown step by step without the walkthrough: " + strings.TrimPrefix(err.Error(), "lessons: ")
		return d
	}
	d.walk = w
	return d
}

// handlePage serves the page: a new session running the toy, or the session
// named by ?session= (where a form import without JavaScript lands).
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	if sess, ok := s.sessions.get(r.URL.Query().Get("session")); ok {
		s.renderPage(w, r, http.StatusOK, sess, "")
		return
	}
	d, err := s.firstRun(r.Context())
	if err != nil {
		s.log.Error("first run", "err", err)
		http.Error(w, "tracer could not run the toy model: "+err.Error(), http.StatusInternalServerError)
		return
	}
	sess, err := s.sessions.create(d)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.renderPage(w, r, http.StatusOK, sess, "")
}

func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, sess *session, errText string) {
	doc, pos := sess.state()
	v := PageView{
		SessionID:     sess.id,
		CSS:           s.static.url("style.css"),
		JS:            s.static.url("app.js"),
		Icon:          s.static.url("favicon.svg"),
		MaxImport:     sizeText(s.cfg.MaxTraceSize),
		Error:         errText,
		Stepper:       stepperView(doc, pos),
		ExportURL:     "/export?session=" + sess.id,
		ImportURL:     "/import?session=" + sess.id,
		WebSocketPath: "/ws?session=" + sess.id,
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := Page(v).Render(r.Context(), w); err != nil {
		s.log.Warn("render page", "err", err)
	}
}

// answer handles one WebSocket message from a page and returns the reply.
// Indexes from the page are checked against the session's trace.
func (s *Server) answer(sess *session, data []byte) []byte {
	m, err := parseInbound(data)
	if err != nil {
		return errorMessage(err.Error())
	}
	doc, pos, err := sess.move(m)
	if err != nil {
		return errorMessage(err.Error())
	}
	return s.viewMessage(doc, pos)
}

// viewMessage renders a position as a "view" message.
func (s *Server) viewMessage(doc *document, pos int) []byte {
	var html bytes.Buffer
	if err := Stepper(stepperView(doc, pos)).Render(context.Background(), &html); err != nil {
		return errorMessage("could not render the view: " + err.Error())
	}
	b, err := json.Marshal(outbound{Type: msgView, Index: pos, Count: doc.count(), HTML: html.String()})
	if err != nil {
		return errorMessage("could not encode the view")
	}
	return b
}

// handleImport reads a trace file posted by the page, as multipart form
// data (field "trace") or as a JSON body. A page asking for JSON (fetch)
// gets a message like the WebSocket's; a plain form post gets the page.
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request) {
	wantJSON := strings.Contains(r.Header.Get("Accept"), "application/json")
	fail := func(status int, sess *session, text string) {
		if wantJSON || sess == nil {
			writeJSON(w, status, errorMessage(text))
			return
		}
		s.renderPage(w, r, status, sess, text)
	}
	sess, ok := s.sessions.get(r.URL.Query().Get("session"))
	if !ok {
		fail(http.StatusNotFound, nil, "This page's session has expired or the server restarted: reload the page, then import again.")
		return
	}
	// Multipart framing needs a little room beyond the trace itself.
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxTraceSize+64<<10)
	t, name, err := s.readUpload(r)
	if err != nil {
		status := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.Is(err, trace.ErrTooLarge) || errors.As(err, &tooBig) {
			status = http.StatusRequestEntityTooLarge
			err = fmt.Errorf("the file is larger than the import limit of %s", sizeText(s.cfg.MaxTraceSize))
		}
		fail(status, sess, fmt.Sprintf("Could not import %s: %s", name, strings.TrimPrefix(err.Error(), "trace: ")))
		return
	}
	sess.load(s.newDocument(t, "imported "+name))
	s.log.Info("imported trace", "session", sess.id, "file", name, "steps", len(t.Steps))
	doc, pos := sess.state()
	msg := s.viewMessage(doc, pos)
	s.hub.broadcast(sess.id, msg)
	if !wantJSON {
		http.Redirect(w, r, "/?session="+sess.id, http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusOK, msg)
}

// readUpload returns the posted trace and the name of its file.
func (s *Server) readUpload(r *http.Request) (*trace.Trace, string, error) {
	name := "the file"
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		t, err := trace.Read(r.Body, s.cfg.MaxTraceSize)
		return t, name, err
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, name, fmt.Errorf("bad upload: %w", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, name, errors.New(`no file in the upload: send the trace in the form field "trace"`)
		}
		if err != nil {
			return nil, name, fmt.Errorf("bad upload: %w", err)
		}
		if part.FormName() != "trace" {
			continue
		}
		if fn := cleanName(part.FileName()); fn != "" {
			name = fn
		}
		t, err := trace.Read(part, s.cfg.MaxTraceSize)
		return t, name, err
	}
}

// handleExport downloads the session's trace as JSON.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.sessions.get(r.URL.Query().Get("session"))
	if !ok {
		http.Error(w, "unknown or expired session: reload the page", http.StatusNotFound)
		return
	}
	doc, _ := sess.state()
	var b bytes.Buffer
	if err := trace.Write(&b, doc.trace); err != nil {
		http.Error(w, "could not write the trace: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="tracer-trace.json"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

func writeJSON(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(msg)
}

// cleanName keeps the last element of an uploaded file's name, shortened.
func cleanName(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "." || name == "/" {
		return ""
	}
	if r := []rune(name); len(r) > 80 {
		name = string(r[:80]) + "…"
	}
	return name
}

// sizeText writes a byte count in MiB or KiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
