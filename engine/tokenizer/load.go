package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Load reads a tokenizer from path, which may be
//
//   - a model folder: its tokenizer.json if there is one (as transformers'
//     AutoTokenizer prefers it), else vocab.json + merges.txt (see
//     LoadVocabMerges), else a llama2.c tokenizer.bin or tok*.bin;
//   - a tokenizer.json file (its folder's tokenizer_config.json, if any,
//     names the special tokens);
//   - a llama2.c tokenizer file ending in .bin (see LoadLlama2C).
//
// Errors name the file and say what is wrong with it.
func Load(path string) (Tokenizer, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if !fi.IsDir() {
		switch {
		case strings.HasSuffix(path, ".bin"):
			return asTokenizer(LoadLlama2C(path))
		case filepath.Base(path) == "vocab.json":
			return asTokenizer(LoadVocabMerges(filepath.Dir(path)))
		case strings.HasSuffix(path, ".json"):
			return loadTokenizerJSON(path)
		case strings.HasSuffix(path, ".model"):
			return nil, fmt.Errorf("tokenizer: %s: SentencePiece .model files are not supported; use tokenizer.json or llama2.c's tokenizer.bin", path)
		}
		return nil, fmt.Errorf("tokenizer: %s: not a tokenizer.json, vocab.json or llama2.c .bin file", path)
	}
	if isFile(filepath.Join(path, "tokenizer.json")) {
		return loadTokenizerJSON(filepath.Join(path, "tokenizer.json"))
	}
	if isFile(filepath.Join(path, "vocab.json")) && isFile(filepath.Join(path, "merges.txt")) {
		return asTokenizer(LoadVocabMerges(path))
	}
	if bin := filepath.Join(path, "tokenizer.bin"); isFile(bin) {
		return asTokenizer(LoadLlama2C(bin))
	}
	if bins, _ := filepath.Glob(filepath.Join(path, "tok*.bin")); len(bins) == 1 {
		return asTokenizer(LoadLlama2C(bins[0]))
	}
	return nil, fmt.Errorf("tokenizer: %s: no tokenizer.json, vocab.json + merges.txt or tokenizer.bin in the folder", path)
}

