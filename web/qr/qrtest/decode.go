// Package qrtest reads a QR code's modules back to the bytes it holds: a
// minimal decoder for the tests of tracer's encoder (web/qr) and of the
// pages that draw its codes. It reads what that encoder writes, byte mode
// at level M in versions 1 to 10, from a clean matrix (no image, no
// perspective), and checks everything on the way: the finder, timing and
// alignment patterns, both copies of the format information, the version
// information, the remainder bits, every block's Reed–Solomon syndromes,
// the terminator and the pad bytes. It shares no code with the encoder:
// its tables and arithmetic are its own, written from the standard
// (ISO/IEC 18004), so that a mistake in one is not repeated in the other.
package qrtest

import (
	"errors"
	"fmt"
)

// ecBlocks is a version's block structure at level M: n1 blocks of k1
// data codewords and n2 of k1+1, every block with ec error correction
// codewords.
type ecBlocks struct{ ec, n1, k1, n2 int }

// structure is table 9 of the standard, level M, by version.
var structure = map[int]ecBlocks{
	1: {10, 1, 16, 0}, 2: {16, 1, 28, 0}, 3: {26, 1, 44, 0}, 4: {18, 2, 32, 0}, 5: {24, 2, 43, 0},
	6: {16, 4, 27, 0}, 7: {18, 4, 31, 0}, 8: {22, 2, 38, 2}, 9: {22, 3, 36, 2}, 10: {26, 4, 43, 1},
}

// remainderBits is how many bits follow the last codeword (table 1).
var remainderBits = map[int]int{1: 0, 2: 7, 3: 7, 4: 7, 5: 7, 6: 7, 7: 0, 8: 0, 9: 0, 10: 0}

// alignCentres is annex E: the row and column coordinates of the
// alignment patterns' centres.
var alignCentres = map[int][]int{
	1: nil, 2: {6, 18}, 3: {6, 22}, 4: {6, 26}, 5: {6, 30}, 6: {6, 34},
	7: {6, 22, 38}, 8: {6, 24, 42}, 9: {6, 26, 46}, 10: {6, 28, 50},
}

// versionInfo is annex D's version information words.
var versionInfo = map[int]uint32{7: 0x07C94, 8: 0x085BC, 9: 0x09A99, 10: 0x0A4D3}

// Decode returns the bytes a QR code holds; dark[y][x] is the module in
// row y, column x, true when dark, without the quiet zone.
func Decode(dark [][]bool) ([]byte, error) {
	n := len(dark)
	for y, row := range dark {
		if len(row) != n {
			return nil, fmt.Errorf("row %d has %d modules, want %d: a QR code is square", y, len(row), n)
		}
	}
	v := (n - 17) / 4
	if n < 21 || (n-17)%4 != 0 || structure[v] == (ecBlocks{}) {
		return nil, fmt.Errorf("%d modules a side: want 17+4v for a version v from 1 to 10", n)
	}
	s := &symbol{dark: dark, n: n, v: v}
	if err := s.checkPatterns(); err != nil {
		return nil, err
	}
	mask, err := s.format()
	if err != nil {
		return nil, err
	}
	if err := s.checkVersion(); err != nil {
		return nil, err
	}
	words, err := s.codewords(mask)
	if err != nil {
		return nil, err
	}
	data, err := correctBlocks(words, structure[v])
	if err != nil {
		return nil, err
	}
	return parse(data, v)
}

// symbol is a matrix being read.
type symbol struct {
	dark [][]bool
	n, v int
}

// at is the module in row i, column j (the standard's order).
func (s *symbol) at(i, j int) bool { return s.dark[i][j] }

// checkPatterns checks the three finders with their separators, the two
// timing patterns, the alignment patterns and the dark module.
func (s *symbol) checkPatterns() error {
	n := s.n
	for _, c := range [][2]int{{0, 0}, {0, n - 7}, {n - 7, 0}} { // top-left corners (row, column)
		for i := -1; i <= 7; i++ {
			for j := -1; j <= 7; j++ {
				r, k := c[0]+i, c[1]+j
				if r < 0 || k < 0 || r >= n || k >= n {
					continue
				}
				want := false // the separator, around
				if i >= 0 && i <= 6 && j >= 0 && j <= 6 {
					ring := i == 0 || i == 6 || j == 0 || j == 6
					core := i >= 2 && i <= 4 && j >= 2 && j <= 4
					want = ring || core
				}
				if s.at(r, k) != want {
					return fmt.Errorf("the finder at row %d, column %d: module (%d, %d) is %v, want %v", c[0], c[1], r, k, s.at(r, k), want)
				}
			}
		}
	}
	for k := 8; k < n-8; k++ {
		if s.at(6, k) != (k%2 == 0) || s.at(k, 6) != (k%2 == 0) {
			return fmt.Errorf("the timing patterns do not alternate at %d", k)
		}
	}
	for _, r := range alignCentres[s.v] {
		for _, c := range alignCentres[s.v] {
			if s.underFinder(r, c) {
				continue
			}
			for i := -2; i <= 2; i++ {
				for j := -2; j <= 2; j++ {
					want := i == -2 || i == 2 || j == -2 || j == 2 || i == 0 && j == 0
					if s.at(r+i, c+j) != want {
						return fmt.Errorf("the alignment pattern at row %d, column %d is not drawn: module (%d, %d)", r, c, r+i, c+j)
					}
				}
			}
		}
	}
	if !s.at(4*s.v+9, 8) {
		return errors.New("the dark module (row 4v+9, column 8) is light")
	}
	return nil
}

