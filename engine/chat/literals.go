package chat

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// String literals: Jinja decodes them with Python's escape rules, gonja with
// Go's (after undoing only \' and \"), and gonja's lexer mis-reads a
// literal ending in an escaped backslash. Every literal is therefore
// decoded here and written back in a form gonja reads to the same text.

// rewriteStrings reads the string literal at src[i], and any literals that
// follow it separated only by whitespace, writes their joined value as one
// literal gonja decodes identically, and returns the index after them.
func rewriteStrings(out *strings.Builder, src string, i int) (int, error) {
	var value strings.Builder
	for {
		end, err := decodeLiteral(&value, src, i)
		if err != nil {
			return 0, err
		}
		i = end
		j := i
		for j < len(src) && strings.IndexByte(" \t\n", src[j]) >= 0 {
			j++
		}
		if j < len(src) && (src[j] == '\'' || src[j] == '"') {
			i = j
			continue
		}
		break
	}
	out.WriteString(gonjaLiteral(value.String()))
	return i, nil
}

// decodeLiteral decodes the Python-style literal at src[start] (quote
// included) into value and returns the index after its closing quote.
// The rules are those of Jinja: the text between the quotes goes through
// .encode("ascii", "backslashreplace").decode("unicode-escape").
func decodeLiteral(value *strings.Builder, src string, start int) (int, error) {
	quote := src[start]
	line := lineOf(src, start)
	i := start + 1
	for {
		if i >= len(src) {
			return 0, fmt.Errorf("line %d: unterminated string", line)
		}
		c := src[i]
		if c == quote {
			return i + 1, nil
		}
		if c != '\\' {
			r, size := utf8.DecodeRuneInString(src[i:])
			value.WriteRune(r)
			i += size
			continue
		}
		if i+1 >= len(src) {
			return 0, fmt.Errorf("line %d: unterminated string", line)
		}
		n, err := decodeEscape(value, src[i+1:])
		if err != nil {
			return 0, fmt.Errorf("line %d: string literal: %w", line, err)
		}
		i += 1 + n
	}
}

// decodeEscape decodes the escape whose text (after the backslash) starts
// s, and returns how many bytes of s it used.
func decodeEscape(value *strings.Builder, s string) (int, error) {
	simple := map[byte]string{
		'\n': "", '\\': `\`, '\'': `'`, '"': `"`, 'a': "\a", 'b': "\b",
		'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v",
	}
	c := s[0]
	if text, ok := simple[c]; ok {
		value.WriteString(text)
		return 1, nil
	}
	switch {
	case c >= '0' && c <= '7':
		n := 1
		for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			n++
		}
		code, _ := strconv.ParseUint(s[:n], 8, 32)
		value.WriteRune(rune(code))
		return n, nil
	case c == 'x' || c == 'u' || c == 'U':
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if len(s) < 1+digits {
			return 0, fmt.Errorf("truncated \\%cXX escape", c)
		}
		code, err := strconv.ParseUint(s[1:1+digits], 16, 32)
		if err != nil || strings.ContainsAny(s[1:1+digits], "+-_") {
			return 0, fmt.Errorf("truncated \\%cXX escape", c)
		}
		if code > utf8.MaxRune {
			return 0, fmt.Errorf("illegal Unicode character \\%s", s[:1+digits])
		}
		value.WriteRune(rune(code))
		return 1 + digits, nil
	case c == 'N':
		return 0, fmt.Errorf(`\N{...} escapes are not supported`)
	case c >= utf8.RuneSelf:
		// Jinja first writes the character as \xhh, \uhhhh or \Uhhhhhhhh,
		// so the backslash escapes that backslash: the text stays.
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r < 0x100:
			fmt.Fprintf(value, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(value, `\u%04x`, r)
		default:
			fmt.Fprintf(value, `\U%08x`, r)
		}
		return size, nil
	}
	value.WriteByte('\\') // unknown escape: Python keeps it
	value.WriteByte(c)
	return 1, nil
}

// gonjaLiteral writes s as a double-quoted literal that gonja's lexer and
// parser decode back to s: letters, digits, spaces and harmless punctuation
// as they are, other ASCII as \xhh (which its strconv.Unquote step
// decodes), non-ASCII as raw UTF-8.
func gonjaLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r >= utf8.RuneSelf:
			b.WriteRune(r)
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			strings.ContainsRune(" !$&()*+,-./:;<=>?@[]^_`|~", r):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, `\x%02x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
