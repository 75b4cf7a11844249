package hub

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"tracer/engine/hub/hubtest"
)

func TestPullFresh(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	snap := pull(t, "org/tiny", opts)
	commit := h.Commit("org/tiny")
	root := RepoDir(opts.CacheDir, "org/tiny")
	if want := filepath.Join(root, "snapshots", commit); snap.Dir != want || snap.Commit != commit {
		t.Errorf("got dir %s commit %s, want %s %s", snap.Dir, snap.Commit, want, commit)
	}
	want := []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}
	if got := filesIn(snap.Dir); !slices.Equal(got, want) {
		t.Errorf("snapshot holds %v, want %v", got, want)
	}
	files := hubtest.TinyModel()
	for _, name := range want {
		p := filepath.Join(snap.Dir, name)
		target, err := os.Readlink(p)
		if wantT := "../../blobs/" + hubtest.ETag(name, files[name]); err != nil || target != wantT {
			t.Errorf("%s links to %q (%v), want %q", name, target, err, wantT)
		}
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, files[name]) {
			t.Errorf("%s: contents differ from the Hub's (%v)", name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "refs", "main")); err != nil || string(b) != commit {
		t.Errorf("refs/main holds %q (%v), want %q", b, err, commit)
	}
	var sum int64
	for _, name := range want {
		sum += int64(len(files[name]))
	}
	if snap.Fetched != sum {
		t.Errorf("fetched %d bytes, want %d", snap.Fetched, sum)
	}
	checkCache(t, opts.CacheDir, false)
}

func TestPullAgainAsksOnlyForTheFileList(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	pull(t, "org/tiny", opts)
	before := len(h.Requests())
	snap := pull(t, "org/tiny", opts)
	got := h.Requests()[before:]
	if len(got) != 1 || !strings.Contains(got[0].Path, "/api/models/org/tiny/revision/main") {
		t.Errorf("second pull sent %v, want only the revision API call", got)
	}
	if snap.Fetched != 0 {
		t.Errorf("second pull fetched %d bytes, want 0", snap.Fetched)
	}
}

func TestTokenGoesToTheHubOnly(t *testing.T) {
	repo := tinyRepo()
	repo.ID, repo.Gated = "org/gated", true
	h, opts := setup(t, repo)
	opts.Token = hubtest.Token
	pull(t, "org/gated", opts)
	var files int
	for _, r := range h.Requests() {
		switch r.Host {
		case "hub":
			if r.Auth != "Bearer "+hubtest.Token {
				t.Errorf("%s %s went to the Hub with Authorization %q", r.Method, r.Path, r.Auth)
			}
		case "files":
			files++
			if r.Auth != "" {
				t.Errorf("%s %s: the token went to the file host", r.Method, r.Path)
			}
		}
	}
	if files == 0 {
		t.Error("no request reached the file host: the LFS redirect was not followed")
	}
	checkCache(t, opts.CacheDir, false)
}

func TestGatedWithoutToken(t *testing.T) {
	repo := tinyRepo()
	repo.ID, repo.Gated = "org/gated", true
	for _, tc := range []struct {
		name, token, want string
	}{
		{"no token", "", "org/gated is gated or private: accept its license on the Hub and set HF_TOKEN"},
		{"wrong token", "hf_wrong", "HF_TOKEN is set but has no access"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, opts := setup(t, repo)
			opts.Token = tc.token
			_, err := Pull(context.Background(), "org/gated", opts)
			if !errors.Is(err, ErrGated) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrGated saying %q", err, tc.want)
			}
			if exists(filepath.Join(RepoDir(opts.CacheDir, "org/gated"), "snapshots")) {
				t.Error("a refused pull made a snapshot")
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	noWeights := hubtest.Repo{ID: "org/noweights", Files: map[string][]byte{"config.json": []byte("{}")}}
	noConfig := hubtest.Repo{ID: "org/noconfig", Files: map[string][]byte{"model.safetensors": []byte("x")}}
	badIndex := hubtest.Repo{ID: "org/badindex", Files: map[string][]byte{
		"config.json":                  []byte("{}"),
		"model.safetensors.index.json": []byte(`{"weight_map": {"a": "model-00001-of-00002.safetensors"}}`),
	}}
	for _, tc := range []struct {
		name, spec, file, want string
	}{
		{"file", "org/tiny", "nope.bin", "org/tiny has no file nope.bin at revision main"},
		{"repository", "org/missing", "", "org/missing was not found on the Hub"},
		{"revision", "org/tiny@v9", "", `org/tiny has no revision "v9"`},
		{"weights", "org/noweights", "", "org/noweights has no model.safetensors"},
		{"config", "org/noconfig", "", "org/noconfig has no config.json"},
		{"shard", "org/badindex", "", "names shard model-00001-of-00002.safetensors, which the repository does not have"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, opts := setup(t, tinyRepo(), noWeights, noConfig, badIndex)
			opts.File = tc.file
			_, err := Pull(context.Background(), tc.spec, opts)
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrNotFound saying %q", err, tc.want)
			}
			checkCache(t, opts.CacheDir, false)
		})
	}
}

