package sfnt

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeberg.org/go-fonts/liberation/liberationsansregular"
)

// shipped reads one of the page's TrueType faces.
func shipped(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "static", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runes is keep for the characters of s.
func runes(s string) func(rune) bool {
	return func(r rune) bool { return strings.ContainsRune(s, r) }
}

// glyphs returns a font's glyph data by id and its character map, read
// with the package's own parser.
func glyphs(t *testing.T, ttf []byte) ([][]byte, map[rune]uint16) {
	t.Helper()
	f, err := parse(ttf)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.BigEndian.Uint16(f.table("maxp")[4:]))
	long := binary.BigEndian.Uint16(f.table("head")[50:]) != 0
	glyf := f.table("glyf")
	offsets, err := readLoca(f.table("loca"), glyf, n, long)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, n)
	for g := range out {
		out[g] = glyf[offsets[g]:offsets[g+1]]
	}
	ms, err := readCmap(f.table("cmap"), n, func(rune) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	cmap := map[rune]uint16{}
	for _, m := range ms {
		cmap[m.r] = m.gid
	}
	return out, cmap
}

// sameGlyph reports whether a subset's glyph is the original's outline,
// allowing the zero padding the subset's loca alignment adds.
func sameGlyph(orig, sub []byte) bool {
	return len(sub) >= len(orig) && bytes.Equal(sub[:len(orig)], orig) && len(bytes.Trim(sub[len(orig):], "\x00")) == 0 && len(sub)-len(orig) < 4
}

func TestSubsetKeepsOutlines(t *testing.T) {
	for _, tc := range []struct {
		name, font, keep string
		gone             []rune // characters whose glyphs must be empty
		alsoKept         []int  // glyphs kept through a composite or a substitution
	}{
		{"latin", "font-sans-regular.ttf", "Hello", []rune("zQ"), nil},
		{"composite keeps its components", "font-sans-regular.ttf", "Á", []rune("zQ"), []int{34}}, // Aacute = A (34) + acute
		{"conjunct keeps its ligature", "font-devanagari-regular.ttf", "क्ष", []rune("हट"), []int{176}},
		{"symbols", "font-symbols-regular.ttf", "␣⏮", []rune("✓✗"), nil},
		{"mono", "font-mono-bold.ttf", "I love chai", []rune("xyz"), nil},
		{"chart font", "", "probability 0.123", []rune("xzQ"), nil}, // Liberation Sans
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := liberationsansregular.TTF
			if tc.font != "" {
				orig = shipped(t, tc.font)
			}
			sub, err := Subset(orig, runes(tc.keep))
			if err != nil {
				t.Fatal(err)
			}
			og, ocmap := glyphs(t, orig)
			sg, scmap := glyphs(t, sub)
			if len(sg) != len(og) {
				t.Fatalf("got %d glyphs, want the original's %d (ids kept)", len(sg), len(og))
			}
			for _, r := range tc.keep {
				g, ok := ocmap[r]
				if !ok {
					t.Fatalf("the font does not map %q: pick another test character", r)
				}
				if scmap[r] != g {
					t.Errorf("%q: got glyph %d in the subset's cmap, want %d", r, scmap[r], g)
				}
				if !sameGlyph(og[g], sg[g]) {
					t.Errorf("%q (glyph %d): got %d bytes of outline, want the original's %d unchanged", r, g, len(sg[g]), len(og[g]))
				}
			}
			for _, g := range tc.alsoKept {
				if len(og[g]) == 0 || !sameGlyph(og[g], sg[g]) {
					t.Errorf("glyph %d: got %d bytes of outline, want the original's %d unchanged", g, len(sg[g]), len(og[g]))
				}
			}
			if !sameGlyph(og[0], sg[0]) {
				t.Errorf(".notdef: got %d bytes, want the original's %d", len(sg[0]), len(og[0]))
			}
			for _, r := range tc.gone {
				g := ocmap[r]
				if len(og[g]) == 0 {
					t.Fatalf("%q has no outline in the font: pick another test character", r)
				}
				if len(sg[g]) != 0 {
					t.Errorf("%q (glyph %d): got %d bytes of outline, want none", r, g, len(sg[g]))
				}
				if _, ok := scmap[r]; ok {
					t.Errorf("%q: the subset's cmap still maps it", r)
				}
			}
			want := map[rune]bool{}
			for _, r := range tc.keep {
				want[r] = true
			}
			if len(scmap) != len(want) {
				t.Errorf("got %d characters in the subset's cmap, want %d", len(scmap), len(want))
			}
			if len(sub) >= len(orig) {
				t.Errorf("got %d bytes, want fewer than the original's %d", len(sub), len(orig))
			}
		})
	}
}

