package chat

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// This file holds Python's view of template values: str(), repr(), type
// names, whitespace and case mapping, which Jinja inherits and gonja
// approximates.

// isUndefined reports whether v is Jinja's Undefined (a missing name, key or
// attribute), as opposed to None.
func isUndefined(v *exec.Value) bool {
	return v == nil || !v.Val.IsValid()
}

// isNone reports whether v is None (null data, or the none literal).
func isNone(v *exec.Value) bool {
	return !isUndefined(v) && v.IsNil()
}

// pyInt returns v as a Python int (bools count, as in Python).
func pyInt(v *exec.Value) (int, bool) {
	switch {
	case isUndefined(v) || v.IsNil():
		return 0, false
	case v.IsBool():
		if v.Bool() {
			return 1, true
		}
		return 0, true
	case v.IsInteger():
		return v.Integer(), true
	}
	return 0, false
}

// typeName is Python's type(v).__name__ for template values.
func typeName(v *exec.Value) string {
	switch {
	case isUndefined(v):
		return "Undefined"
	case v.IsNil():
		return "NoneType"
	case v.IsBool():
		return "bool"
	case v.IsInteger():
		return "int"
	case v.IsFloat():
		return "float"
	case v.IsString():
		return "str"
	case v.IsList():
		return "list"
	case v.IsDict():
		if _, ok := v.Interface().(namespace); ok {
			return "Namespace"
		}
		return "dict"
	case v.IsCallable():
		return "function"
	}
	return fmt.Sprintf("%T", v.Interface())
}

// tuple is a Python tuple (dict items, partition results): a list that
// prints with parentheses.
type tuple []any

// writeRepr writes Python's repr(v). It stops once b is over its limit,
// so a value that shares one long list many times costs no more time than
// the limit allows.
func writeRepr(b *textBuilder, v *exec.Value, depth int) {
	if b.over {
		return
	}
	if !isUndefined(v) && v.Val.CanInterface() {
		writeReprOf(b, v.Interface(), depth)
		return
	}
	writeReprValue(b, v, depth)
}

