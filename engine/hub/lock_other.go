//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package hub

import (
	"errors"
	"io/fs"
	"os"
)

// fileLock is a lock file created exclusively. Where this build has no OS
// file lock, a process killed while holding one leaves the file behind, and
// the next download waits for it (and names it) until it is deleted.
type fileLock struct{ path string }

// tryLock creates path, failing to (ok false) while it exists.
func tryLock(path string) (l *fileLock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	f.Close()
	return &fileLock{path: path}, true, nil
}

// release removes the lock file.
func (l *fileLock) release() { os.Remove(l.path) }
