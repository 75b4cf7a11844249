package sfnt

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// words is big-endian uint16s.
func words(v ...uint16) []byte {
	var b []byte
	for _, x := range v {
		b = binary.BigEndian.AppendUint16(b, x)
	}
	return b
}

// lookup is one GSUB lookup of one subtable.
type lookup struct {
	kind uint16
	sub  []byte
}

// gsubOf builds a GSUB table (no scripts or features) of the lookups.
func gsubOf(ls ...lookup) []byte {
	b := words(1, 0, 0, 0, 10, uint16(len(ls)))
	off := 2 + 2*len(ls)
	var body []byte
	for _, l := range ls {
		b = append(b, words(uint16(off))...)
		body = append(append(body, words(l.kind, 0, 1, 8)...), l.sub...)
		off += 8 + len(l.sub)
	}
	return append(b, body...)
}

// cov1 is a format 1 coverage of gs; cov2 a format 2 coverage of one range.
func cov1(gs ...uint16) []byte      { return append(words(1, uint16(len(gs))), words(gs...)...) }
func cov2(start, end uint16) []byte { return words(2, 1, start, end, 0) }

func single1(cov []byte, delta uint16) []byte { return append(words(1, 6, delta), cov...) }
func single2(cov []byte, subst ...uint16) []byte {
	return append(append(words(2, uint16(6+2*len(subst)), uint16(len(subst))), words(subst...)...), cov...)
}

// sequence is a multiple (2) or alternate (3) substitution of glyph g.
func sequence(g uint16, out ...uint16) []byte {
	b := append(words(1, uint16(10+2*len(out)), 1, 8, uint16(len(out))), words(out...)...)
	return append(b, cov1(g)...)
}

func ligature(first uint16, lig uint16, comps ...uint16) []byte {
	b := append(words(1, uint16(16+2*len(comps)), 1, 8, 1, 4, lig, uint16(len(comps)+1)), words(comps...)...)
	return append(b, cov1(first)...)
}

func extension(kind uint16, sub []byte) []byte {
	return append(append(words(1, kind), 0, 0, 0, 8), sub...)
}

func reverse(g, out uint16) []byte { return append(words(1, 12, 0, 0, 1, out), cov1(g)...) }

func TestGSUBClosure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gsub    []byte
		keep    []uint16
		want    []uint16
		wantErr string
	}{
		{"single by delta", gsubOf(lookup{1, single1(cov1(1), 4)}), []uint16{1}, []uint16{1, 5}, ""},
		{"single by list", gsubOf(lookup{1, single2(cov1(1, 2), 7, 8)}), []uint16{2}, []uint16{2, 8}, ""},
		{"single, range coverage", gsubOf(lookup{1, single1(cov2(2, 4), 3)}), []uint16{3}, []uint16{3, 6}, ""},
		{"multiple", gsubOf(lookup{2, sequence(1, 3, 4)}), []uint16{1}, []uint16{1, 3, 4}, ""},
		{"alternate", gsubOf(lookup{3, sequence(1, 6, 7)}), []uint16{1}, []uint16{1, 6, 7}, ""},
		{"ligature with its parts", gsubOf(lookup{4, ligature(1, 9, 2)}), []uint16{1, 2}, []uint16{1, 2, 9}, ""},
		{"ligature without a part", gsubOf(lookup{4, ligature(1, 9, 2)}), []uint16{1}, []uint16{1}, ""},
		{"extension", gsubOf(lookup{7, extension(1, single1(cov1(1), 1))}), []uint16{1}, []uint16{1, 2}, ""},
		{"reverse chaining", gsubOf(lookup{8, reverse(1, 3)}), []uint16{1}, []uint16{1, 3}, ""},
		{"to a fixpoint", gsubOf(lookup{1, single1(cov1(2), 1)}, lookup{4, ligature(1, 8, 3)}, lookup{1, single1(cov1(1), 1)}), []uint16{1}, []uint16{1, 2, 3, 8}, ""}, // 1 -> 2 (last lookup) -> 3 (first) -> 1 3 -> 8
		{"past the last glyph", gsubOf(lookup{1, single1(cov1(1), 40)}), []uint16{1}, []uint16{1}, ""},
		{"contextual skipped", gsubOf(lookup{5, words(1, 0, 0)}), []uint16{1}, []uint16{1}, ""},
		{"truncated", gsubOf(lookup{1, single1(cov1(1), 4)})[:20], nil, nil, "outside the table"},
		{"extension of an extension", gsubOf(lookup{7, extension(7, nil)}), nil, nil, "another extension"},
		{"backwards range", gsubOf(lookup{1, single1(cov2(4, 2), 1)}), nil, nil, "runs backwards"},
		{"coverage format", gsubOf(lookup{1, single1(words(3, 0), 1)}), nil, nil, "coverage format 3"},
		{"too many glyphs", gsubOf(slices.Repeat([]lookup{{1, single1(cov2(0, 0xFFFF), 1)}}, 17)...), nil, nil, "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := gsubRules(tc.gsub, 10)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			kept := make([]bool, 10)
			for _, g := range tc.keep {
				kept[g] = true
			}
			closeOver(kept, rs)
			var got []uint16
			for g, k := range kept {
				if k {
					got = append(got, uint16(g))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got glyphs %v, want %v", got, tc.want)
			}
		})
	}
}
