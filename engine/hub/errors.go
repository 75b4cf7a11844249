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

func (e *hubError) Error() string        { return e.msg }
func (e *hubError) Is(target error) bool { return target == e.kind }

func errorf(kind error, format string, a ...any) error {
	return &hubError{kind: kind, msg: fmt.Sprintf(format, a...)}
}
