package hub

import (
	"io/fs"
	"os"
	"sync"
)

// maxMemo bounds the safetensors files whose counts headers remembers:
// beyond it, an entry is dropped to make room (and read again if needed).
const maxMemo = 1024

// headers remembers the parameter counts of the safetensors files Describe
// has read. The web catalog describes its models on every rescan (every few
// seconds); a header can be 100 MB of JSON, so an unchanged file is parsed
// once. This memo is the package's only mutable state: bounded, guarded,
// and invisible except in time and memory.
var headers = newHeaderMemo()

// headerMemo maps a safetensors file's path to its counts, trusted while the
// file's size, modification time and identity (device and inode) stay the
// same; a file replaced, rewritten or relinked is read again.
type headerMemo struct {
	mu      sync.Mutex
	entries map[string]memoEntry
	reads   int // headers parsed, for tests
}

type memoEntry struct {
	fi      fs.FileInfo
	byDType map[string]int64 // parameters by safetensors dtype
	err     error            // a bad header is remembered too: it stays bad until the file changes
}

func newHeaderMemo() *headerMemo { return &headerMemo{entries: map[string]memoEntry{}} }

// count adds the parameters of the safetensors file at path to byDType,
// parsing its header only when the memo has no entry for this version of
// the file. A path that is not a regular file is refused unopened.
func (m *headerMemo) count(path string, byDType map[string]int64) error {
	fi, err := Regular(path)
	if err != nil {
		return err
	}
	m.mu.Lock()
	e, ok := m.entries[path]
	m.mu.Unlock()
	if !ok || !sameVersion(e.fi, fi) {
		e = memoEntry{fi: fi, byDType: map[string]int64{}}
		e.err = countTensors(path, e.byDType)
		m.mu.Lock()
		m.reads++
		if _, ok := m.entries[path]; !ok && len(m.entries) >= maxMemo {
			for k := range m.entries { // drop any one
				delete(m.entries, k)
				break
			}
		}
		m.entries[path] = e
		m.mu.Unlock()
	}
	if e.err != nil {
		return e.err
	}
	for dt, n := range e.byDType {
		byDType[dt] += n
	}
	return nil
}

// sameVersion reports whether two stats of a path show the same file with
// the same contents, as far as size and modification time tell.
func sameVersion(a, b fs.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && os.SameFile(a, b)
}
