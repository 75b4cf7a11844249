package tokenizer

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"slices"
	"testing"

	"tracer/engine/refdata"
)

// checkBuilding checks that b is a consistent account of how tok builds
// id: units joined by the merges in order, each merge joining two
// adjacent tokens whose bytes make the result's, give id; a single unit is
// id itself.
func checkBuilding(t *testing.T, tok Tokenizer, id int, b Building) {
	t.Helper()
	switch b.Kind {
	case BuildSingle:
		if !slices.Equal(b.Units, []int{id}) || len(b.Merges) != 0 {
			t.Errorf("id %d (%q): single, got units %v and merges %v, want the unit [%d] alone", id, tok.Token(id), b.Units, b.Merges, id)
		}
		return
	case BuildMerged:
	default:
		if len(b.Units) != 0 || len(b.Merges) != 0 {
			t.Errorf("id %d (%q): %v with units %v and merges %v, want neither", id, tok.Token(id), b.Kind, b.Units, b.Merges)
		}
		return
	}
	if len(b.Merges) == 0 || len(b.Merges) != len(b.Units)-1 {
		t.Fatalf("id %d (%q): got %d merges of %d units, want one fewer merges than units", id, tok.Token(id), len(b.Merges), len(b.Units))
	}
	var joined []byte
	for _, u := range b.Units {
		joined = append(joined, tok.TokenBytes(u)...)
	}
	if !bytes.Equal(joined, tok.TokenBytes(id)) {
		t.Errorf("id %d (%q): units %v spell %q, want the token's bytes %q", id, tok.Token(id), b.Units, joined, tok.TokenBytes(id))
	}
	syms := slices.Clone(b.Units)
	for k, m := range b.Merges {
		at := -1
		for i := 0; i+1 < len(syms); i++ {
			if syms[i] == m.Left && syms[i+1] == m.Right {
				at = i
				break
			}
		}
		if at < 0 {
			t.Fatalf("id %d (%q): merge %d (%d %d -> %d) joins tokens that are not neighbours in %v", id, tok.Token(id), k, m.Left, m.Right, m.Result, syms)
		}
		if got := append(slices.Clone(tok.TokenBytes(m.Left)), tok.TokenBytes(m.Right)...); !bytes.Equal(got, tok.TokenBytes(m.Result)) {
			t.Errorf("id %d: merge %d: %q + %q is not %q", id, k, tok.TokenBytes(m.Left), tok.TokenBytes(m.Right), tok.TokenBytes(m.Result))
		}
		syms[at] = m.Result
		syms = slices.Delete(syms, at+1, at+2)
	}
	if !slices.Equal(syms, []int{id}) {
		t.Errorf("id %d (%q): the merges end at %v, want [%d]", id, tok.Token(id), syms, id)
	}
}

// explainSubjects are the shared tokenizers of every kind Explain knows:
// byte-level BPE (GPT-2, Qwen2.5, SmolLM2), SentencePiece-style BPE with
// byte fallback (Llama's tokenizer.json), GPT-2 from vocab.json +
// merges.txt, llama2.c's score merges and a GGUF llama vocabulary.
func explainSubjects(t *testing.T) map[string]Tokenizer {
	t.Helper()
	subjects := map[string]Tokenizer{}
	for _, parts := range [][]string{
		{"tokenizers", "gpt2"},
		{"tokenizers", "qwen2.5-0.5b-instruct"},
		{"tokenizers", "smollm2-135m-instruct"},
		{"tokenizers", "llama-sp"},
		{"models", "stories260K", "tok512.bin"},
		{"models", "llama2c-tokenizer", "tokenizer.bin"},
	} {
		subjects[path.Join(parts...)] = load(t, parts...)
	}
	dir := sharedPath(t, "tokenizers", "gpt2")
	subjects["gpt2 vocab.json + merges.txt"] = loadWith(t, dir+"#vocab-merges", func() (Tokenizer, error) { return asTokenizer(LoadVocabMerges(dir)) })
	gg := sharedPath(t, "models", "stories260K", "stories260K-f32.gguf")
	subjects["stories260K gguf"] = loadWith(t, gg, func() (Tokenizer, error) { return LoadGGUF(gg) })
	return subjects
}

