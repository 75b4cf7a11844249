package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
)

// maxAPIBody bounds the JSON the Hub may answer with.
const maxAPIBody = 32 << 20

// maxTreePages bounds the pages of a paginated tree listing.
const maxTreePages = 100

// listing is a repository's file list at one commit.
type listing struct {
	commit string   // "" when the Hub did not say (the tree API)
	files  []string // every file name, each checked to stay inside a snapshot
}

// errNoSiblings says the revision API answered without a file list.
var errNoSiblings = errors.New("no siblings")

// list asks the Hub for the files of the repository at its revision:
// /api/models/{repo}/revision/{rev}, else /api/models/{repo}/tree/{rev}.
func (s *session) list(ctx context.Context) (listing, error) {
	u := fmt.Sprintf("%s/api/models/%s/revision/%s", s.opts.endpoint(), s.ref.Repo, url.PathEscape(s.ref.Revision))
	body, resp, err := s.getJSON(ctx, u)
	if err != nil {
		return listing{}, err
	}
	if resp.StatusCode == http.StatusOK {
		l, err := parseModelInfo(body)
		if !errors.Is(err, errNoSiblings) {
			if err != nil {
				return listing{}, fmt.Errorf("%s: the Hub's file list (%s): %w", s.ref.Repo, redact(u), err)
			}
			return l, nil
		}
	} else if !treeMayHelp(resp) {
		return listing{}, s.statusError(resp, "")
	}
	return s.listTree(ctx)
}

// treeMayHelp reports whether a failed revision request is worth retrying
// with the tree API: the server (a mirror, say) lacks the endpoint, rather
// than the repository or revision being missing or locked.
func treeMayHelp(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusNotFound:
		return resp.Header.Get("X-Error-Code") == ""
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return true
	}
	return false
}

func (s *session) listTree(ctx context.Context) (listing, error) {
	u := fmt.Sprintf("%s/api/models/%s/tree/%s?recursive=true", s.opts.endpoint(), s.ref.Repo, url.PathEscape(s.ref.Revision))
	var l listing
	for range maxTreePages {
		body, resp, err := s.getJSON(ctx, u)
		if err != nil {
			return listing{}, err
		}
		if resp.StatusCode != http.StatusOK {
			return listing{}, s.statusError(resp, "")
		}
		files, err := parseTree(body)
		if err != nil {
			return listing{}, fmt.Errorf("%s: the Hub's file tree (%s): %w", s.ref.Repo, redact(u), err)
		}
		l.files = append(l.files, files...)
		next := nextLink(resp.Header.Get("Link"))
		if next == "" {
			return l, nil
		}
		nu, err := resp.Request.URL.Parse(next)
		if err != nil {
			return listing{}, fmt.Errorf("%s: the Hub's file tree: bad next page %q", s.ref.Repo, next)
		}
		u = nu.String()
	}
	return listing{}, fmt.Errorf("%s: the Hub's file tree has more than %d pages", s.ref.Repo, maxTreePages)
}

// getJSON fetches u from the Hub and returns the body of a 200 answer (the
// response alone otherwise, its body closed).
func (s *session) getJSON(ctx context.Context, u string) ([]byte, *http.Response, error) {
	resp, err := s.hubDo(ctx, http.MethodGet, u)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: ask the Hub for its files: %w (check the network and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use only the cache)", s.ref.Repo, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: read the Hub's answer: %w", s.ref.Repo, netError(http.MethodGet, u, err))
	}
	if len(body) > maxAPIBody {
		return nil, nil, fmt.Errorf("%s: the Hub's answer from %s is larger than %d bytes", s.ref.Repo, redact(u), maxAPIBody)
	}
	return body, resp, nil
}

// parseModelInfo reads the revision API's answer: the commit ("sha") and
// the file names ("siblings[].rfilename"). Every name must stay inside a
// snapshot folder.
func parseModelInfo(body []byte) (listing, error) {
	var info struct {
		SHA      string `json:"sha"`
		Siblings *[]struct {
			RFilename string `json:"rfilename"`
		} `json:"siblings"`
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return listing{}, fmt.Errorf("not the JSON the Hub sends: %v", err)
	}
	if info.SHA != "" && !IsCommit(info.SHA) {
		return listing{}, fmt.Errorf("%q is not a commit SHA-1", info.SHA)
	}
	if info.Siblings == nil {
		return listing{}, errNoSiblings
	}
	l := listing{commit: info.SHA}
	for _, f := range *info.Siblings {
		if !validRelPath(f.RFilename) {
			return listing{}, fmt.Errorf("unsafe file name %q: refusing to write outside the snapshot", f.RFilename)
		}
		l.files = append(l.files, f.RFilename)
	}
	return l, nil
}

// parseTree reads one page of the tree API's answer: entries of type "file"
// with their path.
func parseTree(body []byte) ([]string, error) {
	var entries []struct {
		Type string `json:"type"`
		Path string `json:"path"`
	}
	if err := json.Unmarshal(body, &entries); err != nil {
		return nil, fmt.Errorf("not the JSON the Hub sends: %v", err)
	}
	var files []string
	for _, e := range entries {
		if e.Type != "file" {
			continue
		}
		if !validRelPath(e.Path) {
			return nil, fmt.Errorf("unsafe file name %q: refusing to write outside the snapshot", e.Path)
		}
		files = append(files, e.Path)
	}
	return files, nil
}

var nextLinkRE = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?next"?`)

// nextLink returns the rel="next" URL of a Link header, or "".
func nextLink(h string) string {
	if m := nextLinkRE.FindStringSubmatch(h); m != nil {
		return m[1]
	}
	return ""
}
