package web

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"tracer/lessons"
	"tracer/trace"
	"tracer/web/export"
	"tracer/web/live"
	"tracer/web/runs"
	"tracer/web/view"
)

// handlePage serves the page: a new session running the toy, or the session
// named by ?session= (where a form import without JavaScript lands). In
// classroom mode, /?teach=TOKEN is the instructor's page and every other
// new page follows it; /?as=student previews a student's page in the
// instructor's browser.
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	teach := q.Get("teach")
	if s.Class != nil && teach != "" {
		if !s.Class.Check(teach) {
			http.Error(w, "wrong instructor token: students open the page without one", http.StatusForbidden)
			return
		}
		live.SetTeachCookie(w, teach) // the page then drops ?teach= from the address bar
		s.renderPage(w, r, http.StatusOK, s.Class.Leader, "")
		return
	}
	// ?as=student is the instructor's preview of a student's page: a new
	// student session, though the browser holds the instructor's secret.
	if id := q.Get("session"); s.Instructor(r) && q.Get("as") != "student" && (id == "" || id == s.Class.Leader.ID) {
		s.renderPage(w, r, http.StatusOK, s.Class.Leader, "")
		return
	}
	if sess, ok := s.Sessions.Get(q.Get("session")); ok && !sess.Teach {
		s.renderPage(w, r, http.StatusOK, sess, "")
		return
	}
	d, pos, linkErr := s.pageRun(r)
	if d == nil {
		s.Log.Error("first run", "err", linkErr)
		http.Error(w, "tracer could not run the toy model: "+linkErr.Error(), http.StatusInternalServerError)
		return
	}
	init := func(x *live.Session) {
		if s.Class != nil {
			x.Leader = s.Class.Leader
		}
		x.Cur.Pos = min(pos, d.Count(0)-1)
	}
	sess, err := s.Sessions.Create(d, init)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.As(err, new(live.SessionsFullError)) {
			status = http.StatusServiceUnavailable
		}
		http.Error(w, err.Error(), status)
		return
	}
	errText := ""
	if linkErr != nil {
		errText = s.Catalog.Redact(linkErr.Error())
	}
	s.renderPage(w, r, http.StatusOK, sess, errText)
}

// pageRun is what a new page shows: the run its deep link asks for (see
// linkedRun), or the toy's greedy run. A link that fails gives the toy's
// run and the link's error; a nil document means the toy failed too.
func (s *Server) pageRun(r *http.Request) (*runs.Document, int, error) {
	var linkErr error
	if q := r.URL.Query(); runs.IsDeepLink(q) && s.Class == nil {
		d, pos, err := s.LinkedRun(r.Context(), q)
		if err == nil {
			return d, pos, nil
		}
		linkErr = err
	}
	d, err := s.FirstRun(r.Context())
	if err != nil {
		return nil, 0, err
	}
	return d, 0, linkErr
}

