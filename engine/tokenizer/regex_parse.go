package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file parses the Oniguruma subset described on regex into a tree of
// reNodes; regex.go runs it.

func compileRegex(pattern string) (*regex, error) {
	p := &reParser{src: pattern}
	root, err := p.parseAlt()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, p.errorf("unbalanced )")
	}
	return &regex{pattern: pattern, root: root}, nil
}

type reParser struct {
	src   string
	pos   int
	fold  bool // (?i) is in force
	depth int
}

func (p *reParser) errorf(format string, args ...any) error {
	return fmt.Errorf("regex %q: %s", p.src, fmt.Sprintf(format, args...))
}

func (p *reParser) more() bool { return p.pos < len(p.src) }

func (p *reParser) peek() byte { return p.src[p.pos] }

func (p *reParser) parseAlt() (*reNode, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 100 {
		return nil, p.errorf("nested too deeply")
	}
	var alts []*reNode
	for {
		n, err := p.parseConcat()
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
		if p.more() && p.peek() == '|' {
			p.pos++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &reNode{op: reAlt, subs: alts}, nil
}

func (p *reParser) parseConcat() (*reNode, error) {
	var items []*reNode
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		atom, err := p.parseAtom()
		if err != nil {
			return nil, err
		}
		if atom, err = p.parseQuantifier(atom); err != nil {
			return nil, err
		}
		if atom.op != reEmpty {
			items = append(items, atom)
		}
	}
	switch len(items) {
	case 0:
		return &reNode{op: reEmpty}, nil
	case 1:
		return items[0], nil
	}
	return &reNode{op: reConcat, subs: items}, nil
}

func (p *reParser) parseQuantifier(atom *reNode) (*reNode, error) {
	if !p.more() {
		return atom, nil
	}
	min, max := 0, 0
	switch p.peek() {
	case '?':
		min, max = 0, 1
		p.pos++
	case '*':
		min, max = 0, -1
		p.pos++
	case '+':
		min, max = 1, -1
		p.pos++
	case '{':
		lo, hi, n, ok := parseBraces(p.src[p.pos:])
		if !ok {
			return atom, nil // a literal '{', as in Oniguruma
		}
		if lo > maxRepeat || hi > maxRepeat || (hi >= 0 && hi < lo) {
			return nil, p.errorf("bad repeat count %s", p.src[p.pos:p.pos+n])
		}
		min, max = lo, hi
		p.pos += n
	default:
		return atom, nil
	}
	if atom.op == reEmpty || atom.op == reLook || atom.op >= reLineStart {
		return nil, p.errorf("nothing to repeat at offset %d", p.pos-1)
	}
	n := &reNode{op: reRepeat, subs: []*reNode{atom}, min: min, max: max}
	if p.more() {
		switch p.peek() {
		case '?':
			n.lazy = true
			p.pos++
		case '+':
			if atom.op != reChar {
				return nil, p.errorf("possessive repeat of a group is not supported")
			}
			n.possessive = true
			p.pos++
		}
	}
	if p.more() && strings.IndexByte("?*+{", p.peek()) >= 0 {
		if _, _, _, ok := parseBraces(p.src[p.pos:]); ok || p.peek() != '{' {
			return nil, p.errorf("nested quantifier at offset %d", p.pos)
		}
	}
	return n, nil
}

// parseBraces reads {n}, {n,}, {n,m} or {,m} at the start of s; hi is -1
// when unbounded, size the bytes read.
func parseBraces(s string) (lo, hi, size int, ok bool) {
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return 0, 0, 0, false
	}
	body := s[1:end]
	num := func(t string, def int) (int, bool) {
		if t == "" {
			return def, true
		}
		for _, c := range t {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		v, err := strconv.Atoi(t)
		return v, err == nil
	}
	a, b, comma := strings.Cut(body, ",")
	if !comma {
		if body == "" {
			return 0, 0, 0, false
		}
		v, ok := num(a, 0)
		return v, v, end + 1, ok
	}
	if a == "" && b == "" {
		return 0, 0, 0, false
	}
	lo, ok1 := num(a, 0)
	hi, ok2 := num(b, -1)
	return lo, hi, end + 1, ok1 && ok2
}

func (p *reParser) parseAtom() (*reNode, error) {
	c := p.peek()
	switch c {
	case '(':
		return p.parseGroup()
	case '[':
		pred, err := p.parseClass()
		if err != nil {
			return nil, err
		}
		return &reNode{op: reChar, pred: pred}, nil
	case '.':
		p.pos++
		return &reNode{op: reChar, pred: func(r rune) bool { return r != '\n' }}, nil
	case '^':
		p.pos++
		return &reNode{op: reLineStart}, nil
	case '$':
		p.pos++
		return &reNode{op: reLineEnd}, nil
	case '*', '+', '?':
		return nil, p.errorf("nothing to repeat at offset %d", p.pos)
	case '\\':
		return p.parseEscape()
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return &reNode{op: reChar, pred: p.literal(r)}, nil
}

func (p *reParser) parseGroup() (*reNode, error) {
	p.pos++ // (
	rest := p.src[p.pos:]
	saved := p.fold
	var look *reNode
	switch {
	case strings.HasPrefix(rest, "?:"):
		p.pos += 2
	case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"):
		look = &reNode{op: reLook, negate: rest[1] == '!'}
		p.pos += 2
	case strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"):
		return nil, p.errorf("look-behind is not supported")
	case strings.HasPrefix(rest, "?<"), strings.HasPrefix(rest, "?P<"):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return nil, p.errorf("bad group name")
		}
		p.pos += end + 1
	case strings.HasPrefix(rest, "?"):
		// Flags: (?i) (?-i) (?i:...) (?-i:...).
		i := 1
		on := true
		fold := p.fold
		for ; i < len(rest) && rest[i] != ':' && rest[i] != ')'; i++ {
			switch rest[i] {
			case '-':
				on = false
			case 'i':
				fold = on
			default:
				return nil, p.errorf("group flag %q is not supported", rest[i])
			}
		}
		if i == len(rest) {
			return nil, p.errorf("unterminated group")
		}
		p.pos += i + 1
		if rest[i] == ')' { // (?i): the flag holds to the end of the enclosing group
			p.fold = fold
			return &reNode{op: reEmpty}, nil
		}
		p.fold = fold
	}
	inner, err := p.parseAlt()
	if err != nil {
		return nil, err
	}
	if !p.more() || p.peek() != ')' {
		return nil, p.errorf("missing )")
	}
	p.pos++
	p.fold = saved
	if look != nil {
		look.subs = []*reNode{inner}
		return look, nil
	}
	return inner, nil
}

// literal returns the predicate for one literal character under the current
// case folding.
func (p *reParser) literal(r rune) func(rune) bool {
	if !p.fold || unicode.SimpleFold(r) == r {
		return func(c rune) bool { return c == r }
	}
	return func(c rune) bool { return equalFold(c, r) }
}

// equalFold reports whether a and b are in the same simple case-folding
// orbit ('s', 'S' and 'ſ' are).
func equalFold(a, b rune) bool {
	if a == b {
		return true
	}
	for f := unicode.SimpleFold(b); f != b; f = unicode.SimpleFold(f) {
		if f == a {
			return true
		}
	}
	return false
}

func (p *reParser) parseEscape() (*reNode, error) {
	if p.pos+1 >= len(p.src) {
		return nil, p.errorf("trailing backslash")
	}
	switch p.src[p.pos+1] {
	case 'A':
		p.pos += 2
		return &reNode{op: reTextStart}, nil
	case 'z':
		p.pos += 2
		return &reNode{op: reTextEnd}, nil
	case 'b', 'B', 'G', 'Z', 'K', 'R', 'X', 'k', 'g':
		return nil, p.errorf("escape \\%c is not supported", p.src[p.pos+1])
	}
	pred, lit, isLit, err := p.classEscape()
	if err != nil {
		return nil, err
	}
	if isLit {
		pred = p.literal(lit)
	}
	return &reNode{op: reChar, pred: pred}, nil
}
