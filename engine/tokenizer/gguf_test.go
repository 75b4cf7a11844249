package tokenizer

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"tracer/engine/gguf"
)

// TestGGUFTokenizerRunCGolden: stories260K-f32.gguf carries tok512.bin's
// vocabulary and scores, so it encodes the shared vectors as run.c does.
func TestGGUFTokenizerRunCGolden(t *testing.T) {
	var g struct {
		Cases []struct {
			Input string `json:"input"`
			IDs   []int  `json:"ids"`
		} `json:"cases"`
	}
	data, err := os.ReadFile(sharedPath(t, "models", "stories260K", "golden-tok512-encode.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	tok, err := LoadGGUF(sharedPath(t, "models", "stories260K", "stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
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
			text, err := tok.Decode(ids, true)
			if err != nil || text != c.Input {
				t.Errorf("Decode: got %q (%v), want %q", text, err, c.Input)
			}
		})
	}
}

// TestGGUFTokenizerLlamaCppPrompts: every prompt of
// llama-cpp-reference.json encodes to llama-server's /tokenize ids (BOS
// included), and stories260K's greedy ids decode to its text.
func TestGGUFTokenizerLlamaCppPrompts(t *testing.T) {
	var ref struct {
		Models map[string]struct {
			File  string `json:"file"`
			Cases []struct {
				Prompt    string `json:"prompt"`
				PromptIDs []int  `json:"prompt_ids"`
				NewIDs    []int  `json:"new_ids"`
				Content   string `json:"content"`
			} `json:"cases_kv_f32"`
		} `json:"models"`
	}
	data, err := os.ReadFile(sharedPath(t, "models", "llama-cpp-reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	for name, m := range ref.Models {
		t.Run(name, func(t *testing.T) {
			tok, err := LoadGGUF(sharedPath(t, "models", m.File))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range m.Cases {
				ids, err := tok.Encode(c.Prompt, true)
				if err != nil || !slices.Equal(ids, c.PromptIDs) {
					t.Errorf("Encode(%q): got %v (%v), want %v", c.Prompt, ids, err, c.PromptIDs)
				}
				if strings.HasPrefix(name, "stories") {
					text, err := tok.Decode(c.NewIDs, false)
					if err != nil || text != c.Content {
						t.Errorf("Decode(%v): got %q (%v), want %q", c.NewIDs, text, err, c.Content)
					}
				}
			}
		})
	}
}

// ggufDoc writes a GGUF file holding only metadata.
type ggufDoc struct{ b []byte }

func newGGUFDoc(n int) *ggufDoc {
	d := &ggufDoc{b: []byte("GGUF")}
	d.b = binary.LittleEndian.AppendUint32(d.b, 3)
	d.b = binary.LittleEndian.AppendUint64(d.b, 0)
	d.b = binary.LittleEndian.AppendUint64(d.b, uint64(n))
	return d
}

func (d *ggufDoc) str(s string) {
	d.b = binary.LittleEndian.AppendUint64(d.b, uint64(len(s)))
	d.b = append(d.b, s...)
}

func (d *ggufDoc) key(k string, t gguf.ValueType) {
	d.str(k)
	d.b = binary.LittleEndian.AppendUint32(d.b, uint32(t))
}

func (d *ggufDoc) strings(k string, v []string) {
	d.key(k, gguf.TypeArray)
	d.b = binary.LittleEndian.AppendUint32(d.b, uint32(gguf.TypeString))
	d.b = binary.LittleEndian.AppendUint64(d.b, uint64(len(v)))
	for _, s := range v {
		d.str(s)
	}
}

func (d *ggufDoc) ints(k string, v []int32) {
	d.key(k, gguf.TypeArray)
	d.b = binary.LittleEndian.AppendUint32(d.b, uint32(gguf.TypeInt32))
	d.b = binary.LittleEndian.AppendUint64(d.b, uint64(len(v)))
	for _, x := range v {
		d.b = binary.LittleEndian.AppendUint32(d.b, uint32(x))
	}
}

func (d *ggufDoc) floats(k string, v []float32) {
	d.key(k, gguf.TypeArray)
	d.b = binary.LittleEndian.AppendUint32(d.b, uint32(gguf.TypeFloat32))
	d.b = binary.LittleEndian.AppendUint64(d.b, uint64(len(v)))
	for _, x := range v {
		d.b = binary.LittleEndian.AppendUint32(d.b, math.Float32bits(x))
	}
}

func (d *ggufDoc) u32(k string, v uint32) {
	d.key(k, gguf.TypeUint32)
	d.b = binary.LittleEndian.AppendUint32(d.b, v)
}

func (d *ggufDoc) boolean(k string, v bool) {
	d.key(k, gguf.TypeBool)
	if v {
		d.b = append(d.b, 1)
	} else {
		d.b = append(d.b, 0)
	}
}

func (d *ggufDoc) text(k, v string) {
	d.key(k, gguf.TypeString)
	d.str(v)
}

func parseDoc(t testing.TB, d *ggufDoc) Tokenizer {
	t.Helper()
	f, err := gguf.Parse("test.gguf", d.b)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// gpt2Doc is a byte-level BPE vocabulary: the 256 byte characters, two
// merges, and chat markers (control) after them.
func gpt2Doc(pre string) *ggufDoc {
	var tokens []string
	var types []int32
	for b := 0; b < 256; b++ {
		tokens = append(tokens, string(byteLevelRune(byte(b))))
		types = append(types, ggufNormal)
	}
	tokens = append(tokens, "Ġh", "Ġhi", "<|im_start|>", "<|im_end|>")
	types = append(types, ggufNormal, ggufNormal, ggufControl, ggufControl)
	d := newGGUFDoc(7)
	d.text("tokenizer.ggml.model", "gpt2")
	d.text("tokenizer.ggml.pre", pre)
	d.strings("tokenizer.ggml.tokens", tokens)
	d.ints("tokenizer.ggml.token_type", types)
	d.strings("tokenizer.ggml.merges", []string{"Ġ h", "Ġh i"})
	d.u32("tokenizer.ggml.bos_token_id", 258)
	d.u32("tokenizer.ggml.eos_token_id", 259)
	return d
}

func TestGGUFTokenizerGPT2(t *testing.T) {
	for _, pre := range []string{"", "smollm", "llama-bpe", "qwen2"} { // "": llama.cpp's default
		if ids, err := parseDoc(t, gpt2Doc(pre)).Encode(" hi", false); err != nil || !slices.Equal(ids, []int{257}) {
			t.Errorf("pre %q: got %v (%v), want [257]", pre, ids, err)
		}
	}
	tok := parseDoc(t, gpt2Doc("gpt-2"))
	cases := []struct {
		name, text string
		want       []int
	}{
		{"merges", " hi", []int{257}},
		{"control tokens in text", "<|im_start|>a hi<|im_end|>", []int{258, 'a', 257, 259}},
		{"no BOS added: gpt2 defaults to none", "a", []int{'a'}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ids, err := tok.Encode(c.text, true)
			if err != nil || !slices.Equal(ids, c.want) {
				t.Fatalf("Encode(%q): got %v (%v), want %v", c.text, ids, err, c.want)
			}
			text, err := tok.Decode(ids, false)
			if err != nil || text != c.text {
				t.Errorf("Decode: got %q (%v), want %q", text, err, c.text)
			}
		})
	}
	if got := tok.Specials(); got.BOS != 258 || got.EOS != 259 || !tok.IsSpecial(259) || tok.IsSpecial(257) {
		t.Errorf("got specials %+v, want BOS 258, EOS 259, 259 special and 257 not", got)
	}
}

// spmDoc is a SentencePiece-style vocabulary with scores: <unk>, <s>,
// </s>, the byte tokens, "▁", "a", "b", "▁a", "ab", "▁ab" and a control
// marker.
func spmDoc(extra func(d *ggufDoc), n int) *ggufDoc {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{ggufUnknown, ggufControl, ggufControl}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, ggufByte)
	}
	tokens = append(tokens, "▁", "a", "b", "▁a", "ab", "▁ab", "<|user|>")
	types = append(types, ggufNormal, ggufNormal, ggufNormal, ggufNormal, ggufNormal, ggufNormal, ggufControl)
	scores := make([]float32, len(tokens))
	for i := range scores {
		scores[i] = float32(-i)
	}
	scores[len(tokens)-2] = 10 // ▁ab merges first
	d := newGGUFDoc(5 + n)
	d.text("tokenizer.ggml.model", "llama")
	d.strings("tokenizer.ggml.tokens", tokens)
	d.floats("tokenizer.ggml.scores", scores)
	d.ints("tokenizer.ggml.token_type", types)
	d.u32("tokenizer.ggml.bos_token_id", 1)
	if extra != nil {
		extra(d)
	}
	return d
}

