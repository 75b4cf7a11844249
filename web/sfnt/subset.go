package sfnt

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Subset returns ttf (a TrueType font) cut down to the characters for
// which keep holds: their glyphs and the glyphs those need (.notdef, GSUB
// substitutes, composite components) keep their outlines, every other
// glyph is left empty under the same id, and cmap maps the kept characters
// only; glyph names are dropped (post version 3). keep is called once per
// character the font maps. The result is a TrueType font with fresh
// checksums, ready for WOFF.
func Subset(ttf []byte, keep func(rune) bool) ([]byte, error) {
	f, err := parse(ttf)
	if err != nil {
		return nil, err
	}
	if f.version == versionCFF {
		return nil, errors.New("sfnt: the font has CFF outlines: only TrueType (glyf) fonts can be subset")
	}
	head, maxp := f.table("head"), f.table("maxp")
	loca, glyf, cmap := f.table("loca"), f.table("glyf"), f.table("cmap")
	for _, t := range []struct {
		tag  string
		data []byte
		min  int
	}{{"head", head, 54}, {"maxp", maxp, 6}, {"loca", loca, 0}, {"glyf", glyf, 0}, {"cmap", cmap, 4}} {
		if t.data == nil {
			return nil, fmt.Errorf("sfnt: the font has no %s table: only TrueType (glyf) fonts can be subset", t.tag)
		}
		if len(t.data) < t.min {
			return nil, fmt.Errorf("sfnt: the %s table has %d bytes: want at least %d", t.tag, len(t.data), t.min)
		}
	}
	numGlyphs := int(binary.BigEndian.Uint16(maxp[4:]))
	if numGlyphs == 0 {
		return nil, errors.New("sfnt: maxp says the font has no glyphs")
	}
	long := binary.BigEndian.Uint16(head[50:]) != 0
	offsets, err := readLoca(loca, glyf, numGlyphs, long)
	if err != nil {
		return nil, err
	}
	ms, err := readCmap(cmap, numGlyphs, keep)
	if err != nil {
		return nil, err
	}

	kept := make([]bool, numGlyphs)
	kept[0] = true // .notdef
	for _, m := range ms {
		kept[m.gid] = true
	}
	if gsub := f.table("GSUB"); gsub != nil {
		rs, err := gsubRules(gsub, numGlyphs)
		if err != nil {
			return nil, err
		}
		closeOver(kept, rs)
	}
	if err := keepComponents(kept, glyf, offsets); err != nil {
		return nil, err
	}

	newGlyf, newLoca, long := writeGlyf(kept, glyf, offsets, long)
	newCmap, err := buildCmap(ms)
	if err != nil {
		return nil, err
	}
	newHead := append([]byte(nil), head...)
	var format uint16
	if long {
		format = 1
	}
	binary.BigEndian.PutUint16(newHead[50:], format)
	f.set("head", newHead)
	f.set("glyf", newGlyf)
	f.set("loca", newLoca)
	f.set("cmap", newCmap)
	if post := f.table("post"); len(post) >= 32 {
		// Version 3 has no glyph names: browsers never read them, and a
		// large font's names outweigh the few glyphs a subset keeps.
		post = append([]byte(nil), post[:32]...)
		binary.BigEndian.PutUint32(post, 0x00030000)
		f.set("post", post)
	}
	f.drop("DSIG") // a signature of the whole font no longer holds
	return f.bytes(), nil
}

