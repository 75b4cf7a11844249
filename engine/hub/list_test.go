package hub

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