func TestGGUFTokenizerSPM(t *testing.T) {
	const user = 265 // <|user|>
	cases := []struct {
		name       string
		extra      func(d *ggufDoc)
		n          int
		text       string
		addSpecial bool
		want       []int
		decoded    string // Decode(ids, true): the prefix space is dropped only right after BOS
	}{
		{"BOS and space prefix by default", nil, 0, "ab", true, []int{1, 264}, "ab"},
		{"add_bos_token false", func(d *ggufDoc) { d.boolean("tokenizer.ggml.add_bos_token", false) }, 1, "ab", true, []int{264}, " ab"},
		{"no space prefix", func(d *ggufDoc) { d.boolean("tokenizer.ggml.add_space_prefix", false) }, 1, "ab", false, []int{263}, "ab"},
		{"space prefix again after a control token", nil, 0, "<|user|>ab", false, []int{user, 264}, " ab"},
		{"byte fallback", nil, 0, "é", true, []int{1, 259, 3 + 0xC3, 3 + 0xA9}, "é"},
		{"a ▁ in the text is a space", nil, 0, "a▁a", false, []int{262, 262}, " a a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := parseDoc(t, spmDoc(c.extra, c.n))
			ids, err := tok.Encode(c.text, c.addSpecial)
			if err != nil || !slices.Equal(ids, c.want) {
				t.Fatalf("Encode(%q): got %v (%v), want %v", c.text, ids, err, c.want)
			}
			text, err := tok.Decode(ids, true)
			if err != nil || text != c.decoded {
				t.Errorf("Decode(%v, true): got %q (%v), want %q", ids, text, err, c.decoded)
			}
		})
	}
}

