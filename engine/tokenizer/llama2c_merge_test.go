package tokenizer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// refMerge is run.c's merge loop as written there, the reference for
// Llama2C.merge: for every merge, scan all adjacent pairs, join their
// strings, and merge the pair whose token has the highest score (strictly
// above -1e10), the leftmost on ties. work counts the pairs looked up.
func refMerge(t *Llama2C, ids []int) (out []int, work int) {
	ids = slices.Clone(ids)
	for {
		best, bestID, bestScore := -1, -1, float32(-1e10)
		for i := 0; i+1 < len(ids); i++ {
			work++
			id, ok := t.ids[t.pieces[ids[i]]+t.pieces[ids[i+1]]]
			if ok && t.scores[id] > bestScore {
				best, bestID, bestScore = i, id, t.scores[id]
			}
		}
		if best < 0 {
			return ids, work
		}
		ids[best] = bestID
		ids = slices.Delete(ids, best+1, best+2)
	}
}

// refEncode is Llama2C.Encode with refMerge in place of merge. As in run.c,
// BOS is in the list the merge loop runs over.
func refEncode(t *testing.T, tok *Llama2C, text string, bos bool) []int {
	t.Helper()
	// Encode's character loop, then the reference merge on its input: merge
	// of an unmergeable list is the identity, so split with a vocabulary
	// copy that has no multi-character tokens.
	chars := &Llama2C{pieces: tok.pieces, scores: make([]float32, len(tok.scores)), ids: tok.ids}
	for i := range chars.scores {
		chars.scores[i] = float32(math.Inf(-1))
	}
	ids, err := chars.Encode(text, bos)
	if err != nil {
		t.Fatalf("Encode(%q): %v", text, err)
	}
	out, _ := refMerge(tok, ids)
	return out
}

// mergeVocab is a llama2.c vocabulary over the letters "abcd" whose tokens
// are the strings of up to maxLen letters, with few distinct scores so that
// ties (and the leftmost rule) decide many merges.
func mergeVocab(t testing.TB, maxLen int) *Llama2C {
	t.Helper()
	pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n"}
	scores := []float32{0, 0, 0}
	for b := 0; b < 256; b++ {
		pieces = append(pieces, fmt.Sprintf("<0x%02X>", b))
		scores = append(scores, 0)
	}
	pieces = append(pieces, " ")
	scores = append(scores, -1)
	words := []string{""}
	for n := 1; n <= maxLen; n++ {
		var longer []string
		for _, w := range words {
			for _, c := range "abcd" {
				longer = append(longer, w+string(c))
			}
		}
		words = longer
		for i, w := range words {
			// Some strings are left out, so merges must go round them.
			if n > 1 && i%5 == 3 {
				continue
			}
			pieces = append(pieces, w, " "+w)
			s := float32(-(i*7)%4 - n)
			scores = append(scores, s, s-1)
		}
	}
	tok, err := ParseLlama2C(llama2cFile(int32(maxLen+1), pieces, scores))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// letters returns n pseudo-random letters of "abcd" (a fixed LCG, so the
// test is the same every run).
func letters(n int, seed uint32) string {
	b := make([]byte, n)
	for i := range b {
		seed = seed*1664525 + 1013904223
		b[i] = "abcd"[seed>>30]
	}
	return string(b)
}

// TestLlama2CMergeMatchesReference checks that the heap merge gives run.c's
// ids, on the synthetic vocabulary and, when staged, on tok512.bin and the
// 32000-token tokenizer.bin.
func TestLlama2CMergeMatchesReference(t *testing.T) {
	synth := mergeVocab(t, 4)
	inputs := []string{"", "a", "ab", "aaaa", "abababab", "dcbadcba", "a b  c\td", "é😀 abc", "\x00a\xffb"}
	for i, n := range []int{5, 17, 64, 300, 1000} {
		inputs = append(inputs, letters(n, uint32(i)))
	}
	check := func(t *testing.T, tok *Llama2C) {
		for _, in := range inputs {
			got, err := tok.Encode(in, false)
			if err != nil {
				t.Fatalf("Encode(%.20q): %v", in, err)
			}
			if want := refEncode(t, tok, in, false); !slices.Equal(got, want) {
				t.Errorf("Encode(%.20q)\n got %v\nwant %v", in, got, want)
			}
		}
	}
	t.Run("synthetic", func(t *testing.T) { check(t, synth) })
	t.Run("tok512", func(t *testing.T) { check(t, load(t, "models", "stories260K", "tok512.bin").(*Llama2C)) })
	t.Run("llama2", func(t *testing.T) { check(t, load(t, "models", "llama2c-tokenizer", "tokenizer.bin").(*Llama2C)) })
}

// TestLlama2CMergeWork encodes a 2 MB single word: the merge does
// O(n log n) work (here counted as pairs looked up plus heap entries
// pushed and popped, each at most a few per input id), where run.c's loop
// looks up every pair for every merge. The counts are deterministic; no
// clock is read.
func TestLlama2CMergeWork(t *testing.T) {
	tok := mergeVocab(t, 4)
	for _, tc := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"200k", 200_000}, {"2MB", 2 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			word := letters(tc.n, 7)
			ids := make([]int, 0, tc.n)
			for i := 0; i < tc.n; i++ {
				ids = append(ids, tok.ids[word[i:i+1]])
			}
			out, work := tok.mergeWork(ids)
			if len(out) >= tc.n/2 {
				t.Fatalf("%d ids merged into %d: want a word with many merges", tc.n, len(out))
			}
			// Each id is looked up and pushed once at the start; each merge
			// (at most n-1) looks up and pushes at most two pairs; every
			// entry is popped at most once.
			if limit := 8 * tc.n; work > limit {
				t.Errorf("merging %d ids took %d steps, want at most %d", tc.n, work, limit)
			}
			got, err := tok.Decode(out, false)
			if err != nil || got != word {
				t.Errorf("Decode(merge(word)) = %.20q…, %v; want the word back", got, err)
			}
		})
	}
	// The reference loop shows what the counter catches: quadratic work.
	ids := make([]int, 0, 3000)
	word := letters(3000, 7)
	for i := range word {
		ids = append(ids, tok.ids[word[i:i+1]])
	}
	want, refWork := refMerge(tok, ids)
	got, work := tok.mergeWork(slices.Clone(ids))
	if !slices.Equal(got, want) {
		t.Errorf("merge of 3000 letters differs from the reference")
	}
	if refWork < 100*work {
		t.Errorf("reference took %d steps and the heap merge %d: want the reference's quadratic count far above", refWork, work)
	}
}