func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, sess *live.Session, errText string) {
	sess.Mu.Lock()
	if l := pageLang(r); l != "" || sess.Lang == "" {
		sess.Lang = cmp.Or(l, lessons.English) // the WebSocket's views follow the page
	}
	words := s.Words(sess.Lang)
	sess.Mu.Unlock()
	v, _, _ := s.StepperFor(sess)
	q := "?session=" + sess.ID // never the instructor's secret: the cookie carries it
	pv := view.PageView{
		SessionID:     sess.ID,
		CSS:           s.static.url("style.css"),
		JS:            s.static.url("app.js"),
		WhatIfJS:      s.static.url("whatif.js"),
		PanesJS:       s.static.url("panes.js"),
		Icon:          s.static.url("favicon.svg"),
		MaxImport:     runs.SizeText(s.cfg.MaxTraceSize),
		Error:         errText,
		Form:          s.formView(sess),
		Stepper:       v,
		ExportURL:     "/export?session=" + sess.ID,
		ImportURL:     "/import" + q,
		WebSocketPath: "/ws" + q,
		W:             words,
		Langs:         langLinks(words, func(l string) string { return "/" + q + "&lang=" + l }),
	}
	switch {
	case sess.Teach:
		pv.Role = "instructor"
		pv.Class = s.classView(r, words)
	case sess.Leader != nil:
		pv.Role = "student"
		pv.Form.Locked = sess.Following()
	}
	if len(pv.Form.Models) == 1 { // only the toy: say how to get a real model
		for _, d := range s.lessons.Cat.Downloads {
			pv.Form.Downloads = append(pv.Form.Downloads, view.DownloadView{Name: d.Name, Command: d.Command, About: d.About.In(words.Lang)})
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := view.Page(pv).Render(r.Context(), w); err != nil {
		s.Log.Warn("render page", "err", err)
	}
}

// formView lists the models on offer for the run form.
// The download row shows only to a page that may download (see mayPull);
// sess nil asks whether the server downloads at all.
func (s *Server) formView(sess *live.Session) view.FormView {
	v := view.FormView{MaxNew: strconv.Itoa(s.cfg.MaxNewTokens), Variants: "greedy\nT=0.7\nT=1.2", CanPull: s.CanPull(sess)}
	for _, e := range s.Catalog.Menu() {
		v.Models = append(v.Models, view.ModelOptionView{Value: e.Name, Label: e.Label, Chat: e.Chat})
	}
	return v
}

// handleImport reads a trace file posted by the page, as multipart form
// data (field "trace") or as a JSON body. A page asking for JSON (fetch)
// gets a message like the WebSocket's; a plain form post gets the page.
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request) {
	wantJSON := strings.Contains(r.Header.Get("Accept"), "application/json")
	fail := func(status int, sess *live.Session, text string) {
		if wantJSON || sess == nil {
			writeJSON(w, status, live.ErrorMessage(text))
			return
		}
		s.renderPage(w, r, status, sess, text)
	}
	sess, ok := s.Sessions.Get(r.URL.Query().Get("session"))
	if !ok {
		fail(http.StatusNotFound, nil, "This page's session has expired or the server restarted: reload the page, then import again.")
		return
	}
	if sess.Teach && !s.Instructor(r) {
		fail(http.StatusForbidden, nil, "Only the instructor's page may import into the instructor's session.")
		return
	}
	// Multipart framing needs a little room beyond the trace itself.
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxTraceSize+64<<10)
	size := &countingReader{r: r.Body}
	r.Body = size
	t, name, err := s.readUpload(r)
	if err != nil {
		status := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.Is(err, trace.ErrTooLarge) || errors.As(err, &tooBig) {
			status = http.StatusRequestEntityTooLarge
			err = fmt.Errorf("the file is larger than the import limit of %s", runs.SizeText(s.cfg.MaxTraceSize))
		}
		fail(status, sess, fmt.Sprintf("Could not import %s: %s", name, strings.TrimPrefix(err.Error(), "trace: ")))
		return
	}
	if err := s.CheckImport(t); err != nil {
		fail(http.StatusBadRequest, sess, fmt.Sprintf("Could not import %s: %s", name, err))
		return
	}
	if total, ok := s.Sessions.HoldImport(sess, size.n, s.cfg.MaxImports); !ok {
		fail(http.StatusInsufficientStorage, sess, fmt.Sprintf("Could not import %s: the pages of this server already hold %s of imported traces, and this one (%s) would pass the limit of %s: try again later, or start the server with a larger --max-import-mib",
			name, runs.SizeText(total), runs.SizeText(size.n), runs.SizeText(s.cfg.MaxImports)))
		return
	}
	if sess.Following() { // a student's import is their own
		sess.Detached.Store(true)
	}
	d := s.NewDocument(t, "imported "+name)
	d.Origin = runs.Origin{Kind: runs.OriginImported, File: name}
	sess.Load(d)
	s.Log.Info("imported trace", "session", sess.ID, "file", name, "steps", len(t.Steps), "branches", len(t.Branches))
	s.Publish(sess)
	if !wantJSON {
		to := "/?session=" + sess.ID
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	msg, _ := s.ViewMessage(sess)
	writeJSON(w, http.StatusOK, msg)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

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

// exportSlot waits for one of the server's export slots (an export of a
// long trace costs seconds of CPU and up to a gigabyte): at most
// Server.exports run at once, at most maxExportQueue more wait, the rest
// are refused with 503. It reports false, the request answered, when the
// reader left or the line was full; release gives the slot back.
func (s *Server) exportSlot(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	select {
	case s.exports <- struct{}{}:
		return func() { <-s.exports }, true
	default:
	}
	if s.exportsWaiting.Add(1) > maxExportQueue {
		s.exportsWaiting.Add(-1)
		http.Error(w, fmt.Sprintf("%d exports are running and %d waiting, this server's limit: try again in a moment", cap(s.exports), maxExportQueue), http.StatusServiceUnavailable)
		return nil, false
	}
	defer s.exportsWaiting.Add(-1)
	select {
	case s.exports <- struct{}{}:
		return func() { <-s.exports }, true
	case <-r.Context().Done():
		return nil, false
	}
}

// handleExport downloads what the session shows: ?format=html as one
// HTML file (exportDocument), else as JSON, branches included (exportJSON;
// ?run=K picks one run of a comparison).
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sess, ok := s.Sessions.Get(q.Get("session"))
	if !ok {
		http.Error(w, "unknown or expired session: reload the page", http.StatusNotFound)
		return
	}
	k := -1 // every run
	if q.Get("format") != "html" && q.Get("run") != "" {
		var err error
		if k, err = strconv.Atoi(q.Get("run")); err != nil || k < 0 {
			http.Error(w, fmt.Sprintf("run=%.20q: want a run index, 0 or more", q.Get("run")), http.StatusBadRequest)
			return
		}
	}
	d, lang := s.Shown(sess)
	if k >= len(d.Runs) {
		http.Error(w, fmt.Sprintf("run %d does not exist: this page shows runs 0 to %d", k, len(d.Runs)-1), http.StatusBadRequest)
		return
	}
	running := d.Live()
	if k >= 0 {
		running = d.Runs[k].Live
	}
	if running {
		http.Error(w, "the run is still generating: stop it or wait for it, then export", http.StatusConflict)
		return
	}
	name, kind := "tracer-trace.html", "text/html; charset=utf-8"
	var body []byte
	var err error
	if q.Get("format") == "html" { // the whole document as one file
		release, ok := s.exportSlot(w, r)
		if !ok {
			return
		}
		defer release()
		var b bytes.Buffer
		if err = export.Document(r.Context(), &b, d, s.Words(cmp.Or(lang, lessons.English)), true); err != nil {
			if r.Context().Err() != nil {
				return // the reader left
			}
			err = fmt.Errorf("could not export the page: %w", err)
		}
		body = b.Bytes()
	} else {
		name, kind, body, err = export.JSON(d, k)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", kind)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(body)
}