// TestResumeAfterCut: the file host drops the connection mid-file; the pull
// resumes with a Range request and finishes.
func TestResumeAfterCut(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	h.CutAfter("org/tiny", "model.safetensors", 10000)
	snap := pull(t, "org/tiny", opts)
	if !slices.ContainsFunc(h.Requests(), func(r hubtest.Request) bool { return r.Host == "files" && r.Range == "bytes=10000-" }) {
		t.Errorf("no request resumed at byte 10000: %v", h.Requests())
	}
	if b, _ := os.ReadFile(filepath.Join(snap.Dir, "model.safetensors")); !bytes.Equal(b, hubtest.TinyModel()["model.safetensors"]) {
		t.Error("the resumed file differs from the Hub's")
	}
	checkCache(t, opts.CacheDir, false)
}

// TestResumeAfterCancel: Ctrl-C mid-file leaves a resumable .incomplete
// file and no snapshot; the next pull resumes it.
func TestResumeAfterCancel(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	h.HoldAfter("org/tiny", "model.safetensors", 20000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.Progress = func(file string, done, total int64) {
		if file == "model.safetensors" && done >= 20000 {
			cancel()
		}
	}
	_, err := Pull(ctx, "org/tiny", opts)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("got %v, want context.Canceled and a word about resuming", err)
	}
	root := RepoDir(opts.CacheDir, "org/tiny")
	part := filepath.Join(root, "blobs", hubtest.SHA256(hubtest.TinyModel()["model.safetensors"])+".incomplete")
	if fi, err := os.Stat(part); err != nil || fi.Size() != 20000 {
		t.Fatalf("partial download: %v, want a 20000-byte .incomplete file", err)
	}
	if exists(filepath.Join(root, "snapshots")) || exists(filepath.Join(root, "refs", "main")) {
		t.Error("an interrupted pull made a snapshot or a ref")
	}
	checkCache(t, opts.CacheDir, true)

	opts.Progress = nil
	pull(t, "org/tiny", opts)
	if !slices.ContainsFunc(h.Requests(), func(r hubtest.Request) bool { return r.Range == "bytes=20000-" }) {
		t.Error("the second pull did not resume at byte 20000")
	}
	checkCache(t, opts.CacheDir, false)
}

// TestRestartWhenRangeIgnored: a server that answers a Range request with
// the whole file (200) restarts the download from the first byte.
func TestRestartWhenRangeIgnored(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	h.IgnoreRange()
	h.CutAfter("org/tiny", "model.safetensors", 10000)
	snap := pull(t, "org/tiny", opts)
	if b, _ := os.ReadFile(filepath.Join(snap.Dir, "model.safetensors")); !bytes.Equal(b, hubtest.TinyModel()["model.safetensors"]) {
		t.Error("the restarted file differs from the Hub's")
	}
	checkCache(t, opts.CacheDir, false)
}

func TestChecksumMismatch(t *testing.T) {
	for _, file := range []string{"model.safetensors", "tokenizer.json"} {
		t.Run(file, func(t *testing.T) {
			h, opts := setup(t, tinyRepo())
			h.Corrupt("org/tiny", file)
			_, err := Pull(context.Background(), "org/tiny", opts)
			if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), file+" from") || !strings.Contains(err.Error(), "failed its check") {
				t.Fatalf("got %v, want ErrChecksum naming %s", err, file)
			}
			root := RepoDir(opts.CacheDir, "org/tiny")
			blob := filepath.Join(root, "blobs", hubtest.ETag(file, hubtest.TinyModel()[file]))
			if exists(blob) || exists(blob+".incomplete") {
				t.Error("the corrupt download was kept")
			}
			if exists(filepath.Join(root, "snapshots")) || exists(filepath.Join(root, "refs", "main")) {
				t.Error("a failed pull made a snapshot or a ref")
			}
			checkCache(t, opts.CacheDir, false)
		})
	}
}

