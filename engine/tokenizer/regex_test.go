package tokenizer

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// spansOf returns the match spans of f in s.
func spansOf(t testing.TB, f finder, s string) []span {
	t.Helper()
	spans, err := matchSpans(f, s, nil)
	if err != nil {
		t.Fatalf("matchSpans(%q): %v", s, err)
	}
	return spans
}

// trickyText is a set of strings that exercise the split patterns'
// corners: contractions, Unicode spaces, CR/LF runs, digits of other
// scripts, marks and emoji.
var trickyText = []string{
	"", " ", "  ", "a", "Hello world", "  two leading", "trailing  ", "a  b   c\t\td",
	"don't I'm you're they've we'll he'd it's", "DON'T SHE'S 'S 'ſ ſ'", "'hello 'x' ''",
	"line\nline\r\nline\r\r\n\n x", " \n \n ", "\n\n\n", "a \n b", "x\t\n\ty", ":\n\n", "?? \r\n!!",
	"12345 3.14159 1,000,000", "٣٤٥ ²³ Ⅻ 12a3", "a1b2 c3", "😀🎉 👍🏽 ❤️", "👨‍👩‍👧", "त्वरित जाँच",
	"你好，世界！", "日本語のテキスト", "Привет, мир!", "café naïve", "e\u0301", "a\u00a0b\u3000c\u2028d",
	"def f(a, b):\n    return a+b\n", "for (int i=0;i<10;i++){x++;}", "https://x.org/a?b=1&c=d#e",
	" ?! ... --- ;;", "\u00a0\u00a0x", "\t'll", " 's", "\r", "x\u0085y",
}

// randomText builds strings from characters of every class the patterns
// care about.
func randomText(r *rand.Rand, n int) string {
	alphabet := []string{"a", "Z", "s", "S", "ſ", "t", "l", "'", " ", " ", "\t", "\n", "\r", "\u00a0", "\u3000",
		"1", "٣", "²", "Ⅻ", ".", "!", "-", "(", "é", "e\u0301", "😀", "त्", "你", "\u200d", "_", "\x0b"}
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// TestScannersMatchRegex checks each hand-written scanner against the
// general matcher on the same pattern (its reference twin).
func TestScannersMatchRegex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	inputs := append([]string{}, trickyText...)
	for range 2000 {
		inputs = append(inputs, randomText(r, 1+r.IntN(20)))
	}
	for _, tc := range []struct {
		name    string
		pattern string
		fast    finder
	}{
		{"gpt2", gpt2Pattern, gpt2Scanner{}},
		{"llama3", llama3Pattern, llamaScanner{maxDigits: 3}},
		{"qwen2", qwen2Pattern, llamaScanner{maxDigits: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := compileRegex(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			fails := 0
			for _, s := range inputs {
				got, want := spansOf(t, tc.fast, s), spansOf(t, ref, s)
				if !slices.Equal(got, want) {
					t.Errorf("%q: scanner %v, regex %v", s, got, want)
					if fails++; fails > 5 {
						t.FailNow()
					}
				}
			}
		})
	}
}

// FuzzScanners compares the scanners with the general matcher.
func FuzzScanners(f *testing.F) {
	for _, s := range trickyText {
		f.Add(s)
	}
	refs := map[string]*regex{}
	for _, p := range []string{gpt2Pattern, llama3Pattern, qwen2Pattern} {
		re, err := compileRegex(p)
		if err != nil {
			f.Fatal(err)
		}
		refs[p] = re
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !validUTF8(s) {
			return // the pipeline replaces bad UTF-8 before splitting
		}
		for p, fast := range map[string]finder{gpt2Pattern: gpt2Scanner{}, llama3Pattern: llamaScanner{3}, qwen2Pattern: llamaScanner{1}} {
			if got, want := spansOf(t, fast, s), spansOf(t, refs[p], s); !slices.Equal(got, want) {
				t.Errorf("pattern %q on %q: scanner %v, regex %v", p, s, got, want)
			}
		}
	})
}

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// TestRegexLikeGo compares the matcher with Go's regexp on patterns both
// understand, over ASCII text without \v (where Go's \s differs).
func TestRegexLikeGo(t *testing.T) {
	patterns := []string{
		`a|ab`, `ab|a`, `a*`, `a+?`, `a{2,3}`, `a{2,}b`, `(?:ab)+c`, `[a-c]+`, `[^a-c\s]+`, `\d+|\w+`,
		`\s+`, `(?i:ab)`, `x(?i)AB`, `[\r\n]+`, `\W`, `.`, `^a|b$`, `(?:a|ab)(?:c|bcd)`, `'s|'t| ?[a-z]+| ?[0-9]+`,
		`a??b`, `(a|b)*?c`, `\x41\n`, `[.-]`, `a{0}`, `(?:)`,
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := "aabbcABC01 \t\n\r'sx.-_"
	for _, p := range patterns {
		mine, err := compileRegex(p)
		if err != nil {
			t.Fatalf("compileRegex(%q): %v", p, err)
		}
		// Oniguruma's ^ and $ are always line anchors.
		goRE := regexp.MustCompile("(?m)" + p)
		for range 300 {
			var b strings.Builder
			for range 1 + r.IntN(12) {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			}
			s := b.String()
			if s == "" {
				continue // Hugging Face matches nothing in empty text
			}
			var got [][]int
			for _, sp := range spansOf(t, mine, s) {
				if sp.match {
					got = append(got, []int{sp.start, sp.end})
				}
			}
			want := goRE.FindAllStringIndex(s, -1)
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%q on %q: got %v, Go's regexp %v", p, s, got, want)
				break
			}
		}
	}
}

