// Package catalog knows which models the page may run: the toy, the
// models folder (Hugging Face folders, llama2.c checkpoints, GGUF files, toy
// tables), the Hugging Face cache and the models of serving engines; and it
// opens them, once each. A page names a model by its entry and can never
// make the server open another path. It imports the engine's model
// loaders, and nothing of web.
package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"tracer/engine/arch"
	modelhub "tracer/engine/hub"
	"tracer/engine/models"
	"tracer/engine/remote"
	"tracer/engine/tensor"
	"tracer/toy"
)

// rescanAfter is how long a scan of the models folder is trusted.
const rescanAfter = 5 * time.Second

// Entry is one model the page offers.
type Entry struct {
	Name  string // what the form sends: "toy", or a path relative to the models folder
	Path  string // what models.Open gets
	Label string // "tiny-gpt2 (GPT2LMHeadModel)"
	Chat  bool   // the model has a chat template

	Server      *remote.Client // a model on a serving engine; nil for local ones
	Unavailable string         // a server that cannot be used now, and why
}

// catalog lists the models the page may run (the toy and what the models
// folder holds) and keeps the ones opened. The page names a model by its
// entry; it can never make the server open another path.
type Catalog struct {
	toy     *models.Loaded
	dir     string          // "" when the server was given no models folder
	cache   string          // the Hugging Face cache; "" for none
	servers []*serverSource // serving engines whose models pages may run (servers.go)

	mu      sync.Mutex
	entries []Entry
	extra   []Entry // models added with add
	scanned time.Time
	opened  map[string]*models.Loaded // by Path
}

// New returns the catalog of the toy, the models folder dir ("" for
// none), the Hugging Face cache ("" for none) and the serving engines
// servers, whose names and URLs it checks; it waits a moment
// (serverFirstWait) for the servers' first lists of models.
func New(toyModel *models.Loaded, dir, cache string, servers []ServerConfig) (*Catalog, error) {
	sources, err := newServerSources(servers)
	if err != nil {
		return nil, err
	}
	c := &Catalog{toy: toyModel, dir: dir, cache: cache, servers: sources, opened: map[string]*models.Loaded{}}
	c.firstServerList()
	return c, nil
}

// list returns the local models on offer: the toy first, then the
// folder's models by name (menu adds the servers' models). The folder is scanned again after rescanAfter.
func (c *Catalog) List() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || time.Since(c.scanned) > rescanAfter {
		c.entries = append([]Entry{{Name: "toy", Path: "toy", Label: "toy: " + c.toy.Model.Info().Name}}, c.extra...)
		c.entries = append(c.entries, scanModels(c.dir)...)
		c.entries = append(c.entries, scanCache(c.cache)...)
		c.scanned = time.Now()
	}
	return c.entries
}

// Open returns the model of the entry named name, opening it on first use.
func (c *Catalog) Open(name string) (*models.Loaded, error) { return c.OpenQuantized(name, 0) }

