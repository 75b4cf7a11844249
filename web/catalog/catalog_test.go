//go:build unix

package catalog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracer/engine/hub/hubtest"
)

// pipeTable is a toy table a models folder holds beside the pipe.
const pipeTable = `{"name": "loop", "table": {"<s>": {"a": 1}, "a": {"a": 1}}}`

// catalogHangGuard is how long a scan may take before the test unblocks it
// by hand and fails: a safety net so a regression fails rather than hangs,
// not a measure of speed.
const catalogHangGuard = 30 * time.Second

// scanReturns runs scan and fails the test if it blocks; pipe is then
// opened for writing, which lets a reader stuck opening it go on.
func scanReturns(t *testing.T, pipe string, scan func() []Entry) []string {
	t.Helper()
	done := make(chan []Entry, 1)
	go func() { done <- scan() }()
	var got []Entry
	select {
	case got = <-done:
	case <-time.After(catalogHangGuard):
		t.Errorf("the scan blocked on the named pipe %s", pipe)
		if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		got = <-done
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	return names
}

// writeModel writes the tiny transformers model into dir, leaving out skip.
func writeModel(t *testing.T, dir, skip string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range hubtest.TinyModel() {
		if name != skip {
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
}

// TestCatalogScanSkipsPipes: a named pipe in the models folder, as a toy
// table, a checkpoint, or a file of a model folder, is never opened; the
// scan returns with the models around it.
func TestCatalogScanSkipsPipes(t *testing.T) {
	for _, tc := range []struct {
		name string
		pipe string   // relative to the models folder
		want []string // the entries listed
	}{
		{"toy table", "pipe.json", []string{"loop.json", "tiny"}},
		{"checkpoint", "stories.bin", []string{"loop.json", "tiny"}},
		{"checkpoint one folder down", "sub/stories.bin", []string{"loop.json", "tiny"}},
		{"config.json", "m/config.json", []string{"loop.json", "tiny"}},
		{"weights", "m/model.safetensors", []string{"loop.json", "tiny"}},
		{"tokenizer", "m/tokenizer.json", []string{"loop.json", "tiny"}},
		{"a file no model reads", "m/notes.txt", []string{"loop.json", "m", "tiny"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeModel(t, filepath.Join(dir, "tiny"), "")
			os.WriteFile(filepath.Join(dir, "loop.json"), []byte(pipeTable), 0o644)
			if m, ok := strings.CutPrefix(tc.pipe, "m/"); ok {
				writeModel(t, filepath.Join(dir, "m"), m)
			}
			pipe := filepath.Join(dir, filepath.FromSlash(tc.pipe))
			mkfifo(t, pipe)
			got := scanReturns(t, pipe, func() []Entry { return scanModels(dir) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCatalogCacheScanSkipsPipes: a snapshot in the Hugging Face cache with
// a named pipe for a model file, or a piped ref, never blocks the scan; the
// piped snapshot is left out, the others are listed.
func TestCatalogCacheScanSkipsPipes(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name string
		pipe string // relative to the snapshot of test/piped
		ref  bool   // the pipe is its refs/main instead
		want []string
	}{
		{"tokenizer", "tokenizer.json", false, []string{"test/tiny"}},
		{"weights", "model.safetensors", false, []string{"test/tiny"}},
		{"ref", "", true, []string{"test/piped@" + commit, "test/tiny"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			for _, repo := range []string{"tiny", "piped"} {
				root := filepath.Join(cache, "models--test--"+repo)
				writeModel(t, filepath.Join(root, "snapshots", commit), map[bool]string{true: tc.pipe}[repo == "piped"])
				os.MkdirAll(filepath.Join(root, "refs"), 0o755)
				if repo == "tiny" || !tc.ref {
					os.WriteFile(filepath.Join(root, "refs", "main"), []byte(commit), 0o644)
				}
			}
			piped := filepath.Join(cache, "models--test--piped")
			pipe := filepath.Join(piped, "snapshots", commit, tc.pipe)
			if tc.ref {
				pipe = filepath.Join(piped, "refs", "main")
			}
			mkfifo(t, pipe)
			got := scanReturns(t, pipe, func() []Entry { return scanCache(cache) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