// TestGGUFTokenizerSPMSpaceBytes: in a vocabulary without "▁" a space
// falls back to the bytes of ▁, as llama.cpp's llama-server (b4748)
// tokenizes "Hi!" with the vocabulary of a random GGUF (<unk>, <s>, </s>,
// the byte tokens, placeholders): [1 229 153 132 75 108 36]. Decoding
// gives those bytes back, "▁Hi!", as its /detokenize does ("<s>▁Hi!"):
// only a normal token's ▁ is read as a space.
func TestGGUFTokenizerSPMSpaceBytes(t *testing.T) {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{ggufUnknown, ggufControl, ggufControl}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, ggufByte)
	}
	tokens = append(tokens, "▁t259")
	types = append(types, ggufNormal)
	scores := make([]float32, len(tokens))
	d := newGGUFDoc(5)
	d.text("tokenizer.ggml.model", "llama")
	d.strings("tokenizer.ggml.tokens", tokens)
	d.floats("tokenizer.ggml.scores", scores)
	d.ints("tokenizer.ggml.token_type", types)
	d.u32("tokenizer.ggml.bos_token_id", 1)
	tok := parseDoc(t, d)
	for _, c := range []struct {
		text    string
		want    []int
		decoded string
	}{
		{"Hi!", []int{1, 229, 153, 132, 75, 108, 36}, "▁Hi!"},
		{"a b", []int{1, 229, 153, 132, 100, 229, 153, 132, 101}, "▁a▁b"},
		{"▁t", []int{1, 229, 153, 132, 229, 153, 132, 119}, "▁▁t"},
	} {
		ids, err := tok.Encode(c.text, true)
		if err != nil || !slices.Equal(ids, c.want) {
			t.Errorf("Encode(%q): got %v (%v), want %v", c.text, ids, err, c.want)
		}
		if text, err := tok.Decode(ids, true); err != nil || text != c.decoded {
			t.Errorf("Decode(%v, true): got %q (%v), want %q", ids, text, err, c.decoded)
		}
	}
}

func TestGGUFTokenizerErrors(t *testing.T) {
	cases := []struct {
		name string
		doc  *ggufDoc
		want string
	}{
		{"no tokenizer", newGGUFDoc(0), "no tokenizer.ggml.model"},
		{"unknown model", func() *ggufDoc {
			d := newGGUFDoc(2)
			d.text("tokenizer.ggml.model", "rwkv")
			d.strings("tokenizer.ggml.tokens", []string{"a"})
			return d
		}(), `"rwkv" not supported`},
		{"unknown pre-tokenizer", gpt2Doc("falcon"), `tokenizer.ggml.pre "falcon" not supported`},
		{"scores missing", func() *ggufDoc {
			d := newGGUFDoc(2)
			d.text("tokenizer.ggml.model", "llama")
			d.strings("tokenizer.ggml.tokens", []string{"a"})
			return d
		}(), "scores has 0 entries for 1 tokens"},
		{"tokens not strings", func() *ggufDoc {
			d := newGGUFDoc(2)
			d.text("tokenizer.ggml.model", "llama")
			d.u32("tokenizer.ggml.tokens", 1)
			return d
		}(), "want array of strings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := gguf.Parse("test.gguf", c.doc.b)
			if err != nil {
				t.Fatal(err)
			}
			_, err = FromGGUF(f)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "test.gguf") {
				t.Errorf("got %v, want an error naming test.gguf and containing %q", err, c.want)
			}
		})
	}
}
