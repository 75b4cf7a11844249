package web

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRoomsImportDownward checks the arrows between web's packages with
// go list -deps (see the README's Development section): nothing below web
// imports web; the wording imports no other package of tracer but the
// lessons' words; the catalog needs nothing of web, the assets only the
// font packer; the views import none of the protocol, the runs and the
// catalog; the runs import neither the protocol nor net/http or a
// WebSocket (a serving engine's client, engine/remote, speaks HTTP for
// them).
func TestRoomsImportDownward(t *testing.T) {
	// Each package below web: its direct imports, then (after "|") every
	// package it depends on.
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}} |{{range .Deps}} {{.}}{{end}}`, "tracer/web/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports, deps := map[string][]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		direct, all, _ := strings.Cut(line, "|")
		f := strings.Fields(direct)
		if len(f) > 0 && strings.HasPrefix(f[0], "tracer/web/") {
			imports[f[0]], deps[f[0]] = f[1:], strings.Fields(all)
		}
	}
	if _, ok := deps["tracer/web/words"]; !ok {
		t.Fatalf("go list found no tracer/web/words among %d packages below web", len(deps))
	}
	for pkg, ds := range deps {
		if slices.Contains(ds, "tracer/web") {
			t.Errorf("%s imports tracer/web: arrows point down from web, never up", pkg)
		}
	}
	rules := []struct {
		pkg       string
		forbidden []string // neither imported nor depended on
		direct    []string // not imported
	}{
		{pkg: "tracer/web/view", forbidden: []string{"tracer/web/live", "tracer/web/runs", "tracer/web/catalog"}},
		{pkg: "tracer/web/runs", forbidden: []string{"tracer/web/live", "github.com/gorilla/websocket"}, direct: []string{"net/http"}},
		{pkg: "tracer/web/catalog", forbidden: []string{"tracer/web/live", "tracer/web/runs", "tracer/web/view"}},
	}
	for _, r := range rules {
		for _, f := range r.forbidden {
			if slices.Contains(deps[r.pkg], f) {
				t.Errorf("%s depends on %s", r.pkg, f)
			}
		}
		for _, f := range r.direct {
			if slices.Contains(imports[r.pkg], f) {
				t.Errorf("%s imports %s", r.pkg, f)
			}
		}
	}
	for _, d := range imports["tracer/web/words"] {
		if strings.HasPrefix(d, "tracer/") && d != "tracer/lessons" {
			t.Errorf("tracer/web/words imports %s: the wording needs only the lessons' words", d)
		}
	}
	for _, pkg := range []string{"tracer/web/live", "tracer/web/runs", "tracer/web/catalog", "tracer/web/view", "tracer/web/lessonpage", "tracer/web/export", "tracer/web/words", "tracer/web/plots", "tracer/web/sfnt", "tracer/web/static", "tracer/web/qr"} {
		if _, ok := deps[pkg]; !ok {
			t.Errorf("go list found no %s", pkg)
		}
	}
	for _, leaf := range []string{"tracer/web/qr", "tracer/web/qr/qrtest"} { // the QR code and its decoder stand alone
		for _, d := range deps[leaf] {
			if strings.HasPrefix(d, "tracer/") {
				t.Errorf("%s imports %s: it needs nothing of tracer", leaf, d)
			}
		}
	}
	for leaf, may := range map[string]string{"tracer/web/catalog": "", "tracer/web/static": "tracer/web/sfnt"} {
		for _, d := range deps[leaf] {
			if strings.HasPrefix(d, "tracer/web") && d != may {
				t.Errorf("%s imports %s: it needs nothing of web", leaf, d)
			}
		}
	}
}

// TestRoomsAreSmall holds web to its wiring and every room to a size one
// can read: the web package at most 1,500 hand-written lines (Go and templ
// sources, tests and generated *_templ.go files aside), each package below
// it at most 6,000.
func TestRoomsAreSmall(t *testing.T) {
	lines := map[string]int{} // by folder, relative to web
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		handWritten := strings.HasSuffix(name, ".templ") ||
			strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && !strings.HasSuffix(name, "_templ.go")
		if !handWritten {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines[filepath.Dir(path)] += bytes.Count(b, []byte("\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 10 {
		t.Fatalf("found hand-written sources in %d folders of web, want web and its rooms: %v", len(lines), lines)
	}
	for dir, n := range lines {
		limit := 6000
		if dir == "." {
			limit = 1500
		}
		if n > limit {
			t.Errorf("web/%s holds %d hand-written lines, more than %d: split it by concern", dir, n, limit)
		}
		t.Logf("web/%s: %d lines", dir, n)
	}
}
