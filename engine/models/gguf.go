package models

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"tracer/engine/arch"
	"tracer/engine/chat"
	"tracer/engine/gguf"
	"tracer/engine/hub"
	"tracer/engine/tokenizer"
)

// OllamaPrefix starts a model name that Ollama's local store resolves:
// "ollama:NAME[:TAG]".
const OllamaPrefix = "ollama:"

// isGGUF reports whether the file at path starts with the GGUF magic.
func isGGUF(path string) bool {
	if _, err := hub.Regular(path); err != nil {
		return false // a named pipe would block the open
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	n, _ := f.Read(magic[:])
	return n == 4 && string(magic[:]) == gguf.Magic
}

// openGGUF opens a GGUF file: the weights, the tokenizer and the chat
// template from its metadata. spec is how the user named it.
func openGGUF(spec, path string, opts []arch.OpenOption) (*Loaded, error) {
	f, err := gguf.Open(path) // parsed once: the model owns it, the tokenizer reads it first
	if err != nil {
		return nil, fmt.Errorf("arch: %w", err)
	}
	m, err := arch.OpenGGUFFile(f, opts...)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Spec: spec, Model: m}
	if f.Has("tokenizer.ggml.model") {
		if l.Tokenizer, err = tokenizer.FromGGUF(f); err != nil {
			l.Close()
			return nil, err
		}
		// llama.cpp sizes the vocabulary from the tokenizer and refuses a
		// token_embd of another height; ids past the tokenizer would
		// generate empty text.
		if n, rows := l.Tokenizer.VocabSize(), m.Info().VocabSize; n != rows {
			l.Close()
			return nil, fmt.Errorf("models: %s: the tokenizer has %d tokens but token_embd has %d rows: the file is inconsistent (llama.cpp refuses it too); convert the model again", path, n, rows)
		}
	}
	if src, ok, err := f.String("tokenizer.chat_template"); err != nil {
		l.Close()
		return nil, fmt.Errorf("models: %w", err)
	} else if ok && l.Tokenizer != nil {
		vars := map[string]any{}
		sp := l.Tokenizer.Specials()
		for name, id := range map[string]int{"bos_token": sp.BOS, "eos_token": sp.EOS, "pad_token": sp.PAD, "unk_token": sp.UNK} {
			if id >= 0 {
				vars[name] = l.Tokenizer.Token(id)
			}
		}
		if l.Chat, err = chat.Parse(src, vars); err != nil {
			l.Close()
			return nil, fmt.Errorf("models: %s: tokenizer.chat_template: %w", path, err)
		}
	}
	return l, nil
}

// OllamaBlob finds the GGUF blob of "ollama:NAME[:TAG]" in Ollama's local
// store, without a network: the manifest
// $OLLAMA_MODELS/manifests/HOST/NAMESPACE/MODEL/TAG (host
// registry.ollama.ai, namespace library and tag latest unless NAME gives
// them, as in "user/model" or "host/user/model"), and in it the layer of
// media type application/vnd.ollama.image.model, whose blob is
// $OLLAMA_MODELS/blobs/sha256-HEX. OLLAMA_MODELS defaults to
// ~/.ollama/models.
func OllamaBlob(spec string) (string, error) {
	name, ok := strings.CutPrefix(spec, OllamaPrefix)
	if !ok {
		return "", fmt.Errorf("model %q: not an %sNAME[:TAG] name", spec, OllamaPrefix)
	}
	tag := "latest"
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i:], "/") {
		name, tag = name[:i], name[i+1:]
	}
	given := name
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 1:
		parts = []string{"registry.ollama.ai", "library", parts[0]}
	case 2:
		parts = []string{"registry.ollama.ai", parts[0], parts[1]}
	case 3:
	default:
		return "", fmt.Errorf("model %q: want %sNAME[:TAG], NAME being MODEL, NAMESPACE/MODEL or HOST/NAMESPACE/MODEL", spec, OllamaPrefix)
	}
	for _, p := range append(parts, tag) {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, `\/`) {
			return "", fmt.Errorf("model %q: %q is not a valid part of an Ollama name", spec, p)
		}
	}
	root := os.Getenv("OLLAMA_MODELS")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("model %q: no OLLAMA_MODELS and no home folder: %w", spec, err)
		}
		root = filepath.Join(home, ".ollama", "models")
	}
	manifest := filepath.Join(append([]string{root, "manifests"}, append(parts, tag)...)...)
	data, err := readManifest(manifest)
	if err != nil {
		return "", fmt.Errorf("model %q: no Ollama manifest at %s (is the model pulled? `ollama pull %s:%s`; OLLAMA_MODELS sets the store): %w",
			spec, manifest, given, tag, err)
	}
	var m struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
			Size      int64  `json:"size"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("model %q: %s: %w", spec, manifest, err)
	}
	for _, l := range m.Layers {
		if l.MediaType != "application/vnd.ollama.image.model" {
			continue
		}
		hex, ok := strings.CutPrefix(l.Digest, "sha256:")
		if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
			return "", fmt.Errorf("model %q: %s: model layer digest %q is not sha256:<64 hex digits>", spec, manifest, l.Digest)
		}
		blob := filepath.Join(root, "blobs", "sha256-"+hex)
		st, err := os.Stat(blob)
		if err != nil {
			return "", fmt.Errorf("model %q: the model blob of %s is missing: %w", spec, manifest, err)
		}
		if l.Size > 0 && st.Size() != l.Size {
			return "", fmt.Errorf("model %q: blob %s holds %d bytes, the manifest says %d (an interrupted pull?)", spec, blob, st.Size(), l.Size)
		}
		return blob, nil
	}
	return "", fmt.Errorf("model %q: %s has no layer of media type application/vnd.ollama.image.model", spec, manifest)
}

// maxManifest is the largest Ollama manifest OllamaBlob reads: real ones
// are well under a kilobyte.
const maxManifest = 1 << 20

// readManifest reads an Ollama manifest: a regular file (hub.Regular: a
// named pipe would block the read, a device never end it) of at most
// maxManifest bytes.
func readManifest(path string) ([]byte, error) {
	if _, err := hub.Regular(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err == nil && len(data) > maxManifest {
		err = fmt.Errorf("%s is larger than %d bytes: not an Ollama manifest", path, maxManifest)
	}
	return data, err
}
