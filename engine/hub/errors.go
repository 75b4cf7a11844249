package hub

import (
	"errors"
	"fmt"
)

// Errors that callers may test for with errors.Is. The errors this package
// returns carry their own, more specific message.
var (
	// ErrBadName marks a model spec or file name that cannot name a file
	// on the Hub (a usage error).
	ErrBadName = errors.New("bad model or file name")
	// ErrNotCached marks a model that is not in the cache while the network
	// is off (HF_HUB_OFFLINE=1).
	ErrNotCached = errors.New("not in the Hugging Face cache")
	// ErrGated marks a gated or private repository the token cannot read.
	ErrGated = errors.New("gated or private repository")
	// ErrNotFound marks a repository, revision or file the Hub does not have.
	ErrNotFound = errors.New("not found on the Hub")
	// ErrNoConfig marks a repository without config.json, so not a
	// transformers model: only its files can be pulled, one by name
	// (Options.File). It is also an ErrNotFound.
	ErrNoConfig = errors.New("no config.json")
	// ErrChecksum marks a download whose size or checksum is not the one the
	// Hub announced.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrUnverifiable marks a weight file whose size or sha256 the Hub did
	// not announce, so a download of it could not be checked.
	ErrUnverifiable = errors.New("cannot be verified")
	// ErrTooLarge marks a pull that would download more bytes or files than
	// Options.MaxBytes or Options.MaxFiles allow.
	ErrTooLarge = errors.New("over the download limit")
	// ErrNotRegular marks a path that is a named pipe, socket, device or
	// other non-regular file where a model file should be; it is never
	// opened, since opening one can block.
	ErrNotRegular = errors.New("not a regular file")
)

// hubError is an error with its own message that matches one of the
// sentinel errors above under errors.Is.
type hubError struct {
	kind error
	msg  string
}

func (e *hubError) Error() string { return e.msg }
func (e *hubError) Is(target error) bool {
	return target == e.kind || e.kind == ErrNoConfig && target == ErrNotFound
}

func errorf(kind error, format string, a ...any) error {
	return &hubError{kind: kind, msg: fmt.Sprintf(format, a...)}
}

// NotCachedError is the ErrNotCached error of one model or file: what is
// missing from the cache while the network is off.
type NotCachedError struct {
	Ref      string // the model, ORG/NAME[@REVISION]
	File     string // the one file asked for; empty for the whole model
	CacheDir string // the cache looked in
}

// Error says what is missing and where it was looked for.
func (e *NotCachedError) Error() string {
	what := e.Ref
	if e.File != "" {
		what = e.File + " of " + e.Ref
	}
	return fmt.Sprintf("%s is not in the Hugging Face cache (%s) and HF_HUB_OFFLINE=1: download it with the network on", what, e.CacheDir)
}

// Is makes a NotCachedError an ErrNotCached under errors.Is.
func (e *NotCachedError) Is(target error) bool { return target == ErrNotCached }
