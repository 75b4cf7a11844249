package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestByteLevelTable(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		r := byteLevelRune(byte(b))
		if seen[r] {
			t.Fatalf("byte %#x maps to %U twice", b, r)
		}
		seen[r] = true
		if back, ok := byteLevelByte(r); !ok || back != byte(b) {
			t.Errorf("byteLevelByte(%U) = %#x, %v, want %#x", r, back, ok, b)
		}
	}
	for _, tc := range []struct {
		b    byte
		want rune
	}{{' ', 'Ġ'}, {'\n', 'Ċ'}, {'\t', 'ĉ'}, {'a', 'a'}, {0x7F, 'ġ'}, {0xAD, 'Ń'}, {0xE9, 'é'}} {
		if got := byteLevelRune(tc.b); got != tc.want {
			t.Errorf("byteLevelRune(%#x) = %q, want %q", tc.b, got, tc.want)
		}
	}
	if _, ok := byteLevelByte('Ņ'); ok {
		t.Error("byteLevelByte('Ņ'): got ok, want not in the table")
	}
}

func TestAppendLossy(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc", "abc"},
		{"\xF0\x9F\x98", "\uFFFD"},             // a truncated emoji is one maximal subpart
		{"\xF0\x9F\x98x", "\uFFFDx"},           // also when something follows
		{"\x80\x80", "\uFFFD\uFFFD"},           // lone continuation bytes: one each
		{"\xE0\x80", "\uFFFD\uFFFD"},           // E0 needs A0..BF next
		{"\xED\xA0\x80", "\uFFFD\uFFFD\uFFFD"}, // surrogates are ill-formed
		{"é\xC3", "é\uFFFD"},
		{"\xF4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	} {
		if got := string(appendLossy(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("appendLossy(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIncompleteTail(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{{"", 0}, {"a", 0}, {"\xF0", 1}, {"\xF0\x9F\x98", 3}, {"\xF0\x9F\x98\x80", 0}, {"a\xE4\xBD", 2}, {"\x80", 0}, {"\xE0\x80", 0}, {"\xE4\xC3", 1}} {
		if got := incompleteTail([]byte(tc.in)); got != tc.want {
			t.Errorf("incompleteTail(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestApplyBehavior(t *testing.T) {
	// "a-b--c" split on each '-' character.
	s := "a-b--c"
	spans := func() []span { return charSpans(s, func(r rune) bool { return r == '-' }, nil) }
	for _, tc := range []struct {
		b    behavior
		want []string
	}{
		{isolated, []string{"a", "-", "b", "-", "-", "c"}},
		{removed, []string{"a", "b", "c"}},
		{mergedWithPrevious, []string{"a-", "b-", "-", "c"}},
		{mergedWithNext, []string{"a", "-b", "-", "-c"}},
		{contiguous, []string{"a", "-", "b", "--", "c"}},
	} {
		var got []string
		for _, sp := range applyBehavior(spans(), tc.b) {
			got = append(got, s[sp.start:sp.end])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("behavior %d: got %q, want %q", tc.b, got, tc.want)
		}
	}
}

// tinyJSON is a small tokenizer.json: characters a-e, space and ▁, a few
// merges, and the pipeline given by the caller.
func tinyJSON(pipeline, added string) string {
	vocab := `{"<unk>":0,"<s>":1,"</s>":2,"a":3,"b":4,"c":5,"d":6,"e":7,"▁":8,"ab":9,"▁a":10,"▁ab":11,"cd":12,"<0x41>":13,"<0xC3>":14,"<0xA9>":15,"Ġ":16,"Ġa":17}`
	merges := `["▁ a","▁a b","a b","c d","Ġ a"]`
	if added == "" {
		added = "[]"
	}
	return fmt.Sprintf(`{"version":"1.0","added_tokens":%s,%s,
		"model":{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":true,"vocab":%s,"merges":%s}}`,
		added, pipeline, vocab, merges)
}

func mustParse(t *testing.T, doc string) *HF {
	t.Helper()
	tok, err := ParseHF([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestPipelines(t *testing.T) {
	for _, tc := range []struct {
		name, pipeline, added, in string
		want                      []int
		decoded                   string // Decode(want, false), checked when set
	}{
		{
			name:     "metaspace-first",
			pipeline: `"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true},"decoder":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first"}`,
			in:       "ab a", want: []int{11, 10}, decoded: "ab a",
		},
		{
			name:     "metaspace-first-after-token",
			pipeline: `"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}`,
			added:    `[{"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"special":true,"normalized":false}]`,
			in:       "<s>ab", want: []int{1, 9}, // no ▁ after a token: it is not at the start
		},
		{
			name:     "metaspace-legacy-add-prefix-space",
			pipeline: `"pre_tokenizer":{"type":"Metaspace","replacement":"▁","add_prefix_space":true}`,
			added:    `[{"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"special":true,"normalized":false}]`,
			in:       "<s>ab", want: []int{1, 11},
		},
		{
			name:     "unk-fused-and-byte-fallback",
			pipeline: `"normalizer":null`,
			in:       "aéxyA", want: []int{3, 14, 15, 13, 0}, // x, y: one fused unk, which (as in Hugging Face) waits for a vocabulary hit and so follows <0x41>
		},
		{
			name:     "prepend-replace-normalizer",
			pipeline: `"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},"decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}`,
			in:       "ab a", want: []int{11, 10}, decoded: "ab a",
		},
		{
			name:     "normalized-added-token-matches-normalized-form",
			pipeline: `"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}`,
			added:    `[{"id":2,"content":"</s>","single_word":false,"lstrip":false,"rstrip":false,"special":true,"normalized":true}]`,
			in:       "a </s>", want: []int{10, 2}, // "▁a▁</s>": the token is found as "▁</s>"
		},
		{
			name:     "lstrip-rstrip",
			pipeline: `"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true}`,
			added:    `[{"id":2,"content":"</s>","single_word":false,"special":true,"normalized":false,"lstrip":true,"rstrip":true}]`,
			in:       "a  </s> a", want: []int{3, 2, 3},
		},
		{
			name:     "single-word",
			pipeline: `"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true}`,
			added:    `[{"id":18,"content":"ce","single_word":true,"lstrip":false,"rstrip":false,"special":false,"normalized":false}]`,
			in:       "ace ce", want: []int{3, 5, 7, 16, 18}, // "ce" inside a word is not the token
		},
		{
			name:     "split-removed-and-template",
			pipeline: `"pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\s+"},"behavior":"Removed","invert":false},"post_processor":{"type":"TemplateProcessing","single":"<s> $A </s>","pair":"<s> $A </s> $B","special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]},"</s>":{"id":"</s>","ids":[2],"tokens":["</s>"]}}}`,
			in:       "ab  cd", want: []int{1, 9, 12, 2},
		},
		{
			name:     "split-invert",
			pipeline: `"pre_tokenizer":{"type":"Split","pattern":{"String":"a"},"behavior":"Removed","invert":true}`,
			in:       "bab", want: []int{3}, // inverted: the "a" matches are kept, the rest removed
		},
		{
			name:     "digits-contiguous",
			pipeline: `"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":false},{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":false}]}`,
			in:       "a", want: []int{17},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := mustParse(t, tinyJSON(tc.pipeline, tc.added))
			got, err := tok.Encode(tc.in, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
			}
			if tc.decoded != "" {
				if d, err := tok.Decode(tc.want, false); err != nil || d != tc.decoded {
					t.Errorf("Decode(%v) = %q, %v, want %q", tc.want, d, err, tc.decoded)
				}
			}
		})
	}
}

func TestDecoders(t *testing.T) {
	for _, tc := range []struct {
		name string
		dec  decoder
		in   []string
		want string
	}{
		{"bytelevel", byteLevelDec{}, []string{"Hello", "Ġworld", "ĠðŁĺ", "Ģ"}, "Hello world 😀"},
		{"bytelevel-partial", byteLevelDec{}, []string{"ĠðŁĺ"}, " \uFFFD"},
		{"bytelevel-unmapped-token", byteLevelDec{}, []string{"<｜x｜>", "Ġa"}, "<｜x｜> a"},
		{"bytefallback-run", byteFallbackDec{}, []string{"<0xE4>", "<0xBD>", "<0xA0>", "x"}, "你x"},
		{"bytefallback-bad-run", byteFallbackDec{}, []string{"<0xE4>", "<0xBD>", "y"}, "\uFFFD\uFFFDy"},
		{"strip", stripDec{content: ' ', start: 1, stop: 1}, []string{"  a  "}, " a "},
		{"metaspace-first", metaspaceDec{replacement: '▁', scheme: prependFirst}, []string{"▁Hey", "▁friend"}, "Hey friend"},
		{"metaspace-never", metaspaceDec{replacement: '▁', scheme: prependNever}, []string{"▁Hey"}, " Hey"},
		{"sequence", sequenceDec{replaceDec{replaceNorm{literal: "▁", content: " "}}, byteFallbackDec{}, fuseDec{}, stripDec{content: ' ', start: 1}},
			[]string{"▁a", "<0x0A>", "▁b"}, "a\n b"},
	} {
		if got := strings.Join(tc.dec.decodeChain(tc.in), ""); got != tc.want {
			t.Errorf("%s: decode %q = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestTokenBytes(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		id   int
		want string
	}{
		{"gpt2", 220, " "},               // Ġ
		{"gpt2", 30325, " \xF0\x9F\x98"}, // ĠðŁĺ: a space and the start of an emoji
		{"gpt2", 50256, "<|endoftext|>"},
		{"llama-sp", 13, "\n"},        // <0x0A>
		{"llama-sp", 243, "\xF0"},     // <0xF0>
		{"llama-sp", 15043, " Hello"}, // ▁Hello
		{"qwen2.5-0.5b-instruct", 151644, "<|im_start|>"},
	} {
		tok := load(t, "tokenizers", tc.dir)
		if got := string(tok.TokenBytes(tc.id)); got != tc.want {
			t.Errorf("%s: TokenBytes(%d) = %q, want %q", tc.dir, tc.id, got, tc.want)
		}
	}
	if got := load(t, "tokenizers", "gpt2").TokenBytes(1 << 20); got != nil {
		t.Errorf("TokenBytes(out of range) = %q, want nil", got)
	}
	if !utf8.ValidString(load(t, "tokenizers", "gpt2").Token(30325)) {
		t.Error("Token strings are valid UTF-8")
	}
}

// TestRefused checks that unsupported components are refused by name.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"pre-tokenizer", tinyJSON(`"pre_tokenizer":{"type":"Whitespace"}`, ""), `tokenizer: tokenizer.json: pre_tokenizer type "Whitespace" is not supported`},
		{"nested", tinyJSON(`"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Punctuation"}]}`, ""), `pre_tokenizer type "Punctuation" is not supported`},
		{"normalizer", tinyJSON(`"normalizer":{"type":"Lowercase"}`, ""), `normalizer type "Lowercase" is not supported`},
		{"decoder", tinyJSON(`"decoder":{"type":"WordPiece"}`, ""), `decoder type "WordPiece" is not supported`},
		{"post-processor", tinyJSON(`"post_processor":{"type":"Magic"}`, ""), `post_processor type "Magic" is not supported`},
		{"model", `{"model":{"type":"Unigram","vocab":[]}}`, `model type "Unigram" is not supported`},
		{"dropout", `{"model":{"type":"BPE","dropout":0.1,"vocab":{},"merges":[]}}`, "dropout"},
		{"regex", tinyJSON(`"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(?<=a)b"},"behavior":"Isolated","invert":false}`, ""), "look-behind"},
		{"behavior", tinyJSON(`"pre_tokenizer":{"type":"Split","pattern":{"String":"a"},"behavior":"Sideways","invert":false}`, ""), `split behavior "Sideways"`},
		{"merge-out-of-vocab", `{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a b"]}}`, `"ab" not in vocab`},
		{"bad-merge", `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a"]}}`, "not two tokens"},
		{"not-json", `{`, "not a tokenizer.json"},
		{"no-model", `{}`, "no model"},
		{"template", tinyJSON(`"post_processor":{"type":"TemplateProcessing","single":"<x> $A","pair":"$A $B","special_tokens":{}}`, ""), `special token "<x>"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHF([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseHF: got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestOldFormatAndPairMerges(t *testing.T) {
	old := `{"model":{"vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`
	pairs := `{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]}}`
	for _, doc := range []string{old, pairs} {
		tok := mustParse(t, doc)
		got, err := tok.Encode("abab", false)
		if err != nil || !slices.Equal(got, []int{2}) && !slices.Equal(got, []int{2, 2}) {
			t.Errorf("%s: Encode = %v, %v", doc, got, err)
		}
		if !slices.Equal(got, []int{2, 2}) {
			t.Errorf("%s: Encode(abab) = %v, want [2 2]", doc, got)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		path, want string
	}{
		{dir + "/missing", "no such file"},
		{dir, "no tokenizer.json"},
		{"tokenizer.go", "not a tokenizer.json"},
	} {
		if _, err := Load(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s): got %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
}

func TestDecodeOutOfRange(t *testing.T) {
	for _, dir := range []string{"gpt2", "llama-sp"} {
		tok := load(t, "tokenizers", dir)
		if _, err := tok.Decode([]int{1, tok.VocabSize()}, false); err == nil {
			t.Errorf("%s: Decode(out of range): got no error", dir)
		}
		if _, err := tok.Decode([]int{-1}, false); err == nil {
			t.Errorf("%s: Decode(-1): got no error", dir)
		}
		if got := tok.Token(tok.VocabSize()); got != "" {
			t.Errorf("%s: Token(out of range) = %q", dir, got)
		}
	}
}

// TestLlama3Style checks what Llama-3's tokenizer.json adds: ignore_merges,
// its split pattern ahead of a regex-less ByteLevel, and a Sequence
// post-processor.
func TestLlama3Style(t *testing.T) {
	doc := `{
	  "added_tokens": [{"id": 8, "content": "<|begin_of_text|>", "single_word": false, "lstrip": false, "rstrip": false, "special": true, "normalized": false}],
	  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
	    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
	    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
	  "post_processor": {"type": "Sequence", "processors": [
	    {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false},
	    {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "pair": "$A $B",
	     "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [8], "tokens": ["<|begin_of_text|>"]}}}]},
	  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true},
	  "model": {"type": "BPE", "ignore_merges": true, "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "Ġ": 6, "Ġab": 7}, "merges": ["a b", "b c", "Ġ ab"]}
	}`
	tok := mustParse(t, doc)
	if _, ok := tok.pre[0].(*splitPre).pattern.(llamaScanner); !ok {
		t.Errorf("the Llama-3 pattern did not get its scanner")
	}
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"abc", []int{8, 5}},               // in the vocabulary as a whole: merges are skipped
		{"abc abcc", []int{8, 5, 7, 2, 2}}, // "Ġabcc" is not: Ġ a b c c -> Ġ ab c c -> Ġab c c
	} {
		got, err := tok.Encode(tc.in, true)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestIsolateStreaming checks the streaming Isolated split against the
// general path (matchSpans, applyBehavior) on patterns with empty matches.
func TestIsolateStreaming(t *testing.T) {
	for _, pattern := range []string{`a*`, `\s*`, `b|`, `(?=a)`, gpt2Pattern} {
		f, err := newFinder(pattern)
		if err != nil {
			t.Fatal(err)
		}
		s := &splitPre{pattern: f, behavior: isolated}
		for _, in := range append([]string{"aab  ba", "baaab", "  a "}, trickyText...) {
			var got, want []string
			collect := func(dst *[]string) func(piece) error {
				return func(q piece) error { *dst = append(*dst, q.text); return nil }
			}
			if err := s.split(piece{text: in}, new([]span), collect(&got)); err != nil {
				t.Fatal(err)
			}
			spans := spansOf(t, f, in)
			if err := emitSpans(piece{text: in}, applyBehavior(spans, isolated), collect(&want)); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q on %q: streaming %q, general %q", pattern, in, got, want)
			}
		}
	}
}
