package models

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracer/engine/gguf"
	"tracer/engine/hub"
	"tracer/engine/refdata"
	"tracer/trace"
)

func TestOpenGGUF(t *testing.T) {
	path := refdata.Need(t, "models/stories260K/stories260K-f32.gguf")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Tokenizer == nil {
		t.Fatal("got no tokenizer, want the one in the metadata")
	}
	req, err := l.Request(Input{Texts: []string{"Once upon a time"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 403, 407, 261, 378}; len(req.Prompts) != 1 || !slices.Equal(req.Prompts[0], want) {
		t.Errorf("got prompt ids %v, want %v (llama-server's /tokenize)", req.Prompts, want)
	}
	info := l.Model.Info()
	if info.Kind != "gguf" || info.Architecture != "llama" || info.BOS != 1 || !slices.Equal(info.EOS, []int{2}) {
		t.Errorf("got kind %q, architecture %q, BOS %d, EOS %v, want gguf, llama, 1, [2]", info.Kind, info.Architecture, info.BOS, info.EOS)
	}
}

// ollamaStore writes a fake Ollama store under a temporary folder: one
// blob and a manifest per name (HOST/NAMESPACE/MODEL/TAG) pointing at it.
func ollamaStore(t *testing.T, blob []byte, manifests map[string]string) string {
	t.Helper()
	root := t.TempDir()
	const hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if err := os.MkdirAll(filepath.Join(root, "blobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "blobs", "sha256-"+hex), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range manifests {
		p := filepath.Join(root, "manifests", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body = strings.ReplaceAll(body, "HEX", hex)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestOllamaBlob(t *testing.T) {
	good := `{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:HEX","size":4},` +
		`{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:HEX","size":4}]}`
	root := ollamaStore(t, []byte("GGUF"), map[string]string{
		"registry.ollama.ai/library/tiny/latest":    good,
		"registry.ollama.ai/library/tiny/q4":        good,
		"registry.ollama.ai/me/mine/latest":         good,
		"example.com/team/m/v1":                     good,
		"registry.ollama.ai/library/bad/latest":     `{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"md5:00"}]}`,
		"registry.ollama.ai/library/short/latest":   strings.Replace(good, `"size":4}]`, `"size":9}]`, 1),
		"registry.ollama.ai/library/nomodel/latest": `{"layers":[]}`,
		"registry.ollama.ai/library/broken/latest":  `{"layers":`,
	})
	t.Setenv("OLLAMA_MODELS", root)
	blob := filepath.Join(root, "blobs", "sha256-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	cases := []struct {
		spec, want, err string
	}{
		{"ollama:tiny", blob, ""},
		{"ollama:tiny:latest", blob, ""},
		{"ollama:tiny:q4", blob, ""},
		{"ollama:me/mine", blob, ""},
		{"ollama:example.com/team/m:v1", blob, ""},
		{"ollama:absent", "", "no Ollama manifest"},
		{"ollama:tiny:nope", "", "ollama pull tiny:nope"},
		{"ollama:bad", "", "is not sha256:<64 hex digits>"},
		{"ollama:short", "", "holds 4 bytes, the manifest says 9"},
		{"ollama:nomodel", "", "no layer of media type application/vnd.ollama.image.model"},
		{"ollama:broken", "", "unexpected end of JSON"},
		{"ollama:../passwd", "", `".." is not a valid part`},
		{"ollama:../../etc/passwd", "", "want ollama:NAME[:TAG]"},
		{"ollama:a/b/c/d", "", "want ollama:NAME[:TAG]"},
		{"ollama:", "", "not a valid part"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			got, err := OllamaBlob(c.spec)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %q, %v, want an error containing %q", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v, want %q", got, err, c.want)
			}
		})
	}
}

// TestOpenOllama opens a GGUF through a fake Ollama store, both by Open
// and by Locate (which must not take NAMESPACE/MODEL for a Hugging Face
// name).
func TestOpenOllama(t *testing.T) {
	data, err := os.ReadFile(refdata.Need(t, "models/tiny-random-llama/gguf/model-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := `{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:HEX","size":` + strconv.Itoa(len(data)) + `}]}`
	t.Setenv("OLLAMA_MODELS", ollamaStore(t, data, map[string]string{"registry.ollama.ai/me/tiny/q8_0": manifest}))
	spec, err := Locate(t.Context(), "ollama:me/tiny:q8_0", hub.Options{CacheDir: t.TempDir(), Offline: true})
	if err != nil || spec != "ollama:me/tiny:q8_0" {
		t.Fatalf("Locate: got %q, %v, want the name back", spec, err)
	}
	l, err := Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if info := l.Model.Info(); info.DType != "q8_0" || info.VocabSize != 512 || l.Tokenizer == nil {
		t.Errorf("got dtype %q, vocab %d, tokenizer %v, want q8_0, 512 and a tokenizer", info.DType, info.VocabSize, l.Tokenizer != nil)
	}
}

// TestOpenGGUFChatTemplate: tokenizer.chat_template is rendered with the
// metadata's special tokens, and the BOS it writes is encoded once, as
// its id, not added again.
func TestOpenGGUFChatTemplate(t *testing.T) {
	src, err := gguf.Open(refdata.Need(t, "models/tiny-random-llama/gguf/model-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	const tmpl = "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"
	meta := append(slices.Clone(src.Meta), gguf.KV{Key: "tokenizer.chat_template", Type: gguf.TypeString, Value: tmpl})
	path := filepath.Join(t.TempDir(), "chat.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := gguf.Write(f, meta, src.Tensors, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Chat == nil {
		t.Fatal("got no chat template, want the metadata's")
	}
	req, err := l.Request(Input{Messages: []trace.Message{{Role: "user", Content: "a b"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<s>user: a b\nassistant:"; req.Prompt.Text != want {
		t.Errorf("got rendered %q, want %q", req.Prompt.Text, want)
	}
	ids := req.Prompts[0]
	if len(ids) < 2 || ids[0] != 1 || slices.Contains(ids[1:], 1) {
		t.Errorf("got ids %v, want BOS (1) once, first", ids)
	}
}

// TestGGUFTokenizerMustFitTheEmbedding: a GGUF whose tokenizer has fewer
// tokens than token_embd has rows (100 over 512) is refused, as llama.cpp
// refuses it, instead of generating ids whose text is empty.
func TestGGUFTokenizerMustFitTheEmbedding(t *testing.T) {
	src, err := gguf.Open(refdata.Need(t, "models/tiny-random-llama/gguf/model-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	meta := slices.Clone(src.Meta)
	cut := 0
	for i, kv := range meta {
		if !strings.HasPrefix(kv.Key, "tokenizer.ggml.") || kv.Type != gguf.TypeArray {
			continue
		}
		switch v := kv.Value.(type) {
		case []string:
			meta[i].Value = v[:100]
		case []float32:
			meta[i].Value = v[:100]
		case []int32:
			meta[i].Value = v[:100]
		default:
			continue
		}
		cut++
	}
	if cut == 0 {
		t.Fatal("the file has no tokenizer arrays to cut")
	}
	path := filepath.Join(t.TempDir(), "short-vocab.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := gguf.Write(f, meta, src.Tensors, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err == nil {
		l.Close()
		t.Fatal("a tokenizer of 100 tokens over 512 embedding rows opened")
	}
	if !strings.Contains(err.Error(), "100 tokens") || !strings.Contains(err.Error(), "512 rows") {
		t.Errorf("got %v, want an error naming 100 tokens and 512 rows", err)
	}
}

// TestGGUFIsParsedOnce: opening a GGUF model (weights, tokenizer, chat
// template) maps and parses its file once.
func TestGGUFIsParsedOnce(t *testing.T) {
	path := refdata.Need(t, "models/tiny-random-llama/gguf/model-f32.gguf")
	before := gguf.Opened()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if n := gguf.Opened() - before; n != 1 || l.Tokenizer == nil {
		t.Errorf("opening a GGUF parsed it %d times (tokenizer %v), want once", n, l.Tokenizer != nil)
	}
}

// TestOllamaManifestsMustBeFiles: a manifest that is a named pipe, or a
// link to /dev/zero, is refused at once instead of blocking the open or
// reading without end; so is a model path that is a named pipe.
func TestOllamaManifestsMustBeFiles(t *testing.T) {
	root := ollamaStore(t, []byte("GGUF"), nil)
	dir := filepath.Join(root, "manifests", "registry.ollama.ai", "library")
	if err := os.MkdirAll(filepath.Join(dir, "pipe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe", "latest"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "zero"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero", "latest")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OLLAMA_MODELS", root)
	fifo := filepath.Join(t.TempDir(), "model.gguf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"ollama:pipe", "ollama:zero", fifo} {
		done := make(chan error, 1)
		go func() {
			l, err := Open(spec)
			if err == nil {
				l.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: got %v, want a refusal saying it is not a regular file", spec, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still opening after 10 s", spec)
		}
	}
}
