package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Downloads of one blob are serialised with an OS file lock, at the path
// huggingface_hub uses, so that two tracer processes, or tracer and Python
// (whose filelock also takes flock on unix), never write the same
// .incomplete file at once:
//
//	<cache>/.locks/models--ORG--NAME/<etag>.lock
//
// The lock file is left in place after use, as huggingface_hub leaves it:
// removing a lock file another process is about to lock would let two
// holders in.

// lockPoll bounds the wait between two tries of a held lock.
const lockPoll = 250 * time.Millisecond

// lockPath returns the lock file of the blob named etag.
func (s *session) lockPath(etag string) string {
	return filepath.Join(s.opts.CacheDir, ".locks", filepath.Base(s.cache.root), etag+".lock")
}

// lockBlob takes the lock of the blob named etag (the download of file
// name), waiting while another download holds it. It tells opts.Waiting
// once when it has to wait; a cancelled ctx ends the wait with an error.
func (s *session) lockBlob(ctx context.Context, name, etag string) (*fileLock, error) {
	path := s.lockPath(etag)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("%s: make the lock folder: %w", s.ref.Repo, err)
	}
	delay := 10 * time.Millisecond
	for waited := false; ; {
		l, ok, err := tryLock(path)
		if err != nil {
			return nil, fmt.Errorf("%s: lock %s for the download of %s: %w", s.ref.Repo, path, name, err)
		}
		if ok {
			return l, nil
		}
		if !waited && s.opts.Waiting != nil {
			s.opts.Waiting(name, path)
		}
		waited = true
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: stopped waiting for another download of %s to finish (%w); it holds %s", s.ref.Repo, name, ctx.Err(), path)
		case <-time.After(delay):
		}
		delay = min(2*delay, lockPoll)
	}
}
