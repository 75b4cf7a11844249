package sfnt

import (
	"encoding/binary"
	"fmt"
)

// mapping is one character of a cmap and the glyph it shows.
type mapping struct {
	r   rune
	gid uint16
}

// readCmap returns the characters of the font's Unicode cmap subtable for
// which keep holds, with their glyphs, in character order. It reads the
// full-repertoire subtable (format 12) when the font has one, else the BMP
// one (format 4). Segments and groups must be in increasing order, as the
// OpenType spec requires: that bounds the work to one call of keep per
// character.
func readCmap(cmap []byte, numGlyphs int, keep func(rune) bool) ([]mapping, error) {
	if len(cmap) < 4 {
		return nil, fmt.Errorf("sfnt: cmap: %d bytes are too short for its header", len(cmap))
	}
	n := int(binary.BigEndian.Uint16(cmap[2:]))
	if 4+8*n > len(cmap) {
		return nil, fmt.Errorf("sfnt: cmap: %d encoding records run past the table's end (%d bytes)", n, len(cmap))
	}
	best, rank := -1, 0
	for i := range n {
		rec := cmap[4+8*i:]
		platform, encoding := binary.BigEndian.Uint16(rec), binary.BigEndian.Uint16(rec[2:])
		off := int(binary.BigEndian.Uint32(rec[4:]))
		if off < 0 || off+2 > len(cmap) {
			return nil, fmt.Errorf("sfnt: cmap: subtable %d (platform %d, encoding %d) at offset %d lies outside the table (%d bytes)", i, platform, encoding, off, len(cmap))
		}
		format := binary.BigEndian.Uint16(cmap[off:])
		r := 0
		switch {
		case format == 12 && (platform == 3 && encoding == 10 || platform == 0 && (encoding == 4 || encoding == 6)):
			r = 3
		case format == 4 && (platform == 3 && encoding == 1 || platform == 0 && encoding <= 3):
			r = 2
		}
		if r > rank {
			best, rank = off, r
		}
	}
	if best < 0 {
		return nil, fmt.Errorf("sfnt: cmap: no Unicode subtable of format 4 or 12 among its %d", n)
	}
	if rank == 3 {
		return readFormat12(cmap[best:], numGlyphs, keep)
	}
	return readFormat4(cmap[best:], numGlyphs, keep)
}

// readFormat4 reads a segment-mapping subtable.
func readFormat4(b []byte, numGlyphs int, keep func(rune) bool) ([]mapping, error) {
	if len(b) < 14 {
		return nil, fmt.Errorf("sfnt: cmap format 4: %d bytes are too short for its header", len(b))
	}
	length := int(binary.BigEndian.Uint16(b[2:]))
	if length < 14 || length > len(b) {
		return nil, fmt.Errorf("sfnt: cmap format 4: length %d does not fit the %d bytes left in the table", length, len(b))
	}
	b = b[:length]
	segs := int(binary.BigEndian.Uint16(b[6:])) / 2
	if 16+8*segs > len(b) {
		return nil, fmt.Errorf("sfnt: cmap format 4: %d segments run past the subtable's end (%d bytes)", segs, len(b))
	}
	ends, starts := b[14:], b[16+2*segs:]
	deltas, ranges := b[16+4*segs:], b[16+6*segs:]
	var out []mapping
	prevEnd := -1
	for i := range segs {
		end, start := int(binary.BigEndian.Uint16(ends[2*i:])), int(binary.BigEndian.Uint16(starts[2*i:]))
		delta, ro := binary.BigEndian.Uint16(deltas[2*i:]), int(binary.BigEndian.Uint16(ranges[2*i:]))
		if start > end || start <= prevEnd {
			return nil, fmt.Errorf("sfnt: cmap format 4: segment %d (U+%04X–U+%04X) is out of order", i, start, end)
		}
		prevEnd = end
		for c := start; c <= end; c++ {
			if c == 0xFFFF || !keep(rune(c)) {
				continue
			}
			var gid uint16
			if ro == 0 {
				gid = uint16(c) + delta
			} else {
				at := 16 + 6*segs + 2*i + ro + 2*(c-start) // idRangeOffset counts from its own position
				if at+2 > len(b) {
					return nil, fmt.Errorf("sfnt: cmap format 4: the glyph of U+%04X lies past the subtable's end", c)
				}
				if gid = binary.BigEndian.Uint16(b[at:]); gid != 0 {
					gid += delta
				}
			}
			if gid == 0 {
				continue
			}
			if int(gid) >= numGlyphs {
				return nil, fmt.Errorf("sfnt: cmap format 4: U+%04X maps to glyph %d, past the font's %d glyphs", c, gid, numGlyphs)
			}
			out = append(out, mapping{rune(c), gid})
		}
	}
	return out, nil
}

