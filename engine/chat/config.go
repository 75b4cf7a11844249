package chat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Load reads the chat template and special tokens of a Hugging Face
// tokenizer. path is a model folder or its tokenizer_config.json.
//
// The template is tokenizer_config.json's chat_template (a string, or a
// list of {"name", "template"} objects), or chat_template.jinja beside it,
// which newer transformers save separately and which then wins. Special
// tokens come from tokenizer_config.json and special_tokens_map.json
// (which wins, as in transformers): bos_token, eos_token, unk_token,
// pad_token and every other *_token written as a string or as
// {"content": ...}, plus additional_special_tokens.
//
// A tokenizer without a chat template gives an error wrapping
// ErrNoChatTemplate.
func Load(path string) (*Template, error) {
	dir, file := path, filepath.Join(path, "tokenizer_config.json")
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir, file = filepath.Dir(path), path
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	cfg, err := decodeObjectFile(file, data)
	if err != nil {
		return nil, err
	}
	vars := specialTokens(cfg)
	mapFile := filepath.Join(dir, "special_tokens_map.json")
	if data, err := os.ReadFile(mapFile); err == nil {
		overrides, err := decodeObjectFile(mapFile, data)
		if err != nil {
			return nil, err
		}
		for k, v := range specialTokens(overrides) {
			vars[k] = v
		}
	}

	var sources []namedSource
	jinjaFile := filepath.Join(dir, "chat_template.jinja")
	if data, err := os.ReadFile(jinjaFile); err == nil {
		sources = []namedSource{{"", string(data)}}
	} else if sources, err = configTemplates(cfg); err != nil {
		return nil, fmt.Errorf("chat: %s: %w", file, err)
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("chat: %s: %w", dir, ErrNoChatTemplate)
	}
	t, err := newTemplate(sources, vars)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, file)
	}
	return t, nil
}

func decodeObjectFile(file string, data []byte) (Object, error) {
	v, err := DecodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("chat: %s: %w", file, err)
	}
	obj, ok := v.(Object)
	if !ok {
		return nil, fmt.Errorf("chat: %s: want a JSON object, got %s", file, jsonKind(v))
	}
	return obj, nil
}

// configTemplates reads chat_template: absent or null, a string, or a list
// of {"name": ..., "template": ...}.
func configTemplates(cfg Object) ([]namedSource, error) {
	v, ok := cfg.Get("chat_template")
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []namedSource{{"", t}}, nil
	case []any:
		var sources []namedSource
		for i, item := range t {
			obj, _ := item.(Object)
			name, okName := obj.Get("name")
			source, okSource := obj.Get("template")
			nameText, isName := name.(string)
			sourceText, isSource := source.(string)
			if !okName || !okSource || !isName || !isSource {
				return nil, fmt.Errorf("chat_template[%d] is not a {\"name\", \"template\"} object", i)
			}
			if slices.ContainsFunc(sources, func(s namedSource) bool { return s.name == nameText }) {
				return nil, fmt.Errorf("chat_template has two templates named %q", nameText)
			}
			sources = append(sources, namedSource{nameText, sourceText})
		}
		return sources, nil
	}
	if !ok {
		return nil, nil
	}
	return nil, errors.New("chat_template is neither a string nor a list of named templates")
}

// specialTokens picks the template variables of a tokenizer config: every
// *_token key whose value is a string or an AddedToken object
// ({"content": ...}), the keys of extra_special_tokens, and
// additional_special_tokens as a list of strings. Null tokens are left
// out, as transformers leaves them out of special_tokens_map.
func specialTokens(cfg Object) map[string]any {
	vars := map[string]any{}
	for _, m := range cfg {
		switch {
		case m.Key == "additional_special_tokens":
			list, ok := m.Value.([]any)
			if !ok {
				continue
			}
			var tokens []any
			for _, item := range list {
				if s, ok := tokenText(item); ok {
					tokens = append(tokens, s)
				}
			}
			vars[m.Key] = tokens
		case m.Key == "extra_special_tokens":
			extra, _ := m.Value.(Object)
			for _, e := range extra {
				if s, ok := tokenText(e.Value); ok {
					vars[e.Key] = s
				}
			}
		case strings.HasSuffix(m.Key, "_token"):
			if s, ok := tokenText(m.Value); ok {
				vars[m.Key] = s
			}
		}
	}
	return vars
}

// tokenText reads a token written as a string or as {"content": "..."}.
func tokenText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case Object:
		content, _ := t.Get("content")
		s, ok := content.(string)
		return s, ok
	}
	return "", false
}
