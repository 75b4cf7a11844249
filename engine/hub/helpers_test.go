package hub

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/hub/hubtest"
)

// tinyRepo is a small transformers model with a tag.
func tinyRepo() hubtest.Repo {
	return hubtest.Repo{ID: "org/tiny", Files: hubtest.TinyModel(), Tags: []string{"v1"}}
}

// setup starts a fake Hub with repos and returns Options for an empty cache.
func setup(t *testing.T, repos ...hubtest.Repo) (*hubtest.Hub, Options) {
	t.Helper()
	h := hubtest.New(t, repos...)
	return h, Options{CacheDir: t.TempDir(), Endpoint: h.URL}
}

func pull(t *testing.T, spec string, opts Options) *Snapshot {
	t.Helper()
	snap, err := Pull(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("Pull(%q): %v", spec, err)
	}
	return snap
}

// checkCache asserts the cache holds no corrupt or partial snapshot: every
// snapshot entry is a relative symlink to a blob that exists and whose
// contents match its name, every ref names a snapshot, and no temporary
// file is left (no .incomplete file either, unless allowed).
func checkCache(t *testing.T, cacheDir string, allowIncomplete bool) {
	t.Helper()
	repos, _ := filepath.Glob(filepath.Join(cacheDir, "models--*"))
	for _, root := range repos {
		blobs := filepath.Join(root, "blobs")
		filepath.WalkDir(filepath.Join(root, "snapshots"), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			target, err := os.Readlink(path)
			if err != nil {
				t.Errorf("%s is not a symlink", path)
				return nil
			}
			if filepath.IsAbs(target) {
				t.Errorf("%s links to an absolute path %s", path, target)
			}
			blob := filepath.Join(filepath.Dir(path), target)
			if filepath.Dir(blob) != blobs {
				t.Errorf("%s links outside blobs/: %s", path, target)
				return nil
			}
			if err := verify(blob, filepath.Base(blob), -1); err != nil {
				t.Errorf("%s: blob %s: %v", path, filepath.Base(blob), err)
			}
			return nil
		})
		filepath.WalkDir(filepath.Join(root, "refs"), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, _ := os.ReadFile(path)
			if !isDir(filepath.Join(root, "snapshots", string(b))) {
				t.Errorf("ref %s names %q, which has no snapshot", path, b)
			}
			return nil
		})
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case strings.HasSuffix(path, ".incomplete") && !allowIncomplete:
				t.Errorf("left a partial download: %s", path)
			case strings.HasSuffix(path, ".link") || strings.HasSuffix(path, ".tmp"):
				t.Errorf("left a temporary file: %s", path)
			}
			return nil
		})
	}
}

// snapshotFile returns the path of name in the snapshot of repo at commit.
func snapshotFile(opts Options, repo, commit, name string) string {
	return filepath.Join(RepoDir(opts.CacheDir, repo), "snapshots", commit, filepath.FromSlash(name))
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
