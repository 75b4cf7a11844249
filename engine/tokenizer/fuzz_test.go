package tokenizer

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"tracer/engine/refdata"
)

// FuzzLoadJSON checks that no tokenizer.json, however broken, panics the
// loader, hangs it or makes it allocate far beyond its size, and that one
// that loads keeps its promises: encoded ids are in the vocabulary and
// decode, a special id decodes to nothing when skipped, and a plain
// byte-level tokenizer gives the text back.
func FuzzLoadJSON(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"model":{"vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]],"unk_token":"<unk>"}}`))
	f.Add([]byte(tinyJSON(`"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true},"decoder":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true}`, `[{"id":1,"content":"<s>","single_word":false,"lstrip":true,"rstrip":false,"normalized":false,"special":true}]`)))
	f.Add([]byte(tinyJSON(`"pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\s+(?!\\S)|a+?"},"behavior":"MergedWithNext","invert":true}`, "")))
	f.Add([]byte(tinyJSON(`"normalizer":{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Replace","pattern":{"Regex":" {2,}"},"content":"▁"}]},"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first"}`, "")))
	f.Add([]byte(tinyJSON(`"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":"$A $B","special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}}`, "")))
	f.Add([]byte(tinyJSON(`"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},"decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}`,
		`[{"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":true},{"id":2,"content":"</s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}]`)))
	f.Add([]byte(byteLevelJSON()))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := ParseHF(data)
		if err != nil {
			return
		}
		for _, s := range []string{"", "ab cd", " a\n\n b\t", "é😀<s>", "\xff", "<s>a</s> b"} {
			ids, err := tok.Encode(s, true)
			if err != nil {
				continue
			}
			for _, id := range ids {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("Encode(%q) gave id %d, outside the vocabulary of %d", s, id, tok.VocabSize())
				}
				tok.TokenBytes(id)
				if tok.IsSpecial(id) {
					if got, err := tok.Decode([]int{id}, true); err != nil || got != "" {
						t.Errorf("special id %d: Decode(skip) = %q, %v; want it dropped", id, got, err)
					}
				}
			}
			if _, err := tok.Decode(ids, false); err != nil {
				t.Errorf("Decode(Encode(%q)) = %v", s, err)
			}
			if _, err := tok.Decode(ids, true); err != nil {
				t.Errorf("Decode(Encode(%q), skip) = %v", s, err)
			}
			if plainByteLevel(tok) && utf8.ValidString(s) {
				plain, _ := tok.Encode(s, false)
				if got, err := tok.Decode(plain, false); err != nil || got != s {
					t.Errorf("byte-level Decode(Encode(%q)) = %q, %v", s, got, err)
				}
			}
		}
	})
}

// byteLevelJSON is a GPT-2-like tokenizer.json: every byte's character
// and a few merges, with a ByteLevel pre-tokenizer and decoder.
func byteLevelJSON() string {
	var vocab, merges []string
	for b := 0; b < 256; b++ {
		c := string(byteLevelRune(byte(b)))
		vocab = append(vocab, fmt.Sprintf("%q:%d", c, b))
	}
	for i, m := range [][2]string{{"a", "b"}, {"Ġ", "a"}, {"Ġa", "b"}, {"c", "d"}} {
		vocab = append(vocab, fmt.Sprintf("%q:%d", m[0]+m[1], 256+i))
		merges = append(merges, fmt.Sprintf("%q", m[0]+" "+m[1]))
	}
	bl := `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}`
	return `{"added_tokens":[],"pre_tokenizer":` + bl + `,"decoder":` + bl +
		`,"model":{"type":"BPE","vocab":{` + strings.Join(vocab, ",") + `},"merges":[` + strings.Join(merges, ",") + `]}}`
}

// plainByteLevel reports whether tok gives any text back unchanged: a BPE
// over all 256 byte characters (one string per id, no affixes) between a
// ByteLevel pre-tokenizer without prefix space and a ByteLevel decoder, no
// normalizer and no added tokens.
func plainByteLevel(tok Tokenizer) bool {
	t, ok := tok.(*HF)
	if !ok || t.normalizer != nil || len(t.pre) != 1 || len(t.added.tokens) != 0 {
		return false
	}
	pre, ok := t.pre[0].(*byteLevelPre)
	if !ok || pre.addPrefixSpace {
		return false
	}
	if _, ok := t.decoder.(byteLevelDec); !ok {
		return false
	}
	m := t.model
	if m.prefix != "" || m.suffix != "" || len(m.vocab) != len(m.tokens) {
		return false
	}
	for _, id := range m.byteLevelIDs {
		if id < 0 {
			return false
		}
	}
	return true
}

