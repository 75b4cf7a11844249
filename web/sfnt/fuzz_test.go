package sfnt

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzSubset subsets any bytes as a font, keeping every character but B.
// Property: no panic, no hang, bounded memory; when it succeeds the result
// is a font that maps no B, that subsets to itself (the closure is
// complete) and whose WOFF unpacks to it.
func FuzzSubset(f *testing.F) {
	tiny := tinyFont(f, tinyGlyf())
	f.Add(tiny)
	withGSUB, err := parse(tiny)
	if err != nil {
		f.Fatal(err)
	}
	withGSUB.set("GSUB", gsubOf(lookup{4, ligature(1, 2, 2)}, lookup{1, single2(cov2(1, 2), 2, 1)},
		lookup{7, extension(2, sequence(1, 2))}, lookup{8, reverse(2, 1)}, lookup{3, sequence(2, 1)}))
	f.Add(withGSUB.bytes())
	f.Add(shipped(f, "font-symbols-regular.ttf"))
	f.Add([]byte("OTTO\x00\x01"))
	keep := func(r rune) bool { return r != 'B' }
	f.Fuzz(func(t *testing.T, ttf []byte) {
		sub, err := Subset(ttf, keep)
		if err != nil {
			return
		}
		again, err := Subset(sub, keep)
		if err != nil {
			t.Fatalf("the subset does not subset again: %v", err)
		}
		if !bytes.Equal(again, sub) {
			t.Errorf("subsetting the subset changed it: %d bytes, then %d", len(sub), len(again))
		}
		f, err := parse(sub)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := readCmap(f.table("cmap"), int(binary.BigEndian.Uint16(f.table("maxp")[4:])), func(rune) bool { return true })
		if err != nil {
			t.Fatalf("the subset's cmap: %v", err)
		}
		for _, m := range ms {
			if m.r == 'B' {
				t.Errorf("the subset maps B to glyph %d", m.gid)
			}
		}
		w, err := WOFF(sub)
		if err != nil {
			t.Fatalf("WOFF of the subset: %v", err)
		}
		_, tables := unWOFF(t, w)
		for _, tb := range f.tables {
			if !bytes.Equal(tables[tb.tag], tb.data) {
				t.Errorf("WOFF: table %q does not unpack to the subset's", tb.tag)
			}
		}
	})
}
