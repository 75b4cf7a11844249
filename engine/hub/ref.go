package hub

import (
	"path"
	"strings"
)

// DefaultRevision is the revision a spec without "@REV" names.
const DefaultRevision = "main"

// Ref names a model repository on the Hub at a revision.
type Ref struct {
	Repo     string // "ORG/NAME", or "NAME" for the Hub's few legacy models
	Revision string // a branch, tag or commit SHA-1
}

// String returns the ref as a spec: "ORG/NAME", or "ORG/NAME@REV" when the
// revision is not the default one.
func (r Ref) String() string {
	if r.Revision == DefaultRevision || r.Revision == "" {
		return r.Repo
	}
	return r.Repo + "@" + r.Revision
}

// ParseRef parses "ORG/NAME[@REV]". Names follow the Hub's rules: letters,
// digits, '-', '_' and '.', no "--" or "..", at most 96 characters.
func ParseRef(spec string) (Ref, error) {
	repo, rev, found := strings.Cut(spec, "@")
	if !found {
		rev = DefaultRevision
	}
	if !validRepo(repo) {
		return Ref{}, errorf(ErrBadName, "%q is not a Hugging Face model name: want ORG/NAME or ORG/NAME@REVISION", spec)
	}
	if !validRelPath(rev) {
		return Ref{}, errorf(ErrBadName, "%q: %q is not a revision: want a branch, tag or commit", spec, rev)
	}
	return Ref{Repo: repo, Revision: rev}, nil
}

func validRepo(repo string) bool {
	if len(repo) == 0 || len(repo) > 96 || strings.Contains(repo, "--") || strings.Contains(repo, "..") {
		return false
	}
	parts := strings.Split(repo, "/")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "-.") != p {
			return false
		}
		for _, c := range p {
			if !isWordChar(c) && c != '-' && c != '.' {
				return false
			}
		}
	}
	return true
}

func isWordChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// validRelPath reports whether name is a slash-separated relative path that
// stays inside the folder it is joined to: no absolute paths, no "." or ".."
// parts, no empty parts, no backslashes or control characters.
func validRelPath(name string) bool {
	if name == "" || len(name) > 1024 || path.IsAbs(name) {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// checkFileName returns an ErrBadName error unless name is a safe file name
// inside a snapshot.
func checkFileName(name string) error {
	if !validRelPath(name) {
		return errorf(ErrBadName, "%q is not a file name inside a model repository", name)
	}
	return nil
}

// IsCommit reports whether rev is a full commit SHA-1 (40 lowercase hex
// digits), which names a snapshot folder directly.
func IsCommit(rev string) bool { return isHex(rev, 40) && strings.ToLower(rev) == rev }

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
