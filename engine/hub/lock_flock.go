//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package hub

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// fileLock is a held flock(2) on an open lock file.
type fileLock struct{ f *os.File }

// tryLock takes an exclusive flock on path without waiting; ok is false
// when another open file holds it (in this process or another).
func tryLock(path string) (l *fileLock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	for errors.Is(err, unix.EINTR) {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &fileLock{f: f}, true, nil
}

// release drops the lock (closing the file does).
func (l *fileLock) release() { l.f.Close() }