func TestRevisions(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	commit := h.Commit("org/tiny")
	root := RepoDir(opts.CacheDir, "org/tiny")

	pull(t, "org/tiny@v1", opts)
	if b, err := os.ReadFile(filepath.Join(root, "refs", "v1")); err != nil || string(b) != commit {
		t.Errorf("refs/v1 holds %q (%v), want %s", b, err, commit)
	}
	snap := pull(t, "org/tiny@"+commit, opts)
	if exists(filepath.Join(root, "refs", commit)) {
		t.Error("a pull by commit wrote a ref named after the commit")
	}
	if snap.Dir != filepath.Join(root, "snapshots", commit) {
		t.Errorf("pull by commit went to %s", snap.Dir)
	}
	checkCache(t, opts.CacheDir, false)
}

func TestFileOption(t *testing.T) {
	model, tok := hubtest.Llama2c()
	repo := hubtest.Repo{ID: "karpathy/tinyllamas", Files: map[string][]byte{
		"stories15M.bin": model, "stories42M.bin": model[:100], "tokenizer.bin": tok, "README.md": []byte("hi"),
	}}
	h, opts := setup(t, repo)
	opts.File = "stories15M.bin"
	snap := pull(t, "karpathy/tinyllamas", opts)
	if got, want := filesIn(snap.Dir), []string{"stories15M.bin", "tokenizer.bin"}; !slices.Equal(got, want) {
		t.Errorf("snapshot holds %v, want %v", got, want)
	}
	checkCache(t, opts.CacheDir, false)

	before := len(h.Requests())
	dir, err := Resolve(context.Background(), "karpathy/tinyllamas", opts)
	if err != nil || dir != snap.Dir || len(h.Requests()) != before {
		t.Errorf("Resolve --file: %s, %v, %d requests; want the cached %s and none", dir, err, len(h.Requests())-before, snap.Dir)
	}
}

func TestShardedModel(t *testing.T) {
	files := hubtest.TinyModel()
	delete(files, "model.safetensors")
	files["model-00001-of-00002.safetensors"] = hubtest.Safetensors("BF16", map[string][]int{"a": {8, 8}})
	files["model-00002-of-00002.safetensors"] = hubtest.Safetensors("BF16", map[string][]int{"b": {8}, "c": {2, 2}})
	files["model.safetensors.index.json"] = []byte(`{"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}}`)
	_, opts := setup(t, hubtest.Repo{ID: "org/sharded", Files: files})
	snap := pull(t, "org/sharded", opts)
	for _, name := range []string{"model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"} {
		if !isFile(filepath.Join(snap.Dir, name)) {
			t.Errorf("snapshot lacks %s", name)
		}
	}
	if !complete(snap.Dir, "") {
		t.Error("the sharded snapshot does not count as complete")
	}
	d, err := Describe(snap.Dir)
	if err != nil || d.Params != 64+8+4 || d.DType != "bfloat16" {
		t.Errorf("Describe: %+v, %v; want 76 bfloat16 parameters", d, err)
	}
	checkCache(t, opts.CacheDir, false)
}

func TestTreeFallback(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	h.DisableRevisionAPI()
	snap := pull(t, "org/tiny", opts)
	if snap.Commit != h.Commit("org/tiny") {
		t.Errorf("commit %s, want %s from X-Repo-Commit", snap.Commit, h.Commit("org/tiny"))
	}
	var pages int
	for _, r := range h.Requests() {
		if strings.Contains(r.Path, "/tree/") {
			pages++
		}
	}
	if pages < 2 {
		t.Errorf("read %d tree pages, want every page (at least 2)", pages)
	}
	if !isFile(filepath.Join(snap.Dir, "tokenizer_config.json")) {
		t.Error("a file from the tree's last page is missing")
	}
	checkCache(t, opts.CacheDir, false)
}

