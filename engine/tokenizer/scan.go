package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// finder finds the leftmost match of a pattern in s at or after from.
type finder interface {
	find(s string, from int) (start, end int, ok bool, err error)
}

// The three split patterns nearly every byte-level BPE tokenizer uses. Each
// has a hand-written scanner below (the fast path); tests check every
// scanner against the general regex matcher on random and fuzzed text.
const (
	// gpt2Pattern is GPT-2's, also applied by the ByteLevel pre-tokenizer.
	gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	// llama3Pattern is Llama-3's (tiktoken cl100k style): digits in threes.
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// qwen2Pattern is Qwen2's: the Llama-3 pattern with single digits.
	qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// newFinder returns the scanner for a well-known pattern, or compiles it.
func newFinder(pattern string) (finder, error) {
	switch pattern {
	case gpt2Pattern:
		return gpt2Scanner{}, nil
	case llama3Pattern:
		return llamaScanner{maxDigits: 3}, nil
	case qwen2Pattern:
		return llamaScanner{maxDigits: 1}, nil
	}
	return compileRegex(pattern)
}

// Character classes of the split patterns.
const (
	clsOther  = iota // [^\s\p{L}\p{N}]
	clsLetter        // \p{L}
	clsNumber        // \p{N}
	clsSpace         // \s (Unicode White_Space)
)

func classify(r rune) uint8 {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			return clsLetter
		case '0' <= r && r <= '9':
			return clsNumber
		case r == ' ', '\t' <= r && r <= '\r':
			return clsSpace
		}
		return clsOther
	}
	switch {
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	case unicode.IsSpace(r):
		return clsSpace
	}
	return clsOther
}

