package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"tracer/engine/remote"
)

// Models on serving engines (tracer serve --server NAME=URL): the catalog
// lists each server's models (from /v1/models) beside the local ones, and a
// run on one records from the server through engine/remote.

const (
	serverRescan    = 30 * time.Second // how long a server's model list is trusted
	serverRetry     = 5 * time.Second  // how soon a server that failed is asked again
	serverListWait  = 5 * time.Second  // how long listing one server's models may take
	serverFirstWait = 3 * time.Second  // how long New waits for the first lists
	ServerPrefix    = "server:"        // names of server models in the form: server:NAME/MODEL
	MaxServerModels = 256              // models of one server the menu lists
)

// ServerConfig names a serving engine whose models pages may run.
type ServerConfig struct {
	Name string // shown in the model menu, e.g. "gpu"
	URL  string // base URL, e.g. http://10.0.0.5:8000 (llama.cpp, vLLM, SGLang, Ollama or any OpenAI-compatible server)
	Key  string // API key sent as a bearer token; never logged, shown or recorded
}

// String writes the server as NAME=URL, without the key or a password
// in the URL, so that printing a config never reveals them.
func (c ServerConfig) String() string {
	u, err := url.Parse(c.URL)
	if err != nil {
		return c.Name + "=(a malformed URL)"
	}
	u.User = nil
	return c.Name + "=" + u.String()
}

// LogValue is String for log/slog.
func (c ServerConfig) LogValue() slog.Value { return slog.StringValue(c.String()) }

// serverSource is one configured server and what its last listing found.
// The catalog's lock guards the fields below cfg.
type serverSource struct {
	cfg ServerConfig

	clients  []*remote.Client // one per model, from the last listing that worked
	err      string           // why the last listing failed; "" when it worked
	checked  time.Time        // when the last listing ended; zero before the first
	checking bool             // a listing is under way
}

// entries are the menu entries of a server: one per model, or a single
// entry saying why the server is unavailable.
func (v *serverSource) entries() []Entry {
	switch {
	case v.err != "":
		return []Entry{{Name: ServerPrefix + v.cfg.Name, Label: v.cfg.Name + ": unavailable (" + v.err + ")", Unavailable: v.err}}
	case v.checked.IsZero():
		why := "still asking the server for its models"
		return []Entry{{Name: ServerPrefix + v.cfg.Name, Label: v.cfg.Name + ": " + why + "…", Unavailable: why + ": try again in a moment"}}
	}
	out := make([]Entry, 0, min(len(v.clients), MaxServerModels))
	for _, c := range v.clients[:min(len(v.clients), MaxServerModels)] {
		out = append(out, Entry{
			Name:   ServerPrefix + v.cfg.Name + "/" + c.Model,
			Label:  v.cfg.Name + ": " + c.Model + " (" + c.Engine + " server)",
			Chat:   true, // the server renders chats with the model's own template
			Server: c,
		})
	}
	if n := len(v.clients) - MaxServerModels; n > 0 {
		why := fmt.Sprintf("the menu lists the server's first %d models", MaxServerModels)
		out = append(out, Entry{Name: ServerPrefix + v.cfg.Name, Label: fmt.Sprintf("%s: … and %d more models, not listed", v.cfg.Name, n), Unavailable: why})
	}
	return out
}

// newServerSources checks the configured servers: names unique and
// without a slash, URLs that remote accepts.
func newServerSources(cfgs []ServerConfig) ([]*serverSource, error) {
	var out []*serverSource
	seen := map[string]bool{}
	for _, c := range cfgs {
		switch {
		case c.Name == "" || strings.ContainsAny(c.Name, "/ \t\n"):
			return nil, fmt.Errorf("web: server name %q: give a short name without spaces or slashes, as in --server gpu=http://10.0.0.5:8000", c.Name)
		case seen[c.Name]:
			return nil, fmt.Errorf("web: server name %q is given twice: give each --server its own name", c.Name)
		}
		seen[c.Name] = true
		if err := remote.CheckURL(c.URL); err != nil {
			return nil, fmt.Errorf("web: server %s: %w", c.Name, err)
		}
		out = append(out, &serverSource{cfg: c})
	}
	return out, nil
}

// refreshServers starts a listing of every server whose list is stale
// (serverRescan after a success, serverRetry after a failure) and returns
// a channel closed when those listings have ended. It never waits: a
// server that is down or slow cannot hold up a page. The caller holds the
// catalog's lock.
func (c *Catalog) refreshServers() <-chan struct{} {
	var wg sync.WaitGroup
	for _, v := range c.servers {
		stale := serverRescan
		if v.err != "" {
			stale = serverRetry
		}
		if v.checking || (!v.checked.IsZero() && time.Since(v.checked) < stale) {
			continue
		}
		v.checking = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), serverListWait)
			defer cancel()
			clients, err := remote.Models(ctx, remote.Config{URL: v.cfg.URL, Key: v.cfg.Key, Retries: 1}) // ctx bounds the listing; the clients keep remote's per-request timeout for runs
			c.mu.Lock()
			defer c.mu.Unlock()
			v.checking, v.checked = false, time.Now()
			if err != nil {
				v.err = serverError(err)
				return
			}
			v.clients, v.err = clients, ""
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// firstServerList lists the servers' models as the server starts, waiting
// at most serverFirstWait: a server that answers by then is in the first
// page's menu, one that does not shows as still being asked.
func (c *Catalog) firstServerList() {
	if len(c.servers) == 0 {
		return
	}
	c.mu.Lock()
	done := c.refreshServers()
	c.mu.Unlock()
	select {
	case <-done:
	case <-time.After(serverFirstWait):
	}
}

// serverError words a failed listing for the menu: remote's errors say
// what went wrong without the key, and name the URL without credentials.
func serverError(err error) string {
	switch {
	case errors.Is(err, remote.ErrRefused):
		return "connection refused: is the server running?"
	case errors.Is(err, remote.ErrAuth):
		return "the server refused the API key: set it in the variable named by --server-key-env"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %v", serverListWait)
	}
	return strings.TrimPrefix(err.Error(), "remote: ")
}

// serverEntries lists the servers' models (and the unavailable servers),
// starting a new listing of those that are stale.
func (c *Catalog) serverEntries() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshServers()
	var out []Entry
	for _, v := range c.servers {
		out = append(out, v.entries()...)
	}
	return out
}

// menu is what the run form offers: the local models, then the servers'.
func (c *Catalog) Menu() []Entry {
	return append(append([]Entry(nil), c.List()...), c.serverEntries()...)
}

// server returns the server model named name (a form's model), whether the
// name is a server's at all, and an error when it is but cannot be run.
func (c *Catalog) Server(name string) (*remote.Client, bool, error) {
	if !strings.HasPrefix(name, ServerPrefix) {
		return nil, false, nil
	}
	for _, e := range c.serverEntries() {
		if e.Name != name {
			continue
		}
		if e.Server == nil {
			server := strings.TrimPrefix(name, ServerPrefix)
			return nil, true, fmt.Errorf("server %s is unavailable: %s", server, e.Unavailable)
		}
		return e.Server, true, nil
	}
	return nil, true, fmt.Errorf("model %q is not on this server's list (the server may have dropped it): pick one from the menu", strings.TrimPrefix(name, ServerPrefix))
}
