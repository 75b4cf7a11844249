package models

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/chat"
	"tracer/engine/tokenizer"
)

// openHF opens a Hugging Face model folder: the weights, the tokenizer when
// the folder has one, generation_config.json and the chat template.
func openHF(dir string, opts []arch.OpenOption) (*Loaded, error) {
	m, err := arch.OpenHF(dir, opts...)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Spec: dir, Model: m}
	if l.Config, err = engine.ReadGenerationConfig(filepath.Join(dir, "generation_config.json")); err != nil {
		l.Close()
		return nil, err
	}
	if hasAny(dir, "tokenizer.json", "vocab.json") {
		if l.Tokenizer, err = tokenizer.Load(dir); err != nil {
			l.Close()
			return nil, err
		}
	}
	if hasAny(dir, "tokenizer_config.json") {
		switch t, err := chat.Load(dir); {
		case err == nil:
			l.Chat = t
		case !errors.Is(err, chat.ErrNoChatTemplate):
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// openLlama2c opens a llama2.c checkpoint and, when one lies beside it, its
// tokenizer: tok<vocab>.bin (as stories260K ships tok512.bin) or
// tokenizer.bin. llama2.c's run.c stops when the model predicts BOS (id 1);
// tracer stops at BOS or EOS (id 2).
func openLlama2c(path string, opts []arch.OpenOption) (*Loaded, error) {
	m, err := arch.OpenLlama2c(path, opts...)
	if err != nil {
		return nil, err
	}
	info := m.Info()
	l := &Loaded{Spec: path, Model: m, Config: &engine.Settings{EOSTokenID: []int{2, 1}}}
	dir := filepath.Dir(path)
	for _, name := range []string{fmt.Sprintf("tok%d.bin", info.VocabSize), "tokenizer.bin"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		tok, err := tokenizer.Load(p)
		if err != nil {
			l.Close()
			return nil, err
		}
		if tok.VocabSize() != info.VocabSize {
			continue // a tokenizer for another model
		}
		l.Tokenizer = tok
		break
	}
	return l, nil
}

// hasAny reports whether dir holds any of the named files.
func hasAny(dir string, names ...string) bool {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// Close releases the model's memory-mapped weights and worker threads.
func (l *Loaded) Close() error {
	if c, ok := l.Model.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// isHubName reports whether spec looks like a Hugging Face repository name
// (ORG/NAME, optionally @REVISION) rather than a local path.
func isHubName(spec string) bool {
	name, _, _ := strings.Cut(spec, "@")
	parts := strings.Split(name, "/")
	return len(parts) == 2 && parts[0] != "" && parts[1] != "" && !strings.HasPrefix(spec, ".") && !filepath.IsAbs(spec)
}
