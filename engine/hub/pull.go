package hub

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The files tracer reads from a transformers model repository.
const (
	configFile  = "config.json"
	weightsFile = "model.safetensors"
	indexFile   = "model.safetensors.index.json"
)

// optionalFiles are pulled when the repository has them: generation
// defaults, the tokenizer in its two forms, and the chat template that
// recent repositories keep beside tokenizer_config.json.
func optionalFiles() []string {
	return []string{
		"generation_config.json",
		"tokenizer.json",
		"tokenizer_config.json",
		"special_tokens_map.json",
		"vocab.json",
		"merges.txt",
		"chat_template.jinja",
	}
}

// Snapshot is the outcome of a pull: a folder of the cache holding the
// model's files at one commit.
type Snapshot struct {
	Ref     Ref
	Commit  string   // the commit the revision pointed at
	Dir     string   // .../models--ORG--NAME/snapshots/<commit>
	Files   []string // the files pulled, relative to Dir, with '/' separators
	Fetched int64    // bytes this call downloaded (0 when all were cached)
}

// Resolve returns the snapshot folder of spec ("ORG/NAME[@REV]") in the
// cache, making no network request when the cache holds what opts asks for:
// a config.json and all the safetensors weights, or with opts.File that file
// (at filepath.Join(dir, opts.File)). Otherwise it pulls them, unless
// opts.Offline, which makes a missing model an ErrNotCached error.
func Resolve(ctx context.Context, spec string, opts Options) (string, error) {
	s, err := start(spec, opts)
	if err != nil {
		return "", err
	}
	if dir, ok := s.cached(); ok {
		return dir, nil
	}
	if opts.Offline {
		return "", s.notCached()
	}
	snap, err := s.pull(ctx)
	if err != nil {
		return "", err
	}
	return snap.Dir, nil
}

// Pull asks the Hub which commit spec's revision points at and downloads the
// files of that commit the cache lacks, as `huggingface-cli download` does.
// With opts.Offline it answers from the cache alone.
func Pull(ctx context.Context, spec string, opts Options) (*Snapshot, error) {
	s, err := start(spec, opts)
	if err != nil {
		return nil, err
	}
	if opts.Offline {
		dir, ok := s.cached()
		if !ok {
			return nil, s.notCached()
		}
		return &Snapshot{Ref: s.ref, Commit: filepath.Base(dir), Dir: dir, Files: filesIn(dir)}, nil
	}
	return s.pull(ctx)
}

func start(spec string, opts Options) (*session, error) {
	ref, err := ParseRef(spec)
	if err != nil {
		return nil, err
	}
	if opts.File != "" {
		if err := checkFileName(opts.File); err != nil {
			return nil, err
		}
	}
	return newSession(ref, opts)
}

// cached returns the snapshot folder that holds what the session needs.
func (s *session) cached() (string, bool) {
	commit := s.cache.commitFor(s.ref.Revision)
	if commit == "" {
		return "", false
	}
	dir := s.cache.snapshot(commit)
	return dir, complete(dir, s.opts.File)
}

func (s *session) notCached() error {
	return &NotCachedError{Ref: s.ref.String(), File: s.opts.File, CacheDir: s.opts.CacheDir}
}

// pull lists the revision's files, downloads the blobs it needs, and only
// then links them into the snapshot and records the ref, so an interrupted
// pull leaves blobs (and a resumable .incomplete file) but no partial
// snapshot.
func (s *session) pull(ctx context.Context) (*Snapshot, error) {
	l, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	want, err := s.selectFiles(l.files)
	if err != nil {
		return nil, err
	}
	commit := l.commit
	if commit == "" { // the tree API does not say; the file's headers do
		m, err := s.head(ctx, s.ref.Revision, want[0])
		if err != nil {
			return nil, err
		}
		commit = m.commit
	}
	if !IsCommit(commit) {
		return nil, fmt.Errorf("%s: the Hub named no commit for revision %s (got %q)", s.ref.Repo, s.ref.Revision, commit)
	}
	p := &puller{s: s, commit: commit, etags: map[string]string{}}
	snap := &Snapshot{Ref: s.ref, Commit: commit, Dir: s.cache.snapshot(commit)}
	if err := p.plan(ctx, want); err != nil {
		return nil, err
	}
	if slices.Contains(want, indexFile) {
		// The shards are known once the index is here: fetch it (and the
		// other small files) first, within the limits, then plan the shards.
		if err := p.checkLimits(); err != nil {
			return nil, err
		}
		if err := p.fetchAll(ctx); err != nil {
			return nil, err
		}
		shards, err := p.shards(l.files)
		if err != nil {
			return nil, err
		}
		if err := p.plan(ctx, shards); err != nil {
			return nil, err
		}
		want = append(want, shards...)
	}
	if err := p.checkLimits(); err != nil {
		return nil, err
	}
	if err := p.fetchAll(ctx); err != nil {
		return nil, err
	}
	if err := p.link(); err != nil {
		return nil, err
	}
	if err := s.cache.writeRef(s.ref.Revision, commit); err != nil {
		return nil, fmt.Errorf("%s: record revision %s: %w", s.ref.Repo, s.ref.Revision, err)
	}
	snap.Files, snap.Fetched = want, p.fetched
	return snap, nil
}