// readFormat12 reads a segmented-coverage subtable.
func readFormat12(b []byte, numGlyphs int, keep func(rune) bool) ([]mapping, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("sfnt: cmap format 12: %d bytes are too short for its header", len(b))
	}
	length := uint64(binary.BigEndian.Uint32(b[4:]))
	groups := uint64(binary.BigEndian.Uint32(b[12:]))
	if length > uint64(len(b)) || 16+12*groups > length {
		return nil, fmt.Errorf("sfnt: cmap format 12: %d groups (length %d) do not fit the %d bytes left in the table", groups, length, len(b))
	}
	var out []mapping
	prevEnd := int64(-1)
	for i := range int(groups) {
		g := b[16+12*i:]
		start, end := int64(binary.BigEndian.Uint32(g)), int64(binary.BigEndian.Uint32(g[4:]))
		gid := int64(binary.BigEndian.Uint32(g[8:]))
		if start > end || start <= prevEnd || end > 0x10FFFF {
			return nil, fmt.Errorf("sfnt: cmap format 12: group %d (U+%04X–U+%04X) is out of order or past U+10FFFF", i, start, end)
		}
		prevEnd = end
		for c := start; c <= end; c++ {
			if !keep(rune(c)) {
				continue
			}
			id := gid + c - start
			if id == 0 {
				continue
			}
			if id >= int64(numGlyphs) {
				return nil, fmt.Errorf("sfnt: cmap format 12: U+%04X maps to glyph %d, past the font's %d glyphs", c, id, numGlyphs)
			}
			out = append(out, mapping{rune(c), uint16(id)})
		}
	}
	return out, nil
}

// buildCmap writes a cmap of two subtables for ms (in character order):
// format 4 for the BMP (platform 3, encoding 1) and format 12 for every
// character (platform 3, encoding 10).
func buildCmap(ms []mapping) ([]byte, error) {
	f4, err := buildFormat4(ms)
	if err != nil {
		return nil, err
	}
	f12 := buildFormat12(ms)
	const header = 4 + 2*8
	out := make([]byte, header, header+len(f4)+len(f12))
	binary.BigEndian.PutUint16(out[2:], 2)
	binary.BigEndian.PutUint16(out[4:], 3)
	binary.BigEndian.PutUint16(out[6:], 1)
	binary.BigEndian.PutUint32(out[8:], header)
	binary.BigEndian.PutUint16(out[12:], 3)
	binary.BigEndian.PutUint16(out[14:], 10)
	binary.BigEndian.PutUint32(out[16:], uint32(header+len(f4)))
	return append(append(out, f4...), f12...), nil
}

// buildFormat4 writes the BMP characters of ms as segments of consecutive
// characters whose glyphs are consecutive too (each with an idDelta, no
// glyph array), ending with the 0xFFFF segment the format requires.
func buildFormat4(ms []mapping) ([]byte, error) {
	type seg struct{ start, end, delta uint16 }
	var segs []seg
	for _, m := range ms {
		if m.r > 0xFFFE {
			break
		}
		c, delta := uint16(m.r), m.gid-uint16(m.r)
		if k := len(segs) - 1; k >= 0 && segs[k].end+1 == c && segs[k].delta == delta {
			segs[k].end = c
			continue
		}
		segs = append(segs, seg{c, c, delta})
	}
	segs = append(segs, seg{0xFFFF, 0xFFFF, 1})
	n := len(segs)
	length := 16 + 8*n
	if length > 0xFFFF {
		return nil, fmt.Errorf("sfnt: cmap format 4: %d segments do not fit its 64 KiB: keep fewer characters", n)
	}
	b := make([]byte, length)
	sr, es, rs := searchParams(n, 2)
	binary.BigEndian.PutUint16(b, 4)
	binary.BigEndian.PutUint16(b[2:], uint16(length))
	binary.BigEndian.PutUint16(b[6:], uint16(2*n))
	binary.BigEndian.PutUint16(b[8:], sr)
	binary.BigEndian.PutUint16(b[10:], es)
	binary.BigEndian.PutUint16(b[12:], rs)
	for i, s := range segs {
		binary.BigEndian.PutUint16(b[14+2*i:], s.end)
		binary.BigEndian.PutUint16(b[16+2*n+2*i:], s.start)
		binary.BigEndian.PutUint16(b[16+4*n+2*i:], s.delta)
		// idRangeOffset (b[16+6*n+2*i:]) stays 0: glyph = character + delta.
	}
	return b, nil
}

// buildFormat12 writes ms as groups of consecutive characters with
// consecutive glyphs.
func buildFormat12(ms []mapping) []byte {
	type group struct {
		start, end rune
		gid        uint16
	}
	var gs []group
	for _, m := range ms {
		if k := len(gs) - 1; k >= 0 && gs[k].end+1 == m.r && int(gs[k].gid)+int(m.r-gs[k].start) == int(m.gid) {
			gs[k].end = m.r
			continue
		}
		gs = append(gs, group{m.r, m.r, m.gid})
	}
	b := make([]byte, 16+12*len(gs))
	binary.BigEndian.PutUint16(b, 12)
	binary.BigEndian.PutUint32(b[4:], uint32(len(b)))
	binary.BigEndian.PutUint32(b[12:], uint32(len(gs)))
	for i, g := range gs {
		binary.BigEndian.PutUint32(b[16+12*i:], uint32(g.start))
		binary.BigEndian.PutUint32(b[20+12*i:], uint32(g.end))
		binary.BigEndian.PutUint32(b[24+12*i:], uint32(g.gid))
	}
	return b
}