// asTokenizer keeps a nil concrete pointer from becoming a non-nil interface.
func asTokenizer[T Tokenizer](t T, err error) (Tokenizer, error) {
	if err != nil {
		return nil, err
	}
	return t, nil
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// LoadHF reads a tokenizer.json file (see ParseHF) and takes its special
// tokens from the tokenizer_config.json and special_tokens_map.json beside
// it.
func LoadHF(path string) (*HF, error) {
	t, err := parseFile(path, parseHF)
	if err != nil {
		return nil, err
	}
	cfg, err := readTokenizerConfig(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	t.specials = cfg.resolve(t.TokenID)
	return t, nil
}

// tokenizerConfig is what tokenizer_config.json, special_tokens_map.json
// and config.json say about special tokens.
type tokenizerConfig struct {
	class string // tokenizer_class, or one implied by config.json's model_type
	// names: bos_token, eos_token, pad_token, unk_token. A key that is absent
	// takes the default of the tokenizer class; null means none.
	names          map[string]*string
	addedDecoder   []addedToken // added_tokens_decoder, by id
	additional     []string     // additional_special_tokens
	addPrefixSpace bool
}

// specialKeys are the special-token keys of the configuration files.
func specialKeys() [4]string { return [4]string{"bos_token", "eos_token", "pad_token", "unk_token"} }

// classDefaults are the special tokens transformers' tokenizer classes use
// when the config names none.
func classDefaults(class string) map[string]string {
	switch strings.TrimSuffix(class, "Fast") {
	case "GPT2Tokenizer":
		return map[string]string{"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
	case "Qwen2Tokenizer":
		return map[string]string{"eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}
	case "LlamaTokenizer":
		return map[string]string{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
	}
	return nil
}

// readTokenizerConfig reads the configuration files of dir; missing files
// are not an error, malformed ones are.
func readTokenizerConfig(dir string) (*tokenizerConfig, error) {
	cfg := &tokenizerConfig{names: map[string]*string{}}
	var raw map[string]json.RawMessage
	if err := readJSON(filepath.Join(dir, "tokenizer_config.json"), &raw); err != nil {
		return nil, err
	}
	var modelCfg struct {
		ModelType string `json:"model_type"`
	}
	// config.json only supplies a fallback class; it is not the tokenizer's
	// file, so a problem with it is left to whoever reads the model.
	_ = readJSON(filepath.Join(dir, "config.json"), &modelCfg)
	path := filepath.Join(dir, "tokenizer_config.json")
	if err := cfg.parse(raw, path); err != nil {
		return nil, err
	}
	if cfg.class == "" {
		cfg.class = map[string]string{"gpt2": "GPT2Tokenizer", "qwen2": "Qwen2Tokenizer"}[modelCfg.ModelType]
	}
	// special_tokens_map.json wins over tokenizer_config.json, as in transformers.
	raw = nil
	path = filepath.Join(dir, "special_tokens_map.json")
	if err := readJSON(path, &raw); err != nil {
		return nil, err
	}
	for _, key := range specialKeys() {
		if v, ok := raw[key]; ok {
			name, err := tokenName(v)
			if err != nil {
				return nil, fmt.Errorf("tokenizer: %s: %s: %w", path, key, err)
			}
			cfg.names[key] = name
		}
	}
	for key, def := range classDefaults(cfg.class) {
		if _, ok := cfg.names[key]; !ok {
			cfg.names[key] = &def
		}
	}
	return cfg, nil
}

func (cfg *tokenizerConfig) parse(raw map[string]json.RawMessage, path string) error {
	wrap := func(key string, err error) error { return fmt.Errorf("tokenizer: %s: %s: %w", path, key, err) }
	if v, ok := raw["tokenizer_class"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &cfg.class); err != nil {
			return wrap("tokenizer_class", err)
		}
	}
	if v, ok := raw["add_prefix_space"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &cfg.addPrefixSpace); err != nil {
			return wrap("add_prefix_space", err)
		}
	}
	for _, key := range specialKeys() {
		if v, ok := raw[key]; ok {
			name, err := tokenName(v)
			if err != nil {
				return wrap(key, err)
			}
			cfg.names[key] = name
		}
	}
	if v, ok := raw["additional_special_tokens"]; ok && !isNull(v) {
		var list []json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil {
			return wrap("additional_special_tokens", err)
		}
		for _, item := range list {
			name, err := tokenName(item)
			if err != nil {
				return wrap("additional_special_tokens", err)
			}
			if name != nil {
				cfg.additional = append(cfg.additional, *name)
			}
		}
	}
	if v, ok := raw["added_tokens_decoder"]; ok && !isNull(v) {
		var dec map[string]hfAddedToken
		if err := decodeExact(v, &dec); err != nil { // keys as transformers reads them: exact
			return wrap("added_tokens_decoder", err)
		}
		for key, a := range dec {
			var id int
			if _, err := fmt.Sscan(key, &id); err != nil || id < 0 {
				return wrap("added_tokens_decoder", fmt.Errorf("key %q is not an id", key))
			}
			a.ID = id
			cfg.addedDecoder = append(cfg.addedDecoder, a.token())
		}
		sort.Slice(cfg.addedDecoder, func(i, j int) bool { return cfg.addedDecoder[i].id < cfg.addedDecoder[j].id })
	}
	return nil
}

// tokenName reads a special token written as "<s>", {"content": "<s>", ...}
// or null (nil).
func tokenName(v json.RawMessage) (*string, error) {
	if isNull(v) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return &s, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := decodeExact(v, &obj); err != nil || obj.Content == nil {
		return nil, errors.New(`want a string or {"content": ...}`)
	}
	return obj.Content, nil
}

// resolve looks the special tokens up; -1 where absent or unknown.
func (cfg *tokenizerConfig) resolve(lookup func(string) (int, bool)) Specials {
	id := func(key string) int {
		if name := cfg.names[key]; name != nil {
			if id, ok := lookup(*name); ok {
				return id
			}
		}
		return -1
	}
	return Specials{BOS: id("bos_token"), EOS: id("eos_token"), PAD: id("pad_token"), UNK: id("unk_token")}
}

// parseFile reads the file at path and parses it; the errors say
// "tokenizer:", and a parse error names the file.
func parseFile[T any](path string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return t, nil
}

// readJSON decodes path into v; a missing file leaves v alone.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return nil
}
