// Package hubtest runs a fake Hugging Face Hub for tests. It answers the
// way the Hub does: the revision and tree APIs list a repository's files;
// resolve URLs carry ETag, X-Repo-Commit, X-Linked-Etag and X-Linked-Size;
// LFS files (weights) redirect to a second server, the file host; both honour
// Range requests. Gated repositories want the token, missing things get a
// 404 with the Hub's X-Error-Code, and faults (a connection cut or held
// mid-file, altered bytes, a server that ignores Range, a download held
// until released, rewritten headers) come on demand.
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Token is the access token gated repositories accept.
const Token = "hf_hubtest_token"

// Repo is a model repository on the fake Hub.
type Repo struct {
	ID    string            // "ORG/NAME"
	Files map[string][]byte // name → contents
	Tags  []string          // revisions besides "main" that name its commit
	Gated bool              // answers 401 without "Authorization: Bearer " + Token
	Info  string            // when set, the revision API answers this instead of the file list
}

// Request is one request a server saw.
type Request struct {
	Host   string // "hub" or "files"
	Method string
	Path   string // as sent, escaped
	Range  string // the Range header
	Auth   string // the Authorization header
}

// Hub is a running fake Hub and its file host.
type Hub struct {
	URL      string // the Hub: set HF_ENDPOINT to this
	FilesURL string // the file host LFS files redirect to

	hub, files *httptest.Server

	mu          sync.Mutex
	repos       map[string]Repo
	byHash      map[string]string // repo/sha256 → file
	requests    []Request
	faults      map[string]fault // repo/file → fault on the next GET
	corrupt     map[string]bool  // repo/file → serve altered bytes
	gates       map[string]*gate // repo/file → hold the next GET until released
	rewrites    map[string]func(http.Header)
	ignoreRange bool
	noRevAPI    bool
}

// fault cuts the next transfer of a file after some bytes: the connection
// is dropped, or held open until the client goes away.
type fault struct {
	after int64
	hold  bool
}

// New starts a fake Hub serving repos; it stops when the test ends.
func New(t testing.TB, repos ...Repo) *Hub {
	t.Helper()
	h := &Hub{
		repos:    map[string]Repo{},
		byHash:   map[string]string{},
		faults:   map[string]fault{},
		corrupt:  map[string]bool{},
		gates:    map[string]*gate{},
		rewrites: map[string]func(http.Header){},
	}
	for _, r := range repos {
		h.repos[r.ID] = r
		for name, b := range r.Files {
			h.byHash[r.ID+"/"+SHA256(b)] = name
		}
	}
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	h.files = httptest.NewServer(http.HandlerFunc(h.serveFiles))
	h.URL, h.FilesURL = h.hub.URL, h.files.URL
	t.Cleanup(h.Close)
	return h
}

// Close stops both servers; later requests fail to connect.
func (h *Hub) Close() {
	h.hub.Close()
	h.files.Close()
}

// Commit returns the commit SHA-1 of a repository: a hash of its files.
func (h *Hub) Commit(repo string) string {
	h.mu.Lock()
	r := h.repos[repo]
	h.mu.Unlock()
	s := sha1.New()
	fmt.Fprintln(s, r.ID)
	for _, name := range sortedNames(r.Files) {
		fmt.Fprintf(s, "%s %s\n", name, GitSHA1(r.Files[name]))
	}
	return hex.EncodeToString(s.Sum(nil))
}

// CutAfter makes the next GET of a file send n bytes and drop the connection.
func (h *Hub) CutAfter(repo, file string, n int64) { h.setFault(repo, file, fault{after: n}) }

// HoldAfter makes the next GET of a file send n bytes and then wait, the
// connection open, until the client gives up.
func (h *Hub) HoldAfter(repo, file string, n int64) {
	h.setFault(repo, file, fault{after: n, hold: true})
}

func (h *Hub) setFault(repo, file string, f fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.faults[repo+"/"+file] = f
}

// gate holds a GET: started closes when it arrives, release lets it go on.
type gate struct {
	started, release chan struct{}
	once             sync.Once
}

// Gate makes the next GET of a file (on the Hub or the file host) wait,
// before sending anything, until release is called or the client gives up.
// started is closed when that GET arrives. Tests use it to hold one
// download open while another starts, without timing.
func (h *Hub) Gate(repo, file string) (started <-chan struct{}, release func()) {
	g := &gate{started: make(chan struct{}), release: make(chan struct{})}
	h.mu.Lock()
	h.gates[repo+"/"+file] = g
	h.mu.Unlock()
	return g.started, func() { g.once.Do(func() { close(g.release) }) }
}

// Rewrite calls f on the headers of every answer the Hub gives to a resolve
// request for a file (HEAD or GET, the redirect of an LFS file included),
// just before they are sent: tests use it to drop or alter the ETag,
// X-Linked-Etag or X-Linked-Size a real Hub or mirror might get wrong.
func (h *Hub) Rewrite(repo, file string, f func(http.Header)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rewrites[repo+"/"+file] = f
}

// Corrupt makes both servers send the file with one byte altered.
func (h *Hub) Corrupt(repo, file string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.corrupt[repo+"/"+file] = true
}

// IgnoreRange makes both servers answer Range requests with the whole file.
func (h *Hub) IgnoreRange() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ignoreRange = true
}

// DisableRevisionAPI makes /api/models/{repo}/revision/{rev} answer a bare
// 404, as a mirror without it would, leaving the tree API.
func (h *Hub) DisableRevisionAPI() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.noRevAPI = true
}

// Requests returns the requests both servers have seen, in order.
func (h *Hub) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.requests...)
}

func (h *Hub) record(host string, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests = append(h.requests, Request{Host: host, Method: r.Method, Path: r.URL.EscapedPath(), Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization")})
}

// IsLFS reports whether the fake Hub stores a file with LFS (as a
// repository's .gitattributes would for weights).
func IsLFS(name string) bool {
	switch path.Ext(name) {
	case ".safetensors", ".bin", ".gguf", ".pt", ".pth":
		return true
	}
	return false
}

// GitSHA1 is the git blob hash of b: the Hub's ETag of an ordinary file.
func GitSHA1(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// SHA256 is the sha256 of b: the Hub's X-Linked-Etag of an LFS file.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ETag returns the name the cache gives a file's blob.
func ETag(name string, b []byte) string {
	if IsLFS(name) {
		return SHA256(b)
	}
	return GitSHA1(b)
}

func sortedNames(files map[string][]byte) []string { return slices.Sorted(maps.Keys(files)) }

func unescape(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

func unescapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = unescape(s)
	}
	return strings.Join(parts, "/")
}
