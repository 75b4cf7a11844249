// Package qr draws QR codes (ISO/IEC 18004) of byte strings, the way the
// instructor's page shows the students' link: byte mode, error correction
// level M (about 15 % of the symbol may be lost), the smallest of versions
// 1 to 10 that holds the data (up to 213 bytes), and the mask with the
// lowest penalty. It imports nothing of tracer.
//
// Encoding runs in the order of the standard: the bit stream (mode,
// count, data, terminator, padding) cut into codewords; the codewords split
// into blocks, each with its Reed–Solomon error correction codewords over
// GF(256) (rs.go); the blocks interleaved and laid in the matrix between
// the function patterns (matrix.go); each of the eight masks tried and
// scored (mask.go).
package qr

import (
	"errors"
	"fmt"
)

// MaxVersion is the largest version Encode draws: 57×57 modules.
const MaxVersion = 10

// ErrTooLong: the data does not fit a version MaxVersion code at level M.
var ErrTooLong = errors.New("qr: too long for a QR code")

// Code is a QR code's matrix of modules.
type Code struct {
	Version int // 1 to MaxVersion
	Mask    int // the mask pattern applied, 0 to 7
	Size    int // modules per side: 17 + 4·Version

	dark []bool // (Size, Size) row-major: dark[y*Size+x], true for a dark module
}

// Dark reports whether the module in column x, row y is dark; a module
// outside the symbol (the quiet zone around it) is light.
func (c *Code) Dark(x, y int) bool {
	if x < 0 || y < 0 || x >= c.Size || y >= c.Size {
		return false
	}
	return c.dark[y*c.Size+x]
}

// blocks is how a version's codewords split at level M: g1 blocks of
// data1 data codewords, then g2 blocks of data1+1, each followed by ec
// error correction codewords (ISO/IEC 18004, table 9).
type blocks struct{ ec, g1, data1, g2 int }

// levelM holds the block structure of versions 1 to MaxVersion at level M;
// index 0 is unused.
var levelM = [MaxVersion + 1]blocks{
	{},
	{10, 1, 16, 0}, // version 1: 26 codewords
	{16, 1, 28, 0},
	{26, 1, 44, 0},
	{18, 2, 32, 0},
	{24, 2, 43, 0},
	{16, 4, 27, 0},
	{18, 4, 31, 0},
	{22, 2, 38, 2},
	{22, 3, 36, 2},
	{26, 4, 43, 1}, // version 10: 346 codewords
}

// dataCodewords is how many data codewords a version holds at level M.
func (b blocks) dataCodewords() int { return b.g1*b.data1 + b.g2*(b.data1+1) }

// countBits is the width of byte mode's character count in a version.
func countBits(version int) int {
	if version <= 9 {
		return 8
	}
	return 16
}

// Capacity returns how many bytes a version's code holds at level M in
// byte mode: the data codewords less the mode (4 bits) and the count.
func Capacity(version int) int {
	if version < 1 || version > MaxVersion {
		return 0
	}
	return (levelM[version].dataCodewords()*8 - 4 - countBits(version)) / 8
}

// Encode draws data as a QR code: the smallest version that holds it at
// level M, with the mask of the lowest penalty. Data longer than
// Capacity(MaxVersion) is an error wrapping ErrTooLong.
func Encode(data []byte) (*Code, error) {
	return encode(data, -1)
}

// encode is Encode with the mask forced (0 to 7), or chosen (-1).
func encode(data []byte, mask int) (*Code, error) {
	version := 1
	for version <= MaxVersion && len(data) > Capacity(version) {
		version++
	}
	if version > MaxVersion {
		return nil, fmt.Errorf("%w: %d bytes, and a version %d code at level M holds %d: shorten the text", ErrTooLong, len(data), MaxVersion, Capacity(MaxVersion))
	}
	words := interleave(version, codewords(version, data))
	m := newMatrix(version)
	m.place(words)
	if mask < 0 {
		mask = m.bestMask()
	}
	m.applyMask(mask)
	m.drawFormat(mask)
	return &Code{Version: version, Mask: mask, Size: m.size, dark: m.dark}, nil
}

// codewords is data's bit stream at level M in version's capacity: mode
// 0100 (byte), the count, the bytes, a terminator of up to four zero bits,
// zeros to the byte, then the pad bytes 0xEC and 0x11 in turn.
func codewords(version int, data []byte) []byte {
	n := levelM[version].dataCodewords()
	var w bitWriter
	w.put(0b0100, 4)
	w.put(uint(len(data)), countBits(version))
	for _, b := range data {
		w.put(uint(b), 8)
	}
	w.put(0, min(4, n*8-w.n))
	w.put(0, (8-w.n%8)%8)
	for pad := byte(0xEC); len(w.bytes) < n; pad ^= 0xEC ^ 0x11 {
		w.bytes = append(w.bytes, pad)
	}
	return w.bytes
}

// bitWriter appends bits, most significant first.
type bitWriter struct {
	bytes []byte
	n     int // bits written
}

// put appends the low width bits of v.
func (w *bitWriter) put(v uint, width int) {
	for i := width - 1; i >= 0; i-- {
		if w.n%8 == 0 {
			w.bytes = append(w.bytes, 0)
		}
		if v>>i&1 == 1 {
			w.bytes[w.n/8] |= 0x80 >> (w.n % 8)
		}
		w.n++
	}
}

// interleave splits the data codewords into the version's blocks, adds
// each block's error correction codewords and interleaves them: the first
// data codeword of every block, then the second, ..., then the error
// correction codewords the same way.
func interleave(version int, data []byte) []byte {
	b := levelM[version]
	gen := generator(b.ec)
	var dataBlocks, ecBlocks [][]byte
	for i := range b.g1 + b.g2 {
		n := b.data1
		if i >= b.g1 {
			n++
		}
		dataBlocks = append(dataBlocks, data[:n])
		ecBlocks = append(ecBlocks, remainder(data[:n], gen))
		data = data[n:]
	}
	var out []byte
	for i := range b.data1 + 1 {
		for _, d := range dataBlocks {
			if i < len(d) {
				out = append(out, d[i])
			}
		}
	}
	for i := range b.ec {
		for _, e := range ecBlocks {
			out = append(out, e[i])
		}
	}
	return out
}
