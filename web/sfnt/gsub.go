package sfnt

import (
	"encoding/binary"
	"fmt"
)

// maxRuleGlyphs bounds the glyph ids the GSUB rules of one font may name
// in all (coverage entries, substitutes, ligature components): real fonts
// name tens of thousands; a hostile one could otherwise ask for billions
// through shared or overlapping subtables.
const maxRuleGlyphs = 1 << 20

// rules are substitutions, context ignored: when every glyph of a rule's
// input is kept, so is every glyph of its output. Rule i's input is
// glyphs[at[i]:mid[i]] and its output glyphs[mid[i]:at[i+1]] (one flat
// slice: a font may have a million rules).
type rules struct {
	glyphs []uint16
	at     []int32 // len(at) = rules + 1
	mid    []int32
}

func (rs *rules) len() int           { return len(rs.mid) }
func (rs *rules) in(i int) []uint16  { return rs.glyphs[rs.at[i]:rs.mid[i]] }
func (rs *rules) out(i int) []uint16 { return rs.glyphs[rs.mid[i]:rs.at[i+1]] }

// gsubReader reads the substitution rules of a GSUB table. Every read is
// bounds-checked; the first failure is kept in err and ends the reading.
type gsubReader struct {
	b         []byte
	numGlyphs int
	rules     rules
	budget    int // glyph ids left to name, from maxRuleGlyphs
	err       error
}

