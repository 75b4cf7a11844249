// Package pack cuts rendered HTML into deduplicated fragments. A page's
// positions repeat most of their neighbours' markup (the table, the
// listing, the chart axes), so a position travels as the list of its
// fragments' numbers and each distinct fragment travels once. The one-file
// export packs every position this way, and the classroom's stream sends
// followers the fragments they do not hold yet.
//
// It imports nothing of tracer's: it is text in, numbers out.
package pack

import (
	"bytes"
	"unicode/utf8"
)

// Fragments is a dictionary of fragments, numbered in the order they were
// first seen. Numbers never change, so a reader that holds the first n
// fragments needs only those from n on. It is not safe for concurrent use.
type Fragments struct {
	ids   map[string]int
	list  []string
	bytes int64         // the fragments' text, in bytes
	runes map[rune]bool // every character beyond ASCII the fragments use, for fonts
}

// New returns an empty dictionary.
func New() *Fragments {
	return &Fragments{ids: map[string]int{}, runes: map[rune]bool{}}
}

// Cut cuts html before every tag, adds the fragments not yet known and
// returns the position as its fragments' numbers, each written as the
// difference from the previous number (the first from -1): neighbouring
// fragments are mostly numbered in a row, so the list is mostly 1s and
// compresses well.
func (f *Fragments) Cut(html []byte) []int {
	var seq []int
	prev := -1
	for len(html) > 0 {
		n := bytes.IndexByte(html[1:], '<') + 1
		if n == 0 {
			n = len(html)
		}
		frag := string(html[:n])
		html = html[n:]
		id, ok := f.ids[frag]
		if !ok {
			id = len(f.list)
			f.ids[frag] = id
			f.list = append(f.list, frag)
			f.bytes += int64(len(frag))
			f.AddRunes(frag)
		}
		seq = append(seq, id-prev)
		prev = id
	}
	return seq
}

// Len is the number of fragments held.
func (f *Fragments) Len() int { return len(f.list) }

// Bytes is the text of the fragments held, in bytes.
func (f *Fragments) Bytes() int64 { return f.bytes }

// From returns the fragments numbered n and above, in order.
func (f *Fragments) From(n int) []string { return f.list[n:] }

// AddRunes notes the characters beyond ASCII that s uses.
func (f *Fragments) AddRunes(s string) {
	for _, r := range s {
		if r >= utf8.RuneSelf {
			f.runes[r] = true
		}
	}
}

// Runes is every character beyond ASCII noted so far.
func (f *Fragments) Runes() map[rune]bool { return f.runes }