func TestRegexLookaheadAndUnicode(t *testing.T) {
	for _, tc := range []struct {
		pattern, in string
		want        []string // the matched texts
	}{
		{`\s+(?!\S)`, "a   b", []string{"  "}},
		{`\s+(?=\S)`, "a   b", []string{"   "}},
		{`\p{L}+`, "héllo wörld 你好", []string{"héllo", "wörld", "你好"}},
		{`\p{N}{1,3}`, "12345٣²", []string{"123", "45٣", "²"}},
		{`\P{L}+`, "ab12cd", []string{"12"}},
		{`(?i:'s)`, "'S 'ſ 's", []string{"'S", "'ſ", "'s"}},
		{`[^\s\p{L}]+`, "a!? b\u00a0c--", []string{"!?", "--"}},
		{`\s`, "\u00a0\u3000\u0085", []string{"\u00a0", "\u3000", "\u0085"}},
		{`a++a`, "aaa", nil},
		{`\p{Han}+`, "x你好y", []string{"你好"}},
	} {
		re, err := compileRegex(tc.pattern)
		if err != nil {
			t.Fatalf("compileRegex(%q): %v", tc.pattern, err)
		}
		var got []string
		for _, sp := range spansOf(t, re, tc.in) {
			if sp.match {
				got = append(got, tc.in[sp.start:sp.end])
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q on %q: got %q, want %q", tc.pattern, tc.in, got, tc.want)
		}
	}
}

func TestRegexRefuses(t *testing.T) {
	for _, p := range []string{`(?<=a)b`, `\bword\b`, `(a`, `a)`, `[a`, `*a`, `a{3,1}`, `\p{Nope}`, `[[:alpha:]]`, `(?x)a`, `\h`, `(ab)++`, `a**`} {
		if _, err := compileRegex(p); err == nil {
			t.Errorf("compileRegex(%q): got no error", p)
		}
	}
}

func TestRegexBacktrackingBudget(t *testing.T) {
	re, err := compileRegex(`(?:a|a)*b`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := matchSpans(re, strings.Repeat("a", 40), nil); err == nil {
		t.Error("exponential pattern: got no error")
	}
}

func TestRegexDeepGroupRepeat(t *testing.T) {
	re, err := compileRegex(`(?:ab)+`)
	if err != nil {
		t.Fatal(err)
	}
	spans, err := matchSpans(re, strings.Repeat("ab", 1000), nil)
	if err != nil || len(spans) != 1 || spans[0].end != 2000 {
		t.Errorf("(?:ab)+ on 1000 ab: %v, %v", spans, err)
	}
	if _, err := matchSpans(re, strings.Repeat("ab", maxGroupRepeats+10), nil); err == nil {
		t.Error("a group repeated past maxGroupRepeats: got no error")
	}
}