// underFinder reports whether an alignment pattern centred at row r,
// column c would overlap a finder with its separator.
func (s *symbol) underFinder(r, c int) bool {
	in := func(lo, hi, x int) bool { return x+2 >= lo && x-2 <= hi }
	return in(0, 7, r) && in(0, 7, c) || in(0, 7, r) && in(s.n-8, s.n-1, c) || in(s.n-8, s.n-1, r) && in(0, 7, c)
}

// formatWord is the format information of a level (two bits) and a mask
// (three), by long division of its 15 bits by the BCH generator, then
// xored with 101010000010010.
func formatWord(level, mask int) uint32 {
	const gen = 0b10100110111
	word := uint32(level<<3|mask) << 10
	r := word
	for bit := 14; bit >= 10; bit-- {
		if r>>bit&1 == 1 {
			r ^= gen << (bit - 10)
		}
	}
	return (word | r) ^ 0b101010000010010
}

// format reads both copies of the format information, most significant
// bit first, and returns the mask; the copies must agree and name level M.
func (s *symbol) format() (int, error) {
	n := s.n
	// (row, column) of bits 14 down to 0.
	first := [15][2]int{{8, 0}, {8, 1}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {8, 7}, {8, 8}, {7, 8}, {5, 8}, {4, 8}, {3, 8}, {2, 8}, {1, 8}, {0, 8}}
	var second [15][2]int
	for k := range 7 { // bits 14..8 up column 8 from the bottom
		second[k] = [2]int{n - 1 - k, 8}
	}
	for k := range 8 { // bits 7..0 along row 8 towards the right edge
		second[7+k] = [2]int{8, n - 8 + k}
	}
	read := func(pos [15][2]int) uint32 {
		var w uint32
		for _, p := range pos {
			w <<= 1
			if s.at(p[0], p[1]) {
				w |= 1
			}
		}
		return w
	}
	a, b := read(first), read(second)
	if a != b {
		return 0, fmt.Errorf("the two copies of the format information differ: %015b and %015b", a, b)
	}
	for level := range 4 {
		for mask := range 8 {
			if formatWord(level, mask) != a {
				continue
			}
			if level != 0b00 {
				return 0, fmt.Errorf("error correction level bits %02b: this decoder reads level M (00) only", level)
			}
			return mask, nil
		}
	}
	return 0, fmt.Errorf("format information %015b is no valid format word", a)
}

// checkVersion reads both copies of the version information of versions
// 7 and up: bit k (0 least significant) at row k/3, column n−11+k%3, and
// transposed.
func (s *symbol) checkVersion() error {
	want, ok := versionInfo[s.v]
	if !ok {
		return nil
	}
	var a, b uint32
	for k := 17; k >= 0; k-- {
		a, b = a<<1, b<<1
		if s.at(k/3, s.n-11+k%3) {
			a |= 1
		}
		if s.at(s.n-11+k%3, k/3) {
			b |= 1
		}
	}
	if a != want || b != want {
		return fmt.Errorf("version information %018b and %018b, want %018b for version %d", a, b, want, s.v)
	}
	return nil
}

// function reports whether the module in row i, column j belongs to a
// function pattern or the format or version areas.
func (s *symbol) function(i, j int) bool {
	n := s.n
	switch {
	case i <= 8 && j <= 8, i <= 8 && j >= n-8, i >= n-8 && j <= 8: // finders, separators, format
		return true
	case i == 6 || j == 6:
		return true
	case s.v >= 7 && (i <= 5 && j >= n-11 && j <= n-9 || j <= 5 && i >= n-11 && i <= n-9):
		return true
	}
	for _, r := range alignCentres[s.v] {
		for _, c := range alignCentres[s.v] {
			if !s.underFinder(r, c) && i >= r-2 && i <= r+2 && j >= c-2 && j <= c+2 {
				return true
			}
		}
	}
	return false
}

// unmask is the standard's table 10: whether mask m flips the module in
// row i, column j.
func unmask(m, i, j int) bool {
	switch m {
	case 0b000:
		return (i+j)%2 == 0
	case 0b001:
		return i%2 == 0
	case 0b010:
		return j%3 == 0
	case 0b011:
		return (i+j)%3 == 0
	case 0b100:
		return (i/2+j/3)%2 == 0
	case 0b101:
		return (i*j)%2+(i*j)%3 == 0
	case 0b110:
		return ((i*j)%2+(i*j)%3)%2 == 0
	default:
		return ((i*j)%3+(i+j)%2)%2 == 0
	}
}

