package plots

import (
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestWrap(t *testing.T) {
	sty := lightPalette.text(sans, titleSize, lightPalette.ink)
	tests := []struct {
		name  string
		s     string
		width vg.Length
		want  []string
	}{
		{"fits", "Step 1 of 4", 300, []string{"Step 1 of 4"}},
		{"two lines", "Step 1 of 14 (prefill): moved 1.0\u00a0MiB", 150, []string{"Step 1 of 14 (prefill): moved", "1.0\u00a0MiB"}},
		{"ellipsis on the last line", "one two three four five six seven eight nine ten", 60, []string{"one two", "three four…"}},
		{"empty", "", 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wrap(sty, tt.s, tt.width, 2)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzWrap: no panic, at most n lines, each as wide as asked (or a lone
// ellipsis), and without an ellipsis the words come back in order.
func FuzzWrap(f *testing.F) {
	f.Add("Step 2 of 8 (decode): moved 1023.5\u00a0KiB, 526.3\u00a0kFLOP, 0.505\u00a0ms", 200.0, 2)
	f.Add("supercalifragilisticexpialidocious", 20.0, 1)
	f.Add("  a  b ", 1.0, 3)
	f.Add("日本語 \xff\n x", 50.0, 2)
	sty := lightPalette.text(sans, titleSize, lightPalette.ink)
	f.Fuzz(func(t *testing.T, s string, w float64, n int) {
		if n < 1 || n > 4 || !(w > 0) || w > 2000 || len(s) > 300 {
			return
		}
		lines := wrap(sty, s, vg.Length(w), n)
		if len(lines) > n {
			t.Fatalf("got %d lines, want at most %d", len(lines), n)
		}
		cut := false
		for _, l := range lines {
			if sty.Width(l) > vg.Length(w) && l != "…" && len([]rune(l)) > 2 {
				t.Errorf("line %q is %v wide, want at most %v", l, sty.Width(l), w)
			}
			cut = cut || strings.HasSuffix(l, "…")
		}
		words := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
		if !cut && !strings.HasSuffix(s, "…") && strings.Join(lines, " ") != strings.Join(words, " ") {
			t.Errorf("got %q from %q, want its words in order", lines, s)
		}
	})
}
