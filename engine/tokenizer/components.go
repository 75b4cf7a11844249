package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// This file reads the pipeline components of a tokenizer.json: normalizer,
// pre_tokenizer, decoder and post_processor.

// parseComponent reads one normalizer, pre-tokenizer, post-processor or
// decoder; a type outside supported is refused by name before the rest of
// the object is read.
func parseComponent(raw json.RawMessage, what string, supported ...string) (*hfComponent, error) {
	var typ struct {
		Type string `json:"type"`
	}
	if err := decodeExact(raw, &typ); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !slices.Contains(supported, typ.Type) {
		if err := requireFields(raw, what, "type"); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s type %q is not supported", what, typ.Type)
	}
	if err := requireFields(raw, what+" "+typ.Type, componentFields(what, typ.Type)...); err != nil {
		return nil, err
	}
	var c hfComponent
	if err := decodeExact(raw, &c); err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, typ.Type, err)
	}
	return &c, nil
}

func (c *hfComponent) pattern(what string) (finder, string, error) {
	switch {
	case c.Pattern == nil:
		return nil, "", fmt.Errorf("%s %s has no pattern", what, c.Type)
	case c.Pattern.String != nil:
		if *c.Pattern.String == "" {
			return nil, "", fmt.Errorf("%s %s has an empty pattern", what, c.Type)
		}
		return literalFinder(*c.Pattern.String), *c.Pattern.String, nil
	case c.Pattern.Regex != nil:
		f, err := newFinder(*c.Pattern.Regex)
		if err != nil {
			return nil, "", fmt.Errorf("%s %s: %w", what, c.Type, err)
		}
		return f, "", nil
	}
	return nil, "", fmt.Errorf("%s %s: pattern is neither String nor Regex", what, c.Type)
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	c, err := parseComponent(raw, "normalizer", "NFC", "NFD", "NFKC", "NFKD", "Prepend", "Replace", "Sequence")
	if err != nil {
		return nil, err
	}
	switch c.Type {
	case "NFC":
		return unicodeNorm{norm.NFC}, nil
	case "NFD":
		return unicodeNorm{norm.NFD}, nil
	case "NFKC":
		return unicodeNorm{norm.NFKC}, nil
	case "NFKD":
		return unicodeNorm{norm.NFKD}, nil
	case "Prepend":
		return prependNorm{c.Prepend}, nil
	case "Replace":
		f, lit, err := c.pattern("normalizer")
		if err != nil {
			return nil, err
		}
		if lit != "" {
			return replaceNorm{literal: lit, content: c.Content}, nil
		}
		return replaceNorm{pattern: f, content: c.Content}, nil
	case "Sequence":
		var seq sequenceNorm
		for _, sub := range c.Normalizers {
			n, err := parseNormalizer(sub)
			if err != nil {
				return nil, err
			}
			if n != nil {
				seq = append(seq, n)
			}
		}
		return seq, nil
	}
	return nil, fmt.Errorf("normalizer type %q is not supported", c.Type)
}

