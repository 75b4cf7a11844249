package hub

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveFromCacheMakesNoRequest: once a model is cached, Resolve
// answers from the cache, with the Hub up or down.
func TestResolveFromCacheMakesNoRequest(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	snap := pull(t, "org/tiny", opts)
	pull(t, "org/tiny@v1", opts)
	before := len(h.Requests())
	for _, spec := range []string{"org/tiny", "org/tiny@v1", "org/tiny@" + snap.Commit} {
		dir, err := Resolve(context.Background(), spec, opts)
		if err != nil || dir != snap.Dir {
			t.Errorf("Resolve(%q) = %s, %v; want %s", spec, dir, err, snap.Dir)
		}
	}
	if n := len(h.Requests()) - before; n != 0 {
		t.Errorf("Resolve of a cached model sent %d requests, want 0", n)
	}
	h.Close()
	if dir, err := Resolve(context.Background(), "org/tiny", opts); err != nil || dir != snap.Dir {
		t.Errorf("with the Hub down: Resolve = %s, %v; want %s", dir, err, snap.Dir)
	}
	checkCache(t, opts.CacheDir, false)
}

func TestResolveDownloadsWhatIsMissing(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	dir, err := Resolve(context.Background(), "org/tiny", opts)
	if err != nil || !complete(dir, "") {
		t.Fatalf("Resolve = %s, %v; want a complete snapshot", dir, err)
	}
	// A snapshot that lost its weights (say, a transformers download that
	// stopped) is not complete: Resolve fetches them.
	os.Remove(filepath.Join(dir, "model.safetensors"))
	before := len(h.Requests())
	if dir2, err := Resolve(context.Background(), "org/tiny", opts); err != nil || dir2 != dir || !complete(dir, "") {
		t.Errorf("Resolve of an incomplete snapshot = %s, %v", dir2, err)
	}
	if len(h.Requests()) == before {
		t.Error("Resolve of an incomplete snapshot made no request")
	}
	checkCache(t, opts.CacheDir, false)
}

func TestOffline(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	opts.Offline = true
	_, err := Resolve(context.Background(), "org/tiny", opts)
	want := "org/tiny is not in the Hugging Face cache (" + opts.CacheDir + ") and HF_HUB_OFFLINE=1: download it with the network on"
	if !errors.Is(err, ErrNotCached) || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	var nc *NotCachedError
	if !errors.As(err, &nc) || nc.Ref != "org/tiny" || nc.File != "" {
		t.Errorf("got %#v, want a NotCachedError of org/tiny, no file", err)
	}
	if _, err := Pull(context.Background(), "org/tiny", opts); !errors.Is(err, ErrNotCached) {
		t.Errorf("offline Pull: got %v, want ErrNotCached", err)
	}
	if n := len(h.Requests()); n != 0 {
		t.Errorf("offline calls sent %d requests, want 0", n)
	}

	opts.Offline = false
	snap := pull(t, "org/tiny", opts)
	opts.Offline = true
	before := len(h.Requests())
	if dir, err := Resolve(context.Background(), "org/tiny", opts); err != nil || dir != snap.Dir {
		t.Errorf("offline Resolve of a cached model = %s, %v", dir, err)
	}
	got, err := Pull(context.Background(), "org/tiny", opts)
	if err != nil || got.Dir != snap.Dir || got.Commit != snap.Commit || len(got.Files) != len(snap.Files) {
		t.Errorf("offline Pull of a cached model = %+v, %v; want %+v", got, err, snap)
	}
	if n := len(h.Requests()) - before; n != 0 {
		t.Errorf("offline calls sent %d requests, want 0", n)
	}
	opts.File = "other.bin"
	_, err = Resolve(context.Background(), "org/tiny@v1", opts)
	if !errors.As(err, &nc) || nc.Ref != "org/tiny@v1" || nc.File != "other.bin" ||
		!strings.Contains(err.Error(), "other.bin of org/tiny@v1 is not in the Hugging Face cache") {
		t.Errorf("offline with a file: got %v, want a NotCachedError naming other.bin of org/tiny@v1", err)
	}
}
