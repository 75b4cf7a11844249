package marks

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrite(t *testing.T) {
	noCJK := Page
	noCJK.Drawable = func(r rune) bool { return r < 0x3000 }
	png := Style{Space: "·", Newline: "¶", Tab: "→"}
	for _, tc := range []struct {
		name, tok string
		s         Style
		max       int
		want      string
	}{
		{"plain", "love", Page, 0, "love"},
		{"leading space", " the", Page, 0, "␣the"},
		{"sentencepiece space", "▁the", Page, 0, "␣the"},
		{"byte-level space kept", "Ġthe", Page, 0, "Ġthe"},
		{"only spaces", "  ", Page, 0, "␣␣"},
		{"newline", "\n", Page, 0, "⏎"},
		{"llama2.c's BOS", "\n<s>\n", Page, 0, "⏎<s>⏎"},
		{"crlf", "\r\n", Page, 0, "⏎⏎"},
		{"tab", "\tx", Page, 0, "→x"},
		{"another style", " a\n\t", png, 0, "·a¶→"},
		{"control", "\x1b", Page, 0, `\x1b`},
		{"zero width space", "\u200b", Page, 0, `\u200b`},
		{"no-break space", "\u00a0", Page, 0, `\u00a0`},
		{"not UTF-8", "a\xffb", Page, 0, `a\xffb`},
		{"CJK drawn", "日本", Page, 0, "日本"},
		{"CJK without a glyph", "日本", noCJK, 0, `\u65e5\u672c`},
		{"emoji without a glyph", "😀", noCJK, 0, `\U0001f600`},
		{"long", "supercalifragilistic", Page, 12, "supercalifra…"},
		{"exactly the limit", "abcdefghijkl", Page, 12, "abcdefghijkl"},
		{"no limit", "supercalifragilistic", Page, 0, "supercalifragilistic"},
		{"empty", "", Page, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Write(tc.tok, tc.max); got != tc.want {
				t.Errorf("Write(%q, %d) = %q, want %q", tc.tok, tc.max, got, tc.want)
			}
		})
	}
	if got := TokenOrID("", 42); got != "#42" {
		t.Errorf("TokenOrID(\"\", 42) = %q, want #42", got)
	}
	if got := TokenOrID(" a", 42); got != "␣a" {
		t.Errorf("TokenOrID(\" a\", 42) = %q, want ␣a", got)
	}
}

// FuzzToken: no panic; no whitespace, ▁ or invalid UTF-8 left; a token of
// printable characters and whitespace keeps its length in characters.
func FuzzToken(f *testing.F) {
	for _, s := range []string{"", " the", "▁the", "\n", "\r\n\t", "Ġthe", "a b", "\xff\xfe", "日本 語", "\u200b\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		got := Token(tok)
		if strings.ContainsAny(got, " \n\r\t▁") || !utf8.ValidString(got) {
			t.Errorf("Token(%q) = %q: whitespace or invalid UTF-8 left", tok, got)
		}
		plain := utf8.ValidString(tok)
		for _, r := range tok {
			if r != ' ' && r != '\n' && r != '\r' && r != '\t' && Visible(r) != string(r) {
				plain = false
			}
		}
		if a, b := utf8.RuneCountInString(tok), utf8.RuneCountInString(got); plain && a != b {
			t.Errorf("Token(%q) = %q: %d characters, want %d", tok, got, b, a)
		}
	})
}
