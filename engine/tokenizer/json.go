package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ParseHF reads a tokenizer.json. Components outside the supported set are
// refused by name, never approximated:
//
//	normalizer     NFC NFD NFKC NFKD Prepend Replace Sequence
//	pre_tokenizer  ByteLevel Split Digits Metaspace Sequence
//	model          BPE (also the old format without "type")
//	post_processor TemplateProcessing ByteLevel RobertaProcessing
//	               BertProcessing Sequence
//	decoder        ByteLevel ByteFallback Fuse Strip Replace Metaspace Sequence
//
// Keys are read as Hugging Face's serde structs read them: spelled exactly
// (a "Post_Processor" is not post_processor), unknown ones ignored, and a
// field without a default required. Added tokens take the ids Hugging Face
// gives them (see numberAdded); a post-processor's special-token id outside
// the vocabulary is refused. truncation and padding are ignored, as
// transformers' tokenizers ignore them unless a call asks for them.
// Specials are -1 here; Load and LoadHF read them from
// tokenizer_config.json.
func ParseHF(data []byte) (*HF, error) {
	t, err := parseHF(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %w", err)
	}
	return t, nil
}

// hfFile is tokenizer.json's top level. Keys are matched exactly and
// unknown ones ignored, as Hugging Face reads it (see decodeExact).
type hfFile struct {
	AddedTokens   []json.RawMessage `json:"added_tokens"`
	Normalizer    json.RawMessage   `json:"normalizer"`
	PreTokenizer  json.RawMessage   `json:"pre_tokenizer"`
	PostProcessor json.RawMessage   `json:"post_processor"`
	Decoder       json.RawMessage   `json:"decoder"`
	Model         json.RawMessage   `json:"model"`
}

type hfAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

func (a hfAddedToken) token() addedToken {
	normalized := !a.Special // AddedToken's default
	if a.Normalized != nil {
		normalized = *a.Normalized
	}
	return addedToken{content: a.Content, id: a.ID, singleWord: a.SingleWord, lstrip: a.LStrip,
		rstrip: a.RStrip, normalized: normalized, special: a.Special}
}

// hfComponent has the fields of every supported normalizer, pre-tokenizer,
// post-processor and decoder; Type says which.
type hfComponent struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Processors    []json.RawMessage `json:"processors"`
	Decoders      []json.RawMessage `json:"decoders"`

	Prepend string     `json:"prepend"`
	Pattern *hfPattern `json:"pattern"`
	Content string     `json:"content"`

	AddPrefixSpace   *bool  `json:"add_prefix_space"`
	UseRegex         *bool  `json:"use_regex"`
	Behavior         string `json:"behavior"`
	Invert           bool   `json:"invert"`
	IndividualDigits bool   `json:"individual_digits"`
	Replacement      string `json:"replacement"`
	PrependScheme    string `json:"prepend_scheme"`
	Split            *bool  `json:"split"`
	Start            int    `json:"start"`
	Stop             int    `json:"stop"`

	Single        json.RawMessage            `json:"single"`
	SpecialTokens map[string]json.RawMessage `json:"special_tokens"`
	Sep           []json.RawMessage          `json:"sep"`
	Cls           []json.RawMessage          `json:"cls"`
}

type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