// runOf returns the end of the run of class c that starts at j.
func runOf(s string, j int, c uint8) int {
	for j < len(s) {
		if s[j] < utf8.RuneSelf {
			if classify(rune(s[j])) != c {
				break
			}
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if classify(r) != c {
			break
		}
		j += size
	}
	return j
}

// contraction returns the length of the contraction suffix ('s 't 're 've
// 'm 'll 'd without the apostrophe) at the start of s, or 0.
func contraction(s string, fold bool) int {
	for _, suffix := range [...]string{"s", "t", "re", "ve", "m", "ll", "d"} {
		n := 0
		for _, want := range suffix {
			if n >= len(s) {
				n = -1
				break
			}
			r, size := utf8.DecodeRuneInString(s[n:])
			if r != want && !(fold && equalFold(r, want)) {
				n = -1
				break
			}
			n += size
		}
		if n > 0 {
			return n
		}
	}
	return 0
}

// spaceEnd ends a whitespace match: the run [i, j) minus its last character
// when a non-space follows (\s+(?!\S)), or the whole run when it ends the
// text or is one character long (\s+).
func spaceEnd(s string, i, j int) int {
	if j == len(s) {
		return j
	}
	_, size := utf8.DecodeLastRuneInString(s[i:j])
	if j-size > i {
		return j - size
	}
	return j
}

// gpt2Scanner matches gpt2Pattern.
type gpt2Scanner struct{}

func (gpt2Scanner) find(s string, from int) (int, int, bool, error) {
	if from >= len(s) {
		return 0, 0, false, nil
	}
	return from, scanGPT2(s, from), true, nil
}

// scanGPT2 returns the end of the gpt2Pattern match at i (i < len(s)); the
// pattern matches at every position.
func scanGPT2(s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == '\'' {
		if n := contraction(s[i+1:], false); n > 0 {
			return i + 1 + n
		}
	}
	c := classify(r)
	if r == ' ' && i+1 < len(s) { // ' ?' before a letter, number or other run
		r2, size2 := utf8.DecodeRuneInString(s[i+1:])
		if c2 := classify(r2); c2 != clsSpace {
			return runOf(s, i+1+size2, c2)
		}
	}
	if c != clsSpace {
		return runOf(s, i+size, c)
	}
	return spaceEnd(s, i, runOf(s, i+size, clsSpace))
}

// llamaScanner matches llama3Pattern (maxDigits 3) and qwen2Pattern
// (maxDigits 1).
type llamaScanner struct{ maxDigits int }

func (l llamaScanner) find(s string, from int) (int, int, bool, error) {
	if from >= len(s) {
		return 0, 0, false, nil
	}
	return from, l.scan(s, from), true, nil
}

func (l llamaScanner) scan(s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == '\'' { // (?i:'s|'t|'re|'ve|'m|'ll|'d)
		if n := contraction(s[i+1:], true); n > 0 {
			return i + 1 + n
		}
	}
	c := classify(r)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c == clsLetter {
		return runOf(s, i+size, clsLetter)
	}
	if c != clsNumber && r != '\r' && r != '\n' && i+size < len(s) {
		r2, size2 := utf8.DecodeRuneInString(s[i+size:])
		if classify(r2) == clsLetter {
			return runOf(s, i+size+size2, clsLetter)
		}
	}
	// \p{N}{1,maxDigits}
	if c == clsNumber {
		j := i + size
		for n := 1; n < l.maxDigits && j < len(s); n++ {
			r2, size2 := utf8.DecodeRuneInString(s[j:])
			if classify(r2) != clsNumber {
				break
			}
			j += size2
		}
		return j
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	start := -1
	if c == clsOther {
		start = i
	} else if r == ' ' && i+1 < len(s) {
		if r2, _ := utf8.DecodeRuneInString(s[i+1:]); classify(r2) == clsOther {
			start = i + 1
		}
	}
	if start >= 0 {
		_, size2 := utf8.DecodeRuneInString(s[start:])
		j := runOf(s, start+size2, clsOther)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// Whitespace. \s*[\r\n]+ ends after the last CR or LF of the run.
	j, last := i, -1
	for j < len(s) {
		r2, size2 := utf8.DecodeRuneInString(s[j:])
		if classify(r2) != clsSpace {
			break
		}
		j += size2
		if r2 == '\r' || r2 == '\n' {
			last = j
		}
	}
	if last >= 0 {
		return last
	}
	return spaceEnd(s, i, j) // \s+(?!\S) | \s+
}

// literalFinder finds a fixed string (a Split or Replace "String" pattern).
type literalFinder string

func (l literalFinder) find(s string, from int) (int, int, bool, error) {
	if from > len(s) {
		return 0, 0, false, nil
	}
	if k := strings.Index(s[from:], string(l)); k >= 0 {
		return from + k, from + k + len(l), true, nil
	}
	return 0, 0, false, nil
}

// span is a piece of a string: [start, end) and whether a pattern matched it.
type span struct {
	start, end int
	match      bool
}

// matchSpans covers s with the matches of f and the gaps between them, like
// Hugging Face's Pattern::find_matches. Empty matches right after a match
// are skipped, as Oniguruma's and Go's iterators do.
func matchSpans(f finder, s string, dst []span) ([]span, error) {
	if s == "" {
		return append(dst, span{0, 0, false}), nil
	}
	prev, lastEnd := 0, -1
	for pos := 0; pos <= len(s); {
		start, end, ok, err := f.find(s, pos)
		if err != nil {
			return dst, err
		}
		if !ok {
			break
		}
		if start == end && start == lastEnd {
			if start >= len(s) {
				break
			}
			_, size := utf8.DecodeRuneInString(s[start:])
			pos = start + size
			continue
		}
		if prev < start {
			dst = append(dst, span{prev, start, false})
		}
		dst = append(dst, span{start, end, true})
		prev, lastEnd = end, end
		if end > start {
			pos = end
			continue
		}
		if end >= len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[end:])
		pos = end + size
	}
	if prev < len(s) {
		dst = append(dst, span{prev, len(s), false})
	}
	return dst, nil
}

// charSpans covers s with one match span per character that pred accepts
// and the gaps between them (Hugging Face's Pattern for a char predicate).
func charSpans(s string, pred func(rune) bool, dst []span) []span {
	last := 0
	for i, r := range s {
		if pred(r) {
			if last < i {
				dst = append(dst, span{last, i, false})
			}
			end := i + utf8.RuneLen(r)
			if r == utf8.RuneError {
				_, size := utf8.DecodeRuneInString(s[i:])
				end = i + size
			}
			dst = append(dst, span{i, end, true})
			last = end
		}
	}
	if last < len(s) {
		dst = append(dst, span{last, len(s), false})
	}
	return dst
}