// readLoca returns the numGlyphs+1 glyph offsets into glyf: glyph i is
// glyf[offsets[i]:offsets[i+1]].
func readLoca(loca, glyf []byte, numGlyphs int, long bool) ([]int, error) {
	size := 2
	if long {
		size = 4
	}
	if len(loca) < size*(numGlyphs+1) {
		return nil, fmt.Errorf("sfnt: loca has %d bytes: %d glyphs need %d", len(loca), numGlyphs, size*(numGlyphs+1))
	}
	offsets := make([]int, numGlyphs+1)
	for i := range offsets {
		var off int
		if long {
			off = int(binary.BigEndian.Uint32(loca[4*i:]))
		} else {
			off = 2 * int(binary.BigEndian.Uint16(loca[2*i:]))
		}
		if off > len(glyf) || i > 0 && off < offsets[i-1] {
			return nil, fmt.Errorf("sfnt: loca: glyph %d starts at %d, out of order or past glyf's %d bytes", i, off, len(glyf))
		}
		offsets[i] = off
	}
	return offsets, nil
}

// Composite glyph flags (the OpenType glyf table).
const (
	argsAreWords   = 0x0001
	haveScale      = 0x0008
	moreComponents = 0x0020
	haveXYScale    = 0x0040
	have2x2        = 0x0080
)

// keepComponents keeps the components of every kept composite glyph, and
// theirs in turn.
func keepComponents(kept []bool, glyf []byte, offsets []int) error {
	var queue []int
	for g, k := range kept {
		if k {
			queue = append(queue, g)
		}
	}
	for len(queue) > 0 {
		g := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		comps, err := components(glyf[offsets[g]:offsets[g+1]], g, len(kept))
		if err != nil {
			return err
		}
		for _, c := range comps {
			if !kept[c] {
				kept[c] = true
				queue = append(queue, c)
			}
		}
	}
	return nil
}

// components lists the glyphs a composite glyph (data, glyph g) is made
// of; none for a simple or empty glyph.
func components(data []byte, g, numGlyphs int) ([]int, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if len(data) < 10 {
		return nil, fmt.Errorf("sfnt: glyf: glyph %d has %d bytes: too short for its header (10 bytes)", g, len(data))
	}
	if int16(binary.BigEndian.Uint16(data)) >= 0 {
		return nil, nil
	}
	var out []int
	for at := 10; ; {
		if at+4 > len(data) {
			return nil, fmt.Errorf("sfnt: glyf: composite glyph %d: component %d runs past its %d bytes", g, len(out), len(data))
		}
		flags := binary.BigEndian.Uint16(data[at:])
		c := int(binary.BigEndian.Uint16(data[at+2:]))
		if c >= numGlyphs {
			return nil, fmt.Errorf("sfnt: glyf: composite glyph %d names glyph %d, past the font's %d glyphs", g, c, numGlyphs)
		}
		out = append(out, c)
		at += 4 + 2
		if flags&argsAreWords != 0 {
			at += 2
		}
		switch {
		case flags&haveScale != 0:
			at += 2
		case flags&haveXYScale != 0:
			at += 4
		case flags&have2x2 != 0:
			at += 8
		}
		if flags&moreComponents == 0 {
			return out, nil
		}
	}
}

// writeGlyf copies the kept glyphs into a new glyf table, each padded to
// the loca format's alignment, and writes the loca table for it. Short
// offsets are kept unless the new table outgrows them.
func writeGlyf(kept []bool, glyf []byte, offsets []int, long bool) (newGlyf, newLoca []byte, isLong bool) {
	align := 2
	if long {
		align = 4
	}
	var out []byte
	at := make([]int, len(offsets))
	for g, k := range kept {
		at[g] = len(out)
		if !k {
			continue
		}
		out = append(out, glyf[offsets[g]:offsets[g+1]]...)
		for len(out)%align != 0 {
			out = append(out, 0)
		}
	}
	at[len(kept)] = len(out)
	if !long && len(out) > 2*0xFFFF {
		long = true
	}
	if long {
		newLoca = make([]byte, 4*len(at))
		for i, o := range at {
			binary.BigEndian.PutUint32(newLoca[4*i:], uint32(o))
		}
	} else {
		newLoca = make([]byte, 2*len(at))
		for i, o := range at {
			binary.BigEndian.PutUint16(newLoca[2*i:], uint16(o/2))
		}
	}
	return out, newLoca, long
}
