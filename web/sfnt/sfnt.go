// Package sfnt cuts a TrueType font down to the characters a document uses
// and packs it as WOFF 1.0, so a file that carries its own fonts carries
// only the glyphs it can show.
//
// Subset keeps glyph ids stable (like pyftsubset --retain-gids): a glyph
// that is not kept stays in the font with no outline, so the tables that
// name glyphs by id (hmtx, GSUB, GPOS, GDEF) are copied unchanged and stay
// valid. It rebuilds glyf, loca and cmap, drops the glyph names (post
// version 3) and the signature (DSIG), and recomputes the checksums.
//
// The kept glyphs are the characters' glyphs, .notdef, every glyph a kept
// glyph's GSUB single, multiple, alternate, ligature or reverse chaining
// substitution can produce, repeated until nothing changes (contexts are
// ignored: the closure may keep a glyph the shaper never reaches, never
// the reverse; contextual lookups act through the lookups they call, which
// the closure visits anyway) and the components of composite glyphs.
//
// Limits: TrueType outlines only (a CFF font is refused); GPOS, hmtx and
// the hinting tables are kept whole, so a subset of a few characters still
// costs a few kilobytes.
// Every offset and length read from a font is checked: a damaged or
// hostile font gets an error that says what is wrong, never a panic, and
// the work and memory a font can ask for are bounded.
//
// It imports only the standard library.
package sfnt

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// maxTables bounds the table directory: real fonts have about 20 tables.
const maxTables = 256

// table is one table of a font: its 4-byte tag and its bytes.
type table struct {
	tag  string
	data []byte
}

// font is a parsed sfnt: its version word and its tables in file order.
type font struct {
	version uint32
	tables  []table
}

// TrueType, OpenType-with-CFF and the WOFF signatures, as sfnt version
// words.
const (
	versionTrueType = 0x00010000
	versionApple    = 0x74727565 // "true"
	versionCFF      = 0x4F54544F // "OTTO"
	signatureWOFF   = 0x774F4646 // "wOFF"
	signatureWOFF2  = 0x774F4632 // "wOF2"
)

// parse reads an sfnt's table directory and slices out its tables (which
// share b's memory). Each table must lie inside b and tags must be unique.
func parse(b []byte) (*font, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("sfnt: %d bytes are too short for a font header (12 bytes)", len(b))
	}
	f := &font{version: binary.BigEndian.Uint32(b)}
	switch f.version {
	case versionTrueType, versionApple, versionCFF:
	case signatureWOFF, signatureWOFF2:
		return nil, errors.New("sfnt: the font is already WOFF-packed: give the TrueType (.ttf) font")
	default:
		return nil, fmt.Errorf("sfnt: not a TrueType or OpenType font (version word %#08x)", f.version)
	}
	n := int(binary.BigEndian.Uint16(b[4:]))
	if n == 0 || n > maxTables {
		return nil, fmt.Errorf("sfnt: the font has %d tables: want 1 to %d", n, maxTables)
	}
	if 12+16*n > len(b) {
		return nil, fmt.Errorf("sfnt: the table directory (%d tables) runs past the end of the font (%d bytes)", n, len(b))
	}
	seen := map[string]bool{}
	var spans [][2]uint64 // each table's [start, end) in b
	for i := range n {
		rec := b[12+16*i:]
		tag := string(rec[:4])
		off, length := uint64(binary.BigEndian.Uint32(rec[8:])), uint64(binary.BigEndian.Uint32(rec[12:]))
		if off+length > uint64(len(b)) {
			return nil, fmt.Errorf("sfnt: table %q (offset %d, %d bytes) runs past the end of the font (%d bytes)", tag, off, length, len(b))
		}
		if seen[tag] {
			return nil, fmt.Errorf("sfnt: table %q appears twice in the directory", tag)
		}
		seen[tag] = true
		f.tables = append(f.tables, table{tag: tag, data: b[off : off+length : off+length]})
		spans = append(spans, [2]uint64{off, off + length})
	}
	// Tables that overlap would let a small file stand for a huge font.
	slices.SortFunc(spans, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	for i := 1; i < len(spans); i++ {
		if spans[i][0] < spans[i-1][1] {
			return nil, fmt.Errorf("sfnt: two tables overlap at bytes %d–%d of the font", spans[i][0], spans[i-1][1])
		}
	}
	return f, nil
}

