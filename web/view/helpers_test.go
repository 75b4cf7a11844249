package view

import (
	"strings"
	"testing"
)

func TestVisibleToken(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "the", "the"},
		{"leading space", " the", "␣the"},
		{"sentencepiece space", "▁the", "␣the"},
		{"only a space", " ", "␣"},
		{"newline", "\n", "⏎"},
		{"crlf", "\r\n", "⏎⏎"},
		{"tab", "\tx", "→x"},
		{"gpt-2 marks stay", "Ġthe", "Ġthe"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := VisibleToken(tc.in); got != tc.want {
				t.Errorf("VisibleToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzVisibleToken: no panic, and no whitespace left unmarked: the result
// holds no space, newline, carriage return, tab or ▁, and has as many
// characters as the token.
func FuzzVisibleToken(f *testing.F) {
	for _, s := range []string{"", " the", "▁the", "\n", "\r\n\t", "Ġthe", "a b", "\xff\xfe", "日本 語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		got := VisibleToken(tok)
		if strings.ContainsAny(got, " \n\r\t▁") {
			t.Errorf("VisibleToken(%q) = %q: whitespace left", tok, got)
		}
		if a, b := len([]rune(tok)), len([]rune(got)); a != b {
			t.Errorf("VisibleToken(%q) = %q: %d characters, want %d", tok, got, b, a)
		}
	})
}
