package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxAttempts bounds the tries of one download that the network keeps
// cutting short; each try resumes where the last one stopped.
const maxAttempts = 5

// fileMeta is what a HEAD on a file's resolve URL tells.
type fileMeta struct {
	commit   string // X-Repo-Commit
	etag     string // X-Linked-Etag (LFS: sha256) or ETag (git SHA-1): the blob's name
	size     int64  // X-Linked-Size or Content-Length; -1 when unknown
	location string // where to GET the bytes: the file host for LFS files
	lfs      bool   // the Hub redirected to a file host: an LFS file
}

// resolveURL is {endpoint}/{repo}/resolve/{rev}/{name}.
func (s *session) resolveURL(rev, name string) string {
	return fmt.Sprintf("%s/%s/resolve/%s/%s", s.opts.endpoint(), s.ref.Repo, url.PathEscape(rev), escapePath(name))
}

// head asks the Hub about a file at rev without downloading it.
func (s *session) head(ctx context.Context, rev, name string) (fileMeta, error) {
	u := s.resolveURL(rev, name)
	resp, err := s.hubDo(ctx, http.MethodHead, u)
	if err != nil {
		return fileMeta{}, fmt.Errorf("%s: ask the Hub about %s: %w (check the network and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use only the cache)", s.ref.Repo, name, err)
	}
	resp.Body.Close()
	redirect := resp.StatusCode >= 300 && resp.StatusCode < 400
	if resp.StatusCode >= 400 || (redirect && resp.Header.Get("Location") == "") {
		return fileMeta{}, s.statusError(resp, name)
	}
	m := fileMeta{commit: resp.Header.Get("X-Repo-Commit"), size: -1, location: resp.Request.URL.String(), lfs: redirect}
	m.etag = cleanETag(resp.Header.Get("X-Linked-Etag"))
	if m.etag == "" {
		m.etag = cleanETag(resp.Header.Get("ETag"))
	}
	if !validETag(m.etag) {
		return fileMeta{}, fmt.Errorf("%s: the Hub sent no usable ETag for %s (got %q), so it cannot be cached", s.ref.Repo, name, m.etag)
	}
	if n, err := strconv.ParseInt(resp.Header.Get("X-Linked-Size"), 10, 64); err == nil && n >= 0 {
		m.size = n
	} else if !redirect && resp.ContentLength >= 0 {
		m.size = resp.ContentLength
	}
	if redirect {
		loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		if err != nil {
			return fileMeta{}, fmt.Errorf("%s: the Hub redirected %s to a bad URL", s.ref.Repo, name)
		}
		m.location = loc.String()
	}
	return m, nil
}

// weightExts are the extensions of weight files: the Hub keeps them in LFS,
// and a corrupt or substituted one is the costliest to load unnoticed.
var weightExts = []string{".safetensors", ".bin", ".gguf", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx"}

// isWeightName reports whether a file of a repository holds weights.
func isWeightName(name string) bool {
	return slices.Contains(weightExts, strings.ToLower(path.Ext(name)))
}

// checkable refuses a weight file whose download could not be verified. It
// needs its size and a checksum of its bytes: for an LFS file the Hub sends
// them as X-Linked-Size and X-Linked-Etag (a sha256); a small weight file
// kept in git comes straight from the Hub with Content-Length and a git
// SHA-1 ETag.
func (s *session) checkable(name string, m fileMeta) error {
	if !isWeightName(name) {
		return nil
	}
	var missing []string
	if m.size < 0 {
		missing = append(missing, "its size (no X-Linked-Size header)")
	}
	if !isHex(m.etag, 64) && (m.lfs || !isHex(m.etag, 40)) {
		missing = append(missing, fmt.Sprintf("its sha256 (no X-Linked-Etag header holding one; the ETag was %q)", m.etag))
	}
	if len(missing) == 0 {
		return nil
	}
	return errorf(ErrUnverifiable, "%s: the Hub's answer for the weight file %s lacks %s, so its download could not be checked: refused, nothing was linked (check that HF_ENDPOINT is the Hub or a mirror that passes these headers on, then try again)", s.ref.Repo, name, strings.Join(missing, " and "))
}

// cleanETag drops the weak marker and quotes of an ETag.
func cleanETag(e string) string {
	return strings.Trim(strings.TrimPrefix(strings.TrimSpace(e), "W/"), `"`)
}

// validETag reports whether e can name a blob file: letters, digits, '-',
// '_' and '.', not starting with '.'.
func validETag(e string) bool {
	if e == "" || len(e) > 200 || e[0] == '.' {
		return false
	}
	for _, c := range e {
		if !isWordChar(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// retryable marks a download error worth another try from where it stopped.
type retryable struct{ err error }

func (r retryable) Error() string { return r.err.Error() }
func (r retryable) Unwrap() error { return r.err }

// download makes sure blobs/<etag> holds the file described by m. It writes
// to blobs/<etag>.incomplete, resumes a previous attempt, retries a cut
// connection, and renames the file into place only once verified. A
// cancelled ctx leaves the .incomplete file for the next attempt.
func (s *session) download(ctx context.Context, name string, m fileMeta) (fetched int64, err error) {
	blob := s.cache.blob(m.etag)
	if haveBlob(blob, m.size) {
		return 0, nil
	}
	lock, err := s.lockBlob(ctx, name, m.etag)
	if err != nil {
		return 0, err
	}
	defer lock.release()
	if haveBlob(blob, m.size) { // another download finished it while this one waited
		return 0, nil
	}
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return 0, fmt.Errorf("%s: %w", s.ref.Repo, err)
	}
	part := blob + ".incomplete"
	for attempt := 1; ; attempt++ {
		n, err := s.fetchOnce(ctx, name, m, part)
		fetched += n
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return fetched, fmt.Errorf("%s: download of %s stopped (%w); run the same command again to resume", s.ref.Repo, name, ctx.Err())
		}
		var r retryable
		if !errors.As(err, &r) {
			return fetched, err
		}
		if attempt == maxAttempts {
			return fetched, fmt.Errorf("%w; run the same command again to resume", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
	}
	if err := verify(part, m.etag, m.size); err != nil {
		os.Remove(part)
		return fetched, errorf(ErrChecksum, "%s: %s from %s failed its check (%v), so it was deleted: the download was corrupted; run the same command again", s.ref.Repo, name, redact(m.location), err)
	}
	if err := os.Rename(part, blob); err != nil {
		return fetched, fmt.Errorf("%s: %w", s.ref.Repo, err)
	}
	return fetched, nil
}

// haveBlob reports whether the cache holds the blob at path, of size bytes
// when size is known.
func haveBlob(path string, size int64) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && (size < 0 || fi.Size() == size)
}

// fetchOnce makes one attempt at the bytes of m, appending to part.
func (s *session) fetchOnce(ctx context.Context, name string, m fileMeta, part string) (int64, error) {
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.ref.Repo, err)
	}
	defer f.Close()
	have, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.ref.Repo, err)
	}
	if m.size >= 0 && have > m.size {
		have = 0 // longer than the file: not ours to resume
	}
	if m.size >= 0 && have == m.size {
		s.progress(name, have, m.size)
		return 0, nil
	}
	resp, have, err := s.get(ctx, name, m, have)
	if errors.Is(err, errCannotResume) {
		f.Truncate(0)
	}
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := f.Truncate(have); err != nil {
		return 0, fmt.Errorf("%s: %w", s.ref.Repo, err)
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return 0, fmt.Errorf("%s: %w", s.ref.Repo, err)
	}
	body := io.Reader(resp.Body)
	if m.size >= 0 {
		body = io.LimitReader(body, m.size-have+1) // one byte too many is enough to fail the check
	}
	w := &progressWriter{w: f, s: s, name: name, done: have, total: m.size}
	s.progress(name, have, m.size)
	n, err := io.Copy(w, body)
	if err == nil && m.size >= 0 && w.done < m.size {
		err = io.ErrUnexpectedEOF
	}
	if w.werr != nil {
		return n, fmt.Errorf("%s: write %s: %w", s.ref.Repo, part, w.werr)
	}
	if err != nil {
		return n, retryable{fmt.Errorf("%s: download %s: %w after %d of %s bytes", s.ref.Repo, name, netError(http.MethodGet, m.location, err), w.done, sizeString(m.size))}
	}
	if m.size < 0 {
		s.progress(name, w.done, w.done)
	}
	if err := f.Sync(); err != nil {
		return n, fmt.Errorf("%s: %w", s.ref.Repo, err)
	}
	return n, nil
}

