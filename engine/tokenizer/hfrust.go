//go:build hftokenizers

// This file backs the Tokenizer interface with Hugging Face's own Rust
// tokenizers library, through the cgo binding github.com/daulet/tokenizers,
// as a cross-check of the pure-Go pipeline. It is compiled only with the
// hftokenizers build tag, because it needs the Rust static library
// libtokenizers.a at link time:
//
//	# Rust toolchain: build the library of the same release as go.mod's
//	# github.com/daulet/tokenizers (v1.24.0); its Go code checks the
//	# library version when linking.
//	git clone --branch v1.24.0 https://github.com/daulet/tokenizers
//	cd tokenizers && make build          # writes libtokenizers.a
//	# or unpack a prebuilt libtokenizers.<os>-<arch>.tar.gz from that
//	# release's page on GitHub.
//
//	CGO_ENABLED=1 CGO_LDFLAGS="-L/path/to/dir/of/libtokenizers.a" \
//		go build -tags hftokenizers ./...
//
// Without the library, `go vet -tags hftokenizers ./engine/tokenizer/`
// still type-checks this file.

package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/daulet/tokenizers"
)

// RustHF is a tokenizer.json run by the Rust tokenizers library. Encode and
// Decode are the library's; the vocabulary (Token, TokenBytes, IsSpecial
// and the special-token ids) is read from tokenizer.json here, since the
// binding does not expose it. It is safe for concurrent use.
type RustHF struct {
	rust     *tokenizers.Tokenizer
	cleanup  runtime.Cleanup // frees rust when t is collected
	tokens   []string        // id -> vocabulary string, added tokens included
	ids      map[string]int
	special  []bool      // id -> added token with "special": true
	decode   rustDecoder // how token strings become bytes
	specials Specials
}

