package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineImportsNothingAbove: engine is a library on its own. No package
// under engine/ depends on the toy, the web page, the lessons or the
// command, so the arrows of DESIGN.md point one way.
func TestEngineImportsNothingAbove(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "tracer/engine/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list gave %d packages, want engine's dozen and their imports", len(pkgs))
	}
	for _, p := range pkgs {
		for _, above := range []string{"tracer/toy", "tracer/web", "tracer/lessons", "tracer/cmd"} {
			if p == above || strings.HasPrefix(p, above+"/") {
				t.Errorf("engine depends on %s", p)
			}
		}
	}
}
