package hub

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tracer/engine/hub/hubtest"
)

func TestListAndDescribe(t *testing.T) {
	model, tok := hubtest.Llama2c()
	llama := hubtest.Repo{ID: "karpathy/tinyllamas", Files: map[string][]byte{"stories15M.bin": model, "tokenizer.bin": tok}}
	h, opts := setup(t, tinyRepo(), llama)
	pull(t, "org/tiny", opts)
	pull(t, "org/tiny@v1", opts)
	opts.File = "stories15M.bin"
	pull(t, "karpathy/tinyllamas", opts)
	os.MkdirAll(filepath.Join(opts.CacheDir, "datasets--x--y"), 0o755) // not a model
	os.MkdirAll(filepath.Join(opts.CacheDir, "models--org--broken", "blobs"), 0o755)

	got, err := List(opts.CacheDir)
	if err != nil || len(got) != 2 {
		t.Fatalf("List = %+v, %v; want 2 models", got, err)
	}
	files := hubtest.TinyModel()
	tiny := got[1]
	if tiny.Repo != "org/tiny" || tiny.Commit != h.Commit("org/tiny") || !slices.Equal(tiny.Revisions, []string{"main", "v1"}) || tiny.Spec() != "org/tiny" {
		t.Errorf("got %+v", tiny)
	}
	var size int64
	for _, f := range tiny.Files {
		size += int64(len(files[f]))
	}
	if len(tiny.Files) != 5 || tiny.Size != size {
		t.Errorf("files %v size %d, want 5 files of %d bytes", tiny.Files, tiny.Size, size)
	}

	d, err := Describe(tiny.Dir)
	want := Description{Format: "safetensors", Architecture: "LlamaForCausalLM", ModelType: "llama", Params: 256*64 + 64, DType: "float32", Tokenizer: true, ChatTemplate: true}
	if err != nil || d != want {
		t.Errorf("Describe(tiny) = %+v, %v\nwant %+v", d, err, want)
	}
	d, err = Describe(filepath.Join(got[0].Dir, "stories15M.bin"))
	want = Description{Format: "llama2.c", Architecture: "llama2.c", ModelType: "llama", Params: 920, DType: "float32", Tokenizer: true}
	if err != nil || d != want {
		t.Errorf("Describe(llama2.c) = %+v, %v\nwant %+v", d, err, want)
	}
}

func TestListOfNoCache(t *testing.T) {
	got, err := List(filepath.Join(t.TempDir(), "absent"))
	if err != nil || len(got) != 0 {
		t.Errorf("List of a missing folder = %v, %v; want nothing", got, err)
	}
}

func TestDescribeRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	huge := binary.LittleEndian.AppendUint64(nil, 1<<62)
	for _, tc := range []struct {
		name string
		path func() string
	}{
		{"short .bin", func() string { return write("short.bin", []byte{1, 2, 3}) }},
		{"wrong-size .bin", func() string { m, _ := hubtest.Llama2c(); return write("cut.bin", m[:len(m)-4]) }},
		{"negative dims", func() string { return write("neg.bin", make([]byte, 64)) }},
		{"config not JSON", func() string {
			d := filepath.Join(dir, "m1")
			os.Mkdir(d, 0o755)
			os.WriteFile(filepath.Join(d, "config.json"), []byte("{"), 0o644)
			return d
		}},
		{"safetensors header too long", func() string {
			d := filepath.Join(dir, "m2")
			os.Mkdir(d, 0o755)
			os.WriteFile(filepath.Join(d, "config.json"), []byte("{}"), 0o644)
			os.WriteFile(filepath.Join(d, "model.safetensors"), append(huge, "{}"...), 0o644)
			return d
		}},
		{"bad shape", func() string {
			d := filepath.Join(dir, "m3")
			os.Mkdir(d, 0o755)
			os.WriteFile(filepath.Join(d, "config.json"), []byte("{}"), 0o644)
			h := []byte(`{"a": {"dtype": "F32", "shape": [-1, 4]}}`)
			os.WriteFile(filepath.Join(d, "model.safetensors"), append(binary.LittleEndian.AppendUint64(nil, uint64(len(h))), h...), 0o644)
			return d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d, err := Describe(tc.path()); err == nil {
				t.Errorf("got %+v, want an error", d)
			}
		})
	}
}

// FuzzCountTensors: a safetensors header from anywhere never panics.
func FuzzCountTensors(f *testing.F) {
	f.Add(hubtest.Safetensors("F32", map[string][]int{"a": {2, 3}}))
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "model.safetensors")
		os.WriteFile(p, b, 0o644)
		countTensors(p, map[string]int64{})
	})
}

// TestHeaderMemo: repeated descriptions of an unchanged safetensors file
// parse its header once; a change of contents, size or time, or a new file
// at the path, makes it read again.
func TestHeaderMemo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "model.safetensors")
	small := hubtest.Safetensors("F32", map[string][]int{"a": {2, 3}})
	big := hubtest.Safetensors("F32", map[string][]int{"a": {4, 3}})
	m := newHeaderMemo()
	count := func() int64 {
		t.Helper()
		by := map[string]int64{}
		if err := m.count(p, by); err != nil {
			t.Fatal(err)
		}
		return by["F32"]
	}
	same := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, step := range []struct {
		name   string
		change func()
		params int64
		reads  int
	}{
		{"first", func() { os.WriteFile(p, small, 0o644) }, 6, 1},
		{"unchanged", func() {}, 6, 1},
		{"unchanged again", func() {}, 6, 1},
		{"rewritten larger", func() { os.WriteFile(p, big, 0o644) }, 12, 2},
		{"touched", func() { os.Chtimes(p, same, same) }, 12, 3},
		{"unchanged after touch", func() {}, 12, 3},
		{"replaced by a file of the same size and time", func() {
			q := filepath.Join(dir, "other")
			os.WriteFile(q, big, 0o644)
			os.Chtimes(q, same, same)
			os.Rename(q, p)
		}, 12, 4},
	} {
		step.change()
		if got := count(); got != step.params || m.reads != step.reads {
			t.Errorf("%s: got %d parameters after %d header reads, want %d after %d", step.name, got, m.reads, step.params, step.reads)
		}
	}
}

// TestDescribeRemembersHeaders: describing an unchanged model folder again,
// as the web catalog does on every rescan, parses no header again.
func TestDescribeRemembersHeaders(t *testing.T) {
	dir := t.TempDir()
	for name, b := range hubtest.TinyModel() {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	before := headers.reads
	for range 3 {
		if _, err := Describe(dir); err != nil {
			t.Fatal(err)
		}
	}
	if got := headers.reads - before; got != 1 {
		t.Errorf("3 descriptions of an unchanged model read its header %d times, want 1", got)
	}
}

// TestDescribeRefusesHugeHeader: a header over the safetensors limit
// (100 MB) is refused, naming the file and the limit, without reading it.
func TestDescribeRefusesHugeHeader(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
	p := filepath.Join(dir, "model.safetensors")
	os.WriteFile(p, append(binary.LittleEndian.AppendUint64(nil, 100<<20+1), "{}"...), 0o644)
	// A sparse file long enough to hold the header it announces, so the
	// limit, not the file's end, is what refuses it.
	if err := os.Truncate(p, 8+100<<20+16); err != nil {
		t.Fatal(err)
	}
	_, err := Describe(dir)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "exceeds the 104857600-byte limit") {
		t.Errorf("got %v, want an error naming %s and the 100 MiB limit", err, p)
	}
}