// gsubRules lists the single (1), multiple (2), alternate (3), ligature
// (4) and reverse chaining single (8) substitutions of every lookup of a
// GSUB table, through extension lookups (7), contexts ignored. Contextual
// lookups (5, 6) are skipped: the lookups they call are in the list and
// read on their own.
func gsubRules(gsub []byte, numGlyphs int) (*rules, error) {
	r := &gsubReader{b: gsub, numGlyphs: numGlyphs, budget: maxRuleGlyphs, rules: rules{at: []int32{0}}}
	list := int(r.u16(8, "the lookup list offset"))
	count := int(r.u16(list, "the lookup count"))
	for i := 0; i < count && r.err == nil; i++ {
		lookup := list + int(r.u16(list+2+2*i, "a lookup offset"))
		kind := r.u16(lookup, "a lookup type")
		subs := int(r.u16(lookup+4, "a lookup's subtable count"))
		for k := 0; k < subs && r.err == nil; k++ {
			sub := lookup + int(r.u16(lookup+6+2*k, "a subtable offset"))
			r.subtable(kind, sub, true)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return &r.rules, nil
}

// fail notes the first problem.
func (r *gsubReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("sfnt: GSUB: "+format, args...)
	}
}

// field returns the size bytes at off, or nil once reading has failed or
// when they lie outside the table; what names the field for the error.
func (r *gsubReader) field(off, size int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if off < 0 || off+size > len(r.b) {
		r.fail("%s at offset %d lies outside the table (%d bytes)", what, off, len(r.b))
		return nil
	}
	return r.b[off : off+size]
}

// u16 reads a uint16 at off; 0 when field fails.
func (r *gsubReader) u16(off int, what string) uint16 {
	if b := r.field(off, 2, what); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

// u32 reads a uint32 at off; 0 when field fails.
func (r *gsubReader) u32(off int, what string) uint32 {
	if b := r.field(off, 4, what); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// glyphs reads n glyph ids at off, charging them to the budget.
func (r *gsubReader) glyphs(off, n int, what string) []uint16 {
	if !r.spend(n) {
		return nil
	}
	if off < 0 || off+2*n > len(r.b) {
		r.fail("%s (%d glyphs at offset %d) run past the table's end (%d bytes)", what, n, off, len(r.b))
		return nil
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.BigEndian.Uint16(r.b[off+2*i:])
	}
	return out
}

// spend charges n glyph ids to the budget.
func (r *gsubReader) spend(n int) bool {
	if r.err != nil {
		return false
	}
	r.budget -= n
	if r.budget < 0 {
		r.fail("its substitutions name more than %d glyphs: too many for a font this package subsets", maxRuleGlyphs)
		return false
	}
	return true
}

// add records a rule, leaving out glyphs past the font's last (a shaper
// could not show them either).
func (r *gsubReader) add(in []uint16, out ...uint16) {
	for _, g := range in {
		if int(g) >= r.numGlyphs {
			return
		}
	}
	rs := &r.rules
	n := len(rs.glyphs)
	rs.glyphs = append(rs.glyphs, in...)
	mid := len(rs.glyphs)
	for _, g := range out {
		if int(g) < r.numGlyphs {
			rs.glyphs = append(rs.glyphs, g)
		}
	}
	if len(rs.glyphs) == mid {
		rs.glyphs = rs.glyphs[:n]
		return
	}
	rs.mid = append(rs.mid, int32(mid))
	rs.at = append(rs.at, int32(len(rs.glyphs)))
}

// subtable reads one subtable of a lookup of type kind at off.
func (r *gsubReader) subtable(kind uint16, off int, top bool) {
	format := r.u16(off, "a subtable format")
	switch kind {
	case 1: // single: coverage glyph -> one glyph
		cov := r.coverage(off + int(r.u16(off+2, "a coverage offset")))
		switch format {
		case 1:
			delta := r.u16(off+4, "a delta")
			for _, c := range cov {
				r.add([]uint16{c.gid}, c.gid+delta)
			}
		case 2:
			n := int(r.u16(off+4, "a substitute count"))
			subst := r.glyphs(off+6, n, "single substitutes")
			for _, c := range cov {
				if c.index < len(subst) {
					r.add([]uint16{c.gid}, subst[c.index])
				}
			}
		default:
			r.fail("single substitution format %d at offset %d: want 1 or 2", format, off)
		}
	case 2, 3: // multiple: coverage glyph -> a sequence; alternate: -> one of a set
		if format != 1 {
			r.fail("lookup type %d format %d at offset %d: want 1", kind, format, off)
			return
		}
		cov := r.coverage(off + int(r.u16(off+2, "a coverage offset")))
		n := int(r.u16(off+4, "a sequence count"))
		for _, c := range cov {
			if c.index >= n || r.err != nil {
				continue
			}
			seq := off + int(r.u16(off+6+2*c.index, "a sequence offset"))
			out := r.glyphs(seq+2, int(r.u16(seq, "a sequence length")), "a sequence")
			r.add([]uint16{c.gid}, out...)
		}
	case 4: // ligature: coverage glyph + components -> one glyph
		if format != 1 {
			r.fail("ligature substitution format %d at offset %d: want 1", format, off)
			return
		}
		cov := r.coverage(off + int(r.u16(off+2, "a coverage offset")))
		n := int(r.u16(off+4, "a ligature set count"))
		for _, c := range cov {
			if c.index >= n || r.err != nil {
				continue
			}
			set := off + int(r.u16(off+6+2*c.index, "a ligature set offset"))
			ligs := int(r.u16(set, "a ligature count"))
			for k := 0; k < ligs && r.err == nil; k++ {
				if !r.spend(1) {
					return
				}
				lig := set + int(r.u16(set+2+2*k, "a ligature offset"))
				glyph := r.u16(lig, "a ligature glyph")
				comps := int(r.u16(lig+2, "a component count"))
				if comps == 0 {
					r.fail("a ligature at offset %d has no components", lig)
					return
				}
				in := append([]uint16{c.gid}, r.glyphs(lig+4, comps-1, "ligature components")...)
				r.add(in, glyph)
			}
		}
	case 8: // reverse chaining single: coverage glyph -> one glyph, in a context ignored here
		if format != 1 {
			r.fail("reverse chaining substitution format %d at offset %d: want 1", format, off)
			return
		}
		cov := r.coverage(off + int(r.u16(off+2, "a coverage offset")))
		at := off + 6 + 2*int(r.u16(off+4, "a backtrack count"))
		at += 2 + 2*int(r.u16(at, "a lookahead count"))
		subst := r.glyphs(at+2, int(r.u16(at, "a substitute count")), "reverse chaining substitutes")
		for _, c := range cov {
			if c.index < len(subst) {
				r.add([]uint16{c.gid}, subst[c.index])
			}
		}
	case 7: // extension: the real subtable, at a 32-bit offset
		if !top || format != 1 {
			r.fail("extension subtable at offset %d: format %d inside a lookup of type %d", off, format, kind)
			return
		}
		inner := r.u16(off+2, "an extension's lookup type")
		if inner == 7 {
			r.fail("an extension at offset %d points at another extension", off)
			return
		}
		r.subtable(inner, off+int(r.u32(off+4, "an extension offset")), false)
	}
}

// covered is one glyph of a coverage table and its index there.
type covered struct {
	gid   uint16
	index int
}

// coverage reads the coverage table at off, charging its glyphs to the
// budget.
func (r *gsubReader) coverage(off int) []covered {
	var out []covered
	switch format := r.u16(off, "a coverage format"); format {
	case 1:
		n := int(r.u16(off+2, "a coverage count"))
		for i, g := range r.glyphs(off+4, n, "coverage glyphs") {
			out = append(out, covered{g, i})
		}
	case 2:
		n := int(r.u16(off+2, "a coverage range count"))
		for i := 0; i < n && r.err == nil; i++ {
			rec := off + 4 + 6*i
			start, end := int(r.u16(rec, "a range start")), int(r.u16(rec+2, "a range end"))
			index := int(r.u16(rec+4, "a range's coverage index"))
			if start > end {
				r.fail("coverage range %d at offset %d runs backwards (%d–%d)", i, off, start, end)
				return nil
			}
			if !r.spend(end - start + 1) {
				return nil
			}
			for g := start; g <= end; g++ {
				out = append(out, covered{uint16(g), index + g - start})
			}
		}
	default:
		if r.err == nil {
			r.fail("coverage format %d at offset %d: want 1 or 2", format, off)
		}
	}
	return out
}

// closeOver keeps, until nothing changes, every glyph a rule produces from
// kept glyphs. Each rule fires at most once; each glyph is queued once.
func closeOver(keep []bool, rs *rules) {
	byGlyph := make([][]int32, len(keep))
	for i := range rs.len() {
		for _, g := range rs.in(i) {
			byGlyph[g] = append(byGlyph[g], int32(i))
		}
	}
	fired := make([]bool, rs.len())
	var queue []uint16
	for g, k := range keep {
		if k {
			queue = append(queue, uint16(g))
		}
	}
	for len(queue) > 0 {
		g := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
	next:
		for _, i := range byGlyph[g] {
			if fired[i] {
				continue
			}
			for _, h := range rs.in(int(i)) {
				if !keep[h] {
					continue next
				}
			}
			fired[i] = true
			for _, h := range rs.out(int(i)) {
				if !keep[h] {
					keep[h] = true
					queue = append(queue, h)
				}
			}
		}
	}
}