// table returns the table tagged tag, nil when the font has none.
func (f *font) table(tag string) []byte {
	for _, t := range f.tables {
		if t.tag == tag {
			return t.data
		}
	}
	return nil
}

// set replaces the table tagged tag, or adds it.
func (f *font) set(tag string, data []byte) {
	for i := range f.tables {
		if f.tables[i].tag == tag {
			f.tables[i].data = data
			return
		}
	}
	f.tables = append(f.tables, table{tag: tag, data: data})
}

// drop removes the table tagged tag, if any.
func (f *font) drop(tag string) {
	f.tables = slices.DeleteFunc(f.tables, func(t table) bool { return t.tag == tag })
}

// checksum is the OpenType table checksum: the sum of b's big-endian
// uint32 words, b padded with zeros to a multiple of 4.
func checksum(b []byte) uint32 {
	var sum uint32
	for len(b) >= 4 {
		sum += binary.BigEndian.Uint32(b)
		b = b[4:]
	}
	var last [4]byte
	copy(last[:], b)
	return sum + binary.BigEndian.Uint32(last[:])
}

// tableChecksum is a table's checksum as the directory records it: the
// head table's is taken with its checkSumAdjustment (bytes 8–11) zero.
func tableChecksum(t table) uint32 {
	if t.tag == "head" && len(t.data) >= 12 {
		return checksum(t.data) - binary.BigEndian.Uint32(t.data[8:])
	}
	return checksum(t.data)
}

// pad4 rounds n up to a multiple of 4.
func pad4(n int) int { return (n + 3) &^ 3 }

// searchParams are a binary-search header's searchRange, entrySelector and
// rangeShift for n entries of size bytes each.
func searchParams(n, size int) (searchRange, entrySelector, rangeShift uint16) {
	p, e := 1, 0
	for p*2 <= n {
		p *= 2
		e++
	}
	return uint16(p * size), uint16(e), uint16((n - p) * size)
}

// bytes writes f as an sfnt: tables sorted by tag, each 4-byte aligned,
// checksums and head.checkSumAdjustment recomputed. The head table is
// copied, not changed in place.
func (f *font) bytes() []byte {
	tables := slices.Clone(f.tables)
	slices.SortFunc(tables, func(a, b table) int {
		switch {
		case a.tag < b.tag:
			return -1
		case a.tag > b.tag:
			return 1
		}
		return 0
	})
	n := len(tables)
	size := 12 + 16*n
	for _, t := range tables {
		size += pad4(len(t.data))
	}
	out := make([]byte, size)
	binary.BigEndian.PutUint32(out, f.version)
	sr, es, rs := searchParams(n, 16)
	binary.BigEndian.PutUint16(out[4:], uint16(n))
	binary.BigEndian.PutUint16(out[6:], sr)
	binary.BigEndian.PutUint16(out[8:], es)
	binary.BigEndian.PutUint16(out[10:], rs)
	off, head := 12+16*n, -1
	for i, t := range tables {
		rec := out[12+16*i:]
		copy(rec, t.tag)
		data := out[off : off+len(t.data)]
		copy(data, t.data)
		if t.tag == "head" && len(data) >= 12 {
			binary.BigEndian.PutUint32(data[8:], 0)
			head = off
		}
		binary.BigEndian.PutUint32(rec[4:], checksum(data))
		binary.BigEndian.PutUint32(rec[8:], uint32(off))
		binary.BigEndian.PutUint32(rec[12:], uint32(len(t.data)))
		off += pad4(len(t.data))
	}
	if head >= 0 {
		binary.BigEndian.PutUint32(out[head+8:], 0xB1B0AFBA-checksum(out))
	}
	return out
}