func TestRejectsBadListings(t *testing.T) {
	commit := strings.Repeat("a", 40)
	for _, tc := range []struct {
		name, info, want string
	}{
		{"malformed JSON", `{"sha": "` + commit + `", "siblings": [`, "not the JSON the Hub sends"},
		{"wrong types", `{"sha": 7, "siblings": "all"}`, "not the JSON the Hub sends"},
		{"parent path", `{"sha": "` + commit + `", "siblings": [{"rfilename": "config.json"}, {"rfilename": "../../etc/passwd"}]}`, `unsafe file name "../../etc/passwd"`},
		{"absolute path", `{"sha": "` + commit + `", "siblings": [{"rfilename": "/etc/passwd"}]}`, "unsafe file name"},
		{"inner parent", `{"sha": "` + commit + `", "siblings": [{"rfilename": "a/../../b"}]}`, "unsafe file name"},
		{"backslash", `{"sha": "` + commit + `", "siblings": [{"rfilename": "..\\..\\x"}]}`, "unsafe file name"},
		{"bad commit", `{"sha": "../../x", "siblings": []}`, "not a commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, opts := setup(t, hubtest.Repo{ID: "org/evil", Files: hubtest.TinyModel(), Info: tc.info})
			_, err := Pull(context.Background(), "org/evil", opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
			if exists(RepoDir(opts.CacheDir, "org/evil")) {
				t.Error("a rejected listing wrote to the cache")
			}
		})
	}
}

func TestBadSpecs(t *testing.T) {
	_, opts := setup(t, tinyRepo())
	for _, tc := range []struct{ spec, file string }{
		{"", ""}, {"a/b/c", ""}, {"org/tiny@", ""}, {"org/tiny@../x", ""}, {"org--x/y", ""},
		{"org/tiny", "../../etc/passwd"}, {"org/tiny", "/etc/passwd"},
	} {
		opts.File = tc.file
		_, err := Pull(context.Background(), tc.spec, opts)
		if !errors.Is(err, ErrBadName) {
			t.Errorf("Pull(%q, file %q): got %v, want ErrBadName", tc.spec, tc.file, err)
		}
	}
}

func TestNetworkErrorNamesTheURL(t *testing.T) {
	h, opts := setup(t)
	h.Close()
	_, err := Pull(context.Background(), "org/tiny", opts)
	if want := h.URL + "/api/models/org/tiny/revision/main"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error naming %s", err, want)
	}
}

func TestProgressEndsAtTotal(t *testing.T) {
	_, opts := setup(t, tinyRepo())
	last := map[string][2]int64{}
	opts.Progress = func(file string, done, total int64) { last[file] = [2]int64{done, total} }
	pull(t, "org/tiny", opts)
	files := hubtest.TinyModel()
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		n := int64(len(files[name]))
		if last[name] != [2]int64{n, n} {
			t.Errorf("%s: last progress %v, want [%d %d]", name, last[name], n, n)
		}
	}
}

// TestStalePartialIsCaught: a .incomplete file whose bytes are not the
// file's (left by something else) is resumed, fails the check and is
// deleted; the next pull starts afresh and succeeds.
func TestStalePartialIsCaught(t *testing.T) {
	_, opts := setup(t, tinyRepo())
	blobs := filepath.Join(RepoDir(opts.CacheDir, "org/tiny"), "blobs")
	part := filepath.Join(blobs, hubtest.SHA256(hubtest.TinyModel()["model.safetensors"])+".incomplete")
	os.MkdirAll(blobs, 0o755)
	os.WriteFile(part, bytes.Repeat([]byte{0xAB}, 1000), 0o644)
	_, err := Pull(context.Background(), "org/tiny", opts)
	if !errors.Is(err, ErrChecksum) || exists(part) {
		t.Fatalf("got %v (partial kept: %v), want ErrChecksum and the partial deleted", err, exists(part))
	}
	checkCache(t, opts.CacheDir, false)
	pull(t, "org/tiny", opts)
	checkCache(t, opts.CacheDir, false)
}

