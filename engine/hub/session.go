package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects bounds the relative redirects the Hub may send (repository
// renames) before an answer.
const maxRedirects = 10

// session talks to the Hub about one repository.
type session struct {
	opts  Options
	ref   Ref
	cache repoCache
	hub   *http.Client // follows no redirects: the Hub's own carry the file's headers
	files *http.Client // follows the file host's redirects
	host  string       // the Hub's host: the only one that sees the token
}

func newSession(ref Ref, opts Options) (*session, error) {
	if opts.CacheDir == "" {
		return nil, errors.New("no Hugging Face cache folder: set HF_HOME or HF_HUB_CACHE")
	}
	u, err := url.Parse(opts.endpoint())
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("HF_ENDPOINT %q is not an http(s) URL", opts.Endpoint)
	}
	files := opts.httpClient()
	hub := *files
	hub.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &session{
		opts:  opts,
		ref:   ref,
		cache: repoCache{root: RepoDir(opts.CacheDir, ref.Repo)},
		hub:   &hub,
		files: files,
		host:  u.Host,
	}, nil
}

// request builds a request that sends the token only to the Hub's own host,
// as huggingface_hub does, never to a file host it redirects to.
func (s *session) request(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "tracer (huggingface_hub-compatible)")
	// identity: sizes and checksums are of the file, not of a gzip of it.
	req.Header.Set("Accept-Encoding", "identity")
	if s.opts.Token != "" && req.URL.Host == s.host {
		req.Header.Set("Authorization", "Bearer "+s.opts.Token)
	}
	return req, nil
}

// hubDo sends a request to the Hub, following relative redirects only (the
// Hub's renames); an absolute redirect (to a file host) is returned as is.
func (s *session) hubDo(ctx context.Context, method, u string) (*http.Response, error) {
	for range maxRedirects {
		req, err := s.request(ctx, method, u)
		if err != nil {
			return nil, err
		}
		resp, err := s.hub.Do(req)
		if err != nil {
			return nil, netError(method, u, err)
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
			return resp, nil
		}
		l, err := url.Parse(loc)
		if err != nil || l.IsAbs() || l.Host != "" {
			return resp, nil
		}
		resp.Body.Close()
		u = req.URL.ResolveReference(l).String()
	}
	return nil, fmt.Errorf("%s %s: more than %d redirects", method, redact(u), maxRedirects)
}

// statusError turns an unsuccessful answer into an error that says what to
// do. file is the file asked for, "" for the file list.
func (s *session) statusError(resp *http.Response, file string) error {
	// Only the Hub's own answers say something about the repository; a file
	// host's 403 is an expired signature, not a gated model.
	if resp.Request.URL.Host == s.host {
		if err := s.hubError(resp, file); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: %s %s: the server answered %s", s.ref.Repo, resp.Request.Method, redact(resp.Request.URL.String()), resp.Status)
}

// hubError reads the Hub's X-Error-Code and status; nil when they are not
// about the repository, its revision or the file.
func (s *session) hubError(resp *http.Response, file string) error {
	code := resp.Header.Get("X-Error-Code")
	repo, rev := s.ref.Repo, s.ref.Revision
	switch {
	case code == "RevisionNotFound":
		return errorf(ErrNotFound, "%s has no revision %q on the Hub (%s)", repo, rev, s.opts.endpoint())
	case code == "EntryNotFound" || (resp.StatusCode == http.StatusNotFound && file != "" && code != "RepoNotFound"):
		return errorf(ErrNotFound, "%s has no file %s at revision %s", repo, file, rev)
	case code == "RepoNotFound" || resp.StatusCode == http.StatusNotFound:
		hint := ""
		if s.opts.Token == "" {
			hint = "; if it is private, set HF_TOKEN"
		}
		return errorf(ErrNotFound, "%s was not found on the Hub (%s): check the name%s", repo, s.opts.endpoint(), hint)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		hint := ""
		if s.opts.Token != "" {
			hint = " (HF_TOKEN is set but has no access to it)"
		}
		return errorf(ErrGated, "%s is gated or private: accept its license on the Hub and set HF_TOKEN%s", repo, hint)
	}
	return nil
}

// netError names the URL (without its query, which may hold a signature) of
// a request that failed on the network.
func netError(method, u string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %s: %w", method, redact(u), err)
}

// redact drops the query of a URL: file hosts sign their URLs there.
func redact(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

// escapePath escapes each part of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
