package tokenizer

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file parses escapes and bracketed classes for regex_parse.go.

// classEscape reads the escape at p.pos, which may stand for a set (\s,
// \p{L}) or a single character (\n, \x41, \.).
func (p *reParser) classEscape() (pred func(rune) bool, lit rune, isLit bool, err error) {
	c := p.src[p.pos+1]
	p.pos += 2
	switch c {
	case 's':
		return unicode.IsSpace, 0, false, nil
	case 'S':
		return func(r rune) bool { return !unicode.IsSpace(r) }, 0, false, nil
	case 'd':
		return isDecimal, 0, false, nil
	case 'D':
		return func(r rune) bool { return !isDecimal(r) }, 0, false, nil
	case 'w':
		return isOnigWord, 0, false, nil
	case 'W':
		return func(r rune) bool { return !isOnigWord(r) }, 0, false, nil
	case 'p', 'P':
		pred, err := p.property(c == 'P')
		return pred, 0, false, err
	case 'n':
		return nil, '\n', true, nil
	case 'r':
		return nil, '\r', true, nil
	case 't':
		return nil, '\t', true, nil
	case 'f':
		return nil, '\f', true, nil
	case 'v':
		return nil, '\v', true, nil
	case 'a':
		return nil, '\a', true, nil
	case 'e':
		return nil, 0x1B, true, nil
	case 'x', 'u':
		r, err := p.hexEscape(c)
		return nil, r, true, err
	}
	if c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
		return nil, 0, false, p.errorf("escape \\%c is not supported", c)
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos-1:])
	p.pos += size - 1
	return nil, r, true, nil
}

func (p *reParser) hexEscape(kind byte) (rune, error) {
	var digits string
	switch {
	case kind == 'x' && p.more() && p.peek() == '{':
		end := strings.IndexByte(p.src[p.pos:], '}')
		if end < 0 {
			return 0, p.errorf("bad \\x{...}")
		}
		digits = p.src[p.pos+1 : p.pos+end]
		p.pos += end + 1
	case kind == 'x':
		n := 0
		for n < 2 && p.pos+n < len(p.src) && isHex(p.src[p.pos+n]) {
			n++
		}
		digits = p.src[p.pos : p.pos+n]
		p.pos += n
	default: // \uHHHH
		if p.pos+4 > len(p.src) {
			return 0, p.errorf("bad \\u escape")
		}
		digits = p.src[p.pos : p.pos+4]
		p.pos += 4
	}
	v, err := strconv.ParseUint(digits, 16, 32)
	if err != nil || v > unicode.MaxRune {
		return 0, p.errorf("bad hex escape %q", digits)
	}
	return rune(v), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// property reads {Name} or {^Name} after \p or \P.
func (p *reParser) property(negate bool) (func(rune) bool, error) {
	if !p.more() || p.peek() != '{' {
		return nil, p.errorf("\\p needs {Name}")
	}
	end := strings.IndexByte(p.src[p.pos:], '}')
	if end < 0 {
		return nil, p.errorf("unterminated \\p{")
	}
	name := p.src[p.pos+1 : p.pos+end]
	p.pos += end + 1
	if strings.HasPrefix(name, "^") {
		negate = !negate
		name = name[1:]
	}
	table := unicodeTable(name)
	if table == nil {
		return nil, p.errorf("unknown property \\p{%s}", name)
	}
	if negate {
		return func(r rune) bool { return !unicode.Is(table, r) }, nil
	}
	return func(r rune) bool { return unicode.Is(table, r) }, nil
}

// unicodeTable finds a general category or script by its short or long name.
func unicodeTable(name string) *unicode.RangeTable {
	long := map[string]string{
		"Letter": "L", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
		"Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo",
		"Mark": "M", "Number": "N", "Decimal_Number": "Nd", "Punctuation": "P",
		"Symbol": "S", "Separator": "Z", "Other": "C", "Control": "Cc",
	}
	if short, ok := long[name]; ok {
		name = short
	}
	if t, ok := unicode.Categories[name]; ok {
		return t
	}
	if t, ok := unicode.Scripts[name]; ok {
		return t
	}
	if t, ok := unicode.Properties[name]; ok {
		return t
	}
	return nil
}

func isDecimal(r rune) bool { return unicode.Is(unicode.Nd, r) }

// isOnigWord is Oniguruma's Unicode \w: letters, marks, decimal digits and
// connector punctuation.
func isOnigWord(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r)
}

// parseClass reads a bracketed class [...] or [^...].
func (p *reParser) parseClass() (func(rune) bool, error) {
	p.pos++ // [
	negate := false
	if p.more() && p.peek() == '^' {
		negate = true
		p.pos++
	}
	var preds []func(rune) bool
	var ranges [][2]rune
	for first := true; ; first = false {
		if !p.more() {
			return nil, p.errorf("unterminated [")
		}
		if p.peek() == ']' && !first {
			p.pos++
			break
		}
		if p.peek() == '[' || strings.HasPrefix(p.src[p.pos:], "&&") {
			return nil, p.errorf("nested classes and && are not supported")
		}
		pred, lo, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if pred != nil {
			preds = append(preds, pred)
			continue
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.peek() == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			if pred, hi, err = p.classAtom(); err != nil {
				return nil, err
			}
			if pred != nil || hi < lo {
				return nil, p.errorf("bad range in class")
			}
		}
		ranges = append(ranges, [2]rune{lo, hi})
	}
	in := func(r rune) bool {
		for _, rg := range ranges {
			if r >= rg[0] && r <= rg[1] {
				return true
			}
		}
		for _, pred := range preds {
			if pred(r) {
				return true
			}
		}
		return false
	}
	fold := p.fold
	return func(r rune) bool {
		m := in(r)
		if !m && fold {
			for f := unicode.SimpleFold(r); f != r && !m; f = unicode.SimpleFold(f) {
				m = in(f)
			}
		}
		return m != negate
	}, nil
}

// classAtom reads one member of a class: a set (pred) or a character.
func (p *reParser) classAtom() (pred func(rune) bool, r rune, err error) {
	if p.peek() != '\\' {
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += size
		return nil, r, nil
	}
	if p.pos+1 >= len(p.src) {
		return nil, 0, p.errorf("trailing backslash")
	}
	pred, lit, isLit, err := p.classEscape()
	if err != nil || !isLit {
		return pred, 0, err
	}
	return nil, lit, nil
}