// writeReprOf writes repr(x) for the Go values templates hold. Lists are
// walked as they are: wrapping each item in an *exec.Value, as gonja's
// Index does, would cost more than the text written.
func writeReprOf(b *textBuilder, x any, depth int) {
	if b.over {
		return
	}
	items := func(open, close string, list []any) {
		if depth > maxValueDepth {
			b.WriteString("...")
			return
		}
		b.WriteString(open)
		for i, item := range list {
			if b.over {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			writeReprOf(b, item, depth+1)
		}
		b.WriteString(close)
	}
	switch t := x.(type) {
	case nil: // Undefined, as gonja reads a missing item
	case *exec.Value:
		writeRepr(b, t, depth)
	case string:
		writeQuoted(b, t)
	case int:
		b.WriteString(strconv.Itoa(t))
	case float64:
		b.WriteString(pyFloatRepr(t))
	case bool:
		if t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case []any:
		items("[", "]", t)
	case tuple:
		if len(t) == 1 {
			items("(", ",)", t)
		} else {
			items("(", ")", t)
		}
	default:
		writeReprValue(b, exec.AsValue(x), depth)
	}
}

// writeReprValue writes repr(v) for any value gonja holds.
func writeReprValue(b *textBuilder, v *exec.Value, depth int) {
	if b.over {
		return
	}
	if depth > maxValueDepth {
		b.WriteString("...")
		return
	}
	switch {
	case isUndefined(v):
		b.WriteString("")
	case v.IsNil():
		b.WriteString("None")
	case v.IsBool():
		if v.Bool() {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case v.IsInteger():
		b.WriteString(strconv.Itoa(v.Integer()))
	case v.IsFloat():
		b.WriteString(pyFloatRepr(v.Float()))
	case v.IsString():
		writeQuoted(b, v.String())
	case v.IsList():
		open, close := "[", "]"
		if _, ok := v.Interface().(tuple); ok {
			open, close = "(", ")"
			if v.Len() == 1 {
				close = ",)"
			}
		}
		b.WriteString(open)
		items := itemsOf(v)
		for i := range v.Len() {
			if b.over {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			if x, ok := items.item(i); ok {
				writeReprOf(b, x, depth+1)
				continue
			}
			writeRepr(b, v.Index(i), depth+1)
		}
		b.WriteString(close)
	case v.IsDict():
		if _, ok := v.Interface().(namespace); ok {
			b.WriteString("<Namespace ")
			defer b.WriteString(">")
		}
		b.WriteByte('{')
		for i, p := range dictPairs(v) {
			if b.over {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, p.Key, depth+1)
			b.WriteString(": ")
			writeRepr(b, p.Value, depth+1)
		}
		b.WriteByte('}')
	default:
		b.WriteString(v.String())
	}
}

// pyQuote is repr() of a str: single quotes unless the text has ' and no ".
func pyQuote(s string) string {
	b := &textBuilder{limit: math.MaxInt}
	writeQuoted(b, s)
	return b.String()
}

// writeQuoted writes repr() of a str to b.
func writeQuoted(b *textBuilder, s string) {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	b.WriteByte(quote)
	for _, r := range s {
		if b.over {
			return
		}
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r > 0x7f && !unicode.IsPrint(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				fmt.Fprintf(b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
}

// dictPairs lists a dict's items: an ordered dict's in order, a Go map's by
// sorted key.
func dictPairs(v *exec.Value) []*exec.Pair {
	switch d := v.Interface().(type) {
	case *exec.Dict:
		return d.Pairs
	case exec.Dict:
		return d.Pairs
	}
	rv := reflect.Indirect(v.Val)
	if rv.Kind() != reflect.Map {
		return nil
	}
	keys := rv.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int {
		return strings.Compare(fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface()))
	})
	pairs := make([]*exec.Pair, len(keys))
	for i, k := range keys {
		pairs[i] = &exec.Pair{Key: exec.ToValue(k), Value: exec.ToValue(rv.MapIndex(k))}
	}
	return pairs
}

// dictGet looks key up in a dict; Undefined when it is missing.
func dictGet(v *exec.Value, key *exec.Value) (*exec.Value, bool) {
	for _, p := range dictPairs(v) {
		if p.Key.EqualValueTo(key) && p.Key.IsString() == key.IsString() {
			return p.Value, true
		}
	}
	return exec.AsValue(nil), false
}

// pyIsSpace is Python's str.isspace for one character: Go's unicode.IsSpace
// plus the ASCII separators U+001C..U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pyStrip is str.strip/lstrip/rstrip: with chars == nil, whitespace.
func pyStrip(s string, chars *string, left, right bool) string {
	cut := pyIsSpace
	if chars != nil {
		set := *chars
		cut = func(r rune) bool { return strings.ContainsRune(set, r) }
	}
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return s
}

// pySplit is str.split (and str.rsplit with fromRight): sep == nil splits on
// runs of whitespace and drops empty strings; maxsplit < 0 means no limit.
func pySplit(s string, sep *string, maxsplit int, fromRight bool) ([]string, error) {
	if sep != nil && *sep == "" {
		return nil, fmt.Errorf("ValueError: empty separator")
	}
	if maxsplit < 0 {
		maxsplit = len(s) + 1
	}
	if sep == nil {
		fields := strings.FieldsFunc(s, pyIsSpace)
		if len(fields) <= maxsplit+1 {
			return fields, nil
		}
		if !fromRight {
			// Keep the rest after the first maxsplit fields, left-stripped.
			rest := s
			out := make([]string, 0, maxsplit+1)
			for range maxsplit {
				rest = strings.TrimLeftFunc(rest, pyIsSpace)
				end := strings.IndexFunc(rest, pyIsSpace)
				out = append(out, rest[:end])
				rest = rest[end:]
			}
			return append(out, strings.TrimLeftFunc(rest, pyIsSpace)), nil
		}
		rest := s
		var out []string
		for range maxsplit {
			rest = strings.TrimRightFunc(rest, pyIsSpace)
			start := strings.LastIndexFunc(rest, pyIsSpace) + 1
			out = append(out, rest[start:])
			rest = rest[:start]
		}
		out = append(out, strings.TrimRightFunc(rest, pyIsSpace))
		slices.Reverse(out)
		return out, nil
	}
	if !fromRight {
		return strings.SplitN(s, *sep, maxsplit+1), nil
	}
	var out []string
	rest := s
	for range maxsplit {
		i := strings.LastIndex(rest, *sep)
		if i < 0 {
			break
		}
		out = append(out, rest[i+len(*sep):])
		rest = rest[:i]
	}
	out = append(out, rest)
	slices.Reverse(out)
	return out, nil
}

// pyUpper, pyLower: full Unicode case mapping, as Python does ("ß" -> "SS").
func pyUpper(s string) string { return cases.Upper(language.Und).String(s) }
func pyLower(s string) string { return cases.Lower(language.Und).String(s) }

// pyTitle is str.title: a cased character after an uncased one starts a
// word ("they're" -> "They'Re").
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		cased := unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
		switch {
		case cased && prevCased:
			b.WriteString(pyLower(string(r)))
		case cased:
			b.WriteRune(unicode.ToTitle(r))
		default:
			b.WriteRune(r)
		}
		prevCased = cased
	}
	return b.String()
}

// pyCapitalize is str.capitalize: first character title-cased, the rest
// lower-cased.
func pyCapitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return string(unicode.ToTitle(r)) + pyLower(s[size:])
}

// jinjaTitle is Jinja's title filter: words start after "-", whitespace or
// an opening bracket, so "they're" stays "They're".
func jinjaTitle(s string) string {
	var b strings.Builder
	start := true
	for _, r := range s {
		if strings.ContainsRune("-({[<", r) || pyIsSpace(r) {
			b.WriteRune(r)
			start = true
			continue
		}
		if start {
			b.WriteString(pyUpper(string(r)))
		} else {
			b.WriteString(pyLower(string(r)))
		}
		start = false
	}
	return b.String()
}

// listItems reads list v's items through reflection where it can
// (item answers false where an item must be read through gonja's Index
// instead). Index, and even Interface on the list, allocate on every
// call: for a list shared many times ([[]]*1000 repeated) that costs far
// more memory than the text the printers write before the budget stops
// them. A value, not a closure, so that reading costs no allocation.
type listItems struct {
	rv     reflect.Value
	direct bool
}

func itemsOf(v *exec.Value) listItems {
	rv := v.Val
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		rv = rv.Elem()
	}
	return listItems{rv, rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array}
}

func (l listItems) item(i int) (any, bool) {
	if l.direct && l.rv.Index(i).CanInterface() {
		return l.rv.Index(i).Interface(), true
	}
	return nil, false
}
