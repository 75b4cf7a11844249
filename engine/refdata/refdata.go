// Package refdata finds the reference data that tracer's tests compare
// against: the small fixtures the repository owns under testdata/ first,
// then the shared third-party data in ../shared beside the repository
// (transformers' goldens, Hugging Face tokenizers, stories260K, llama.cpp's
// answers). Tests name a file by its path under shared/, such as
// "golden/tiny-gpt2" or "tokenizers/golden-gpt2.json", and never by a
// folder of one machine.
//
// When the data is absent a test skips with a message, except in CI
// (the CI environment variable is set), where missing reference data fails
// the run: a green CI must mean the comparisons ran.
//
// With TRACER_REFDATA_LOG naming a file, every lookup appends a line to it:
// the test or fuzz target asking, the path asked for, and where it was
// found ("testdata", "shared" or "absent"). `go test ./...` with it set
// lists every test that reads ../shared.
package refdata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// TB is the part of testing.TB that Need uses.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// Root returns the repository's root: the nearest folder at or above the
// working directory that holds go.mod.
func Root() (string, error) {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				root = dir
				return
			}
			up := filepath.Dir(dir)
			if up == dir {
				rootErr = errors.New("refdata: no go.mod at or above the working directory")
				return
			}
			dir = up
		}
	})
	return root, rootErr
}

// Path returns where rel (a path under shared/, slash-separated) lives:
// testdata/rel in the repository if it exists, else ../shared/rel beside
// the repository. The error says where it looked.
func Path(rel string) (string, error) {
	top, err := Root()
	if err != nil {
		return "", err
	}
	name := filepath.FromSlash(rel)
	own := filepath.Join(top, "testdata", name)
	if _, err := os.Stat(own); err == nil {
		logLookup(rel, "testdata")
		return own, nil
	}
	shared := filepath.Join(filepath.Dir(top), "shared", name)
	if _, err := os.Stat(shared); err == nil {
		logLookup(rel, "shared")
		return shared, nil
	}
	logLookup(rel, "absent")
	return "", fmt.Errorf("reference data %s is in neither testdata/ nor ../shared beside the repository", rel)
}

// logLookup appends "test<TAB>rel<TAB>where" to the file named by
// TRACER_REFDATA_LOG, if any. The test is the outermost Test, Fuzz or
// Benchmark function on the caller's stack (a subtest's closure names its
// parent), or "?" when none is. Lines are short single writes in append
// mode, so parallel test binaries do not interleave them.
func logLookup(rel, where string) {
	name := os.Getenv("TRACER_REFDATA_LOG")
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%s\t%s\n", caller(), filepath.ToSlash(rel), where)
}

// caller returns the test function on the stack, as "package.TestName".
func caller() string {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	test := "?"
	for {
		fr, more := frames.Next()
		fn := fr.Function[strings.LastIndex(fr.Function, "/")+1:]
		if dot := strings.Index(fn, "."); dot >= 0 {
			short := fn[dot+1:]
			if i := strings.Index(short, "."); i >= 0 {
				short = short[:i]
			}
			for _, p := range []string{"Test", "Fuzz", "Benchmark"} {
				if strings.HasPrefix(short, p) {
					test = fn[:dot+1] + short
				}
			}
		}
		if !more {
			return test
		}
	}
}

// InCI reports whether the tests run in CI, where missing reference data
// is a failure rather than a skip.
func InCI() bool { return os.Getenv("CI") != "" && os.Getenv("CI") != "false" }

// Need returns Path(rel), or ends the test when it is absent: a skip on a
// developer's machine, a failure in CI.
func Need(t TB, rel string) string {
	t.Helper()
	p, err := Path(rel)
	if err == nil {
		return p
	}
	if InCI() {
		t.Fatalf("%v (CI must run every comparison)", err)
	}
	t.Skipf("%v: skipping", err)
	return ""
}
