package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Stream decodes ids one at a time, as a model generates them, and returns
// only text that is complete: a character split across tokens (an emoji in
// GPT-2's byte-level tokens, a run of <0xNN> byte-fallback tokens) is held
// back until its last byte arrives.
//
// Each Push decodes all ids so far and returns what the decoded text adds
// to the text already returned, so decoder rules that look at the start of
// the text (a stripped leading space) apply once, as in Decode. While the
// bytes of the tokens not yet returned end in an unfinished UTF-8 sequence
// (see Tokenizer.TokenBytes), nothing is returned and pending holds those
// bytes. Ids the tokenizer does not know are ignored.
type Stream struct {
	tok         Tokenizer
	skipSpecial bool
	ids         []int
	held        int    // ids[held:] are not yet reflected in text
	text        string // everything returned so far
}

// NewStream returns a stream decoder over tok; skipSpecial is as in Decode.
func NewStream(tok Tokenizer, skipSpecial bool) *Stream {
	return &Stream{tok: tok, skipSpecial: skipSpecial}
}

// Push adds id and returns the newly completed text and the bytes held back
// (nil when none).
func (s *Stream) Push(id int) (text string, pending []byte) {
	if s.tok.TokenBytes(id) == nil {
		return "", s.pending()
	}
	s.ids = append(s.ids, id)
	pending = s.pending()
	if incompleteTail(pending) > 0 {
		return "", pending
	}
	return s.emit(), nil
}

// Flush returns the text still held back, with an unfinished character
// written as U+FFFD (as Decode writes it), and ends the stream: the next
// Push starts a new text.
func (s *Stream) Flush() string {
	out := s.emit()
	s.ids, s.held, s.text = s.ids[:0], 0, ""
	return out
}

// pending returns the bytes of the tokens not yet returned.
func (s *Stream) pending() []byte {
	var b []byte
	for _, id := range s.ids[s.held:] {
		if s.skipSpecial && s.tok.IsSpecial(id) {
			continue
		}
		b = append(b, s.tok.TokenBytes(id)...)
	}
	return b
}

// emit decodes all ids and returns what is new. Should the decoder rewrite
// text already returned (bytes that turn out not to be UTF-8 inside a
// byte-fallback run), it returns the text from the first difference.
func (s *Stream) emit() string {
	full, err := s.tok.Decode(s.ids, s.skipSpecial)
	if err != nil { // ids were checked in Push; nothing new to say
		return ""
	}
	s.held = len(s.ids)
	n := commonPrefix(full, s.text)
	s.text = full
	return full[n:]
}

// commonPrefix returns the length of the longest common prefix of a and b
// that ends on a character boundary of a.
func commonPrefix(a, b string) int {
	if strings.HasPrefix(a, b) {
		return len(b)
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && n < len(a) && !utf8.RuneStart(a[n]) {
		n--
	}
	return n
}