// FuzzEncode encodes arbitrary text with every staged tokenizer and a
// GGUF SentencePiece one: it must not fail, and the byte-level ones (and
// llama2.c's) must give the text back (Qwen2's in NFC, its normalizer).
func FuzzEncode(f *testing.F) {
	for _, s := range trickyText {
		f.Add(s)
	}
	f.Add("<|endoftext|> <|im_start|>x<|im_end|> <s></s>")
	f.Add("\x00\xff\xfe")
	type subject struct {
		name      string
		tok       Tokenizer
		roundTrip func(string) string // the text Decode(Encode(s)) must give; nil: not checked
	}
	var subjects []subject
	same := func(s string) string { return s }
	for _, c := range []struct {
		parts []string
		want  func(string) string
	}{
		{[]string{"tokenizers", "gpt2"}, same},
		{[]string{"tokenizers", "smollm2-135m-instruct"}, same},
		{[]string{"tokenizers", "qwen2.5-0.5b-instruct"}, norm.NFC.String},
		{[]string{"tokenizers", "llama-sp"}, nil},
		{[]string{"models", "stories260K", "tok512.bin"}, same},
	} {
		where, err := refdata.Path(path.Join(c.parts...))
		if err != nil {
			continue
		}
		tok := load(f, c.parts...)
		want := c.want
		if hf, ok := tok.(*HF); ok && want != nil {
			want = func(s string) string { return withoutMissingBytes(hf, c.want(s)) }
		}
		subjects = append(subjects, subject{where, tok, want})
	}
	if len(subjects) == 0 {
		f.Skip("no shared tokenizers")
	}
	// A GGUF SentencePiece vocabulary (byte fallback, a control token cut
	// out of the text): Encode and Decode must not fail.
	subjects = append(subjects, subject{"gguf llama (spmDoc)", parseDoc(f, spmDoc(nil, 0)), nil})
	f.Fuzz(func(t *testing.T, s string) {
		for _, sub := range subjects {
			_, llama2c := sub.tok.(*Llama2C)
			ids, err := sub.tok.Encode(s, llama2c)
			if err != nil {
				t.Fatalf("%s: Encode(%q): %v", sub.name, s, err)
			}
			got, err := sub.tok.Decode(ids, llama2c)
			if err != nil {
				t.Fatalf("%s: Decode: %v", sub.name, err)
			}
			if sub.roundTrip == nil || !llama2c && !utf8.ValidString(s) {
				continue
			}
			if want := sub.roundTrip(s); got != want {
				t.Errorf("%s: Decode(Encode(%q)) = %q, want %q (ids %v)", sub.name, s, got, want, ids)
			}
		}
	})
}

// withoutMissingBytes is what a byte-level tokenizer gives back for s when
// its vocabulary lacks some bytes' characters (SmolLM2 has no token for
// 0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xF1 and 0xF2, among bytes valid in
// UTF-8): BPE drops them, and the decoder reads what is left as UTF-8.
func withoutMissingBytes(t *HF, s string) string {
	var kept []byte
	for i := 0; i < len(s); i++ {
		if t.model.byteLevelIDs[s[i]] >= 0 {
			kept = append(kept, s[i])
		}
	}
	return string(appendLossy(nil, kept))
}

// benchText returns about 1 MB of English and code: the Go specification
// (HTML) and net/http's sources, from the Go installation.
func benchText(b *testing.B) string {
	b.Helper()
	root := runtime.GOROOT()
	var sb strings.Builder
	if data, err := os.ReadFile(filepath.Join(root, "doc", "go_spec.html")); err == nil {
		sb.Write(data)
	}
	files, _ := filepath.Glob(filepath.Join(root, "src", "net", "http", "*.go"))
	sort.Strings(files)
	for _, f := range files {
		if sb.Len() >= 1<<20 {
			break
		}
		if data, err := os.ReadFile(f); err == nil {
			sb.Write(data)
		}
	}
	if sb.Len() < 1<<20 {
		b.Skipf("the Go installation at %s has under 1 MB of text to encode", root)
	}
	return sb.String()[:1<<20]
}

// BenchmarkEncode encodes 1 MB of mixed English and code. The first
// iteration fills the word cache; the figure is the steady state.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, name := range []string{"gpt2", "smollm2-135m-instruct", "qwen2.5-0.5b-instruct", "llama-sp"} {
		b.Run(name, func(b *testing.B) {
			tok := load(b, "tokenizers", name)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tok.Encode(text, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeCold encodes the same text with an empty word cache.
func BenchmarkEncodeCold(b *testing.B) {
	text := benchText(b)
	for _, name := range []string{"gpt2", "smollm2-135m-instruct"} {
		b.Run(name, func(b *testing.B) {
			tok := load(b, "tokenizers", name).(*HF)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tok.model.cache.mu.Lock()
				tok.model.cache.m = nil
				tok.model.cache.mu.Unlock()
				if _, err := tok.Encode(text, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