// OpenQuantized opens the model called name with its weight matrices
// quantized to q as it loads (arch.Quantized), a copy kept beside the
// model as stored; q 0 is the model as stored. A model with no float
// matrices to quantize (the toy, a file already quantized, one added in
// memory) is an error.
func (c *Catalog) OpenQuantized(name string, q tensor.DType) (*models.Loaded, error) {
	nothing := func(what string) error {
		return fmt.Errorf("quantize %s: model %q %s: pick a Hugging Face folder (Llama, Qwen2), an F32/F16/BF16 GGUF file or a llama2.c .bin", q, cmp.Or(name, "toy"), what)
	}
	if name == "" || name == "toy" {
		if q != 0 {
			return nil, nothing("has no float weight matrices to quantize")
		}
		return c.toy, nil
	}
	i := slices.IndexFunc(c.List(), func(e Entry) bool { return e.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("model %q is not on this server's list: pick one from the menu", name)
	}
	c.mu.Lock()
	e := c.entries[i]
	key := e.Path
	if q != 0 {
		key += "\x00" + q.String()
	}
	m, ok := c.opened[key]
	c.mu.Unlock()
	if ok {
		return m, nil
	}
	if q != 0 && strings.HasPrefix(e.Path, "added:") {
		return nil, nothing("is not a file tracer can load again quantized")
	}
	// Opening maps the weights (and copies the matrices into huge pages
	// when the memory allows: arch's huge.go); two pages opening at once
	// is harmless, and the first one kept wins.
	m, err := models.Open(e.Path, arch.Quantized(q))
	if err != nil {
		return nil, err
	}
	if info := m.Model.Info(); q != 0 && info.WeightTypes[q.String()] == 0 && info.WeightTypes[tensor.KFallback(q).String()] == 0 {
		closeModel(m)
		return nil, nothing(fmt.Sprintf("(%s) has no float weight matrices to quantize", info.DType))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.opened[key]; ok {
		closeModel(m)
		return prev, nil
	}
	c.opened[key] = m
	return m, nil
}

// add offers an opened model under a name of its own, next to what the
// models folder holds.
func (c *Catalog) Add(name, label string, m *models.Loaded) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.extra = append(c.extra, Entry{Name: name, Path: "added:" + name, Label: label})
	c.opened["added:"+name] = m
	c.entries = nil
}

// redact rewrites a message for a page: the server's paths become the
// names the catalog gives their models ("tiny-qwen2", not
// "/srv/models/tiny-qwen2"), and what remains of the models folder or the
// Hugging Face cache is named, not spelled out. Pages never learn where
// the server keeps its files.
func (c *Catalog) Redact(text string) string {
	type pair struct{ from, to string }
	var ps []pair
	entries := c.List()
	c.mu.Lock()
	for _, e := range entries {
		if strings.ContainsAny(e.Path, `/\`) {
			ps = append(ps, pair{e.Path, e.Name})
		}
		if m := c.opened[e.Path]; m != nil && m.Spec != e.Path && strings.ContainsAny(m.Spec, `/\`) {
			ps = append(ps, pair{m.Spec, e.Name})
		}
	}
	c.mu.Unlock()
	for _, d := range []pair{{c.dir, "the models folder"}, {c.cache, "the Hugging Face cache"}} {
		if d.from == "" {
			continue
		}
		if abs, err := filepath.Abs(d.from); err == nil && abs != d.from {
			ps = append(ps, pair{abs, d.to})
		}
		ps = append(ps, d)
	}
	// Longest first, so a model's path goes before the folder holding it.
	slices.SortStableFunc(ps, func(a, b pair) int { return len(b.from) - len(a.from) })
	for _, p := range ps {
		text = strings.ReplaceAll(text, p.from, p.to)
	}
	return text
}

// rescan makes the next list read the models folder and the cache again.
func (c *Catalog) Rescan() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}

// close releases the opened models' weights.
func (c *Catalog) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, m := range c.opened {
		closeModel(m)
		delete(c.opened, p)
	}
}

func closeModel(m *models.Loaded) { m.Close() }

// scanModels finds what models.Open accepts in dir: Hugging Face folders
// (with a config.json), llama2.c checkpoints (.bin files whose header
// checks out, also one folder down) and toy tables (.json). Symlinks are
// followed. Only regular files are opened: a named pipe, socket or device
// (which can block whoever opens it) is passed over, and so is a model
// folder holding one where a model file should be (modelhub.Describe
// refuses it). Descriptions of unchanged weights come from modelhub's
// memo, so a rescan does not parse their headers again.
func scanModels(dir string) []Entry {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Entry
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir() && isFile(filepath.Join(path, "config.json")):
			if d, err := modelhub.Describe(path); err == nil {
				out = append(out, Entry{Name: e.Name(), Path: path, Label: e.Name() + " (" + d.Architecture + ")", Chat: d.ChatTemplate})
			}
		case fi.IsDir():
			sub, _ := os.ReadDir(path)
			for _, s := range sub {
				if f, kind, ok := checkpoint(filepath.Join(path, s.Name())); ok {
					out = append(out, Entry{Name: e.Name() + "/" + s.Name(), Path: f, Label: e.Name() + "/" + s.Name() + " (" + kind + ")"})
				}
			}
		case fi.Mode().IsRegular() && strings.EqualFold(filepath.Ext(path), ".json"):
			if t, err := toy.Load(path); err == nil {
				out = append(out, Entry{Name: e.Name(), Path: path, Label: e.Name() + " (toy: " + t.Name + ")"})
			}
		default:
			if f, kind, ok := checkpoint(path); ok {
				out = append(out, Entry{Name: e.Name(), Path: f, Label: e.Name() + " (" + kind + ")"})
			}
		}
	}
	return out
}

// scanCache lists the models pulled into the Hugging Face cache: each
// snapshot with a config.json as ORG/NAME, and the llama2.c checkpoints of
// the others as ORG/NAME:FILE. A snapshot holding a named pipe or other
// non-regular file where a model file should be is left out: opening the
// model would block.
func scanCache(dir string) []Entry {
	if dir == "" {
		return nil
	}
	cached, err := modelhub.List(dir)
	if err != nil {
		return nil
	}
	var out []Entry
	for _, m := range cached {
		if isFile(filepath.Join(m.Dir, "config.json")) {
			d, err := modelhub.Describe(m.Dir)
			if errors.Is(err, modelhub.ErrNotRegular) {
				continue
			}
			out = append(out, Entry{Name: m.Spec(), Path: m.Dir, Label: m.Spec() + " (cache)", Chat: d.ChatTemplate})
			continue
		}
		for _, f := range m.Files {
			if path, kind, ok := checkpoint(filepath.Join(m.Dir, filepath.FromSlash(f))); ok {
				out = append(out, Entry{Name: m.Spec() + ":" + f, Path: path, Label: m.Spec() + ": " + f + " (cache, " + kind + ")"})
			}
		}
	}
	return out
}

// checkpoint reports whether path is a llama2.c checkpoint. Describe opens
// regular files only, so a named pipe called x.bin is not one.
func checkpoint(path string) (string, string, bool) {
	gguf := strings.EqualFold(filepath.Ext(path), ".gguf")
	if !gguf && (!strings.HasSuffix(path, ".bin") || strings.HasPrefix(filepath.Base(path), "tokenizer")) {
		return "", "", false
	}
	d, err := modelhub.Describe(path)
	if err != nil || d.Format != "llama2.c" && d.Format != "gguf" {
		return "", "", false
	}
	if d.Format == "gguf" {
		return path, "gguf " + d.Architecture + ", " + d.DType, true
	}
	return path, "llama2.c", true
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
