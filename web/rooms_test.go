package web

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestRoomsImportDownward checks the arrows between web's packages with
// go list -deps: nothing below web imports web; the wording imports no
// other package of tracer but the lessons' words; the catalog and the
// assets need nothing of web; the views import none of the protocol, the
// runs and the catalog; the runs import neither the protocol nor net/http. A rule for a package not yet split out of web
// waits for it (see the README's Development section).
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
		forbidden []string
	}{
		{"tracer/web/view", []string{"tracer/web/live", "tracer/web/runs", "tracer/web/catalog"}},
		{"tracer/web/runs", []string{"tracer/web/live", "net/http"}},
	}
	for _, r := range rules {
		for _, f := range r.forbidden {
			if slices.Contains(deps[r.pkg], f) {
				t.Errorf("%s imports %s", r.pkg, f)
			}
		}
	}
	for _, d := range imports["tracer/web/words"] {
		if strings.HasPrefix(d, "tracer/") && d != "tracer/lessons" {
			t.Errorf("tracer/web/words imports %s: the wording needs only the lessons' words", d)
		}
	}
	for _, pkg := range []string{"tracer/web/catalog", "tracer/web/static", "tracer/web/view"} {
		if _, ok := deps[pkg]; !ok {
			t.Errorf("go list found no %s", pkg)
		}
	}
	for _, leaf := range []string{"tracer/web/catalog", "tracer/web/static"} {
		for _, d := range deps[leaf] {
			if strings.HasPrefix(d, "tracer/web") {
				t.Errorf("%s imports %s: it needs nothing of web", leaf, d)
			}
		}
	}
}
