package tokenizer

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"tracer/engine/gguf"
)

// GGUF token types (tokenizer.ggml.token_type), as llama.cpp numbers them.
const (
	ggufNormal      = 1
	ggufUnknown     = 2
	ggufControl     = 3 // special: BOS, EOS, <|im_start|>; skipped by Decode(ids, true)
	ggufUserDefined = 4 // matched as a whole in text, like an added token
	ggufUnused      = 5
	ggufByte        = 6 // <0xNN>
)

// FromGGUF builds the tokenizer a GGUF file's metadata describes:
// tokenizer.ggml.model "llama" (SentencePiece-style: tokens with scores,
// merged by score, byte fallback) or "gpt2" (byte-level BPE with
// tokenizer.ggml.merges and the pre-tokenizer named by
// tokenizer.ggml.pre), the special ids tokenizer.ggml.*_token_id, and
// tokenizer.ggml.add_bos_token / add_eos_token (llama defaults to adding
// BOS, gpt2 to not). Control and user-defined tokens are cut out of the
// text first, as llama.cpp does with special tokens parsed.
func FromGGUF(f *gguf.File) (Tokenizer, error) {
	model, ok, err := f.String("tokenizer.ggml.model")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("tokenizer: %s: no tokenizer.ggml.model in the metadata: the file carries no tokenizer", f.Name)
	}
	tokens, _, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if len(tokens) < 1 {
		return nil, fmt.Errorf("tokenizer: %s: tokenizer.ggml.tokens is missing or empty", f.Name)
	}
	types := make([]int64, len(tokens))
	for i := range types {
		types[i] = ggufNormal
	}
	if tt, ok, err := f.Ints("tokenizer.ggml.token_type"); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	} else if ok {
		if len(tt) != len(tokens) {
			return nil, fmt.Errorf("tokenizer: %s: tokenizer.ggml.token_type has %d entries for %d tokens", f.Name, len(tt), len(tokens))
		}
		types = tt
	}
	g := &ggufTokenizer{tokens: tokens, types: types, ids: make(map[string]int, len(tokens))}
	for id, s := range tokens {
		if _, dup := g.ids[s]; !dup {
			g.ids[s] = id
		}
	}
	if err := g.readSpecials(f, model == "llama"); err != nil {
		return nil, err
	}
	switch model {
	case "llama":
		err = g.initSPM(f)
	case "gpt2":
		err = g.initBPE(f)
	default:
		err = fmt.Errorf("tokenizer: %s: tokenizer.ggml.model %q not supported (want llama or gpt2)", f.Name, model)
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

// LoadGGUF reads the tokenizer of the GGUF file at path.
func LoadGGUF(path string) (Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	return FromGGUF(f)
}

// ggufTokenizer is a tokenizer from GGUF metadata. It copies what it needs
// out of the file, so it outlives the mapping.
type ggufTokenizer struct {
	tokens []string // id -> token, as stored ("▁the" for SentencePiece, "Ġthe" for byte-level)
	types  []int64  // id -> GGUF token type
	ids    map[string]int

	specials       Specials
	addBOS, addEOS bool
	whole          []int     // control and user-defined ids: cut out of text before encoding
	wholeSet       prefixSet // their strings, by index into whole

	// SentencePiece ("llama")
	spm         *Llama2C // the vocabulary with ▁ as a space, merged by score as run.c does
	spacePrefix bool     // add a space before text at the start and after a special token
	byteIDs     [256]int // id of <0xNN>, -1 when absent

	// byte-level BPE ("gpt2")
	bpe *HF
}

// readSpecials reads the special ids and the add_* flags.
func (g *ggufTokenizer) readSpecials(f *gguf.File, spm bool) error {
	id := func(key string) (int, error) {
		v, ok, err := f.Uint("tokenizer.ggml." + key)
		if err != nil {
			return -1, fmt.Errorf("tokenizer: %w", err)
		}
		if !ok || v >= uint64(len(g.tokens)) {
			return -1, nil // llama.cpp's converter writes 2^32-1 for none
		}
		return int(v), nil
	}
	var err error
	for _, s := range []struct {
		dst *int
		key string
	}{{&g.specials.BOS, "bos_token_id"}, {&g.specials.EOS, "eos_token_id"}, {&g.specials.PAD, "padding_token_id"}, {&g.specials.UNK, "unknown_token_id"}} {
		if *s.dst, err = id(s.key); err != nil {
			return err
		}
	}
	g.addBOS = spm
	for _, b := range []struct {
		dst *bool
		key string
	}{{&g.addBOS, "add_bos_token"}, {&g.addEOS, "add_eos_token"}} {
		if v, ok, err := f.Bool("tokenizer.ggml." + b.key); err != nil {
			return fmt.Errorf("tokenizer: %w", err)
		} else if ok {
			*b.dst = v
		}
	}
	for id, t := range g.types {
		if (t == ggufControl || t == ggufUserDefined) && g.tokens[id] != "" {
			g.whole = append(g.whole, id)
		}
	}
	strs := make([]string, len(g.whole))
	for i, id := range g.whole {
		strs[i] = g.tokens[id]
	}
	g.wholeSet = newPrefixSet(strs)
	return nil
}

// initSPM prepares SentencePiece-style encoding.
func (g *ggufTokenizer) initSPM(f *gguf.File) error {
	scores, ok, err := f.Float32s("tokenizer.ggml.scores")
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if !ok || len(scores) != len(g.tokens) {
		return fmt.Errorf("tokenizer: %s: tokenizer.ggml.scores has %d entries for %d tokens (a llama tokenizer merges by score)", f.Name, len(scores), len(g.tokens))
	}
	g.spacePrefix = true
	if v, ok, err := f.Bool("tokenizer.ggml.add_space_prefix"); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	} else if ok {
		g.spacePrefix = v
	}
	l := &Llama2C{pieces: make([]string, len(g.tokens)), scores: scores, ids: map[string]int{}}
	for id, s := range g.tokens {
		p := strings.ReplaceAll(s, "▁", " ")
		l.pieces[id] = p
		// Control, unused and byte tokens never come out of a merge.
		if t := g.types[id]; t == ggufNormal || t == ggufUserDefined {
			if _, dup := l.ids[p]; !dup {
				l.ids[p] = id
			}
		}
	}
	for b := range g.byteIDs {
		g.byteIDs[b] = -1
		if id, ok := g.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			g.byteIDs[b] = id
		}
	}
	g.spm = l
	return nil
}

