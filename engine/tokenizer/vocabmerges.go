package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// LoadVocabMerges builds a tokenizer from a folder with vocab.json,
// merges.txt and tokenizer_config.json but no tokenizer.json, the way
// transformers converts a slow tokenizer into a fast one. tokenizer_class
// (or config.json's model_type) picks the conversion:
//
//	Qwen2Tokenizer  NFC; Split on the Qwen2 pattern (isolated); ByteLevel
//	                without its own regex; ByteLevel decoder
//	GPT2Tokenizer   ByteLevel with the GPT-2 pattern; ByteLevel decoder
//
// Added tokens come from added_tokens_decoder, then any named special token
// that is still missing.
func LoadVocabMerges(dir string) (*HF, error) {
	cfg, err := readTokenizerConfig(dir)
	if err != nil {
		return nil, err
	}
	vocabPath := filepath.Join(dir, "vocab.json")
	data, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var vocab map[string]int
	if err := json.Unmarshal(data, &vocab); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", vocabPath, err)
	}
	mergesPath := filepath.Join(dir, "merges.txt")
	merges, err := readMergesTxt(mergesPath)
	if err != nil {
		return nil, err
	}
	model, err := newBPE(vocab, merges, "", "")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", mergesPath, err)
	}
	t := &HF{model: model, decoder: byteLevelDec{}}
	switch strings.TrimSuffix(cfg.class, "Fast") {
	case "Qwen2Tokenizer":
		t.normalizer = unicodeNorm{norm.NFC}
		t.pre = []preTokenizer{
			&splitPre{pattern: llamaScanner{maxDigits: 1}, behavior: isolated},
			&byteLevelPre{addPrefixSpace: cfg.addPrefixSpace},
		}
	case "GPT2Tokenizer":
		t.pre = []preTokenizer{&byteLevelPre{addPrefixSpace: cfg.addPrefixSpace, useRegex: true}}
	default:
		return nil, fmt.Errorf("tokenizer: %s: tokenizer_class %q can not be built from vocab.json + merges.txt (supported: Qwen2Tokenizer, GPT2Tokenizer)",
			filepath.Join(dir, "tokenizer_config.json"), cfg.class)
	}
	if err := t.setAdded(cfg.addedTokens(vocab)); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", dir, err)
	}
	t.specials = cfg.resolve(t.TokenID)
	return t, nil
}

// addedTokens lists added_tokens_decoder and then the named special tokens
// it lacks, which get their vocabulary id or the next free one.
func (cfg *tokenizerConfig) addedTokens(vocab map[string]int) []addedToken {
	tokens := append([]addedToken{}, cfg.addedDecoder...)
	have := map[string]bool{}
	next := len(vocab)
	for _, t := range tokens {
		have[t.content] = true
		next = max(next, t.id+1)
	}
	var names []string
	for _, key := range specialKeys() {
		if n := cfg.names[key]; n != nil {
			names = append(names, *n)
		}
	}
	for _, name := range append(names, cfg.additional...) {
		if have[name] || name == "" {
			continue
		}
		have[name] = true
		id, ok := vocab[name]
		if !ok {
			id = next
			next++
		}
		tokens = append(tokens, addedToken{content: name, id: id, special: true})
	}
	return tokens
}

// readMergesTxt reads merges.txt: one "a b" pair per line, an optional
// "#version" first line, blank lines skipped.
func readMergesTxt(path string) ([][2]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var merges [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || n == 1 && strings.HasPrefix(line, "#version") {
			continue
		}
		a, b, ok := strings.Cut(line, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("tokenizer: %s: line %d %q is not two tokens separated by a space", path, n, line)
		}
		merges = append(merges, [2]string{a, b})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return merges, nil
}
