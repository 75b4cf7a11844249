package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// HF is a Hugging Face tokenizer pipeline, read from a tokenizer.json
// (ParseHF, LoadHF) or built from vocab.json + merges.txt (LoadVocabMerges).
// Encode runs, like the Rust tokenizers library:
//
//	added tokens  cut out of the raw text (those with normalized=false)
//	normalizer    on the text between them (NFC, Prepend, Replace, ...)
//	added tokens  cut out of the normalized text (normalized=true)
//	pre-tokenizer split into pieces (ByteLevel, Split, Digits, Metaspace)
//	model         BPE on each piece
//	post-process  add BOS/EOS (TemplateProcessing) when addSpecial
//
// and Decode maps ids to token strings and runs the decoder chain. An HF is
// safe for concurrent use.
type HF struct {
	normalizer normalizer     // nil: none
	pre        []preTokenizer // empty: the whole text is one piece
	model      *bpe
	added      *addedVocab
	post       postProcessor // nil: no special tokens are added
	decoder    decoder       // nil: tokens are joined with spaces
	specials   Specials
	vocabSize  int
}

// encodeScratch is the reusable memory of one Encode call.
type encodeScratch struct {
	segs, segs2 []segment
	spans       [][]span            // per pre-tokenizer stage
	next        []func(piece) error // next[i] hands a piece to stage i+1
	word        bpeWork
	ids         []int
}

// Encode returns the ids of text. Text that is not valid UTF-8 (which a
// Python or Rust string can not hold) has each bad sequence replaced by
// U+FFFD first.
func (t *HF) Encode(text string, addSpecial bool) ([]int, error) {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	buf := encodeScratch{ids: make([]int, 0, len(text)/4+4), spans: make([][]span, len(t.pre))}
	for i := range t.pre {
		buf.next = append(buf.next, func(q piece) error { return t.preTokenize(i+1, q, &buf) })
	}
	ids, err := t.encode(text, &buf)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: encode: %w", err)
	}
	if addSpecial && t.post != nil {
		ids = t.post.process(ids)
	}
	return ids, nil
}

func (t *HF) encode(text string, buf *encodeScratch) ([]int, error) {
	buf.segs = t.added.split(text, &t.added.raw, buf.segs[:0])
	for _, seg := range buf.segs {
		if seg.id >= 0 {
			buf.ids = append(buf.ids, seg.id)
			continue
		}
		s := text[seg.start:seg.end]
		if t.normalizer != nil {
			var err error
			if s, err = t.normalizer.normalize(s); err != nil {
				return nil, err
			}
		}
		buf.segs2 = t.added.split(s, &t.added.norm, buf.segs2[:0])
		for _, sub := range buf.segs2 {
			if sub.id >= 0 {
				buf.ids = append(buf.ids, sub.id)
				continue
			}
			p := piece{text: s[sub.start:sub.end], atStart: seg.start == 0 && sub.start == 0}
			if err := t.preTokenize(0, p, buf); err != nil {
				return nil, err
			}
		}
	}
	return buf.ids, nil
}

// preTokenize runs pre-tokenizer stage and the ones after it over p, then
// the model over each resulting piece. Every stage but a final ByteLevel
// sees written-out characters (piece.mapped).
func (t *HF) preTokenize(stage int, p piece, buf *encodeScratch) error {
	if stage == len(t.pre) {
		var err error
		buf.ids, err = t.model.tokenize(buf.ids, p, &buf.word)
		return err
	}
	return t.pre[stage].split(p.mapped(), &buf.spans[stage], buf.next[stage])
}

// Decode returns the text of ids as Hugging Face tokenizers 0.23 does: each
// id becomes its token string (Token), skipSpecial drops the strings that
// are the content of a special added token, and the decoder chain runs
// once over the whole list, added tokens included. So a special token
// between the two bytes of one character leaves each byte an U+FFFD, and
// Llama's Strip decoder removes one space at the start of the text only.
func (t *HF) Decode(ids []int, skipSpecial bool) (string, error) {
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		tok, ok := t.token(id)
		if !ok {
			return "", fmt.Errorf("tokenizer: decode: id %d is outside the vocabulary (size %d)", id, t.vocabSize)
		}
		if skipSpecial && t.added.special[tok] {
			continue
		}
		tokens = append(tokens, tok)
	}
	if t.decoder == nil {
		return strings.Join(tokens, " "), nil
	}
	return strings.Join(t.decoder.decodeChain(tokens), ""), nil
}

func (t *HF) token(id int) (string, bool) {
	if i, ok := t.added.byID[id]; ok {
		return t.added.tokens[i].text, true
	}
	if id >= 0 && id < len(t.model.tokens) && t.model.known[id] {
		return t.model.tokens[id], true
	}
	return "", false
}

// Token returns the string of id ("" when out of range), as Hugging Face's
// id_to_token: the vocabulary string, or an added token's content, or its
// normalized form for a normalized added token the normalizer changes
// (Llama's "▁<s>").
func (t *HF) Token(id int) string {
	tok, _ := t.token(id)
	return tok
}

// TokenID returns the id of a vocabulary string (added tokens first).
func (t *HF) TokenID(token string) (int, bool) {
	if id, ok := t.added.byContent[token]; ok {
		return id, true
	}
	id, ok := t.model.vocab[token]
	return id, ok
}

// TokenBytes returns the bytes id stands for in the middle of a decoded
// text: byte-level characters mapped back to bytes, <0xNN> as its byte,
// Metaspace's ▁ as a space. Decoder steps that depend on the position (the
// first token's stripped space) are not applied.
func (t *HF) TokenBytes(id int) []byte {
	tok, ok := t.token(id)
	if !ok {
		return nil
	}
	if t.decoder == nil {
		return []byte(tok)
	}
	return append([]byte{}, t.decoder.tokenBytes([]byte(tok))...)
}

// VocabSize is the number of ids, added tokens included.
func (t *HF) VocabSize() int { return t.vocabSize }

// Specials returns the special-token ids; -1 where absent.
func (t *HF) Specials() Specials { return t.specials }

// IsSpecial reports whether Decode(ids, true) drops id: its string is the
// content of an added token marked special. Like Hugging Face tokenizers, a
// special token with normalized=true whose content the normalizer changes
// (Llama's "<s>" becomes "▁<s>") is not dropped.
func (t *HF) IsSpecial(id int) bool {
	tok, ok := t.token(id)
	return ok && t.added.special[tok]
}

// postProcessor adds special tokens around an encoding (add_special_tokens).
type postProcessor interface {
	process(ids []int) []int
}

// templatePost is TemplateProcessing's "single" template: special-token ids
// and the sequence, in order.
type templatePost struct{ items []templateItem }

type templateItem struct {
	ids      []int
	sequence bool // $A: the encoded text
}

func (p templatePost) process(ids []int) []int {
	out := make([]int, 0, len(ids)+4)
	for _, it := range p.items {
		if it.sequence {
			out = append(out, ids...)
		} else {
			out = append(out, it.ids...)
		}
	}
	return out
}

// sequencePost runs post-processors in order.
type sequencePost []postProcessor

func (q sequencePost) process(ids []int) []int {
	for _, p := range q {
		ids = p.process(ids)
	}
	return ids
}