// initBPE prepares byte-level BPE encoding through the tokenizer.json
// pipeline, fed a document built from the metadata.
func (g *ggufTokenizer) initBPE(f *gguf.File) error {
	merges, _, err := f.Strings("tokenizer.ggml.merges")
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	pre, _, err := f.String("tokenizer.ggml.pre")
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if pre == "" {
		pre = "default" // llama.cpp's choice when the key is absent
	}
	preTok, ok := ggufPreTokenizers[pre]
	if !ok {
		var known []string
		for k := range ggufPreTokenizers {
			known = append(known, fmt.Sprintf("%q", k))
		}
		sort.Strings(known)
		return fmt.Errorf("tokenizer: %s: tokenizer.ggml.pre %q not supported (want one of %s)", f.Name, pre, strings.Join(known, ", "))
	}
	vocab := make(map[string]int, len(g.tokens))
	var added []map[string]any
	for id, s := range g.tokens {
		if t := g.types[id]; t == ggufControl || t == ggufUserDefined {
			added = append(added, map[string]any{"id": id, "content": s, "single_word": false, "lstrip": false,
				"rstrip": false, "normalized": false, "special": t == ggufControl})
		}
		if _, dup := vocab[s]; !dup {
			vocab[s] = id
		}
	}
	if merges == nil {
		merges = []string{}
	}
	doc := map[string]any{
		"added_tokens":   added,
		"normalizer":     nil,
		"pre_tokenizer":  json.RawMessage(preTok),
		"post_processor": nil,
		"decoder":        json.RawMessage(`{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`),
		"model":          map[string]any{"type": "BPE", "vocab": vocab, "merges": merges},
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("tokenizer: %s: %w", f.Name, err)
	}
	if g.bpe, err = parseHF(js); err != nil {
		return fmt.Errorf("tokenizer: %s: the gpt2 tokenizer in the metadata: %w", f.Name, err)
	}
	return nil
}

