//go:build windows

package hub

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// fileLock is a held LockFileEx lock on an open lock file.
type fileLock struct{ f *os.File }

// tryLock takes an exclusive lock on the first byte of path without
// waiting; ok is false when another handle holds it.
func tryLock(path string) (l *fileLock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &fileLock{f: f}, true, nil
}

// release drops the lock (closing the handle does).
func (l *fileLock) release() { l.f.Close() }