// LoadRustHF reads a tokenizer.json, or the one in a model folder, with
// the Rust library. The special tokens (BOS, EOS, PAD, UNK) are named by
// tokenizer_config.json and special_tokens_map.json beside it, which wins,
// as in transformers.
func LoadRustHF(path string) (Tokenizer, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := rustVocabulary(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	names, err := rustSpecialNames(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	id := func(key string) int {
		if i, ok := t.ids[names[key]]; ok && names[key] != "" {
			return i
		}
		return -1
	}
	t.specials = Specials{BOS: id("bos_token"), EOS: id("eos_token"), PAD: id("pad_token"), UNK: id("unk_token")}

	rust, err := tokenizers.FromBytes(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: Rust tokenizers: %w", path, err)
	}
	t.rust = rust
	// The Rust tokenizer lives outside Go's heap: free it with its owner.
	t.cleanup = runtime.AddCleanup(t, func(r *tokenizers.Tokenizer) { r.Close() }, rust)
	return t, nil
}

// Encode returns the ids of text; addSpecial adds what the post-processor
// adds (e.g. a BOS).
func (t *RustHF) Encode(text string, addSpecial bool) ([]int, error) {
	if strings.ContainsRune(text, 0) {
		return nil, errors.New("tokenizer: text contains a NUL character, which the Rust binding cannot pass")
	}
	ids, _ := t.rust.Encode(text, addSpecial)
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out, nil
}

// Decode returns the text of ids; skipSpecial drops special tokens.
func (t *RustHF) Decode(ids []int, skipSpecial bool) (string, error) {
	u := make([]uint32, len(ids))
	for i, id := range ids {
		if id < 0 || id >= len(t.tokens) {
			return "", fmt.Errorf("tokenizer: id %d is outside the vocabulary (%d tokens)", id, len(t.tokens))
		}
		u[i] = uint32(id)
	}
	return t.rust.Decode(u, skipSpecial), nil
}

// Token returns the vocabulary string of id ("" when out of range).
func (t *RustHF) Token(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenBytes returns the bytes id stands for in decoded text (possibly an
// incomplete UTF-8 sequence); nil when out of range.
func (t *RustHF) TokenBytes(id int) []byte {
	if id < 0 || id >= len(t.tokens) {
		return nil
	}
	if t.decode == rustDecodeOther {
		return []byte(t.rust.Decode([]uint32{uint32(id)}, false))
	}
	return t.decode.bytes(t.tokens[id])
}

// VocabSize is the number of ids, added tokens included.
func (t *RustHF) VocabSize() int { return len(t.tokens) }

// Specials returns the special-token ids; -1 where absent.
func (t *RustHF) Specials() Specials { return t.specials }

// IsSpecial reports whether id is a special added token.
func (t *RustHF) IsSpecial(id int) bool { return id >= 0 && id < len(t.special) && t.special[id] }

// Close frees the Rust tokenizer now rather than when t is collected; t
// must not be used afterwards.
func (t *RustHF) Close() error {
	t.cleanup.Stop()
	return t.rust.Close()
}

// rustVocabulary reads the vocabulary, added tokens and decoder kind of a
// tokenizer.json.
func rustVocabulary(data []byte) (*RustHF, error) {
	var file struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Type  string          `json:"type"`
			Vocab json.RawMessage `json:"vocab"`
		} `json:"model"`
		Decoder json.RawMessage `json:"decoder"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, err
	}
	ids := map[string]int{}
	if file.Model.Type == "Unigram" { // [[piece, score], ...], id = index
		var pieces [][2]any
		if err := json.Unmarshal(file.Model.Vocab, &pieces); err != nil {
			return nil, fmt.Errorf("model.vocab: %w", err)
		}
		for i, p := range pieces {
			s, ok := p[0].(string)
			if !ok {
				return nil, fmt.Errorf("model.vocab[%d]: piece is not a string", i)
			}
			ids[s] = i
		}
	} else if err := json.Unmarshal(file.Model.Vocab, &ids); err != nil {
		return nil, fmt.Errorf("model.vocab: %w", err)
	}
	size := 0
	for _, id := range ids {
		size = max(size, id+1)
	}
	for _, a := range file.AddedTokens {
		size = max(size, a.ID+1)
	}
	t := &RustHF{tokens: make([]string, size), ids: ids, special: make([]bool, size)}
	for s, id := range ids {
		if id < 0 {
			return nil, fmt.Errorf("model.vocab: negative id %d", id)
		}
		t.tokens[id] = s
	}
	for _, a := range file.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("added_tokens: negative id %d", a.ID)
		}
		t.tokens[a.ID], t.special[a.ID] = a.Content, a.Special
		ids[a.Content] = a.ID
	}
	t.decode = rustDecoderOf(file.Decoder)
	return t, nil
}

// rustDecoder is how the decoder of a tokenizer.json turns one token
// string into bytes, for the decoders whose per-token bytes are known.
type rustDecoder int

const (
	rustDecodeOther     rustDecoder = iota // ask the library
	rustDecodeByteLevel                    // GPT-2 byte-to-unicode table
	rustDecodeMetaspace                    // "▁" is a space, <0xHH> a byte
)

func rustDecoderOf(raw json.RawMessage) rustDecoder {
	var d struct {
		Type     string            `json:"type"`
		Decoders []json.RawMessage `json:"decoders"`
	}
	if json.Unmarshal(raw, &d) != nil {
		return rustDecodeOther
	}
	switch d.Type {
	case "ByteLevel":
		return rustDecodeByteLevel
	case "Metaspace", "ByteFallback":
		return rustDecodeMetaspace
	case "Sequence": // Llama style: Replace(▁, " "), ByteFallback, Fuse, Strip
		kinds := map[string]bool{}
		for _, sub := range d.Decoders {
			var s struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(sub, &s) == nil {
				kinds[s.Type] = true
			}
		}
		switch {
		case kinds["ByteLevel"] && len(kinds) == 1:
			return rustDecodeByteLevel
		case kinds["ByteFallback"] || kinds["Metaspace"]:
			return rustDecodeMetaspace
		}
	}
	return rustDecodeOther
}

func (d rustDecoder) bytes(token string) []byte {
	switch d {
	case rustDecodeByteLevel:
		out := make([]byte, 0, len(token))
		for _, r := range token {
			if b, ok := rustByteLevel(r); ok {
				out = append(out, b)
			} else {
				out = utf8.AppendRune(out, r) // as the Rust decoder keeps it
			}
		}
		return out
	case rustDecodeMetaspace:
		if len(token) == 6 && strings.HasPrefix(token, "<0x") && strings.HasSuffix(token, ">") {
			if b, err := strconv.ParseUint(token[3:5], 16, 8); err == nil {
				return []byte{byte(b)}
			}
		}
		return []byte(strings.ReplaceAll(token, "▁", " "))
	}
	return []byte(token)
}

// rustByteLevel inverts GPT-2's bytes_to_unicode: printable Latin-1 bytes
// stand for themselves, the other 68 bytes for U+0100 onwards, in order.
func rustByteLevel(r rune) (byte, bool) {
	printable := func(b int) bool {
		return b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF
	}
	if r < 0x100 {
		return byte(r), printable(int(r))
	}
	n := int(r) - 0x100
	for b := 0; b < 256; b++ {
		if printable(b) {
			continue
		}
		if n == 0 {
			return byte(b), true
		}
		n--
	}
	return 0, false
}

// rustSpecialNames reads the special-token strings of a model folder:
// tokenizer_config.json, then special_tokens_map.json over it, then the
// defaults of the tokenizer class (named by tokenizer_class or implied by
// config.json's model_type) for keys neither file has. A null token is
// none ("").
func rustSpecialNames(dir string) (map[string]string, error) {
	names := map[string]string{}
	set := map[string]bool{}
	class := ""
	for _, file := range []string{"tokenizer_config.json", "special_tokens_map.json"} {
		path := filepath.Join(dir, file)
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
		}
		if v, ok := raw["tokenizer_class"]; ok && class == "" {
			_ = json.Unmarshal(v, &class)
		}
		for _, key := range []string{"bos_token", "eos_token", "pad_token", "unk_token"} {
			v, ok := raw[key]
			if !ok {
				continue
			}
			var s string
			var obj struct {
				Content string `json:"content"`
			}
			switch {
			case string(v) == "null":
				s = ""
			case json.Unmarshal(v, &s) == nil:
			case json.Unmarshal(v, &obj) == nil:
				s = obj.Content
			default:
				return nil, fmt.Errorf("tokenizer: %s: %s: want a string or {\"content\": ...}", path, key)
			}
			names[key], set[key] = s, true
		}
	}
	if class == "" {
		var model struct {
			ModelType string `json:"model_type"`
		}
		if data, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
			_ = json.Unmarshal(data, &model)
		}
		class = map[string]string{"gpt2": "GPT2Tokenizer", "qwen2": "Qwen2Tokenizer", "llama": "LlamaTokenizer"}[model.ModelType]
	}
	defaults := map[string]map[string]string{
		"GPT2Tokenizer":  {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"},
		"Qwen2Tokenizer": {"eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
		"LlamaTokenizer": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
	}[strings.TrimSuffix(class, "Fast")]
	for key, name := range defaults {
		if !set[key] {
			names[key] = name
		}
	}
	return names, nil
}

// loadTokenizerJSON reads a tokenizer.json with Hugging Face's Rust library:
// built with the hftokenizers tag, Load takes this path for every
// tokenizer.json.
func loadTokenizerJSON(path string) (Tokenizer, error) {
	return LoadRustHF(path)
}