// TestSubsetLigatureNeedsItsParts checks the closure both ways: the
// conjunct क्ष (glyph 176 of Noto Sans Devanagari, a GSUB ligature of
// क ् ष) is kept with its three characters and left out without ष.
func TestSubsetLigatureNeedsItsParts(t *testing.T) {
	orig := shipped(t, "font-devanagari-regular.ttf")
	for _, tc := range []struct {
		keep string
		want bool
	}{
		{"क्ष", true},
		{"क्", false},
	} {
		t.Run(tc.keep, func(t *testing.T) {
			sub, err := Subset(orig, runes(tc.keep))
			if err != nil {
				t.Fatal(err)
			}
			sg, _ := glyphs(t, sub)
			if got := len(sg[176]) > 0; got != tc.want {
				t.Errorf("glyph 176 (क्ष) kept: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSubsetChecksums checks the table directory's checksums and the
// font's checkSumAdjustment, which makes the whole font sum to 0xB1B0AFBA.
func TestSubsetChecksums(t *testing.T) {
	for _, name := range []string{"font-sans-bold.ttf", "font-devanagari-bold.ttf"} {
		t.Run(name, func(t *testing.T) {
			sub, err := Subset(shipped(t, name), runes("Tracer चाय"))
			if err != nil {
				t.Fatal(err)
			}
			if got := checksum(sub); got != 0xB1B0AFBA {
				t.Errorf("the whole font sums to %#08x, want 0xb1b0afba", got)
			}
			f, err := parse(sub)
			if err != nil {
				t.Fatal(err)
			}
			for i, tb := range f.tables {
				if got, want := binary.BigEndian.Uint32(sub[12+16*i+4:]), tableChecksum(tb); got != want {
					t.Errorf("table %q: got checksum %#08x in the directory, want %#08x", tb.tag, got, want)
				}
				if off := binary.BigEndian.Uint32(sub[12+16*i+8:]); off%4 != 0 {
					t.Errorf("table %q starts at %d, not on a 4-byte boundary", tb.tag, off)
				}
				if i > 0 && f.tables[i-1].tag >= tb.tag {
					t.Errorf("table %q follows %q: want the directory sorted by tag", tb.tag, f.tables[i-1].tag)
				}
			}
		})
	}
}

// unWOFF unpacks a WOFF 1.0 file as a browser does, checking what the
// spec requires of its layout, and returns its flavor and tables by tag.
func unWOFF(t *testing.T, w []byte) (uint32, map[string][]byte) {
	t.Helper()
	if len(w) < woffHeaderSize || string(w[:4]) != "wOFF" {
		t.Fatalf("not a WOFF file: %.4q", w)
	}
	if got := binary.BigEndian.Uint32(w[8:]); int(got) != len(w) {
		t.Errorf("header length %d, file %d bytes", got, len(w))
	}
	if len(w)%4 != 0 {
		t.Errorf("the file is %d bytes, not padded to a multiple of 4", len(w))
	}
	n := int(binary.BigEndian.Uint16(w[12:]))
	total := 12 + 16*n
	tables := map[string][]byte{}
	prev := ""
	end := woffHeaderSize + woffEntrySize*n
	for i := range n {
		e := w[woffHeaderSize+woffEntrySize*i:]
		tag := string(e[:4])
		off, comp, orig := int(binary.BigEndian.Uint32(e[4:])), int(binary.BigEndian.Uint32(e[8:])), int(binary.BigEndian.Uint32(e[12:]))
		if tag <= prev {
			t.Errorf("table %q follows %q: want the directory sorted by tag", tag, prev)
		}
		prev = tag
		if off%4 != 0 || off < end || off+comp > len(w) {
			t.Fatalf("table %q at %d (%d bytes): misaligned, overlapping or past the end", tag, off, comp)
		}
		end = off + comp
		data := w[off : off+comp]
		if comp < orig {
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("table %q: %v", tag, err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatalf("table %q: %v", tag, err)
			}
		} else if comp > orig {
			t.Errorf("table %q: stored %d bytes for %d", tag, comp, orig)
		}
		if len(data) != orig {
			t.Fatalf("table %q: unpacked %d bytes, want %d", tag, len(data), orig)
		}
		if got, want := tableChecksum(table{tag, data}), binary.BigEndian.Uint32(e[16:]); got != want {
			t.Errorf("table %q: checksum %#08x, directory says %#08x", tag, got, want)
		}
		tables[tag] = data
		total += pad4(orig)
	}
	if pad4(end) != len(w) {
		t.Errorf("the last table ends at %d; the file is %d bytes", end, len(w))
	}
	if got := int(binary.BigEndian.Uint32(w[16:])); got != total {
		t.Errorf("totalSfntSize %d, want %d", got, total)
	}
	return binary.BigEndian.Uint32(w[4:]), tables
}

func TestWOFFRoundTrip(t *testing.T) {
	tiny := tinyFont(t, tinyGlyf())
	for _, tc := range []struct {
		name string
		font []byte
	}{
		{"tiny", tiny},
		{"whole face", shipped(t, "font-mono-bold.ttf")},
		{"subset", func() []byte {
			b, err := Subset(shipped(t, "font-devanagari-regular.ttf"), runes("हिन्दी क्ष"))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := WOFF(tc.font)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parse(tc.font)
			if err != nil {
				t.Fatal(err)
			}
			flavor, tables := unWOFF(t, w)
			if flavor != f.version {
				t.Errorf("got flavor %#08x, want the font's %#08x", flavor, f.version)
			}
			if len(tables) != len(f.tables) {
				t.Errorf("got %d tables, want %d", len(tables), len(f.tables))
			}
			for _, tb := range f.tables {
				if !bytes.Equal(tables[tb.tag], tb.data) {
					t.Errorf("table %q: got %d bytes back, want the font's %d", tb.tag, len(tables[tb.tag]), len(tb.data))
				}
			}
		})
	}
}

func TestSubsetErrors(t *testing.T) {
	good := tinyFont(t, tinyGlyf())
	change := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	at := func(b []byte, tag string) int { // a table's offset in the tiny font
		for i := range int(binary.BigEndian.Uint16(b[4:])) {
			if string(b[12+16*i:16+16*i]) == tag {
				return int(binary.BigEndian.Uint32(b[12+16*i+8:]))
			}
		}
		t.Fatalf("no %q table", tag)
		return 0
	}
	composite := tinyGlyf()
	binary.BigEndian.PutUint16(composite[2][12:], 9) // glyph 2's component: glyph 9 of 3
	for _, tc := range []struct {
		name string
		font []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"woff2", []byte("wOF2\x00\x01\x00\x00\x00\x00\x00\x00"), "already WOFF"},
		{"cff", change(func(b []byte) { copy(b, "OTTO") }), "CFF"},
		{"text", []byte("<html><body>not a font</body></html>"), "not a TrueType"},
		{"no tables", change(func(b []byte) { binary.BigEndian.PutUint16(b[4:], 0) }), "has 0 tables"},
		{"directory past the end", good[:20], "table directory"},
		{"table past the end", change(func(b []byte) { binary.BigEndian.PutUint32(b[12+8:], 1<<30) }), "runs past the end"},
		{"duplicate table", change(func(b []byte) { copy(b[12+16:], b[12:16]) }), "appears twice"},
		{"no glyphs", change(func(b []byte) { binary.BigEndian.PutUint16(b[at(b, "maxp")+4:], 0) }), "no glyphs"},
		{"loca short", change(func(b []byte) { binary.BigEndian.PutUint16(b[at(b, "maxp")+4:], 500) }), "loca has"},
		{"loca out of order", change(func(b []byte) { binary.BigEndian.PutUint16(b[at(b, "loca")+2:], 0xFFFF) }), "out of order or past"},
		{"cmap past glyphs", change(func(b []byte) { binary.BigEndian.PutUint16(b[at(b, "cmap")+12+16+4*2:], 0x10000+40-'A') }), "past the font's 3 glyphs"},
		{"cmap out of order", change(func(b []byte) { binary.BigEndian.PutUint16(b[at(b, "cmap")+12+16+2*2:], 0x50) }), "out of order"},
		{"composite past glyphs", tinyFont(t, composite), "names glyph 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Subset(tc.font, runes("AB"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// tinyGlyf is three glyphs: an empty .notdef, a simple one-point glyph (1,
// "A") and a composite of glyph 1 (2, "B").
func tinyGlyf() [][]byte {
	// 1 contour of 1 point (end point 0), no instructions, flag on-curve, x and y as words.
	simple := []byte{0, 1, 0, 0, 0, 0, 0, 10, 0, 10, 0, 0, 0, 0, 0x01, 0, 10, 0, 10}
	comp := []byte{0xFF, 0xFF, 0, 0, 0, 0, 0, 10, 0, 10, 0, 0, 0, 1, 0, 0} // flags 0 (byte args), glyph 1, args 0 0
	return [][]byte{nil, simple, comp}
}

// tinyFont is a TrueType font of the given glyphs (short loca) mapping A
// to glyph 1 and B to glyph 2 through a format 4 cmap.
func tinyFont(t testing.TB, glyphs [][]byte) []byte {
	t.Helper()
	head := make([]byte, 54)
	binary.BigEndian.PutUint32(head, 0x00010000)
	binary.BigEndian.PutUint32(head[12:], 0x5F0F3CF5) // magicNumber
	binary.BigEndian.PutUint16(head[18:], 1000)       // unitsPerEm
	maxp := make([]byte, 6)
	binary.BigEndian.PutUint32(maxp, 0x00005000)
	binary.BigEndian.PutUint16(maxp[4:], uint16(len(glyphs)))
	var glyf []byte
	loca := []byte{0, 0}
	for _, g := range glyphs {
		glyf = append(glyf, g...)
		if len(glyf)%2 != 0 {
			glyf = append(glyf, 0)
		}
		loca = binary.BigEndian.AppendUint16(loca, uint16(len(glyf)/2))
	}
	f4, err := buildFormat4([]mapping{{'A', 1}, {'B', 2}})
	if err != nil {
		t.Fatal(err)
	}
	cmap := []byte{0, 0, 0, 1, 0, 3, 0, 1, 0, 0, 0, 12}
	cmap = append(cmap, f4...)
	f := &font{version: versionTrueType, tables: []table{
		{"head", head}, {"maxp", maxp}, {"loca", loca}, {"glyf", glyf}, {"cmap", cmap},
	}}
	return f.bytes()
}

func TestSubsetTiny(t *testing.T) {
	for _, tc := range []struct {
		keep string
		want []bool // glyph kept, by id
	}{
		{"A", []bool{true, true, false}},
		{"B", []bool{true, true, true}}, // B is a composite of A's glyph
		{"", []bool{true, false, false}},
	} {
		t.Run("keep "+tc.keep, func(t *testing.T) {
			sub, err := Subset(tinyFont(t, tinyGlyf()), runes(tc.keep))
			if err != nil {
				t.Fatal(err)
			}
			g, _ := glyphs(t, sub)
			for id, want := range tc.want {
				orig := tinyGlyf()[id]
				if got := len(g[id]) > 0; got != (want && len(orig) > 0) {
					t.Errorf("glyph %d kept: got %v, want %v", id, got, want)
				}
			}
		})
	}
}