// codewords reads the data region in the placement order, unmasked: two
// columns at a time from the right, upwards first, the right module of
// each pair first, column 6 skipped. The bits past the last codeword must
// be the version's remainder bits, all zero.
func (s *symbol) codewords(mask int) ([]byte, error) {
	var bits []bool
	up := true
	for col := s.n - 1; col > 0; col -= 2 {
		if col == 6 {
			col--
		}
		for k := range s.n {
			i := k
			if up {
				i = s.n - 1 - k
			}
			for _, j := range []int{col, col - 1} {
				if !s.function(i, j) {
					bits = append(bits, s.at(i, j) != unmask(mask, i, j))
				}
			}
		}
		up = !up
	}
	st := structure[s.v]
	total := st.n1*(st.k1+st.ec) + st.n2*(st.k1+1+st.ec)
	if len(bits) != total*8+remainderBits[s.v] {
		return nil, fmt.Errorf("the data region holds %d bits, want %d codewords and %d remainder bits", len(bits), total, remainderBits[s.v])
	}
	words := make([]byte, total)
	for k := range total * 8 {
		if bits[k] {
			words[k/8] |= 1 << (7 - k%8)
		}
	}
	for _, b := range bits[total*8:] {
		if b {
			return nil, errors.New("a remainder bit is dark")
		}
	}
	return words, nil
}

// gfTables holds GF(256)'s exponentials and logarithms (α = 2, modulo
// 0x11D); exp runs twice round so that a sum of two logarithms indexes it.
type gfTables struct {
	exp [510]byte
	log [256]int
}

// gf is read only, once built.
var gf = newGF()

func newGF() *gfTables {
	t := &gfTables{}
	x := 1
	for k := range 255 {
		t.exp[k], t.exp[k+255] = byte(x), byte(x)
		t.log[x] = k
		x <<= 1
		if x >= 256 {
			x ^= 0x11D
		}
	}
	return t
}

// times multiplies in GF(256) through the logarithms.
func times(a, b byte) byte {
	if a == 0 || b == 0 {
		return 0
	}
	return gf.exp[gf.log[a]+gf.log[b]]
}

// correctBlocks de-interleaves the codewords into their blocks, checks
// that every block's polynomial vanishes at α⁰ … α^(ec−1) (no error), and
// returns the data codewords in order.
func correctBlocks(words []byte, st ecBlocks) ([]byte, error) {
	nb := st.n1 + st.n2
	data := make([][]byte, nb)
	ec := make([][]byte, nb)
	p := 0
	for k := range st.k1 + 1 {
		for b := range nb {
			if k < st.k1 || b >= st.n1 {
				data[b] = append(data[b], words[p])
				p++
			}
		}
	}
	for range st.ec {
		for b := range nb {
			ec[b] = append(ec[b], words[p])
			p++
		}
	}
	var out []byte
	for b := range nb {
		cw := append(append([]byte{}, data[b]...), ec[b]...)
		for r := range st.ec {
			var sum byte // Horner: cw(αʳ), the first codeword the highest power
			for _, c := range cw {
				sum = times(sum, gf.exp[r]) ^ c
			}
			if sum != 0 {
				return nil, fmt.Errorf("block %d of %d: syndrome %d is %d, want 0: the codewords are corrupt", b+1, nb, r, sum)
			}
		}
		out = append(out, data[b]...)
	}
	return out, nil
}

// parse reads the data codewords as one byte-mode segment: mode 0100, the
// count (8 bits in versions 1 to 9, 16 from 10), the bytes, a terminator
// of zeros (up to four bits, as many as fit), zeros to the byte, and pad
// bytes 11101100 and 00010001 in turn to the end.
func parse(data []byte, v int) ([]byte, error) {
	bit := func(k int) uint { return uint(data[k/8]>>(7-k%8)) & 1 }
	read := func(at, width int) (uint, int) {
		var x uint
		for range width {
			x = x<<1 | bit(at)
			at++
		}
		return x, at
	}
	total := len(data) * 8
	width := 8
	if v >= 10 {
		width = 16
	}
	mode, at := read(0, 4)
	if mode != 0b0100 {
		return nil, fmt.Errorf("mode %04b: this decoder reads byte mode (0100) only", mode)
	}
	count, at := read(at, width)
	if at+8*int(count) > total {
		return nil, fmt.Errorf("a count of %d bytes passes the end of the data", count)
	}
	out := make([]byte, count)
	for k := range out {
		var b uint
		b, at = read(at, 8)
		out[k] = byte(b)
	}
	for end := min(at+4, total); at < end || at%8 != 0; at++ {
		if bit(at) != 0 {
			return nil, fmt.Errorf("bit %d after the data is not a zero of the terminator or padding", at)
		}
	}
	for k, pad := at/8, 0; k < len(data); k, pad = k+1, pad+1 {
		want := []byte{0xEC, 0x11}[pad%2]
		if data[k] != want {
			return nil, fmt.Errorf("pad codeword %d is %#02x, want %#02x", k, data[k], want)
		}
	}
	return out, nil
}
