package chat

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Limits on template text, checked before gonja sees it. Real chat
// templates are a few KiB with brackets nested a few levels deep; the
// limits keep gonja's recursive-descent parser far from Go's stack limit.
const (
	maxSourceBytes = 1 << 20
	maxNesting     = 256
)

// rawStart and rawEnd match the tags of a {% raw %} block, whose body is
// copied untouched.
var (
	rawStart = regexp.MustCompile(`^\{%[-+]?\s*raw\s*-?%\}`)
	rawEnd   = regexp.MustCompile(`\{%[-+]?\s*endraw\s*[-+]?%\}`)
)

// prepareSource rewrites template text so that gonja reads it as Jinja does:
//
//   - line breaks are normalised to "\n" and one trailing newline is
//     dropped (Jinja's lexer does both, keep_trailing_newline=False);
//   - every string literal inside {{ }} and {% %} is decoded with Python's
//     escape rules (\n, \t, \\, \', \", \xhh, \uhhhh, octal, unknown escapes
//     kept) and written back in a form gonja decodes to the same text;
//     adjacent literals ('a' 'b') are joined, as Jinja's parser does;
//   - conditional expressions gonja cannot parse are rewritten (see
//     rewriteConditionals).
func prepareSource(src string) (string, error) {
	if len(src) > maxSourceBytes {
		return "", fmt.Errorf("template is %d bytes, more than the %d allowed", len(src), maxSourceBytes)
	}
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	src = strings.TrimSuffix(src, "\n")

	var out strings.Builder
	out.Grow(len(src))
	for i := 0; i < len(src); {
		open := nextOpen(src, i)
		if open < 0 {
			out.WriteString(src[i:])
			break
		}
		out.WriteString(src[i:open])
		i = open
		switch src[i+1] {
		case '#': // comment: copied as is
			end := strings.Index(src[i+2:], "#}")
			if end < 0 {
				out.WriteString(src[i:])
				return out.String(), nil
			}
			end += i + 4
			out.WriteString(src[i:end])
			i = end
		case '%':
			if m := rawStart.FindString(src[i:]); m != "" {
				end, ok := copyRaw(&out, src, i, m)
				if !ok {
					out.WriteString(src[i:])
					return out.String(), nil
				}
				i = end
				continue
			}
			fallthrough
		default:
			end, err := rewriteTag(&out, src, i)
			if err != nil {
				return "", err
			}
			i = end
		}
	}
	return out.String(), nil
}

// copyRaw copies the raw block whose start tag m is at src[i] and returns
// the index after it; false when it has no end tag. gonja ignores the
// whitespace control of raw tags, so it is applied here and plain tags are
// written.
func copyRaw(out *strings.Builder, src string, i int, m string) (int, bool) {
	loc := rawEnd.FindStringIndex(src[i+len(m):])
	if loc == nil {
		return 0, false
	}
	body := src[i+len(m) : i+len(m)+loc[0]]
	endTag := src[i+len(m)+loc[0] : i+len(m)+loc[1]]
	i += len(m) + loc[1]
	if strings.HasPrefix(m, "{%-") {
		text := strings.TrimRightFunc(out.String(), pyIsSpace)
		out.Reset()
		out.WriteString(text)
	}
	if strings.HasSuffix(m, "-%}") {
		body = strings.TrimLeftFunc(body, pyIsSpace)
	}
	if strings.HasPrefix(endTag, "{%-") {
		body = strings.TrimRightFunc(body, pyIsSpace)
	}
	out.WriteString("{% raw %}" + body + "{% endraw %}")
	if strings.HasSuffix(endTag, "-%}") {
		for i < len(src) {
			r, size := utf8.DecodeRuneInString(src[i:])
			if !pyIsSpace(r) {
				break
			}
			i += size
		}
	}
	return i, true
}

// nextOpen returns the index of the next "{{", "{%" or "{#" at or after i,
// or -1.
func nextOpen(src string, i int) int {
	for {
		j := strings.IndexByte(src[i:], '{')
		if j < 0 || i+j+1 >= len(src) {
			return -1
		}
		i += j
		switch src[i+1] {
		case '{', '%', '#':
			return i
		}
		i++
	}
}

// rewriteTag copies the tag that starts at src[start] ("{{" or "{%") to out,
// rewriting its string literals and conditional expressions, and returns
// the index after the tag. As in Jinja's lexer, the closing "}}" or "%}"
// only counts outside brackets.
func rewriteTag(out *strings.Builder, src string, start int) (int, error) {
	closer := "}}"
	if src[start+1] == '%' {
		closer = "%}"
	}
	var toks []token
	depth := 0
	i := start + 2
	for i < len(src) {
		c := src[i]
		switch {
		case depth == 0 && strings.HasPrefix(src[i:], closer):
			body, err := rewriteConditionals(toks, closer == "}}")
			if err != nil {
				return 0, fmt.Errorf("line %d: %w", lineOf(src, start), err)
			}
			out.WriteString(src[start : start+2])
			for _, t := range body {
				out.WriteString(t.text)
			}
			out.WriteString(closer)
			return i + 2, nil
		case c == '\'' || c == '"':
			var lit strings.Builder
			end, err := rewriteStrings(&lit, src, i)
			if err != nil {
				return 0, err
			}
			toks = append(toks, token{tokString, lit.String()})
			i = end
		case c == '(' || c == '[' || c == '{':
			if depth++; depth > maxNesting {
				return 0, fmt.Errorf("line %d: brackets nested deeper than %d", lineOf(src, i), maxNesting)
			}
			toks = append(toks, token{tokOpen, string(c)})
			i++
		case c == ')' || c == ']' || c == '}':
			depth = max(0, depth-1)
			toks = append(toks, token{tokClose, string(c)})
			i++
		case c >= utf8.RuneSelf || c < ' ' && c != '\t' && c != '\n' || c == 0x7f:
			// Jinja's lexer takes only ASCII outside strings; gonja's can
			// loop forever on some other characters.
			r, _ := utf8.DecodeRuneInString(src[i:])
			return 0, fmt.Errorf("line %d: unexpected character %q in a tag", lineOf(src, i), r)
		default:
			t := scanToken(src[i:])
			toks = append(toks, t)
			i += len(t.text)
		}
	}
	// Unterminated tag: copied as is for gonja to report.
	out.WriteString(src[start : start+2])
	for _, t := range toks {
		out.WriteString(t.text)
	}
	return i, nil
}

func lineOf(src string, i int) int {
	return 1 + strings.Count(src[:i], "\n")
}
