package tokenizer

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites text before it is split (Hugging Face's normalizers).
type normalizer interface {
	normalize(s string) (string, error)
}

// unicodeNorm is one of the NFC, NFD, NFKC and NFKD normalizers.
type unicodeNorm struct{ form norm.Form }

func (u unicodeNorm) normalize(s string) (string, error) {
	if u.form.IsNormalString(s) {
		return s, nil
	}
	return u.form.String(s), nil
}

// prependNorm puts a string in front of non-empty text (Llama's "▁").
type prependNorm struct{ prefix string }

func (p prependNorm) normalize(s string) (string, error) {
	if s == "" {
		return s, nil
	}
	return p.prefix + s, nil
}

// replaceNorm replaces every match of a pattern; it is also the Replace
// decoder.
type replaceNorm struct {
	literal string // used when pattern is nil
	pattern finder
	content string
}

func (r replaceNorm) normalize(s string) (string, error) {
	if r.pattern == nil {
		return strings.ReplaceAll(s, r.literal, r.content), nil
	}
	spans, err := matchSpans(r.pattern, s, nil)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, sp := range spans {
		if sp.match {
			b.WriteString(r.content)
		} else {
			b.WriteString(s[sp.start:sp.end])
		}
	}
	return b.String(), nil
}

// sequenceNorm runs normalizers in order.
type sequenceNorm []normalizer

func (q sequenceNorm) normalize(s string) (string, error) {
	var err error
	for _, n := range q {
		if s, err = n.normalize(s); err != nil {
			return "", err
		}
	}
	return s, nil
}