// errCannotResume says the server would not send the rest of a partial
// download: it is dropped and the next attempt starts from the first byte.
var errCannotResume = errors.New("the server could not resume the download; starting again")

// get asks for m's bytes from offset have on ("Range: bytes=have-") and
// returns the response with the offset its body starts at: have, or 0 when
// the server sends the whole file.
func (s *session) get(ctx context.Context, name string, m fileMeta, have int64) (*http.Response, int64, error) {
	req, err := s.request(ctx, http.MethodGet, m.location)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: download %s: %w", s.ref.Repo, name, err)
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := s.files.Do(req)
	if err != nil {
		return nil, 0, retryable{fmt.Errorf("%s: download %s: %w", s.ref.Repo, name, netError(http.MethodGet, m.location, err))}
	}
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 && rangeStart(resp.Header.Get("Content-Range")) == have:
		return resp, have, nil
	case resp.StatusCode == http.StatusOK:
		return resp, 0, nil
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusPartialContent || resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		return nil, 0, retryable{fmt.Errorf("%s: download %s: %w", s.ref.Repo, name, errCannotResume)}
	}
	return nil, 0, s.statusError(resp, name)
}

// rangeStart returns N of a Content-Range "bytes N-M/T", or -1.
func rangeStart(cr string) int64 {
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return -1
	}
	first, _, ok := strings.Cut(rest, "-")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func sizeString(n int64) string {
	if n < 0 {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}

func (s *session) progress(name string, done, total int64) {
	if s.opts.Progress != nil {
		s.opts.Progress(name, done, total)
	}
}

// progressWriter writes to a file and reports each write as progress. A
// write error is kept apart from the network's errors.
type progressWriter struct {
	w           io.Writer
	s           *session
	name        string
	done, total int64
	werr        error
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if err != nil {
		p.werr = err
		return n, err
	}
	p.s.progress(p.name, p.done, p.total)
	return n, nil
}

// verify checks a downloaded file against the size and the ETag the Hub
// announced: a 64-digit ETag is the sha256 of the file (LFS), a 40-digit one
// the git blob SHA-1 (sha1 of "blob <size>\x00" and the bytes). Other ETags
// only have their size checked.
func verify(path, etag string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if size >= 0 && fi.Size() != size {
		return fmt.Errorf("%d bytes, want %d", fi.Size(), size)
	}
	var h hash.Hash
	kind := ""
	switch {
	case isHex(etag, 64):
		h, kind = sha256.New(), "sha256"
	case isHex(etag, 40):
		h, kind = sha1.New(), "git SHA-1"
		fmt.Fprintf(h, "blob %d\x00", fi.Size())
	default:
		return nil
	}
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(etag) {
		return fmt.Errorf("%s %s, want %s", kind, got, strings.ToLower(etag))
	}
	return nil
}