type hfModel struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   map[string]int  `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func parseHF(data []byte) (*HF, error) {
	var f hfFile
	if err := decodeExact(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if isNull(f.Model) {
		return nil, errors.New("no model")
	}
	model, err := parseModel(f.Model)
	if err != nil {
		return nil, err
	}
	t := &HF{model: model, specials: Specials{-1, -1, -1, -1}}
	if t.normalizer, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer, nil); err != nil {
		return nil, err
	}
	if t.decoder, err = parseDecoder(f.Decoder); err != nil {
		return nil, err
	}
	tokens := make([]addedToken, len(f.AddedTokens))
	for i, raw := range f.AddedTokens {
		what := fmt.Sprintf("added_tokens[%d]", i)
		if err := requireFields(raw, what, addedTokenFields()...); err != nil {
			return nil, err
		}
		var a hfAddedToken
		if err := decodeExact(raw, &a); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		tokens[i] = a.token()
	}
	if err := t.setAdded(numberAdded(tokens, t.model)); err != nil {
		return nil, err
	}
	if t.post, err = parsePostProcessor(f.PostProcessor, t); err != nil {
		return nil, err
	}
	return t, nil
}

// numberAdded gives the added tokens of a tokenizer.json the ids Hugging
// Face tokenizers 0.23 gives them when it loads the file, where the ids
// written there only draw a warning: in the order of the list, a content
// seen before keeps its id, one in the model's vocabulary takes the model's
// id, and any other the next id from the vocabulary's size (its number of
// entries) on. A token with empty content is left out, and of several with
// one content the last one's settings count, special if any of them is.
func numberAdded(tokens []addedToken, m *bpe) []addedToken {
	ids := map[string]int{}   // content -> id
	index := map[string]int{} // content -> index into out
	out := tokens[:0:0]
	next := len(m.vocab)
	for _, a := range tokens {
		if a.content == "" {
			continue
		}
		if i, ok := index[a.content]; ok {
			a.id = ids[a.content]
			a.special = a.special || out[i].special
			out[i] = a
			continue
		}
		if id, ok := m.vocab[a.content]; ok {
			a.id = id
		} else {
			a.id = next
			next++
		}
		ids[a.content] = a.id
		index[a.content] = len(out)
		out = append(out, a)
	}
	return out
}

// setAdded installs the added tokens and the vocabulary size. An added
// token already in the model's vocabulary keeps the model's id, as Hugging
// Face does.
func (t *HF) setAdded(tokens []addedToken) error {
	t.vocabSize = len(t.model.tokens)
	for i := range tokens {
		a := &tokens[i]
		if id, ok := t.model.vocab[a.content]; ok {
			a.id = id
		}
		// Hugging Face numbers added tokens from the end of the vocabulary;
		// a far larger id would make every user of VocabSize allocate for it.
		if limit := len(t.model.tokens) + len(tokens) + 1<<16; a.id < 0 || a.id > limit {
			return fmt.Errorf("added token %q has id %d, outside 0..%d (the model has %d ids and there are %d added tokens)",
				a.content, a.id, limit, len(t.model.tokens), len(tokens))
		}
		t.vocabSize = max(t.vocabSize, a.id+1)
	}
	var err error
	t.added, err = newAddedVocab(tokens, t.normalizer)
	return err
}

func parseModel(raw json.RawMessage) (*bpe, error) {
	var typ struct {
		Type string `json:"type"`
	}
	if err := decodeExact(raw, &typ); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if typ.Type != "" && typ.Type != "BPE" {
		return nil, fmt.Errorf("model type %q is not supported", typ.Type)
	}
	var mj hfModel
	if err := decodeExact(raw, &mj); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if typ.Type == "BPE" {
		// The old format (no "type") is told apart by its merges below.
		if err := requireFields(raw, "model BPE", "vocab", "merges"); err != nil {
			return nil, err
		}
		if isNull(mj.Merges) {
			return nil, errors.New("model BPE: merges is null; want a list")
		}
	}
	switch {
	case mj.Type == "BPE":
	case mj.Type == "" && !isNull(mj.Merges): // the old format has no "type"
	case mj.Type == "":
		return nil, errors.New("model has no type and no merges")
	default:
		return nil, fmt.Errorf("model type %q is not supported", mj.Type)
	}
	if mj.Dropout != nil && *mj.Dropout > 0 {
		return nil, fmt.Errorf("BPE dropout %g is not supported (it makes encoding random)", *mj.Dropout)
	}
	if mj.Vocab == nil {
		return nil, errors.New("model has no vocab")
	}
	merges, err := parseMerges(mj.Merges)
	if err != nil {
		return nil, err
	}
	var prefix, suffix string
	if mj.ContinuingSubwordPrefix != nil {
		prefix = *mj.ContinuingSubwordPrefix
	}
	if mj.EndOfWordSuffix != nil {
		suffix = *mj.EndOfWordSuffix
	}
	m, err := newBPE(mj.Vocab, merges, prefix, suffix)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if mj.UnkToken != nil && *mj.UnkToken != "" {
		m.unkToken = *mj.UnkToken
		if id, ok := mj.Vocab[m.unkToken]; ok {
			m.unk = id
		}
	}
	m.fuseUnk, m.byteFallback, m.ignoreMerges = mj.FuseUnk, mj.ByteFallback, mj.IgnoreMerges
	return m, nil
}

// parseMerges reads merges written as "a b" strings or as [a, b] pairs.
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	if len(raw) < 2 || raw[0] != '[' {
		return nil, errors.New("merges is not a list")
	}
	if body := bytes.TrimSpace(raw[1:]); len(body) > 0 && body[0] == '[' {
		var pairs [][]string
		if err := json.Unmarshal(raw, &pairs); err != nil {
			return nil, fmt.Errorf("merges: %w", err)
		}
		out := make([][2]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return nil, fmt.Errorf("merge %d has %d tokens, want 2", i+1, len(p))
			}
			out[i] = [2]string{p[0], p[1]}
		}
		return out, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, fmt.Errorf("merges: %w", err)
	}
	out := make([][2]string, len(lines))
	for i, l := range lines {
		a, b, ok := strings.Cut(l, " ")
		if !ok || strings.Contains(b, " ") {
			return nil, fmt.Errorf("merge %d %q is not two tokens separated by a space", i+1, l)
		}
		out[i] = [2]string{a, b}
	}
	return out, nil
}
