//go:build unix

package hub

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracer/engine/hub/hubtest"
)

// hangGuard is how long a call that must not block may take before the test
// unblocks it by hand and fails: a safety net so a regression fails rather
// than hangs, not a measure of speed.
const hangGuard = 30 * time.Second

// mkfifo makes a named pipe at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
}

// returns runs f and fails the test if f blocks; the pipes are then opened
// for writing, which lets a reader stuck in open go on.
func returns(t *testing.T, pipes []string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Errorf("blocked on a named pipe (%v)", pipes)
		for _, p := range pipes {
			if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		<-done
	}
}

// modelFolder writes the tiny model's files into a new folder, leaving out
// the ones named in skip.
func modelFolder(t *testing.T, skip ...string) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range hubtest.TinyModel() {
		if !slices.Contains(skip, name) {
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
	}
	return dir
}

// TestDescribeNeverOpensPipes: a named pipe where a model file should be
// makes Describe return an ErrNotRegular error naming it, without opening
// it (which would block until a writer came); a pipe tracer does not read
// is ignored.
func TestDescribeNeverOpensPipes(t *testing.T) {
	for _, tc := range []struct {
		name string
		pipe string // made a named pipe inside the model folder
		want string // "" when Describe must succeed
	}{
		{"config.json", "config.json", "config.json is a named pipe (FIFO), not a regular file"},
		{"weights", "model.safetensors", "model.safetensors is a named pipe (FIFO)"},
		{"tokenizer", "tokenizer.json", "tokenizer.json is a named pipe (FIFO)"},
		{"tokenizer config", "tokenizer_config.json", "tokenizer_config.json is a named pipe (FIFO)"},
		{"a stray shard", "extra.safetensors", "extra.safetensors is a named pipe (FIFO)"},
		{"a file tracer does not read", "notes.txt", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := modelFolder(t, tc.pipe)
			p := filepath.Join(dir, tc.pipe)
			mkfifo(t, p)
			var err error
			returns(t, []string{p}, func() { _, err = Describe(dir) })
			if tc.want == "" {
				if err != nil {
					t.Errorf("got %v, want the model described", err)
				}
				return
			}
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrNotRegular saying %q", err, tc.want)
			}
		})
	}
}

func TestDescribeNeverOpensPipesOutsideFolders(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "stories.bin")
	mkfifo(t, bin)
	sharded := modelFolder(t, "model.safetensors")
	os.WriteFile(filepath.Join(sharded, indexFile), []byte(`{"weight_map": {"a": "shards/a.safetensors"}}`), 0o644)
	shard := filepath.Join(sharded, "shards", "a.safetensors")
	mkfifo(t, shard)
	for _, tc := range []struct{ name, path, pipe string }{
		{"a checkpoint", bin, bin},
		{"a shard in a subfolder", sharded, shard},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			returns(t, []string{tc.pipe}, func() { _, err = Describe(tc.path) })
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.pipe) {
				t.Errorf("got %v, want ErrNotRegular naming %s", err, tc.pipe)
			}
		})
	}
}

// TestListNeverOpensPipes: a named pipe among a cached repository's refs or
// in a snapshot is passed over; the models around it are still listed.
func TestListNeverOpensPipes(t *testing.T) {
	_, opts := setup(t, tinyRepo())
	snap := pull(t, "org/tiny", opts)
	root := RepoDir(opts.CacheDir, "org/tiny")
	ref, file := filepath.Join(root, "refs", "v9"), filepath.Join(snap.Dir, "pipe.json")
	mkfifo(t, ref)
	mkfifo(t, file)
	var got []CachedModel
	var err error
	returns(t, []string{ref, file}, func() { got, err = List(opts.CacheDir) })
	if err != nil || len(got) != 1 {
		t.Fatalf("List = %+v, %v; want the one model", got, err)
	}
	if len(got[0].Files) != 5 || len(got[0].Revisions) != 1 {
		t.Errorf("files %v, revisions %v; want the 5 pulled files and main", got[0].Files, got[0].Revisions)
	}
	returns(t, []string{ref}, func() { _, err = Resolve(t.Context(), "org/tiny@v9", Options{CacheDir: opts.CacheDir, Offline: true}) })
	if !errors.Is(err, ErrNotCached) {
		t.Errorf("Resolve through a piped ref: got %v, want ErrNotCached", err)
	}
}