// parsePreTokenizer appends the pre-tokenizers of raw, flattening sequences.
func parsePreTokenizer(raw json.RawMessage, stages []preTokenizer) ([]preTokenizer, error) {
	if isNull(raw) {
		return stages, nil
	}
	c, err := parseComponent(raw, "pre_tokenizer", "ByteLevel", "Split", "Digits", "Metaspace", "Sequence")
	if err != nil {
		return nil, err
	}
	switch c.Type {
	case "ByteLevel":
		return append(stages, &byteLevelPre{addPrefixSpace: boolOr(c.AddPrefixSpace, true),
			useRegex: boolOr(c.UseRegex, true)}), nil
	case "Split":
		f, _, err := c.pattern("pre_tokenizer")
		if err != nil {
			return nil, err
		}
		b, err := parseBehavior(c.Behavior)
		if err != nil {
			return nil, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		return append(stages, &splitPre{pattern: f, behavior: b, invert: c.Invert}), nil
	case "Digits":
		return append(stages, digitsPre{individual: c.IndividualDigits}), nil
	case "Metaspace":
		m, err := c.metaspace("pre_tokenizer")
		if err != nil {
			return nil, err
		}
		return append(stages, &metaspacePre{replacement: m.replacement, scheme: m.scheme, splitOn: boolOr(c.Split, true)}), nil
	case "Sequence":
		for _, sub := range c.Pretokenizers {
			if stages, err = parsePreTokenizer(sub, stages); err != nil {
				return nil, err
			}
		}
		return stages, nil
	}
	return nil, fmt.Errorf("pre_tokenizer type %q is not supported", c.Type)
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// metaspace reads Metaspace's replacement and prepend scheme; files older
// than prepend_scheme say add_prefix_space (true: always).
func (c *hfComponent) metaspace(what string) (metaspaceDec, error) {
	rep := c.Replacement
	if rep == "" {
		rep = "▁"
	}
	r, ok := validRune(rep)
	if !ok {
		return metaspaceDec{}, fmt.Errorf("%s Metaspace: replacement %q is not one character", what, rep)
	}
	scheme := prependAlways
	if c.PrependScheme != "" {
		var err error
		if scheme, err = parsePrependScheme(c.PrependScheme); err != nil {
			return metaspaceDec{}, fmt.Errorf("%s Metaspace: %w", what, err)
		}
	} else if !boolOr(c.AddPrefixSpace, true) {
		scheme = prependNever
	}
	return metaspaceDec{replacement: r, scheme: scheme}, nil
}

func parseDecoder(raw json.RawMessage) (decoder, error) {
	if isNull(raw) {
		return nil, nil
	}
	c, err := parseComponent(raw, "decoder", "ByteLevel", "ByteFallback", "Fuse", "Strip", "Replace", "Metaspace", "Sequence")
	if err != nil {
		return nil, err
	}
	switch c.Type {
	case "ByteLevel":
		return byteLevelDec{}, nil
	case "ByteFallback":
		return byteFallbackDec{}, nil
	case "Fuse":
		return fuseDec{}, nil
	case "Strip":
		r, ok := validRune(c.Content)
		if !ok || c.Start < 0 || c.Stop < 0 {
			return nil, fmt.Errorf("decoder Strip: bad content %q or counts %d, %d", c.Content, c.Start, c.Stop)
		}
		return stripDec{content: r, start: c.Start, stop: c.Stop}, nil
	case "Replace":
		f, lit, err := c.pattern("decoder")
		if err != nil {
			return nil, err
		}
		if lit != "" {
			return replaceDec{replaceNorm{literal: lit, content: c.Content}}, nil
		}
		return replaceDec{replaceNorm{pattern: f, content: c.Content}}, nil
	case "Metaspace":
		return c.metaspace("decoder")
	case "Sequence":
		var seq sequenceDec
		for _, sub := range c.Decoders {
			d, err := parseDecoder(sub)
			if err != nil {
				return nil, err
			}
			if d != nil {
				seq = append(seq, d)
			}
		}
		return seq, nil
	}
	return nil, fmt.Errorf("decoder type %q is not supported", c.Type)
}

func parsePostProcessor(raw json.RawMessage, t *HF) (postProcessor, error) {
	if isNull(raw) {
		return nil, nil
	}
	c, err := parseComponent(raw, "post_processor", "ByteLevel", "TemplateProcessing", "RobertaProcessing", "BertProcessing", "Sequence")
	if err != nil {
		return nil, err
	}
	switch c.Type {
	case "ByteLevel": // only moves offsets
		return nil, nil
	case "TemplateProcessing":
		return c.template(t)
	case "RobertaProcessing", "BertProcessing":
		var ids [2]int
		for i, pair := range [2][]json.RawMessage{c.Cls, c.Sep} {
			name, id, err := pairID(pair)
			if err == nil {
				err = t.checkSpecialID(name, id)
			}
			if err != nil {
				return nil, fmt.Errorf("post_processor %s: %s: %w", c.Type, [2]string{"cls", "sep"}[i], err)
			}
			ids[i] = id
		}
		return templatePost{[]templateItem{{ids: []int{ids[0]}}, {sequence: true}, {ids: []int{ids[1]}}}}, nil
	case "Sequence":
		var seq sequencePost
		for _, sub := range c.Processors {
			p, err := parsePostProcessor(sub, t)
			if err != nil {
				return nil, err
			}
			if p != nil {
				seq = append(seq, p)
			}
		}
		if len(seq) == 0 {
			return nil, nil
		}
		return seq, nil
	}
	return nil, fmt.Errorf("post_processor type %q is not supported", c.Type)
}

// pairID reads a ["token", id] pair.
func pairID(pair []json.RawMessage) (string, int, error) {
	var name string
	var id uint32 // serde's (String, u32)
	if len(pair) != 2 || json.Unmarshal(pair[0], &name) != nil || json.Unmarshal(pair[1], &id) != nil {
		return "", 0, errors.New(`want ["token", id]`)
	}
	return name, int(id), nil
}

// checkSpecialID refuses a post-processor's special token whose id is not
// in the vocabulary: encoding would emit an id the model has no row for
// and Decode refuses.
func (t *HF) checkSpecialID(name string, id int) error {
	if _, ok := t.token(id); !ok {
		return fmt.Errorf("special token %q has id %d, which is not in the vocabulary (%d ids, added tokens included); fix its id in tokenizer.json", name, id, t.vocabSize)
	}
	return nil
}

// template reads TemplateProcessing's single-sequence template, written as
// a list of {"SpecialToken": ...} and {"Sequence": ...} or as "<s> $A", and
// checks that its special tokens' ids are in t's vocabulary.
func (c *hfComponent) template(t *HF) (postProcessor, error) {
	const what = "post_processor TemplateProcessing"
	type ref struct {
		ID string `json:"id"`
	}
	type item struct {
		SpecialToken *ref `json:"SpecialToken"`
		Sequence     *ref `json:"Sequence"`
	}
	var items []item
	var text string
	if err := json.Unmarshal(c.Single, &text); err == nil {
		for _, f := range strings.Fields(text) {
			name, _, _ := strings.Cut(f, ":")
			if strings.HasPrefix(name, "$") {
				items = append(items, item{Sequence: &ref{ID: strings.TrimPrefix(name, "$")}})
			} else {
				items = append(items, item{SpecialToken: &ref{ID: name}})
			}
		}
	} else {
		var raws []json.RawMessage
		if err := json.Unmarshal(c.Single, &raws); err != nil {
			return nil, fmt.Errorf("%s: single: %w", what, err)
		}
		for i, raw := range raws {
			var pieces map[string]json.RawMessage
			if err := json.Unmarshal(raw, &pieces); err != nil {
				return nil, fmt.Errorf("%s: single[%d]: %w", what, i, err)
			}
			for _, p := range pieces {
				if err := requireFields(p, fmt.Sprintf("%s: single[%d]", what, i), "id", "type_id"); err != nil {
					return nil, err
				}
			}
			var it item
			if err := decodeExact(raw, &it); err != nil {
				return nil, fmt.Errorf("%s: single[%d]: %w", what, i, err)
			}
			items = append(items, it)
		}
	}
	var p templatePost
	for _, it := range items {
		switch {
		case it.Sequence != nil:
			if id := it.Sequence.ID; id != "A" && id != "" && id != "0" {
				return nil, fmt.Errorf("%s: single uses sequence %q", what, id)
			}
			p.items = append(p.items, templateItem{sequence: true})
		case it.SpecialToken != nil:
			name := it.SpecialToken.ID
			raw, ok := c.SpecialTokens[name]
			if !ok {
				return nil, fmt.Errorf("%s: special token %q is not in special_tokens", what, name)
			}
			where := fmt.Sprintf("%s: special_tokens[%q]", what, name)
			if err := requireFields(raw, where, "id", "ids", "tokens"); err != nil {
				return nil, err
			}
			var st struct {
				IDs []uint32 `json:"ids"` // serde's Vec<u32>
			}
			if err := decodeExact(raw, &st); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			ids := make([]int, len(st.IDs))
			for i, id := range st.IDs {
				if err := t.checkSpecialID(name, int(id)); err != nil {
					return nil, fmt.Errorf("%s: %w", what, err)
				}
				ids[i] = int(id)
			}
			p.items = append(p.items, templateItem{ids: ids})
		default:
			return nil, fmt.Errorf("%s: a template item is neither SpecialToken nor Sequence", what)
		}
	}
	return p, nil
}