// FuzzLlama2CMerge builds a llama2.c vocabulary from the fuzzer's words and
// scores and checks that the heap merge gives run.c's ids for the text.
func FuzzLlama2CMerge(f *testing.F) {
	f.Add("a b ab ba aa  a", []byte{1, 2, 2, 3, 1, 0}, "abab aab")
	f.Add("ab bc abc cd bcd", []byte{5, 5, 5, 5, 5}, "abcdabcd bc")
	f.Add("x xy xyz yz", []byte{255, 0, 128}, "xyzxyzxy")
	f.Add("é éé a", []byte{1, 1}, "ééé aé")
	f.Fuzz(func(t *testing.T, words string, scoreBytes []byte, text string) {
		if len(words) > 512 || len(text) > 512 {
			return
		}
		pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n"}
		scores := []float32{0, 0, 0}
		for b := 0; b < 256; b++ {
			pieces = append(pieces, fmt.Sprintf("<0x%02X>", b))
			scores = append(scores, 0)
		}
		pieces = append(pieces, " ")
		scores = append(scores, 0)
		for i, w := range strings.Split(words, " ") {
			s := float32(0)
			if len(scoreBytes) > 0 {
				// Few distinct values, some at or below -1e10 (never merged).
				s = float32(int(scoreBytes[i%len(scoreBytes)])%8 - 4)
				if scoreBytes[i%len(scoreBytes)] == 255 {
					s = -1e10
				}
			}
			pieces = append(pieces, w)
			scores = append(scores, s)
		}
		tok, err := ParseLlama2C(llama2cFile(16, pieces, scores))
		if err != nil {
			t.Fatal(err)
		}
		got, err := tok.Encode(text, true)
		if err != nil {
			t.Fatal(err)
		}
		if want := refEncode(t, tok, text, true); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) with words %q\n got %v\nwant %v", text, words, got, want)
		}
		for _, id := range got {
			if id < 0 || id >= tok.VocabSize() {
				t.Errorf("id %d outside the vocabulary of %d", id, tok.VocabSize())
			}
		}
		if utf8.ValidString(text) && !strings.Contains(words, "<0x") {
			if back, err := tok.Decode(got, true); err != nil || back != text {
				t.Errorf("Decode(Encode(%q)) = %q, %v", text, back, err)
			}
		}
	})
}

// FuzzParseLlama2C reads arbitrary bytes as a llama2.c tokenizer.bin: no
// panic, no hang, memory bounded by the file; when it loads, encoded ids
// are in the vocabulary and decode, and the merge gives run.c's ids.
func FuzzParseLlama2C(f *testing.F) {
	pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n"}
	scores := []float32{0, 0, 0}
	for b := 0; b < 256; b++ {
		pieces = append(pieces, fmt.Sprintf("<0x%02X>", b))
		scores = append(scores, 0)
	}
	pieces = append(pieces, " ", "a", "b", " a", "ab", " ab")
	scores = append(scores, -1, -1, -1, -2, -3, -1)
	f.Add(llama2cFile(3, pieces, scores), "ab ab a")
	f.Add(llama2cFile(3, pieces[:3], scores[:3]), "x")
	f.Add(llama2cFile(3, []string{"<unk>", "<s>", "</s>", " ", "", "a"}, []float32{0, 0, 0, 1, 2, float32(math.NaN())}), "aa")
	f.Add([]byte{0, 0, 0, 0}, "")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := ParseLlama2C(data)
		if err != nil {
			return
		}
		ids, err := tok.Encode(text, true)
		if err != nil {
			return // a vocabulary without " " or without byte tokens says so
		}
		for _, id := range ids {
			if id < 0 || id >= tok.VocabSize() {
				t.Fatalf("Encode(%q) gave id %d, outside the vocabulary of %d", text, id, tok.VocabSize())
			}
		}
		if _, err := tok.Decode(ids, false); err != nil {
			t.Errorf("Decode(Encode(%q)) = %v", text, err)
		}
		if len(text) <= 256 {
			if want := refEncode(t, tok, text, true); !slices.Equal(ids, want) {
				t.Errorf("Encode(%q)\n got %v\nwant %v", text, ids, want)
			}
		}
	})
}
