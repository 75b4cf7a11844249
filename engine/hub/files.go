package hub

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// A model folder may hold anything, and some things block whoever opens
// them: a named pipe (FIFO) waits for a writer, a device may wait for
// hardware. The catalog and the cache reader open only regular files (or
// symlinks to them, as the cache's snapshot links are), check the type
// before opening, and open with O_NONBLOCK so that a file swapped for a
// pipe in between still cannot hang them.

// Regular returns the FileInfo of the file at path (following symlinks)
// and an ErrNotRegular error when it is not a regular file.
func Regular(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return fi, notRegular(path, fi.Mode())
	}
	return fi, nil
}

// notRegular is the error for a path that is something other than a regular
// file or a folder.
func notRegular(path string, mode fs.FileMode) error {
	return errorf(ErrNotRegular, "%s is %s, not a regular file: tracer does not open it (remove it, or replace it with the real file)", path, kindOf(mode))
}

// kindOf names the type of a file mode for an error message.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file (" + mode.Type().String() + ")"
}

// openRegular opens the regular file at path for reading without ever
// blocking in open: the type is checked before, the open does not wait
// (O_NONBLOCK, which changes nothing for a regular file), and the type is
// checked again on the open file.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	if _, err := Regular(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// maxIndexSize bounds the JSON files this package reads (indexes, configs,
// refs).
const maxIndexSize = 64 << 20

// readSmall reads a regular file of at most maxIndexSize bytes.
func readSmall(path string) ([]byte, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > maxIndexSize {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d this reader accepts", path, fi.Size(), maxIndexSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIndexSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxIndexSize { // it grew while we read
		return nil, fmt.Errorf("%s is more than the %d bytes this reader accepts", path, maxIndexSize)
	}
	return b, nil
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
