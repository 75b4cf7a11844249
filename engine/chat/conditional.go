package chat

import (
	"errors"
	"slices"
	"strings"
)

// Conditional expressions: gonja parses `a if b else c` only as the whole
// expression of {{ }} or {% set %}, and not chained. Jinja allows it
// anywhere (in parentheses, arguments, list items), so the tag text is
// tokenized just enough to find each one and rewrite it into a form gonja
// parses and evaluates the same way.

// token is a piece of a tag's text, enough to find the extent of
// conditional expressions: strings are already rewritten.
type token struct {
	kind tokenKind
	text string
}

type tokenKind int

const (
	tokOther  tokenKind = iota // operators, numbers, other punctuation
	tokSpace                   // whitespace
	tokName                    // identifiers and keywords
	tokString                  // a string literal (rewritten)
	tokOpen                    // ( [ {
	tokClose                   // ) ] }
	tokSep                     // , : and = (not ==, <=, >=, !=)
)

func scanToken(s string) token {
	c := s[0]
	n := 1
	kind := tokOther
	switch {
	case c == ' ' || c == '\t' || c == '\n':
		kind = tokSpace
		for n < len(s) && strings.IndexByte(" \t\n", s[n]) >= 0 {
			n++
		}
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		kind = tokName
		for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
			n++
		}
	case strings.IndexByte("=!<>", c) >= 0 && len(s) > 1 && s[1] == '=':
		n = 2
	case c == ',' || c == ':' || c == '=':
		kind = tokSep
	}
	return token{kind, s[:n]}
}

// rewriteConditionals turns conditional expressions (a if b else c) that
// gonja cannot parse (inside brackets, in arguments, chained) into
// ((b) and [a] or [c])[0], which it can and which evaluates the same way:
// lazily, and to a when b is true even if a is false. Without else the
// result is Undefined, as in Jinja: ((b) and [a] or [])[0]. Besides
// bracketed parts, the whole expression of {{ }} and of {% set x = ... %}
// is rewritten; other statements keep theirs (`for x in y if z` keeps its
// loop filter).
func rewriteConditionals(toks []token, isOutput bool) ([]token, error) {
	toks, err := rewriteGroups(toks)
	if err != nil {
		return nil, err
	}
	// The expression: all of {{ }}, or what follows = in {% set x = ... %};
	// whitespace-control marks and spaces at both ends stay outside.
	lo, hi := 0, len(toks)
	for lo < hi && (toks[lo].kind == tokSpace || toks[lo].text == "-" || toks[lo].text == "+") {
		lo++
	}
	if !isOutput {
		if lo == hi || toks[lo].text != "set" {
			return toks, nil
		}
		for lo < hi && toks[lo].text != "=" {
			if toks[lo].kind == tokOpen {
				return toks, nil // not a plain target
			}
			lo++
		}
		lo++
	}
	for hi > lo && (toks[hi-1].kind == tokSpace || toks[hi-1].text == "-") {
		hi--
	}
	if lo >= hi {
		return toks, nil
	}
	mid, err := conditional(toks[lo:hi])
	if err != nil {
		return nil, err
	}
	return slices.Concat(toks[:lo], mid, toks[hi:]), nil
}

// rewriteGroups rewrites the elements of every bracketed group, innermost
// first.
func rewriteGroups(toks []token) ([]token, error) {
	var out []token
	for i := 0; i < len(toks); i++ {
		if toks[i].kind != tokOpen {
			out = append(out, toks[i])
			continue
		}
		end := matchingClose(toks, i)
		inner, err := rewriteGroups(toks[i+1 : end])
		if err != nil {
			return nil, err
		}
		out = append(out, toks[i])
		start, depth := 0, 0
		for j := 0; j <= len(inner); j++ {
			if j < len(inner) {
				switch inner[j].kind {
				case tokOpen:
					depth++
				case tokClose:
					depth--
				}
				if inner[j].kind != tokSep || depth != 0 {
					continue
				}
			}
			elem, err := conditional(inner[start:j])
			if err != nil {
				return nil, err
			}
			out = append(out, elem...)
			if j < len(inner) {
				out = append(out, inner[j])
			}
			start = j + 1
		}
		if end < len(toks) {
			out = append(out, toks[end])
		}
		i = end
	}
	return out, nil
}

// matchingClose returns the index of the bracket closing toks[open], or
// len(toks) when it is missing.
func matchingClose(toks []token, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch toks[i].kind {
		case tokOpen:
			depth++
		case tokClose:
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(toks)
}

// conditional rewrites one element when it is a conditional expression at
// its own bracket level: a if b else c, possibly chained
// (a if b else c if d else e) or without a final else. The output nests
// right to left: ((b) and [a] or [((d) and [c] or [e])[0]])[0].
func conditional(elem []token) ([]token, error) {
	var keywords []int // positions of if/else at depth 0
	depth := 0
	for i, t := range elem {
		switch {
		case t.kind == tokOpen:
			depth++
		case t.kind == tokClose:
			depth--
		case depth == 0 && t.kind == tokName && (t.text == "if" || t.text == "else"):
			keywords = append(keywords, i)
		}
	}
	if len(keywords) == 0 {
		return elem, nil
	}
	segments := make([][]token, 0, len(keywords)+1)
	prev := 0
	for n, k := range keywords {
		if want := [2]string{"if", "else"}[n%2]; elem[k].text != want {
			return elem, nil // not a conditional expression: gonja reports it
		}
		segments = append(segments, elem[prev:k])
		prev = k + 1
	}
	segments = append(segments, elem[prev:])
	for _, seg := range segments {
		if blank(seg) {
			return nil, errors.New("incomplete conditional expression (a if b else c)")
		}
	}
	text := func(s string) token { return token{tokOther, s} }
	var out []token
	pairs := len(segments) / 2 // (value, condition) pairs that have an else
	if len(segments)%2 == 0 {
		pairs-- // the last pair has no else: its alternative is Undefined
	}
	for j := range pairs {
		out = append(out, text("(("))
		out = append(out, segments[2*j+1]...)
		out = append(out, text(") and ["))
		out = append(out, segments[2*j]...)
		out = append(out, text("] or ["))
	}
	last := segments[2*pairs:]
	if len(last) == 1 {
		out = append(out, last[0]...)
	} else {
		out = append(out, text("(("))
		out = append(out, last[1]...)
		out = append(out, text(") and ["))
		out = append(out, last[0]...)
		out = append(out, text("] or [])[0]"))
	}
	for range pairs {
		out = append(out, text("])[0]"))
	}
	return out, nil
}

func blank(toks []token) bool {
	for _, t := range toks {
		if t.kind != tokSpace {
			return false
		}
	}
	return true
}