// ggufPreTokenizers maps tokenizer.ggml.pre to the Hugging Face
// pre-tokenizer that splits text the same way.
var ggufPreTokenizers = map[string]string{
	"default": `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}`,
	"gpt-2":   `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}`,
	"smollm":  `{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}]}`,
	"llama-bpe": `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":` + jsonString(llama3Pattern) +
		`},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]}`,
	"qwen2": `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":` + jsonString(qwen2Pattern) +
		`},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]}`,
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Encode returns the ids of text: control and user-defined tokens written
// in the text become their ids, the rest is encoded by the model; BOS
// (and EOS) are added when addSpecial and the metadata asks for them.
func (g *ggufTokenizer) Encode(text string, addSpecial bool) ([]int, error) {
	var ids []int
	if addSpecial && g.addBOS && g.specials.BOS >= 0 {
		ids = append(ids, g.specials.BOS)
	}
	prevSpecial := true
	for len(text) > 0 {
		at, id := g.nextWhole(text)
		if at > 0 {
			var err error
			if ids, err = g.encodeText(ids, text[:at], prevSpecial); err != nil {
				return nil, err
			}
		}
		if id < 0 {
			break
		}
		ids = append(ids, id)
		prevSpecial = true
		text = text[at+len(g.tokens[id]):]
	}
	if addSpecial && g.addEOS && g.specials.EOS >= 0 {
		ids = append(ids, g.specials.EOS)
	}
	return ids, nil
}

// nextWhole finds the first control or user-defined token in text, the
// longest at that position: its byte offset and id, or len(text), -1.
func (g *ggufTokenizer) nextWhole(text string) (int, int) {
	if i, k, ok := g.wholeSet.find(text, 0); ok {
		return i, g.whole[k]
	}
	return len(text), -1
}

// encodeText encodes a stretch of text without special tokens.
func (g *ggufTokenizer) encodeText(ids []int, text string, prevSpecial bool) ([]int, error) {
	if g.bpe != nil {
		more, err := g.bpe.Encode(text, false)
		return append(ids, more...), err
	}
	if g.spacePrefix && prevSpecial {
		text = " " + text
	}
	// llama.cpp (like SentencePiece) writes every space as ▁ before it
	// looks anything up: a ▁ in the text is a space, and a space that no
	// token holds falls back to the bytes of ▁ (E2 96 81), not 0x20.
	text = strings.ReplaceAll(text, "▁", " ")
	var seg []int
	for len(text) > 0 {
		_, n := utf8.DecodeRuneInString(text)
		if id, ok := g.spm.ids[text[:n]]; ok {
			seg = append(seg, id)
		} else {
			char := text[:n]
			if char == " " {
				char = "▁"
			}
			for _, b := range []byte(char) {
				id := g.byteIDs[b]
				if id < 0 {
					id = g.specials.UNK
				}
				if id < 0 {
					return nil, fmt.Errorf("tokenizer: encode: byte 0x%02X has no <0x%02X> token and there is no unknown token", b, b)
				}
				seg = append(seg, id)
			}
		}
		text = text[n:]
	}
	return append(ids, g.spm.merge(seg)...), nil
}

// Decode returns the text of ids. SentencePiece: ▁ is a space, <0xNN> a
// raw byte, and a token right after BOS loses its leading space (the one
// the encoder put in front of the text), as run.c decodes; a continuation
// keeps it, as llama-server's text does.
func (g *ggufTokenizer) Decode(ids []int, skipSpecial bool) (string, error) {
	if g.bpe != nil {
		for _, id := range ids {
			if id < 0 || id >= len(g.tokens) {
				return "", fmt.Errorf("tokenizer: decode: id %d is outside the vocabulary (size %d)", id, len(g.tokens))
			}
		}
		return g.bpe.Decode(ids, skipSpecial)
	}
	var out []byte
	prev := -1
	for _, id := range ids {
		if id < 0 || id >= len(g.tokens) {
			return "", fmt.Errorf("tokenizer: decode: id %d is outside the vocabulary (size %d)", id, len(g.tokens))
		}
		afterBOS := prev == g.specials.BOS && prev >= 0
		prev = id
		if skipSpecial && g.IsSpecial(id) {
			continue
		}
		b := g.TokenBytes(id)
		if afterBOS && g.spacePrefix && len(b) > 0 && b[0] == ' ' {
			b = b[1:]
		}
		out = append(out, b...)
	}
	return string(out), nil
}

// Token returns the vocabulary string of id ("" when out of range).
func (g *ggufTokenizer) Token(id int) string {
	if id < 0 || id >= len(g.tokens) {
		return ""
	}
	return g.tokens[id]
}

// TokenBytes returns the bytes id stands for in decoded text.
func (g *ggufTokenizer) TokenBytes(id int) []byte {
	if id < 0 || id >= len(g.tokens) {
		return nil
	}
	if g.bpe != nil {
		return g.bpe.TokenBytes(id)
	}
	if g.types[id] == ggufByte {
		if b, ok := byteToken(g.tokens[id]); ok {
			return []byte{b}
		}
	}
	return []byte(g.spm.pieces[id])
}

// VocabSize is the number of tokens in the metadata.
func (g *ggufTokenizer) VocabSize() int { return len(g.tokens) }

// Specials returns the ids of tokenizer.ggml.{bos,eos,padding,unknown}_token_id.
func (g *ggufTokenizer) Specials() Specials { return g.specials }

// IsSpecial reports whether id is a control token (BOS, EOS, chat markers)
// or one of the special ids.
func (g *ggufTokenizer) IsSpecial(id int) bool {
	if id < 0 || id >= len(g.tokens) {
		return false
	}
	s := g.specials
	return g.types[id] == ggufControl || id == s.BOS || id == s.EOS || id == s.PAD
}
