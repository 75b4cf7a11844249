package tokenizer

import (
	"fmt"
	"strings"
	"testing"
)

// bruteLongest is prefixSet.longest by scanning every string.
func bruteLongest(strs []string, s string) int {
	best := -1
	for i, p := range strs {
		if p != "" && strings.HasPrefix(s, p) && (best < 0 || len(p) > len(strs[best])) {
			best = i
		}
	}
	return best
}

func TestPrefixSet(t *testing.T) {
	strs := []string{"<s>", "</s>", "<", "<|im_start|>", "<|im_end|>", "", "ab", "abc", "abc", "b"}
	p := newPrefixSet(strs)
	for _, s := range []string{"<|im_start|>user", "</s>x", "<x", "abcd", "abx", "a", "", "b", "zzz", "<|im_"} {
		if got, want := p.longest(s), bruteLongest(strs, s); got != want {
			t.Errorf("longest(%q) = %d, want %d", s, got, want)
		}
	}
	if i, k, ok := p.find("xx<|im_end|>", 0); !ok || i != 2 || strs[k] != "<|im_end|>" {
		t.Errorf("find: got %d %d %v", i, k, ok)
	}
}

func FuzzPrefixSet(f *testing.F) {
	f.Add("a,ab,abc,b", "abcab")
	f.Add("<s>,</s>,<", "x</s><s>")
	f.Fuzz(func(t *testing.T, list, s string) {
		strs := strings.Split(list, ",")
		if len(strs) > 64 {
			strs = strs[:64]
		}
		p := newPrefixSet(strs)
		for i := range len(s) + 1 {
			if got, want := p.longest(s[i:]), bruteLongest(strs, s[i:]); got != want {
				t.Fatalf("longest(%q) among %q = %d, want %d", s[i:], strs, got, want)
			}
		}
	})
}

// BenchmarkManyAddedTokens encodes 20,000 characters with 100,000 added
// tokens that share their first byte (20 s per encode when each position
// scanned the list).
func BenchmarkManyAddedTokens(b *testing.B) {
	strs := make([]string, 100000)
	for i := range strs {
		strs[i] = fmt.Sprintf("x%dy", i)
	}
	m := newTokenMatcher(strs, make([]int, len(strs)))
	text := strings.Repeat("x no token here ", 1250)
	for b.Loop() {
		for pos := 0; ; {
			_, end, _, ok := m.find(text, pos)
			if !ok {
				break
			}
			pos = end
		}
	}
}
