package hub

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CachedModel is one snapshot in the cache.
type CachedModel struct {
	Repo      string   // "ORG/NAME"
	Revisions []string // the refs that point at this snapshot ("main"); none for one fetched by commit
	Commit    string
	Dir       string   // the snapshot folder, to open the model from
	Files     []string // relative to Dir, with '/' separators; links to missing blobs left out
	Size      int64    // bytes on disk of the blobs the files link to
}

// Spec returns the name that resolves to this snapshot: "ORG/NAME" when
// main points at it, else "ORG/NAME@REV" with its first ref or its commit.
func (m CachedModel) Spec() string {
	for _, r := range m.Revisions {
		if r == DefaultRevision {
			return m.Repo
		}
	}
	if len(m.Revisions) > 0 {
		return m.Repo + "@" + m.Revisions[0]
	}
	return m.Repo + "@" + m.Commit
}

// List returns the model snapshots in the cache folder cacheDir, sorted by
// repository. A cache folder that does not exist holds no models.
func List(cacheDir string) ([]CachedModel, error) {
	entries, err := os.ReadDir(cacheDir)
	if notExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var models []CachedModel
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), "models--")
		if !ok || !e.IsDir() {
			continue
		}
		repo := strings.ReplaceAll(name, "--", "/")
		root := filepath.Join(cacheDir, e.Name())
		refs := readRefs(filepath.Join(root, "refs"))
		snaps, err := os.ReadDir(filepath.Join(root, "snapshots"))
		if err != nil {
			continue // a download that never finished a file
		}
		for _, sn := range snaps {
			if !sn.IsDir() || !IsCommit(sn.Name()) {
				continue
			}
			m := CachedModel{Repo: repo, Commit: sn.Name(), Revisions: refs[sn.Name()], Dir: filepath.Join(root, "snapshots", sn.Name())}
			m.Files, m.Size = snapshotFiles(m.Dir)
			models = append(models, m)
		}
	}
	sort.SliceStable(models, func(i, j int) bool { return models[i].Repo < models[j].Repo })
	return models, nil
}

// readRefs maps each commit to the refs (sorted) that point at it.
func readRefs(dir string) map[string][]string {
	refs := map[string][]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := readSmall(path) // never blocks on a named pipe
		commit := strings.TrimSpace(string(b))
		if err != nil || !IsCommit(commit) {
			return nil
		}
		if rel, err := filepath.Rel(dir, path); err == nil {
			refs[commit] = append(refs[commit], filepath.ToSlash(rel))
		}
		return nil
	})
	for _, r := range refs {
		sort.Strings(r)
	}
	return refs
}

// snapshotFiles lists the files of a snapshot whose blobs exist and adds up
// the blobs' sizes, each blob once.
func snapshotFiles(dir string) ([]string, int64) {
	var size int64
	seen := map[string]bool{}
	var files []string
	for _, f := range filesIn(dir) {
		p := filepath.Join(dir, filepath.FromSlash(f))
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		files = append(files, f)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			real = p
		}
		if !seen[real] {
			seen[real] = true
			size += fi.Size()
		}
	}
	return files, size
}
