package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toyTraceFile writes the toy's greedy run as a trace file.
func toyTraceFile(t *testing.T) string {
	t.Helper()
	out, errOut, code := tracer(t, "", "run", "--model", "toy", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	path := filepath.Join(t.TempDir(), "toy.json")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExportHTMLValidates(t *testing.T) {
	src := toyTraceFile(t)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		out   string // the file written; "" for standard output
	}{
		{"file to -o", "", []string{"export", "--html", src, "-o", filepath.Join(dir, "a.html")}, filepath.Join(dir, "a.html")},
		{"flags first, hindi", "", []string{"export", "--lang", "hi", "-o", filepath.Join(dir, "b.html"), "--html", src}, filepath.Join(dir, "b.html")},
		{"stdin to stdout", string(data), []string{"export", "--html", "-"}, ""},
		{"comparison", "", []string{"export", "--html", "--no-charts", src, src, "-o", filepath.Join(dir, "c.html")}, filepath.Join(dir, "c.html")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := tracer(t, tc.stdin, tc.args...)
			if code != 0 {
				t.Fatalf("export: exit %d, stderr %q", code, errOut)
			}
			html := []byte(out)
			path := filepath.Join(t.TempDir(), "stdout.html")
			if tc.out != "" {
				if out != "" {
					t.Errorf("got %d bytes on stdout with -o, want none", len(out))
				}
				if html, err = os.ReadFile(tc.out); err != nil {
					t.Fatal(err)
				}
				path = tc.out
			} else if err := os.WriteFile(path, html, 0o644); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(html), "<!doctype html>") && !strings.HasPrefix(string(html), "<!DOCTYPE html>") {
				t.Errorf("got %.40q, want an HTML document", html)
			}
			got, errOut, code := tracer(t, "", "validate", path)
			if code != 0 || !strings.Contains(got, "valid tracer/v1 trace") || !strings.Contains(got, "4 steps") {
				t.Errorf("validate: got %q (stderr %q, exit %d), want a valid 4-step trace", got, errOut, code)
			}
			got, errOut, code = tracer(t, string(html), "validate", "-")
			if code != 0 {
				t.Errorf("validate -: got %q (stderr %q, exit %d), want a valid trace", got, errOut, code)
			}
		})
	}
}

func TestExportErrors(t *testing.T) {
	src := toyTraceFile(t)
	notTrace := filepath.Join(t.TempDir(), "page.html")
	os.WriteFile(notTrace, []byte("<!DOCTYPE html><p>hello</p>"), 0o644)
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		says  string
	}{
		{"no format", "", []string{"export", src}, exitUsage, "--html"},
		{"no file", "", []string{"export", "--html"}, exitUsage, "want a TRACE.json"},
		{"language", "", []string{"export", "--html", "--lang", "fr", src}, exitUsage, `--lang "fr"`},
		{"missing file", "", []string{"export", "--html", "nope.json"}, exitError, "nope.json"},
		{"not a trace", "hello", []string{"export", "--html", "-"}, exitError, "not a tracer trace"},
		{"html without a trace", "", []string{"export", "--html", notTrace}, exitError, "without an embedded trace"},
		{"stdin twice", "", []string{"export", "--html", "-", "-"}, exitUsage, "only once"},
		{"unwritable output", "", []string{"export", "--html", src, "-o", filepath.Join(t.TempDir(), "no", "such", "dir.html")}, exitError, "dir.html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := tracer(t, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.says) {
				t.Errorf("got exit %d, stderr %q, want exit %d saying %q", code, errOut, tc.code, tc.says)
			}
			if out != "" {
				t.Errorf("got stdout %.80q, want none on failure", out)
			}
			if strings.Contains(errOut, "panic") {
				t.Errorf("panicked: %s", errOut)
			}
		})
	}
}
