package tokenizer

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestLlama2CGolden checks tok512.bin against run.c's encode on the
// shared vectors (ids with BOS, and the stored token strings).
func TestLlama2CGolden(t *testing.T) {
	path := sharedPath(t, "models", "stories260K", "golden-tok512-encode.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Input  string   `json:"input"`
			IDs    []int    `json:"ids"`
			Tokens []string `json:"tokens"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	tok := load(t, "models", "stories260K", "tok512.bin")
	if got := tok.VocabSize(); got != 512 {
		t.Errorf("VocabSize() = %d, want 512", got)
	}
	for _, c := range g.Cases {
		t.Run(c.Input, func(t *testing.T) {
			ids, err := tok.Encode(c.Input, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, c.IDs) {
				t.Errorf("Encode(%q, true)\n got %v\nwant %v", c.Input, ids, c.IDs)
			}
			tokens := make([]string, len(c.IDs))
			for i, id := range c.IDs {
				tokens[i] = tok.Token(id)
			}
			if !slices.Equal(tokens, c.Tokens) {
				t.Errorf("tokens\n got %q\nwant %q", tokens, c.Tokens)
			}
			// run.c's decode drops the dummy-prefix space after BOS.
			text, err := tok.Decode(ids, true)
			if err != nil {
				t.Fatal(err)
			}
			if text != c.Input {
				t.Errorf("Decode(Encode(%q), true) = %q", c.Input, text)
			}
		})
	}
}

// TestLlama2CRoundTrip loads the 32000-token Llama 2 tokenizer.bin and
// checks that text survives Encode and Decode.
func TestLlama2CRoundTrip(t *testing.T) {
	tok := load(t, "models", "llama2c-tokenizer", "tokenizer.bin")
	if got := tok.VocabSize(); got != 32000 {
		t.Errorf("VocabSize() = %d, want 32000", got)
	}
	for _, tc := range []struct {
		in      string
		wantIDs []int // checked when set
	}{
		{"Hello world", []int{1, 15043, 3186}},
		{"Once upon a time, there was a little girl named Lily.", nil},
		{"  two leading spaces and trailing  ", nil},
		{"line one\nline two\n\n", nil},
		{"emoji 😀🎉 and Hindi त्वरित जाँच, 你好", nil},
		{"def f(x):\n\treturn x**2 # code", nil},
		{"", []int{1}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			ids, err := tok.Encode(tc.in, true)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantIDs != nil && !slices.Equal(ids, tc.wantIDs) {
				t.Errorf("Encode(%q, true) = %v, want %v", tc.in, ids, tc.wantIDs)
			}
			got, err := tok.Decode(ids, true)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.in {
				t.Errorf("Decode(Encode(%q)) = %q", tc.in, got)
			}
		})
	}
}

// llama2cFile writes a tokenizer in llama2.c's format.
func llama2cFile(maxLen int32, pieces []string, scores []float32) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, uint32(maxLen))
	for i, p := range pieces {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(scores[i]))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

func TestParseLlama2CErrors(t *testing.T) {
	good := llama2cFile(3, []string{"<unk>", "<s>", "</s>", "a"}, []float32{0, 0, 0, -1})
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no header"},
		{"bad header", []byte{0, 0, 0, 0}, "max_token_length"},
		{"truncated token", good[:len(good)-1], "runs past the end"},
		{"truncated record", good[:len(good)-3], "truncated"},
		{"too few tokens", llama2cFile(3, []string{"a"}, []float32{0}), "at least"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLlama2C(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseLlama2C: got error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := ParseLlama2C(good); err != nil {
		t.Errorf("ParseLlama2C(good): %v", err)
	}
}

// TestLlama2CMergeOrder checks run.c's merge rule on a tiny vocabulary: the
// pair with the highest score merges first, the leftmost on ties.
func TestLlama2CMergeOrder(t *testing.T) {
	pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n"}
	scores := []float32{0, 0, 0}
	for b := 0; b < 256; b++ {
		pieces = append(pieces, "<0x"+strings.ToUpper(hex2(b))+">")
		scores = append(scores, 0)
	}
	add := func(p string, s float32) int {
		pieces = append(pieces, p)
		scores = append(scores, s)
		return len(pieces) - 1
	}
	sp, a, b := add(" ", -1), add("a", -1), add("b", -1)
	ab := add("ab", -2)
	add("ba", -3)
	add(" a", -5)
	aa := add("aa", -1)
	tok, err := ParseLlama2C(llama2cFile(4, pieces, scores))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"ab", []int{sp, ab}},                   // "ab" (-2) beats " a" (-5)
		{"bab", []int{sp, b, ab}},               // "ab" (-2) beats "ba" (-3)
		{"aaa", []int{sp, aa, a}},               // equal scores: the leftmost pair
		{"é", []int{sp, 0xC3 + 3, 0xA9 + 3}},    // no token: bytes, id byte+3
		{"a\x80", []int{sp, 'a' + 3, 0x80 + 3}}, // run.c reads "a" and a continuation byte as one character
	} {
		got, err := tok.Encode(tc.in, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func hex2(b int) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[b>>4], digits[b&15]})
}
