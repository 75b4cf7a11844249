package hubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// treePage is the number of entries per page of the tree API, small so
// that tests cross a page boundary.
const treePage = 3

func (h *Hub) serveHub(w http.ResponseWriter, r *http.Request) {
	h.record("hub", r)
	p := r.URL.EscapedPath()
	if rest, ok := strings.CutPrefix(p, "/api/models/"); ok {
		parts := strings.SplitN(rest, "/", 4) // org, name, revision|tree, rev
		if len(parts) == 4 {
			h.serveAPI(w, r, parts[0]+"/"+parts[1], parts[2], unescape(parts[3]))
			return
		}
	}
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 5) // org, name, resolve, rev, file
	if len(parts) == 5 && parts[2] == "resolve" {
		h.serveResolve(w, r, parts[0]+"/"+parts[1], unescape(parts[3]), unescapePath(parts[4]))
		return
	}
	http.NotFound(w, r)
}

// lookup finds a repository at a revision, answering the Hub's error when
// there is none or the request may not see it.
func (h *Hub) lookup(w http.ResponseWriter, r *http.Request, id, rev string) (Repo, string, bool) {
	h.mu.Lock()
	repo, ok := h.repos[id]
	h.mu.Unlock()
	if !ok {
		hubError(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
		return repo, "", false
	}
	if repo.Gated && r.Header.Get("Authorization") != "Bearer "+Token {
		hubError(w, http.StatusUnauthorized, "GatedRepo", "Access to model "+id+" is restricted. You must have access to it and be authenticated to access it.")
		return repo, "", false
	}
	commit := h.Commit(id)
	if rev != "main" && rev != commit && !slices.Contains(repo.Tags, rev) {
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return repo, "", false
	}
	return repo, commit, true
}

func (h *Hub) serveAPI(w http.ResponseWriter, r *http.Request, id, kind, rev string) {
	h.mu.Lock()
	noRev := h.noRevAPI
	h.mu.Unlock()
	if kind == "revision" && noRev {
		http.NotFound(w, r)
		return
	}
	repo, commit, ok := h.lookup(w, r, id, rev)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch kind {
	case "revision":
		if repo.Info != "" {
			fmt.Fprint(w, repo.Info)
			return
		}
		type sibling struct {
			RFilename string `json:"rfilename"`
		}
		info := struct {
			ID       string    `json:"id"`
			ModelID  string    `json:"modelId"`
			SHA      string    `json:"sha"`
			Siblings []sibling `json:"siblings"`
		}{ID: id, ModelID: id, SHA: commit, Siblings: []sibling{}}
		for _, n := range sortedNames(repo.Files) {
			info.Siblings = append(info.Siblings, sibling{n})
		}
		json.NewEncoder(w).Encode(info)
	case "tree":
		h.serveTree(w, r, repo)
	default:
		http.NotFound(w, r)
	}
}

// serveTree answers one page of the tree API, with a Link header to the next.
func (h *Hub) serveTree(w http.ResponseWriter, r *http.Request, repo Repo) {
	type entry struct {
		Type string `json:"type"`
		OID  string `json:"oid"`
		Size int    `json:"size"`
		Path string `json:"path"`
	}
	names := sortedNames(repo.Files)
	from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	from = min(max(from, 0), len(names))
	to := min(from+treePage, len(names))
	if to < len(names) {
		next := *r.URL
		q := next.Query()
		q.Set("cursor", strconv.Itoa(to))
		next.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, next.String()))
	}
	page := []entry{}
	for _, n := range names[from:to] {
		page = append(page, entry{Type: "file", OID: GitSHA1(repo.Files[n]), Size: len(repo.Files[n]), Path: n})
	}
	json.NewEncoder(w).Encode(page)
}

// serveResolve answers {repo}/resolve/{rev}/{file}: the bytes of an ordinary
// file, or a redirect to the file host for an LFS file.
func (h *Hub) serveResolve(w http.ResponseWriter, r *http.Request, id, rev, name string) {
	repo, commit, ok := h.lookup(w, r, id, rev)
	if !ok {
		return
	}
	h.mu.Lock()
	rewrite := h.rewrites[id+"/"+name]
	h.mu.Unlock()
	if rewrite != nil {
		w = &rewriter{ResponseWriter: w, f: rewrite}
	}
	data, ok := repo.Files[name]
	if !ok {
		hubError(w, http.StatusNotFound, "EntryNotFound", name+" does not exist on "+rev)
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	if IsLFS(name) {
		sum := SHA256(data)
		w.Header().Set("ETag", `"`+GitSHA1([]byte("version https://git-lfs.github.com/spec/v1\noid sha256:"+sum))+`"`)
		w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(data)))
		w.Header().Set("Location", h.FilesURL+"/repos/"+id+"/"+sum+"?X-Amz-Signature=secret")
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+GitSHA1(data)+`"`)
	h.serveBytes(w, r, id+"/"+name, data)
}

// serveFiles is the file host: /repos/{org}/{name}/{sha256} serves the LFS
// file of that repository with that hash.
func (h *Hub) serveFiles(w http.ResponseWriter, r *http.Request) {
	h.record("files", r)
	// /repos/{org}/{name}/{sha256}, so that two repositories holding the
	// same file keep their own faults.
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/repos/"), "/")
	if len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	id := parts[0] + "/" + parts[1]
	h.mu.Lock()
	name, ok := h.byHash[id+"/"+parts[2]]
	repo := h.repos[id]
	h.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.serveBytes(w, r, id+"/"+name, repo.Files[name])
}

// serveBytes sends data, or from byte N on for "Range: bytes=N-", applying
// the faults set for key (repo/file).
func (h *Hub) serveBytes(w http.ResponseWriter, r *http.Request, key string, data []byte) {
	h.mu.Lock()
	f, faulty := h.faults[key]
	if faulty && r.Method == http.MethodGet {
		delete(h.faults, key)
	}
	g := h.gates[key]
	if g != nil && r.Method == http.MethodGet {
		delete(h.gates, key)
	} else {
		g = nil
	}
	corrupt, ignoreRange := h.corrupt[key], h.ignoreRange
	h.mu.Unlock()
	if g != nil {
		close(g.started)
		select {
		case <-g.release:
		case <-r.Context().Done():
			return
		}
	}
	if corrupt && len(data) > 0 {
		data = append([]byte(nil), data...)
		data[len(data)/2] ^= 0xff
	}
	status, start := http.StatusOK, 0
	if rg, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok && !ignoreRange {
		n, err := strconv.Atoi(strings.TrimSuffix(rg, "-"))
		if err != nil || n >= len(data) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		status, start = http.StatusPartialContent, n
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(data)-1, len(data)))
	}
	body := data[start:]
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Accept-Ranges", "bytes")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if faulty && f.after < int64(len(body)) {
		w.Write(body[:f.after])
		w.(http.Flusher).Flush()
		if f.hold {
			<-r.Context().Done()
		}
		panic(http.ErrAbortHandler) // drop the connection mid-file
	}
	w.Write(body)
}

// rewriter applies a test's rewrite to the headers just before they go.
type rewriter struct {
	http.ResponseWriter
	f     func(http.Header)
	wrote bool
}

func (w *rewriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		w.f(w.Header())
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *rewriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes on to the server's writer, for the faults that cut a file.
func (w *rewriter) Flush() {
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// hubError answers as the Hub does: a status, X-Error-Code and a JSON message.
func hubError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Error-Code", code)
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