// explainTexts are the texts every subject encodes: the regex tests'
// tricky texts and the golden inputs.
func explainTexts(t *testing.T) []string {
	t.Helper()
	texts := append([]string{"Hello world", "unbelievable tokenization\n\tindented", "aaaaaaaaaaaaaaaa", "  spaces   and\ttabs\n\nnewlines",
		"नमस्ते दुनिया", "The quick brown fox jumps over the lazy dog."}, trickyText...)
	for _, name := range []string{"golden-gpt2.json", "golden-llama-sp.json", "golden-qwen2.5-0.5b-instruct.json", "golden-smollm2-135m-instruct.json"} {
		data, err := os.ReadFile(sharedPath(t, "tokenizers", name))
		if err != nil {
			t.Fatal(err)
		}
		var g struct {
			Cases []struct {
				Input string `json:"input"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range g.Cases {
			texts = append(texts, c.Input)
		}
	}
	return texts
}

// TestTokenizerExplainReplaysEncodedTokens: every token Encode gives for
// a wide range of texts is explained, and the explanation replays to it:
// its units merged in order give the token, and no token of these
// vocabularies (none keeps whole words past their merges) is left
// unexplained.
func TestTokenizerExplainReplaysEncodedTokens(t *testing.T) {
	texts := explainTexts(t)
	for name, tok := range explainSubjects(t) {
		t.Run(name, func(t *testing.T) {
			kinds := map[BuildKind]int{}
			seen := map[int]bool{}
			for _, text := range texts {
				ids, err := tok.Encode(text, true)
				if err != nil {
					t.Fatalf("Encode(%q): %v", text, err)
				}
				for _, id := range ids {
					if seen[id] {
						continue
					}
					seen[id] = true
					b := Explain(tok, id)
					kinds[b.Kind]++
					if b.Kind == BuildUnknown || b.Kind == BuildWhole {
						t.Errorf("Encode(%q) gives id %d (%q), which Explain calls %v: want how it was built", text, id, tok.Token(id), b.Kind)
					}
					checkBuilding(t, tok, id, b)
				}
			}
			if kinds[BuildMerged] == 0 || kinds[BuildSingle] == 0 {
				t.Errorf("got kinds %v, want merged and single tokens among them", kinds)
			}
			t.Logf("%d distinct tokens: %v", len(seen), kinds)
		})
	}
}

// TestTokenizerExplainEveryToken explains every id of each vocabulary:
// never a panic, and every merged or single token replays.
func TestTokenizerExplainEveryToken(t *testing.T) {
	for name, tok := range explainSubjects(t) {
		t.Run(name, func(t *testing.T) {
			kinds := map[BuildKind]int{}
			for id := -2; id < tok.VocabSize()+2; id++ {
				b := Explain(tok, id)
				kinds[b.Kind]++
				if id < 0 || id >= tok.VocabSize() {
					if b.Kind != BuildUnknown {
						t.Errorf("id %d outside the vocabulary: got %v, want unknown", id, b.Kind)
					}
					continue
				}
				checkBuilding(t, tok, id, b)
			}
			t.Logf("%v", kinds)
		})
	}
}

// TestTokenizerExplainKnown checks explanations worked out by hand.
func TestTokenizerExplainKnown(t *testing.T) {
	t.Run("gpt2", func(t *testing.T) {
		tok := load(t, "tokenizers", "gpt2").(*HF)
		id := func(s string) int {
			t.Helper()
			v, ok := tok.TokenID(s)
			if !ok {
				t.Fatalf("no token %q", s)
			}
			return v
		}
		// merges.txt's first rule is "Ġ t".
		b := Explain(tok, id("Ġt"))
		want := []Merge{{Left: id("Ġ"), Right: id("t"), Result: id("Ġt"), Rank: 0}}
		if b.Kind != BuildMerged || !slices.Equal(b.Units, []int{id("Ġ"), id("t")}) || !slices.Equal(b.Merges, want) {
			t.Errorf("Ġt: got %+v, want Ġ + t by rank 0", b)
		}
		b = Explain(tok, 15496) // "Hello", as the golden encodes "Hello world"
		if b.Kind != BuildMerged || len(b.Units) != 5 || b.Merges[len(b.Merges)-1].Result != 15496 {
			t.Errorf("Hello: got %+v, want five characters merged into 15496", b)
		}
		for _, m := range b.Merges {
			if m.Rank < 0 || m.Score != 0 {
				t.Errorf("Hello: merge %+v, want a rank and no score", m)
			}
		}
		if b := Explain(tok, id("H")); b.Kind != BuildSingle {
			t.Errorf("H: got %v, want single", b.Kind)
		}
		if b := Explain(tok, 50256); b.Kind != BuildAdded {
			t.Errorf("<|endoftext|>: got %v, want added", b.Kind)
		}
	})
	t.Run("llama-sp", func(t *testing.T) {
		tok := load(t, "tokenizers", "llama-sp").(*HF)
		nl, _ := tok.TokenID("<0x0A>")
		for id, want := range map[int]BuildKind{0: BuildAdded, 1: BuildAdded, nl: BuildByteFallback} {
			if b := Explain(tok, id); b.Kind != want {
				t.Errorf("id %d (%q): got %v, want %v", id, tok.Token(id), b.Kind, want)
			}
		}
		ids, err := tok.Encode("Hello", false)
		if err != nil || len(ids) != 1 {
			t.Fatalf("Encode(Hello): %v %v, want one token", ids, err)
		}
		if b := Explain(tok, ids[0]); b.Kind != BuildMerged || tok.Token(b.Units[0]) != "▁" {
			t.Errorf("▁Hello: got %+v, want merged from ▁ H e l l o", b)
		}
	})
	t.Run("tok512", func(t *testing.T) {
		tok := load(t, "models", "stories260K", "tok512.bin").(*Llama2C)
		for id, want := range map[int]BuildKind{0: BuildUnk, 1: BuildAdded, 2: BuildAdded, 3 + '\n': BuildByteFallback} {
			if b := Explain(tok, id); b.Kind != want {
				t.Errorf("id %d: got %v, want %v", id, b.Kind, want)
			}
		}
		ids, err := tok.Encode("Once upon a time", false)
		if err != nil {
			t.Fatal(err)
		}
		merged := 0
		for _, id := range ids {
			b := Explain(tok, id)
			for _, m := range b.Merges {
				if m.Rank != -1 || m.Score != tok.Score(m.Result) {
					t.Errorf("merge %+v: want rank -1 and the result's score %v", m, tok.Score(m.Result))
				}
			}
			if b.Kind == BuildMerged {
				merged++
			}
		}
		if merged == 0 {
			t.Errorf("Once upon a time: no merged token among %v", ids)
		}
	})
	t.Run("gguf gpt2", func(t *testing.T) {
		tok := parseDoc(t, gpt2Doc("gpt-2"))
		b := Explain(tok, 257) // "Ġhi": Ġ + h (rank 0), then Ġh + i (rank 1)
		want := Building{Kind: BuildMerged, Units: []int{' ', 'h', 'i'}, Merges: []Merge{{' ', 'h', 256, 0, 0}, {256, 'i', 257, 1, 0}}}
		if b.Kind != want.Kind || !slices.Equal(b.Units, want.Units) || !slices.Equal(b.Merges, want.Merges) {
			t.Errorf("got %+v, want %+v", b, want)
		}
		if b := Explain(tok, 258); b.Kind != BuildAdded {
			t.Errorf("<|im_start|>: got %v, want added", b.Kind)
		}
	})
	t.Run("gguf llama", func(t *testing.T) {
		tok := parseDoc(t, spmDoc(nil, 0))
		// 259 ▁, 260 a, 261 b, 262 ▁a, 263 ab, 264 ▁ab (score 10): ▁a
		// scores above ab, so ▁ + a first, then ▁a + b.
		b := Explain(tok, 264)
		want := []Merge{{259, 260, 262, -1, -262}, {262, 261, 264, -1, 10}}
		if b.Kind != BuildMerged || !slices.Equal(b.Units, []int{259, 260, 261}) || !slices.Equal(b.Merges, want) {
			t.Errorf("got %+v, want ▁ a b merged by %v", b, want)
		}
		for id, kind := range map[int]BuildKind{0: BuildUnk, 1: BuildAdded, 3 + 'x': BuildByteFallback, 265: BuildAdded, 260: BuildSingle} {
			if b := Explain(tok, id); b.Kind != kind {
				t.Errorf("id %d: got %v, want %v", id, b.Kind, kind)
			}
		}
	})
	t.Run("other tokenizers", func(t *testing.T) {
		if b := Explain(nil, 3); b.Kind != BuildUnknown {
			t.Errorf("nil tokenizer: got %v, want unknown", b.Kind)
		}
		if b := Explain(otherTokenizer{}, 0); b.Kind != BuildUnknown {
			t.Errorf("a tokenizer of another package: got %v, want unknown", b.Kind)
		}
		for k, want := range map[BuildKind]string{BuildMerged: "merged", BuildByteFallback: "byte fallback", BuildUnknown: "unknown", BuildKind(99): "unknown"} {
			if k.String() != want {
				t.Errorf("BuildKind(%d).String() = %q, want %q", k, k.String(), want)
			}
		}
	})
}

// otherTokenizer stands for a tokenizer Explain does not know (the toy's).
type otherTokenizer struct{ Tokenizer }

// FuzzTokenizerExplain: for any text, every token GPT-2 and llama2.c's
// tok512 give is explained consistently.
func FuzzTokenizerExplain(f *testing.F) {
	for _, s := range trickyText {
		f.Add(s)
	}
	var toks []Tokenizer
	for _, parts := range [][]string{{"tokenizers", "gpt2"}, {"models", "stories260K", "tok512.bin"}} {
		if _, err := refdata.Path(path.Join(parts...)); err == nil {
			toks = append(toks, load(f, parts...))
		}
	}
	if len(toks) == 0 {
		f.Skip("no shared tokenizers")
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range toks {
			ids, err := tok.Encode(s, true)
			if err != nil {
				continue
			}
			for _, id := range ids {
				b := Explain(tok, id)
				if b.Kind == BuildUnknown || b.Kind == BuildWhole {
					t.Errorf("Encode(%q) gives %d (%q): Explain says %v", s, id, tok.Token(id), b.Kind)
				}
				checkBuilding(t, tok, id, b)
			}
		}
	})
}
