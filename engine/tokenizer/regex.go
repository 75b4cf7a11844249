package tokenizer

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// regex is a small backtracking matcher for the regular expressions found in
// tokenizer.json files. Hugging Face tokenizers compiles them with Oniguruma;
// Go's regexp cannot run them because they look ahead (\s+(?!\S)). The
// matcher supports the Oniguruma subset those files use: literals and
// escapes, classes with ranges, \s \d \w \p{..} and negations, groups
// (?:..) (?i:..) (?i), look-ahead (?=..) (?!..), alternation, and the
// quantifiers ? * + {n,m} (greedy, lazy ?, possessive +), plus ^ $ \A \z.
// Anything else is refused when the pattern is compiled. Classes follow
// Oniguruma's Unicode meaning: \s is White_Space, \d is Nd, \w is letters,
// marks, Nd and Pc.
//
// The hand-written scanners in scan.go are the fast path for the well-known
// pre-tokenizer patterns; this matcher is their reference twin in tests and
// the path for any other pattern.
type regex struct {
	pattern string
	root    *reNode
}

// errBacktrack reports a pattern that needed too many steps on an input.
var errBacktrack = errors.New("too much backtracking")

type reOp uint8

const (
	reEmpty reOp = iota
	reChar       // one character that pred accepts
	reConcat
	reAlt
	reRepeat
	reLook // look-ahead; negate for (?!..)
	reLineStart
	reLineEnd
	reTextStart
	reTextEnd
)

type reNode struct {
	op         reOp
	pred       func(rune) bool
	subs       []*reNode
	min, max   int // reRepeat; max < 0 means unbounded
	lazy       bool
	possessive bool
	negate     bool
}

// maxRepeat bounds {n,m} counts so a hostile file cannot ask for billions.
const maxRepeat = 1000

// find returns the leftmost match in s that starts at or after from, with
// Oniguruma's (Perl's) leftmost-first choice among alternatives.
func (re *regex) find(s string, from int) (start, end int, ok bool, err error) {
	m := &reMatcher{s: s, budget: 1_000_000 + 200*len(s)}
	for i := from; i <= len(s); {
		end := -1
		if m.match(re.root, i, func(j int) bool { end = j; return true }) {
			return i, end, true, nil
		}
		if m.over {
			return 0, 0, false, fmt.Errorf("regex %q: %w", re.pattern, errBacktrack)
		}
		if i == len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return 0, 0, false, nil
}

type reMatcher struct {
	s      string
	budget int
	over   bool
}

// match tries n at position i and calls k with every end position it can
// reach, in backtracking order, until k returns true.
func (m *reMatcher) match(n *reNode, i int, k func(int) bool) bool {
	if m.budget--; m.budget < 0 {
		m.over = true
		return false
	}
	switch n.op {
	case reEmpty:
		return k(i)
	case reChar:
		if i >= len(m.s) {
			return false
		}
		r, size := utf8.DecodeRuneInString(m.s[i:])
		return n.pred(r) && k(i+size)
	case reConcat:
		return m.seq(n.subs, i, k)
	case reAlt:
		for _, sub := range n.subs {
			if m.match(sub, i, k) {
				return true
			}
			if m.over {
				return false
			}
		}
		return false
	case reRepeat:
		if n.subs[0].op == reChar {
			return m.repeatChar(n, i, k)
		}
		return m.repeat(n, 0, i, k)
	case reLook:
		found := m.match(n.subs[0], i, func(int) bool { return true })
		return found != n.negate && !m.over && k(i)
	case reLineStart:
		return (i == 0 || m.s[i-1] == '\n') && k(i)
	case reLineEnd:
		return (i == len(m.s) || m.s[i] == '\n') && k(i)
	case reTextStart:
		return i == 0 && k(i)
	case reTextEnd:
		return i == len(m.s) && k(i)
	}
	return false
}

func (m *reMatcher) seq(subs []*reNode, i int, k func(int) bool) bool {
	if len(subs) == 0 {
		return k(i)
	}
	return m.match(subs[0], i, func(j int) bool { return m.seq(subs[1:], j, k) })
}

// repeatChar runs a repeat of a single-character node without recursion:
// it walks the characters the class accepts, then offers the end positions
// to k longest first (greedy) or shortest first (lazy).
func (m *reMatcher) repeatChar(n *reNode, i int, k func(int) bool) bool {
	pred := n.subs[0].pred
	j, count := i, 0
	step := func() bool { // consume one more character if the class accepts it
		if (n.max >= 0 && count >= n.max) || j >= len(m.s) {
			return false
		}
		r, size := utf8.DecodeRuneInString(m.s[j:])
		if !pred(r) {
			return false
		}
		j += size
		count++
		return true
	}
	if n.lazy {
		for count < n.min {
			if !step() {
				return false
			}
		}
		for {
			if k(j) {
				return true
			}
			if m.over || !step() {
				return false
			}
		}
	}
	for step() {
	}
	if count < n.min {
		return false
	}
	if n.possessive {
		return k(j)
	}
	for {
		if k(j) {
			return true
		}
		if m.over || count == n.min {
			return false
		}
		_, size := utf8.DecodeLastRuneInString(m.s[i:j])
		j -= size
		count--
		if m.budget--; m.budget < 0 {
			m.over = true
			return false
		}
	}
}

// maxGroupRepeats bounds the iterations of a repeated group, each of which
// nests a call: deeper matches would risk the goroutine's stack.
const maxGroupRepeats = 100_000

func (m *reMatcher) repeat(n *reNode, count, i int, k func(int) bool) bool {
	if count > maxGroupRepeats {
		m.over = true
		return false
	}
	more := func() bool {
		if n.max >= 0 && count >= n.max {
			return false
		}
		return m.match(n.subs[0], i, func(j int) bool {
			if j == i && count >= n.min {
				return false // an empty iteration would loop forever
			}
			return m.repeat(n, count+1, j, k)
		})
	}
	if n.lazy {
		if count >= n.min && k(i) {
			return true
		}
		return !m.over && more()
	}
	if more() {
		return true
	}
	return !m.over && count >= n.min && k(i)
}
