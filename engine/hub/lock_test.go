package hub

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"tracer/engine/hub/hubtest"
)

// TestConcurrentPullsShareOneDownload: a second pull of a repository while
// the first is mid-way through its weights waits on the blob's lock, then
// finds the finished blob; both succeed, the weights come down once, and
// the cache is consistent. The first download is held open by the fake Hub
// until the second pull reports that it waits, so the two really overlap.
func TestConcurrentPullsShareOneDownload(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	started, release := h.Gate("org/tiny", "model.safetensors")
	defer release()

	errs := make([]error, 2)
	snaps := make([]*Snapshot, 2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		snaps[0], errs[0] = Pull(context.Background(), "org/tiny", opts)
	}()
	<-started // the first pull holds the lock and is downloading

	waiting := make(chan string, 1)
	second := opts
	second.Waiting = func(file, lockPath string) {
		select { // the first wait is the one that counts; later files may wait too
		case waiting <- file + " " + lockPath:
		default:
		}
	}
	secondDone := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(secondDone)
		snaps[1], errs[1] = Pull(context.Background(), "org/tiny", second)
	}()
	select {
	case w := <-waiting:
		etag := hubtest.SHA256(hubtest.TinyModel()["model.safetensors"])
		wantLock := filepath.Join(opts.CacheDir, ".locks", "models--org--tiny", etag+".lock")
		if w != "model.safetensors "+wantLock {
			t.Errorf("the second pull waits on %q, want %q", w, "model.safetensors "+wantLock)
		}
	case <-secondDone:
		t.Error("the second pull ended without waiting for the first's download")
	}
	release()
	wg.Wait()

	for i, err := range errs {
		if err != nil {
			t.Fatalf("pull %d: %v", i+1, err)
		}
	}
	if snaps[0].Dir != snaps[1].Dir {
		t.Errorf("the pulls made %s and %s, want one snapshot", snaps[0].Dir, snaps[1].Dir)
	}
	var gets int
	for _, r := range h.Requests() {
		if r.Host == "files" && r.Method == "GET" {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("the weights were downloaded %d times, want once", gets)
	}
	if got, want := snaps[0].Fetched+snaps[1].Fetched, int64(len(hubtest.TinyModel()["model.safetensors"])); got < want {
		t.Errorf("fetched %d bytes in all, want at least the weights' %d", got, want)
	}
	b, err := os.ReadFile(filepath.Join(snaps[1].Dir, "model.safetensors"))
	if err != nil || !bytes.Equal(b, hubtest.TinyModel()["model.safetensors"]) {
		t.Errorf("the snapshot's weights differ from the Hub's (%v)", err)
	}
	checkCache(t, opts.CacheDir, false)
}

// TestManyConcurrentPulls: several pulls of one repository at once, with no
// choreography, all succeed and leave a consistent cache.
func TestManyConcurrentPulls(t *testing.T) {
	_, opts := setup(t, tinyRepo())
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Pull(context.Background(), "org/tiny", opts)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("pull %d: %v", i+1, err)
		}
	}
	checkCache(t, opts.CacheDir, false)
}

// TestLockWaitCancels: a pull waiting for another's lock stops when its
// context is cancelled, naming the lock; the first pull still finishes.
func TestLockWaitCancels(t *testing.T) {
	h, opts := setup(t, tinyRepo())
	started, release := h.Gate("org/tiny", "model.safetensors")
	defer release()
	first := make(chan error, 1)
	go func() {
		_, err := Pull(context.Background(), "org/tiny", opts)
		first <- err
	}()
	<-started

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	second := opts
	second.Waiting = func(string, string) { cancel() }
	_, err := Pull(ctx, "org/tiny", second)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped waiting for another download of model.safetensors") || !strings.Contains(err.Error(), ".lock") {
		t.Errorf("got %v, want context.Canceled naming the file and its lock", err)
	}
	release()
	if err := <-first; err != nil {
		t.Errorf("the first pull: %v", err)
	}
	checkCache(t, opts.CacheDir, false)
}
