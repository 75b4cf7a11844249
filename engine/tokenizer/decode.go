package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// decoder turns token strings back into text (Hugging Face's decoders).
// decodeChain maps the list of token strings to a new list; the text is the
// concatenation of the last list. tokenBytes maps one token, in the middle
// of a text, to the bytes it contributes (see Tokenizer.TokenBytes).
type decoder interface {
	decodeChain(tokens []string) []string
	tokenBytes(tok []byte) []byte
}

// byteLevelDec undoes the byte-level mapping and reads the bytes as UTF-8,
// replacing ill-formed sequences with U+FFFD.
type byteLevelDec struct{}

func (byteLevelDec) decodeChain(tokens []string) []string {
	var raw []byte
	for _, t := range tokens {
		raw = appendUnByteLevel(raw, t)
	}
	return []string{string(appendLossy(nil, raw))}
}

func (byteLevelDec) tokenBytes(tok []byte) []byte { return appendUnByteLevel(nil, string(tok)) }

// byteFallbackDec turns runs of <0xNN> tokens into the text their bytes
// spell, or one U+FFFD per byte when the run is not valid UTF-8.
type byteFallbackDec struct{}

// fallbackByte parses a <0xNN> token (Rust's u8::from_str_radix accepts
// either case and a leading '+').
func fallbackByte(t string) (byte, bool) {
	if len(t) != 6 || t[:3] != "<0x" || t[5] != '>' {
		return 0, false
	}
	h := t[3:5]
	if h[0] == '+' {
		h = h[1:]
	}
	var v byte
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | c
	}
	return v, true
}

func (byteFallbackDec) decodeChain(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, t := range tokens {
		if b, ok := fallbackByte(t); ok {
			run = append(run, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

func (byteFallbackDec) tokenBytes(tok []byte) []byte {
	if b, ok := fallbackByte(string(tok)); ok {
		return []byte{b}
	}
	return tok
}

// fuseDec joins all tokens into one.
type fuseDec struct{}

func (fuseDec) decodeChain(tokens []string) []string { return []string{strings.Join(tokens, "")} }
func (fuseDec) tokenBytes(tok []byte) []byte         { return tok }

// stripDec removes up to start leading and stop trailing content characters
// from every token.
type stripDec struct {
	content     rune
	start, stop int
}

func (s stripDec) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		runes := []rune(t)
		lo := 0
		for lo < s.start && lo < len(runes) && runes[lo] == s.content {
			lo++
		}
		hi := len(runes)
		for n := 0; n < s.stop && hi > lo && runes[hi-1] == s.content; n++ {
			hi--
		}
		out[i] = string(runes[lo:hi])
	}
	return out
}

func (stripDec) tokenBytes(tok []byte) []byte { return tok }

// replaceDec replaces a pattern in every token (Llama's "▁" -> " ").
type replaceDec struct{ r replaceNorm }

func (d replaceDec) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		// A regex too costly for this token leaves it unchanged.
		if s, err := d.r.normalize(t); err == nil {
			t = s
		}
		out[i] = t
	}
	return out
}

func (d replaceDec) tokenBytes(tok []byte) []byte {
	if s, err := d.r.normalize(string(tok)); err == nil {
		return []byte(s)
	}
	return tok
}

// metaspaceDec turns the replacement character back into spaces; in the
// first token it is dropped instead unless prepend_scheme is "never".
type metaspaceDec struct {
	replacement rune
	scheme      prependScheme
}

func (m metaspaceDec) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		var b strings.Builder
		for _, r := range t {
			switch {
			case r != m.replacement:
				b.WriteRune(r)
			case i == 0 && m.scheme != prependNever:
			default:
				b.WriteByte(' ')
			}
		}
		out[i] = b.String()
	}
	return out
}

func (m metaspaceDec) tokenBytes(tok []byte) []byte {
	return []byte(strings.ReplaceAll(string(tok), string(m.replacement), " "))
}

// sequenceDec runs decoders in order.
type sequenceDec []decoder

func (q sequenceDec) decodeChain(tokens []string) []string {
	for _, d := range q {
		tokens = d.decodeChain(tokens)
	}
	return tokens
}

func (q sequenceDec) tokenBytes(tok []byte) []byte {
	for _, d := range q {
		tok = d.tokenBytes(tok)
	}
	return tok
}
