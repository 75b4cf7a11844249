package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// addedToken is an entry of tokenizer.json's added_tokens (or of
// tokenizer_config.json's added_tokens_decoder): a string that is cut out of
// the input before the normalizer and the model see it.
type addedToken struct {
	content string
	id      int
	// singleWord: only match when not inside a word; lstrip, rstrip: the
	// match swallows the whitespace on its left, right; normalized: match
	// against the normalized text rather than the raw input; special:
	// marked special (its content joins the set Decode(ids, true) skips,
	// see HF.IsSpecial).
	singleWord, lstrip, rstrip, normalized, special bool
	// text is what Token and Decode give for id: the content, or, for a
	// normalized token whose content the normalizer changes, the normalized
	// form (Llama's "<s>" becomes "▁<s>"), as Hugging Face tokenizers
	// 0.23's id-to-token map does so that the decoder can undo it.
	text string
}

// tokenMatcher finds added tokens in text, leftmost and then longest first,
// like the Aho-Corasick automaton Hugging Face builds (MatchKind::
// LeftmostLongest).
type tokenMatcher struct {
	patterns []string
	tokens   []int // pattern index -> index into addedVocab.tokens
	set      prefixSet
}

func newTokenMatcher(patterns []string, tokens []int) tokenMatcher {
	return tokenMatcher{patterns: patterns, tokens: tokens, set: newPrefixSet(patterns)}
}

func (m *tokenMatcher) empty() bool { return len(m.patterns) == 0 }

// find returns the leftmost-longest pattern occurrence at or after from.
func (m *tokenMatcher) find(s string, from int) (start, end, pattern int, ok bool) {
	i, k, ok := m.set.find(s, from)
	if !ok {
		return 0, 0, 0, false
	}
	return i, i + len(m.patterns[k]), k, true
}

// addedVocab holds the added tokens and splits text on them.
type addedVocab struct {
	tokens    []addedToken
	byID      map[int]int    // id -> index into tokens
	byContent map[string]int // content -> id
	// special holds the contents of the special tokens. Decode(ids, true)
	// drops a token whose string is in it, as Hugging Face compares
	// strings, not ids: a normalized special whose text differs from its
	// content ("▁<s>") is kept.
	special map[string]bool
	raw     tokenMatcher
	norm    tokenMatcher // patterns are the normalized contents
}

// newAddedVocab indexes tokens; normalized tokens are matched in their
// normalized form, as Hugging Face matches them (so with Llama's Prepend
// normalizer "<s>" is looked for as "▁<s>"), and that form is also their
// text (see addedToken.text).
func newAddedVocab(tokens []addedToken, n normalizer) (*addedVocab, error) {
	a := &addedVocab{tokens: tokens, byID: make(map[int]int, len(tokens)),
		byContent: make(map[string]int, len(tokens)), special: make(map[string]bool)}
	var rawPats, normPats []string
	var rawIdx, normIdx []int
	for i := range tokens {
		t := &tokens[i]
		t.text = t.content
		a.byID[t.id] = i
		if _, dup := a.byContent[t.content]; !dup {
			a.byContent[t.content] = t.id
		}
		if t.content == "" {
			continue
		}
		if t.special {
			a.special[t.content] = true
		}
		if !t.normalized {
			rawPats = append(rawPats, t.content)
			rawIdx = append(rawIdx, i)
			continue
		}
		if n != nil {
			var err error
			if t.text, err = n.normalize(t.content); err != nil {
				return nil, fmt.Errorf("added token %q: %w", t.content, err)
			}
		}
		normPats = append(normPats, t.text)
		normIdx = append(normIdx, i)
	}
	a.raw = newTokenMatcher(rawPats, rawIdx)
	a.norm = newTokenMatcher(normPats, normIdx)
	return a, nil
}

// segment is a span of text; id >= 0 when it is an added token.
type segment struct {
	start, end int
	id         int
}

// split cuts s at the added tokens m finds, honouring single_word, lstrip
// and rstrip like AddedVocabulary::find_matches, and appends the segments
// (tokens and the text between them) to dst.
func (a *addedVocab) split(s string, m *tokenMatcher, dst []segment) []segment {
	if s == "" {
		return dst
	}
	if m.empty() {
		return append(dst, segment{0, len(s), -1})
	}
	done := 0 // end of the last segment
	for pos := 0; pos < len(s); {
		start, end, k, ok := m.find(s, pos)
		if !ok {
			break
		}
		pos = end // the automaton resumes after the match, kept or not
		t := &a.tokens[m.tokens[k]]
		if t.singleWord {
			before := start == 0 || !endsWithWord(s[:start])
			after := end == len(s) || !startsWithWord(s[end:])
			if !before || !after {
				continue
			}
		}
		if t.lstrip {
			start = max(start-trailingSpace(s[:start]), done)
		}
		if t.rstrip {
			end += leadingSpace(s[end:])
		}
		if start < done {
			continue // would overlap the previous token (only with odd whitespace tokens)
		}
		if done < start {
			dst = append(dst, segment{done, start, -1})
		}
		dst = append(dst, segment{start, end, t.id})
		done = end
	}
	if done < len(s) {
		dst = append(dst, segment{done, len(s), -1})
	}
	return dst
}

// isWordRune is the Rust regex crate's Unicode \w: Alphabetic, marks,
// decimal numbers, connector punctuation and the joiners.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) ||
		unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) || r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordRune(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordRune(r)
}

// trailingSpace returns the byte length of the whitespace ending s.
func trailingSpace(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeLastRuneInString(s[:len(s)-n])
		if !unicode.IsSpace(r) {
			break
		}
		n += size
	}
	return n
}

// leadingSpace returns the byte length of the whitespace starting s.
func leadingSpace(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsSpace(r) {
			break
		}
		n += size
	}
	return n
}