// TestRefusesUnverifiableWeights: a weight file whose size or sha256 the
// Hub's answer lacks is refused, saying what was missing, and nothing is
// linked into a snapshot or downloaded.
func TestRefusesUnverifiableWeights(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rewrite func(http.Header)
		want    []string
	}{
		{"no size, ETag not a hash", func(h http.Header) {
			h.Del("X-Linked-Size")
			h.Del("X-Linked-Etag")
			h.Set("ETag", `"weights-v2"`)
		}, []string{"no X-Linked-Size header", "no X-Linked-Etag header", `the ETag was "weights-v2"`}},
		{"no size", func(h http.Header) { h.Del("X-Linked-Size") }, []string{"lacks its size (no X-Linked-Size header), so"}},
		{"no sha256", func(h http.Header) { h.Del("X-Linked-Etag") }, []string{"lacks its sha256 (no X-Linked-Etag header"}},
		{"weak ETag only", func(h http.Header) {
			h.Del("X-Linked-Etag")
			h.Set("ETag", `W/"abc-123"`)
		}, []string{`the ETag was "abc-123"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, opts := setup(t, tinyRepo())
			h.Rewrite("org/tiny", "model.safetensors", tc.rewrite)
			_, err := Pull(context.Background(), "org/tiny", opts)
			if !errors.Is(err, ErrUnverifiable) {
				t.Fatalf("got %v, want ErrUnverifiable", err)
			}
			for _, w := range append(tc.want, "model.safetensors", "refused") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			root := RepoDir(opts.CacheDir, "org/tiny")
			if exists(filepath.Join(root, "snapshots")) || exists(filepath.Join(root, "refs", "main")) {
				t.Error("a refused pull made a snapshot or a ref")
			}
			for _, r := range h.Requests() {
				if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "model.safetensors") || r.Host == "files" {
					t.Errorf("the unverifiable weights were downloaded: %s %s", r.Method, r.Path)
				}
			}
			checkCache(t, opts.CacheDir, false)
		})
	}
}

// TestCheckable: which answers make a file's download checkable.
func TestCheckable(t *testing.T) {
	sha256, sha1 := strings.Repeat("ab", 32), strings.Repeat("cd", 20)
	for _, tc := range []struct {
		name string
		file string
		meta fileMeta
		ok   bool
	}{
		{"LFS weights with size and sha256", "model.safetensors", fileMeta{etag: sha256, size: 10, lfs: true}, true},
		{"LFS weights, git SHA-1 of the pointer only", "model.safetensors", fileMeta{etag: sha1, size: 10, lfs: true}, false},
		{"weights kept in git", "model.safetensors", fileMeta{etag: sha1, size: 10}, true},
		{"weights of unknown size", "stories15M.bin", fileMeta{etag: sha256, size: -1, lfs: true}, false},
		{"gguf with a made-up ETag", "m.GGUF", fileMeta{etag: "v2", size: 10, lfs: true}, false},
		{"a JSON file is not weights", "config.json", fileMeta{etag: "v2", size: -1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &session{ref: Ref{Repo: "org/x", Revision: "main"}}
			err := s.checkable(tc.file, tc.meta)
			if got := err == nil; got != tc.ok {
				t.Errorf("got %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrUnverifiable) {
				t.Errorf("got %v, want ErrUnverifiable", err)
			}
		})
	}
}

// TestPullLimits: MaxBytes and MaxFiles are checked against the sizes the
// Hub announces before anything large is downloaded, and name the limit.
func TestPullLimits(t *testing.T) {
	files := hubtest.TinyModel()
	var total int64
	for _, f := range []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		total += int64(len(files[f]))
	}
	for _, tc := range []struct {
		name     string
		maxBytes int64
		maxFiles int
		want     string // "" for success
	}{
		{"bytes under", total, 0, ""},
		{"bytes over", total - 1, 0, "org/tiny would download 64.8 KiB (" + strconv.FormatInt(total, 10) + " bytes), more than this pull's limit of 64.8 KiB (" + strconv.FormatInt(total-1, 10) + " bytes): nothing was downloaded"},
		{"one MiB", 1 << 20, 0, ""},
		{"one GiB", 1 << 30, 0, ""},
		{"1 kB", 1000, 0, "more than this pull's limit of 1000 bytes: nothing"},
		{"files under", 0, 5, ""},
		{"files over", 0, 4, "would download 5 files, more than this pull's limit of 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, opts := setup(t, tinyRepo())
			opts.MaxBytes, opts.MaxFiles = tc.maxBytes, tc.maxFiles
			_, err := Pull(context.Background(), "org/tiny", opts)
			if tc.want == "" {
				if err != nil {
					t.Errorf("got %v, want success within the limit", err)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrTooLarge saying %q", err, tc.want)
			}
			for _, r := range h.Requests() {
				if r.Method == http.MethodGet && strings.Contains(r.Path, "/resolve/") || r.Host == "files" {
					t.Errorf("a pull over its limit downloaded %s", r.Path)
				}
			}
			if exists(filepath.Join(RepoDir(opts.CacheDir, "org/tiny"), "snapshots")) {
				t.Error("a pull over its limit made a snapshot")
			}
		})
	}
}

// TestPullLimitCountsOnlyMissingBlobs: what the cache already holds costs
// nothing against the limit.
func TestPullLimitCountsOnlyMissingBlobs(t *testing.T) {
	_, opts := setup(t, tinyRepo())
	pull(t, "org/tiny", opts)
	opts.MaxBytes, opts.MaxFiles = 1, 1
	if _, err := Pull(context.Background(), "org/tiny@v1", opts); err != nil {
		t.Errorf("a second pull of cached files: %v, want success", err)
	}
}

// TestPullLimitShards: a sharded model's shards count against the limit
// before they are downloaded (only the small index comes first).
func TestPullLimitShards(t *testing.T) {
	files := hubtest.TinyModel()
	delete(files, "model.safetensors")
	files["model-00001-of-00002.safetensors"] = hubtest.Safetensors("F32", map[string][]int{"a": {64, 64}})
	files["model-00002-of-00002.safetensors"] = hubtest.Safetensors("F32", map[string][]int{"b": {64, 64}})
	files["model.safetensors.index.json"] = []byte(`{"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}`)
	h, opts := setup(t, hubtest.Repo{ID: "org/sharded", Files: files})
	opts.MaxBytes = 2 * 16500 // two shards of a little over 16 KiB, and the small files besides
	_, err := Pull(context.Background(), "org/sharded", opts)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than this pull's limit of 32.2 KiB (33000 bytes)") {
		t.Fatalf("got %v, want ErrTooLarge naming the limit", err)
	}
	for _, r := range h.Requests() {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, ".safetensors") || r.Host == "files" {
			t.Errorf("a shard was downloaded: %s", r.Path)
		}
	}
}

// FuzzPullAnswers: whatever size and ETags the Hub announces for the
// weights, a pull never panics or hangs, and either fails or links exactly
// the Hub's bytes: a weight file is never linked unchecked.
func FuzzPullAnswers(f *testing.F) {
	weights := hubtest.TinyModel()["model.safetensors"]
	sum, size := hubtest.SHA256(weights), strconv.Itoa(len(weights))
	f.Add(size, sum, "")                              // as the Hub answers
	f.Add("", "", "weights-v2")                       // the bug: nothing to check
	f.Add(size, "", `"`+hubtest.GitSHA1(weights)+`"`) // a git hash of the LFS pointer
	f.Add("1", sum, "")                               // a wrong size
	f.Add(size, strings.Repeat("0", 64), "")          // a wrong sha256
	f.Add("-5", "W/\"x\"", "..")
	f.Fuzz(func(t *testing.T, linkedSize, linkedETag, etag string) {
		h, opts := setup(t, tinyRepo())
		h.Rewrite("org/tiny", "model.safetensors", func(hd http.Header) {
			for k, v := range map[string]string{"X-Linked-Size": linkedSize, "X-Linked-Etag": linkedETag, "ETag": etag} {
				if v == "" {
					hd.Del(k)
				} else {
					hd.Set(k, v)
				}
			}
		})
		snap, err := Pull(context.Background(), "org/tiny", opts)
		if err != nil {
			return
		}
		b, err := os.ReadFile(filepath.Join(snap.Dir, "model.safetensors"))
		if err != nil || !bytes.Equal(b, weights) {
			t.Fatalf("a pull answered with X-Linked-Size %q, X-Linked-Etag %q, ETag %q linked other bytes than the Hub's (%v)", linkedSize, linkedETag, etag, err)
		}
	})
}