// selectFiles picks what to pull from the repository's files.
func (s *session) selectFiles(files []string) ([]string, error) {
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	rev := s.ref.Revision
	if f := s.opts.File; f != "" {
		if !has[f] {
			return nil, errorf(ErrNotFound, "%s has no file %s at revision %s", s.ref.Repo, f, rev)
		}
		// A llama2.c checkpoint needs its tokenizer: tokenizer.bin or
		// tok<N>.bin beside it (stories260K/tok512.bin), else at the top.
		want := []string{f}
		dir := path.Dir(f)
		for _, g := range files {
			base := path.Base(g)
			beside := path.Dir(g) == dir && (base == "tokenizer.bin" || strings.HasPrefix(base, "tok") && strings.HasSuffix(base, ".bin"))
			if g != f && (beside || g == "tokenizer.bin" && !has[path.Join(dir, "tokenizer.bin")]) {
				want = append(want, g)
			}
		}
		return want, nil
	}
	if !has[configFile] {
		return nil, errorf(ErrNoConfig, "%s has no config.json at revision %s, so it is not a transformers model tracer can run: pull one of its files by name", s.ref.Repo, rev)
	}
	want := []string{configFile}
	switch {
	case has[weightsFile]:
		want = append(want, weightsFile)
	case has[indexFile]:
		want = append(want, indexFile)
	default:
		return nil, errorf(ErrNotFound, "%s has no %s or %s at revision %s: tracer reads safetensors weights only", s.ref.Repo, weightsFile, indexFile, rev)
	}
	for _, f := range optionalFiles() {
		if has[f] {
			want = append(want, f)
		}
	}
	return want, nil
}

// puller downloads the blobs of one commit and remembers which file links to
// which blob.
type puller struct {
	s       *session
	commit  string
	todo    []planned         // files to fetch, in order
	etags   map[string]string // file → blob to link once all are fetched
	fetched int64             // bytes downloaded so far
	files   int               // files downloaded so far
}

// planned is a file of the pull the snapshot does not link yet, with what
// the Hub said about it.
type planned struct {
	name string
	meta fileMeta
	done bool
}

// plan asks the Hub about each file the snapshot does not link yet (a
// commit never changes, so a linked file needs no request) and refuses a
// weight file whose download could not be checked.
func (p *puller) plan(ctx context.Context, names []string) error {
	for _, name := range names {
		if isFile(p.s.cache.file(p.commit, name)) {
			continue
		}
		m, err := p.s.head(ctx, p.commit, name)
		if err != nil {
			return err
		}
		if err := p.s.checkable(name, m); err != nil {
			return err
		}
		p.todo = append(p.todo, planned{name: name, meta: m})
	}
	return nil
}

// checkLimits refuses the pull when what it has downloaded and the blobs it
// still lacks exceed MaxBytes or MaxFiles. A blob already in the cache costs
// nothing.
func (p *puller) checkLimits() error {
	o := p.s.opts
	if o.MaxBytes <= 0 && o.MaxFiles <= 0 {
		return nil
	}
	bytes, files := p.fetched, p.files
	for _, f := range p.todo {
		if f.done || haveBlob(p.s.cache.blob(f.meta.etag), f.meta.size) {
			continue
		}
		if f.meta.size < 0 && o.MaxBytes > 0 {
			return errorf(ErrTooLarge, "%s: the Hub did not say the size of %s, so the pull cannot be checked against its limit of %s", p.s.ref, f.name, sizeLimit(o.MaxBytes))
		}
		bytes += f.meta.size
		files++
	}
	if o.MaxBytes > 0 && bytes > o.MaxBytes {
		return errorf(ErrTooLarge, "%s would download %s, more than this pull's limit of %s: nothing was downloaded", p.s.ref, exactSize(bytes), exactSize(o.MaxBytes))
	}
	if o.MaxFiles > 0 && files > o.MaxFiles {
		return errorf(ErrTooLarge, "%s would download %d files, more than this pull's limit of %d: nothing was downloaded", p.s.ref, files, o.MaxFiles)
	}
	return nil
}

// sizeLimit writes n bytes in binary units, as a --max-pull-mib style
// limit reads: "1.5 MiB", "66.3 KiB", "512 bytes".
func sizeLimit(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// exactSize writes n bytes in binary units and exactly: "64.8 KiB (66312
// bytes)", or "512 bytes".
func exactSize(n int64) string {
	if n < 1<<10 {
		return sizeLimit(n)
	}
	return fmt.Sprintf("%s (%d bytes)", sizeLimit(n), n)
}

// fetchAll downloads the planned files not fetched yet.
func (p *puller) fetchAll(ctx context.Context) error {
	for i := range p.todo {
		f := &p.todo[i]
		if f.done {
			continue
		}
		n, err := p.s.download(ctx, f.name, f.meta)
		p.fetched += n
		if n > 0 {
			p.files++
		}
		if err != nil {
			return err
		}
		f.done = true
		p.etags[f.name] = f.meta.etag
	}
	return nil
}

// shards reads the fetched safetensors index and returns its shard files,
// each of which the repository must have.
func (p *puller) shards(files []string) ([]string, error) {
	path := p.s.cache.file(p.commit, indexFile)
	if etag, ok := p.etags[indexFile]; ok {
		path = p.s.cache.blob(etag)
	}
	shards, err := readIndex(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", p.s.ref.Repo, indexFile, err)
	}
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	for _, sh := range shards {
		if !has[sh] {
			return nil, errorf(ErrNotFound, "%s: %s names shard %s, which the repository does not have at revision %s", p.s.ref.Repo, indexFile, sh, p.s.ref.Revision)
		}
	}
	return shards, nil
}

// link makes the snapshot links of every fetched file.
func (p *puller) link() error {
	names := make([]string, 0, len(p.etags))
	for n := range p.etags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := p.s.cache.link(p.commit, n, p.etags[n]); err != nil {
			return fmt.Errorf("%s: link %s into the snapshot: %w", p.s.ref.Repo, n, err)
		}
	}
	return nil
}

// filesIn lists the files under dir, relative to it, with '/' separators.
func filesIn(dir string) []string {
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".link") {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err == nil {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	return files
}
