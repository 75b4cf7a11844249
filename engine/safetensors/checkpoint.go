package safetensors

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The file names transformers' from_pretrained looks for, in this order.
const (
	SingleName = "model.safetensors"
	IndexName  = "model.safetensors.index.json"
)

// Checkpoint is the set of safetensors files that hold one model's weights:
// a single model.safetensors or the shards of an index.
type Checkpoint struct {
	Dir   string
	files []*File
	where map[string]*File // tensor name -> the file holding it
	names []string         // sorted
}

// OpenDir opens the weights in dir as from_pretrained does: model.safetensors
// when present, otherwise every shard named by model.safetensors.index.json.
func OpenDir(dir string) (*Checkpoint, error) {
	single := filepath.Join(dir, SingleName)
	if _, err := os.Stat(single); err == nil {
		f, err := Open(single)
		if err != nil {
			return nil, err
		}
		return newCheckpoint(dir, []*File{f}, nil)
	}
	index := filepath.Join(dir, IndexName)
	if _, err := os.Stat(index); errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{File: dir, Msg: "no " + SingleName + " or " + IndexName, Err: fs.ErrNotExist}
	}
	return OpenIndex(index)
}

// indexFile is model.safetensors.index.json.
type indexFile struct {
	WeightMap map[string]string `json:"weight_map"`
}

// OpenIndex opens every shard named by the index file at path. Each tensor
// the index lists must be in the shard it names, and no tensor may appear in
// two shards.
func OpenIndex(path string) (*Checkpoint, error) {
	js, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "read index", Err: err}
	}
	var idx indexFile
	if err := json.Unmarshal(js, &idx); err != nil {
		return nil, &Error{File: path, Msg: "bad index JSON", Err: err}
	}
	if len(idx.WeightMap) == 0 {
		return nil, errorf(path, "", "index has no weight_map entries")
	}
	var shards []string
	for name, shard := range idx.WeightMap {
		if shard == "" || shard != filepath.Base(shard) || strings.ContainsAny(shard, `/\`) || shard == ".." {
			return nil, errorf(path, name, "shard %q is not a file name in the index's folder", shard)
		}
		if !slices.Contains(shards, shard) {
			shards = append(shards, shard)
		}
	}
	slices.Sort(shards)
	dir := filepath.Dir(path)
	var files []*File
	byName := map[string]*File{}
	for _, s := range shards {
		f, err := Open(filepath.Join(dir, s))
		if err != nil {
			closeAll(files)
			return nil, err
		}
		files = append(files, f)
		byName[s] = f
	}
	want := map[string]*File{}
	for name, shard := range idx.WeightMap {
		want[name] = byName[shard]
	}
	c, err := newCheckpoint(dir, files, want)
	if err != nil {
		closeAll(files)
		return nil, err
	}
	return c, nil
}

// newCheckpoint indexes the tensors of files; want, when not nil, is where
// an index says each tensor is.
func newCheckpoint(dir string, files []*File, want map[string]*File) (*Checkpoint, error) {
	c := &Checkpoint{Dir: dir, files: files, where: map[string]*File{}}
	for _, f := range files {
		for _, name := range f.names {
			if other, dup := c.where[name]; dup {
				return nil, errorf(f.Path, name, "also in %s", other.Path)
			}
			c.where[name] = f
			c.names = append(c.names, name)
		}
	}
	for name, f := range want {
		if c.where[name] != f {
			return nil, errorf(f.Path, name, "missing, though %s lists it in this shard", IndexName)
		}
	}
	slices.Sort(c.names)
	return c, nil
}

// Tensor returns the tensor called name, from whichever file holds it.
func (c *Checkpoint) Tensor(name string) (Tensor, bool) {
	f, ok := c.where[name]
	if !ok {
		return Tensor{}, false
	}
	return f.Tensor(name)
}

// Names returns every tensor name, sorted.
func (c *Checkpoint) Names() []string { return slices.Clone(c.names) }

// Files returns the paths of the files, in order.
func (c *Checkpoint) Files() []string {
	var p []string
	for _, f := range c.files {
		p = append(p, f.Path)
	}
	return p
}

// Close unmaps every file.
func (c *Checkpoint) Close() error {
	return closeAll(c.files)
}

func closeAll(files []*File) error {
	var errs []error
	for _, f := range files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
