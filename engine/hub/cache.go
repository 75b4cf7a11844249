package hub

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RepoDir returns the folder of repo in the cache: models--ORG--NAME.
func RepoDir(cacheDir, repo string) string {
	return filepath.Join(cacheDir, "models--"+strings.ReplaceAll(repo, "/", "--"))
}

// repoCache is one repository's folder in the cache.
type repoCache struct{ root string }

func (c repoCache) blob(etag string) string { return filepath.Join(c.root, "blobs", etag) }
func (c repoCache) snapshot(commit string) string {
	return filepath.Join(c.root, "snapshots", commit)
}
func (c repoCache) ref(rev string) string {
	return filepath.Join(c.root, "refs", filepath.FromSlash(rev))
}
func (c repoCache) file(commit, name string) string {
	return filepath.Join(c.snapshot(commit), filepath.FromSlash(name))
}

// commitFor returns the commit the cache holds for rev: rev itself when it is
// a commit with a snapshot, else what refs/<rev> names; "" when neither.
func (c repoCache) commitFor(rev string) string {
	if IsCommit(rev) {
		if isDir(c.snapshot(rev)) {
			return rev
		}
		return ""
	}
	b, err := readSmall(c.ref(rev))
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(b))
	if !IsCommit(commit) {
		return ""
	}
	return commit
}

// link points snapshots/<commit>/<name> at blobs/<etag> with a relative
// symlink, replacing whatever was there in one rename.
func (c repoCache) link(commit, name, etag string) error {
	p := c.file(commit, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	target, err := filepath.Rel(filepath.Dir(p), c.blob(etag))
	if err != nil {
		return err
	}
	if cur, err := os.Readlink(p); err == nil && cur == target {
		return nil
	}
	return replace(p, ".link", func(tmp string) error { return os.Symlink(target, tmp) })
}

// replace makes p anew in one rename: create writes the new file at a
// temporary name beside p (tempName, ending in ext), which is then renamed
// onto p. The temporary file does not outlive a failure.
func replace(p, ext string, create func(tmp string) error) error {
	tmp := tempName(p, ext)
	if err := create(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// tempName returns a name beside p for a file that is renamed onto p once
// written: unique to this call, so that two pulls at once (in one process or
// two) never write, or rename away, each other's.
func tempName(p, ext string) string {
	var b [8]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s.%d-%s%s", p, os.Getpid(), hex.EncodeToString(b[:]), ext)
}

// writeRef records that rev points at commit (refs/<rev>), unless rev is the
// commit itself.
func (c repoCache) writeRef(rev, commit string) error {
	if rev == commit {
		return nil
	}
	p := c.ref(rev)
	if b, err := readSmall(p); err == nil && string(b) == commit {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return replace(p, ".tmp", func(tmp string) error { return os.WriteFile(tmp, []byte(commit), 0o644) })
}

// complete reports whether the snapshot folder dir holds what file needs:
// that file alone, or ("" ) a config.json and all the safetensors weights.
func complete(dir, file string) bool {
	if file != "" {
		return isFile(filepath.Join(dir, filepath.FromSlash(file)))
	}
	if !isFile(filepath.Join(dir, "config.json")) {
		return false
	}
	if isFile(filepath.Join(dir, weightsFile)) {
		return true
	}
	shards, err := readIndex(filepath.Join(dir, indexFile))
	if err != nil {
		return false
	}
	for _, s := range shards {
		if !isFile(filepath.Join(dir, filepath.FromSlash(s))) {
			return false
		}
	}
	return true
}

// readIndex returns the shard files a model.safetensors.index.json names,
// sorted and without repeats.
func readIndex(path string) ([]string, error) {
	b, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	return parseIndex(b)
}

func parseIndex(b []byte) ([]string, error) {
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("not a safetensors index: %v", err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, errors.New("the safetensors index has no weight_map")
	}
	seen := map[string]bool{}
	var shards []string
	for _, f := range idx.WeightMap {
		if !validRelPath(f) {
			return nil, fmt.Errorf("the safetensors index names an unsafe shard file %q", f)
		}
		if !seen[f] {
			seen[f] = true
			shards = append(shards, f)
		}
	}
	sort.Strings(shards)
	return shards, nil
}

func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
