package tokenizer

import (
	"slices"
	"sort"
	"strings"
)

// prefixSet finds which of a set of strings is the longest prefix of a
// text, as a trie would, without one: the strings sorted, each byte of the
// text narrows the range of those that still match by two binary searches.
// A lookup costs O(d·log n) for a match d bytes deep among n strings, so
// scanning a text for added or special tokens is linear in the text
// whatever their number (a list scanned per position was O(text × tokens)).
type prefixSet struct {
	strs  []string
	order []int32   // indices into strs, sorted by string, then index
	first [256]bool // some string starts with this byte
}

// newPrefixSet indexes strs; empty strings never match.
func newPrefixSet(strs []string) prefixSet {
	p := prefixSet{strs: strs}
	for i, s := range strs {
		if s != "" {
			p.order = append(p.order, int32(i))
			p.first[s[0]] = true
		}
	}
	slices.SortStableFunc(p.order, func(a, b int32) int { return strings.Compare(strs[a], strs[b]) })
	return p
}

// longest returns the index of the longest string that is a prefix of s
// (the lowest index among equal ones), or -1.
func (p *prefixSet) longest(s string) int {
	if len(s) == 0 || !p.first[s[0]] {
		return -1
	}
	best := -1
	lo, hi := 0, len(p.order)
	for k := 0; k < len(s) && lo < hi; k++ {
		c := s[k]
		// In [lo, hi) every string starts with s[:k]; those of length k
		// sort first, then the rest by their byte k.
		lo += sort.Search(hi-lo, func(j int) bool {
			q := p.strs[p.order[lo+j]]
			return len(q) > k && q[k] >= c
		})
		hi = lo + sort.Search(hi-lo, func(j int) bool {
			q := p.strs[p.order[lo+j]]
			return len(q) > k && q[k] > c
		})
		if lo < hi && len(p.strs[p.order[lo]]) == k+1 {
			best = int(p.order[lo])
		}
	}
	return best
}

// find returns the leftmost, then longest, string found in s at or after
// from: where it starts and its index, or ok false.
func (p *prefixSet) find(s string, from int) (start, index int, ok bool) {
	for i := from; i < len(s); i++ {
		if !p.first[s[i]] {
			continue
		}
		if k := p.longest(s[i:]); k >= 0 {
			return i, k, true
		}
	}
	return 0, 0, false
}
