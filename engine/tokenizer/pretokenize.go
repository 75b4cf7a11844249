package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// piece is a span of text on its way to the model.
type piece struct {
	text string
	// atStart is true when the piece begins at offset 0 of the original
	// input; Metaspace's prepend_scheme "first" only prepends there.
	atStart bool
	// bytes is true when text holds raw bytes that stand for their
	// byte-level characters (see bytelevel.go): the ByteLevel pre-tokenizer
	// leaves the mapping to the model, which looks bytes up directly.
	bytes bool
}

// mapped returns p with its byte-level characters written out.
func (p piece) mapped() piece {
	if p.bytes {
		p.text = byteLevelString(p.text)
		p.bytes = false
	}
	return p
}

// preTokenizer splits a piece into smaller pieces and hands each non-empty
// one, in order, to emit. spans is scratch space the stage may keep.
type preTokenizer interface {
	split(p piece, spans *[]span, emit func(piece) error) error
}

// behavior is a SplitDelimiterBehavior: what to do with the matches.
type behavior uint8

const (
	isolated behavior = iota
	removed
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(s string) (behavior, error) {
	switch s {
	case "Isolated":
		return isolated, nil
	case "Removed":
		return removed, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("split behavior %q is not supported", s)
}

// applyBehavior turns the spans of a string (matches and gaps, in order)
// into the spans to keep, exactly as NormalizedString::split does. It works
// in place.
func applyBehavior(spans []span, b behavior) []span {
	out := spans[:0]
	switch b {
	case isolated:
		return spans
	case removed:
		for _, s := range spans {
			if !s.match {
				out = append(out, s)
			}
		}
	case contiguous:
		prevMatch := false
		for _, s := range spans {
			if s.match == prevMatch && len(out) > 0 {
				out[len(out)-1].end = s.end
			} else {
				out = append(out, s)
			}
			prevMatch = s.match
		}
	case mergedWithPrevious:
		prevMatch := false
		for _, s := range spans {
			if s.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = s.end
			} else {
				out = append(out, s)
			}
			prevMatch = s.match
		}
	case mergedWithNext:
		// Walk backwards, merging each match into the span after it.
		n := len(spans)
		w := n
		prevMatch := false
		for i := n - 1; i >= 0; i-- {
			s := spans[i]
			if s.match && !prevMatch && w < n {
				spans[w].start = s.start
			} else {
				w--
				spans[w] = s
			}
			prevMatch = s.match
		}
		out = append(out, spans[w:]...)
	}
	return out
}

// sub returns the part [start, end) of p.
func (p piece) sub(start, end int) piece {
	return piece{text: p.text[start:end], atStart: p.atStart && start == 0, bytes: p.bytes}
}

// emitSpans emits the non-empty spans of p as pieces.
func emitSpans(p piece, spans []span, emit func(piece) error) error {
	for _, s := range spans {
		if s.end > s.start {
			if err := emit(p.sub(s.start, s.end)); err != nil {
				return err
			}
		}
	}
	return nil
}

// splitPre is the Split pre-tokenizer.
type splitPre struct {
	pattern  finder
	behavior behavior
	invert   bool
}

func (s *splitPre) split(p piece, spans *[]span, emit func(piece) error) error {
	if s.behavior == isolated && !s.invert {
		return s.isolate(p, emit)
	}
	var err error
	*spans, err = matchSpans(s.pattern, p.text, (*spans)[:0])
	if err != nil {
		return err
	}
	if s.invert {
		for i := range *spans {
			(*spans)[i].match = !(*spans)[i].match
		}
	}
	return emitSpans(p, applyBehavior(*spans, s.behavior), emit)
}

// isolate is split for the Isolated behavior, streaming: every match and
// every gap is a piece (empty matches give nothing).
func (s *splitPre) isolate(p piece, emit func(piece) error) error {
	prev := 0
	for pos := 0; pos < len(p.text); {
		start, end, ok, err := s.pattern.find(p.text, pos)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if start > prev {
			if err := emit(p.sub(prev, start)); err != nil {
				return err
			}
		}
		if end > start {
			if err := emit(p.sub(start, end)); err != nil {
				return err
			}
			pos, prev = end, end
			continue
		}
		prev = start
		_, size := utf8.DecodeRuneInString(p.text[start:])
		pos = start + size
	}
	if prev < len(p.text) {
		return emit(p.sub(prev, len(p.text)))
	}
	return nil
}

// digitsPre is the Digits pre-tokenizer: digits (Rust's char::is_numeric,
// Unicode N) alone or in runs.
type digitsPre struct{ individual bool }

func (d digitsPre) split(p piece, spans *[]span, emit func(piece) error) error {
	*spans = charSpans(p.text, unicode.IsNumber, (*spans)[:0])
	b := contiguous
	if d.individual {
		b = isolated
	}
	return emitSpans(p, applyBehavior(*spans, b), emit)
}

// prependScheme says when Metaspace prepends its replacement character.
type prependScheme uint8

const (
	prependAlways prependScheme = iota
	prependFirst                // only to a piece at the start of the input
	prependNever
)

func parsePrependScheme(s string) (prependScheme, error) {
	switch s {
	case "always":
		return prependAlways, nil
	case "first":
		return prependFirst, nil
	case "never":
		return prependNever, nil
	}
	return 0, fmt.Errorf("prepend_scheme %q is not supported", s)
}

// metaspacePre is the Metaspace pre-tokenizer (SentencePiece style): spaces
// become the replacement character (▁), which is prepended per the scheme,
// and the text is split before each replacement character.
type metaspacePre struct {
	replacement rune
	scheme      prependScheme
	splitOn     bool
}

func (m *metaspacePre) split(p piece, spans *[]span, emit func(piece) error) error {
	rep := string(m.replacement)
	text := strings.ReplaceAll(p.text, " ", rep)
	if !strings.HasPrefix(text, rep) {
		if m.scheme == prependAlways || m.scheme == prependFirst && p.atStart {
			text = rep + text
		}
	}
	p.text = text
	if !m.splitOn {
		return emit(p)
	}
	*spans = charSpans(text, func(r rune) bool { return r == m.replacement }, (*spans)[:0])
	return emitSpans(p, applyBehavior(*spans, mergedWithNext), emit)
}

// byteLevelPre is the ByteLevel pre-tokenizer: an optional leading space,
// the GPT-2 split (use_regex), then every byte written as its byte-level
// character. The pieces it returns keep raw bytes (piece.bytes): the model
// maps them, or preTokenize does when another stage follows.
type byteLevelPre struct {
	addPrefixSpace bool
	useRegex       bool
}

func (b *byteLevelPre) split(p piece, _ *[]span, emit func(piece) error) error {
	if b.addPrefixSpace && !strings.HasPrefix(p.text, " ") {
		p.text = " " + p.text
	}
	p.bytes = true
	if !b.useRegex {
		return emit(p)
	}
	for i := 0; i < len(p.text); {
		end := scanGPT2(p.text, i)
		if err := emit(p.sub(i, end)); err != nil {
			return err
		}
		i = end
	}
	return nil
}

// validRune reports whether s holds exactly one character.
func validRune(s string) (rune, bool) {
	r, size := utf8.DecodeRuneInString(s)
	return r, size == len(s) && size > 0 && !(r == utf8.RuneError && size == 1)
}
