package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cliFlag matches a command-line flag such as --prompt-ids in a string.
var cliFlag = regexp.MustCompile(`(^|[^-\w])--[a-z]`)

// TestErrorsNameNoFlags checks that engine speaks the engine's terms: no
// string literal in engine's non-test Go files names a command-line flag
// (--prompt-ids, --step, …). The CLI adds its flags to engine errors it
// recognises with errors.Is/As, and the page adds its own hints. Comments
// may name flags, and test-support packages (hubtest, remotetest) may
// name the flags of the programs they start.
func TestErrorsNameNoFlags(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasSuffix(d.Name(), "test")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Errorf("%s: %v", fset.Position(lit.Pos()), err)
				return true
			}
			if cliFlag.MatchString(s) {
				t.Errorf("%s: got %s, want the engine's terms without a command-line flag (the CLI adds its flag hint)", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Errorf("got %d Go files under engine, want the whole engine scanned", files)
	}
}
