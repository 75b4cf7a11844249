package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/http"
	"path"
	"time"

	"tracer/web/static"
)

// staticFiles serves the embedded assets under content-hashed URLs, so
// browsers may cache them for good.
type staticFiles struct {
	files map[string][]byte // name -> content
	hash  map[string]string // name -> short content hash
}

func loadStatic() (*staticFiles, error) {
	entries, err := static.FS.ReadDir(".")
	if err != nil {
		return nil, err
	}
	s := &staticFiles{files: map[string][]byte{}, hash: map[string]string{}}
	add := func(name string, b []byte) {
		sum := sha256.Sum256(b)
		s.files[name] = b
		s.hash[name] = hex.EncodeToString(sum[:6])
	}
	fonts, err := static.PageFonts()
	if err != nil {
		return nil, err
	}
	for name, b := range fonts {
		add(name, b)
	}
	for _, e := range entries {
		if path.Ext(e.Name()) == ".ttf" { // served as WOFF, above
			continue
		}
		b, err := static.FS.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		add(e.Name(), b)
	}
	for name, b := range static.ChartFonts {
		add(name, b)
	}
	// Stylesheets last: their url(...)s name the other assets' versions.
	for name, b := range s.files {
		if path.Ext(name) == ".css" {
			add(name, static.VersionCSSURLs(b, func(n string) (string, bool) {
				_, ok := s.files[n]
				return s.url(n), ok
			}))
		}
	}
	return s, nil
}

// url returns the cache-busting URL of an asset.
func (s *staticFiles) url(name string) string {
	return "/static/" + name + "?v=" + s.hash[name]
}

func (s *staticFiles) serve(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	b, ok := s.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if ct := contentType(name); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	if r.URL.Query().Get("v") == s.hash[name] {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("ETag", `"`+s.hash[name]+`"`)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}

// contentType is the asset's media type; fonts are named here because the
// system's MIME tables often lack them.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".woff":
		return "font/woff"
	case ".ttf":
		return "font/ttf"
	}
	return mime.TypeByExtension(path.Ext(name))
}
