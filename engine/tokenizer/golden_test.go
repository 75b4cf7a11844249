package tokenizer

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"tracer/engine/refdata"
)

// sharedPath finds reference data under shared/ (see refdata): the staged
// tokenizers, models and golden vectors. Outside CI a test skips when it is
// absent.
func sharedPath(t testing.TB, parts ...string) string {
	t.Helper()
	return refdata.Need(t, path.Join(parts...))
}

// loaded caches each tokenizer once per test binary: the big vocabularies
// take a while to parse.
type loaded struct {
	once sync.Once
	tok  Tokenizer
	err  error
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*loaded{}
)

// load returns the tokenizer at the shared path, loading it once.
func load(t testing.TB, parts ...string) Tokenizer {
	t.Helper()
	path := sharedPath(t, parts...)
	return loadWith(t, path, func() (Tokenizer, error) { return Load(path) })
}

func loadWith(t testing.TB, key string, f func() (Tokenizer, error)) Tokenizer {
	t.Helper()
	cacheMu.Lock()
	l := cache[key]
	if l == nil {
		l = &loaded{}
		cache[key] = l
	}
	cacheMu.Unlock()
	l.once.Do(func() { l.tok, l.err = f() })
	if l.err != nil {
		t.Fatalf("load %s: %v", key, l.err)
	}
	return l.tok
}

// goldenSet is one tokenizer's cases, from either shape of golden file.
type goldenSet struct {
	name               string
	dir                string // under shared/, e.g. "tokenizers/gpt2"
	vocabSizeWithAdded int
	encode             []goldenCase // text in, ids out, and the ids decoded
	decode             []goldenCase // hand-made ids decoded (no Input)
}

// goldenFile is either shape: the per-tokenizer golden-<name>.json
// ("tokenizer" and "cases"), or a versioned file holding several
// tokenizers ("schema" and "tokenizers"), such as golden-special-decode.json.
type goldenFile struct {
	Schema             string                     `json:"schema"`
	Tokenizer          string                     `json:"tokenizer"`
	SourceFiles        []string                   `json:"source_files"`
	VocabSizeWithAdded int                        `json:"vocab_size_with_added"`
	Cases              []goldenCase               `json:"cases"`
	Tokenizers         map[string]goldenTokenizer `json:"tokenizers"`
}

// goldenTokenizer is one tokenizer of a special-decode-golden/1 file.
type goldenTokenizer struct {
	SourceFiles        []string     `json:"source_files"`
	VocabSizeWithAdded int          `json:"vocab_size_with_added"`
	EncodeCases        []goldenCase `json:"encode_cases"`
	DecodeCases        []goldenCase `json:"decode_cases"`
}

type goldenCase struct {
	Name               string   `json:"name"`
	Input              string   `json:"input"`
	IDs                []int    `json:"ids"`
	Tokens             []string `json:"tokens"`
	IDsNoAddedSpecial  []int    `json:"ids_no_added_special"`
	DecodedWithSpecial string   `json:"decoded_with_special"`
	DecodedSkipSpecial string   `json:"decoded_skip_special"`
}

// sourceDir is the folder, under shared/, of a golden's first source file
// ("shared/tokenizers/gpt2/tokenizer.json" -> "tokenizers/gpt2").
func sourceDir(t *testing.T, file string, sources []string) string {
	t.Helper()
	if len(sources) == 0 {
		t.Fatalf("%s: a tokenizer without source_files", file)
	}
	return path.Dir(strings.TrimPrefix(sources[0], "shared/"))
}

// readGolden reads a golden file of either shape; a schema it does not know
// fails the test rather than being skipped.
func readGolden(t *testing.T, file string) []goldenSet {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	switch g.Schema {
	case "":
		if g.Tokenizer == "" || len(g.Cases) == 0 {
			t.Fatalf("%s: no schema, and not a per-tokenizer golden (tokenizer, cases)", file)
		}
		return []goldenSet{{name: g.Tokenizer, dir: sourceDir(t, file, g.SourceFiles),
			vocabSizeWithAdded: g.VocabSizeWithAdded, encode: g.Cases}}
	case "special-decode-golden/1":
		var sets []goldenSet
		for name, tk := range g.Tokenizers {
			sets = append(sets, goldenSet{name: name, dir: sourceDir(t, file, tk.SourceFiles),
				vocabSizeWithAdded: tk.VocabSizeWithAdded, encode: tk.EncodeCases, decode: tk.DecodeCases})
		}
		sort.Slice(sets, func(i, j int) bool { return sets[i].name < sets[j].name })
		if len(sets) == 0 {
			t.Fatalf("%s: no tokenizers", file)
		}
		return sets
	}
	t.Fatalf("%s: schema %q is not one this test reads", file, g.Schema)
	return nil
}

// TestGolden checks every case of every shared/tokenizers/golden-*.json
// (Hugging Face tokenizers 0.23.2): ids with and without added special
// tokens, token strings, and both decodes of encoded text and of hand-made
// id lists.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedPath(t, "tokenizers"), "golden-*.json"))
	if len(files) == 0 {
		t.Fatal("no golden-*.json in shared/tokenizers")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			for _, g := range readGolden(t, file) {
				t.Run(g.name, func(t *testing.T) {
					tok := load(t, strings.Split(g.dir, "/")...)
					if got := tok.VocabSize(); got != g.vocabSizeWithAdded {
						t.Errorf("VocabSize() = %d, want %d", got, g.vocabSizeWithAdded)
					}
					for _, c := range g.encode {
						t.Run(c.Name, func(t *testing.T) { checkEncodeCase(t, tok, c) })
					}
					for _, c := range g.decode {
						t.Run(c.Name, func(t *testing.T) { checkDecodeCase(t, tok, c) })
					}
				})
			}
		})
	}
}

// checkEncodeCase encodes c.Input and decodes the ids. The tokens of an
// encoding are Hugging Face's Encoding.tokens: for an added token that is
// the text it matched (Llama's "▁<s>" in normalized text) or the string the
// post-processor adds ("<s>"), which Token(id) can not tell apart; so added
// tokens are checked against both their content and Token(id).
func checkEncodeCase(t *testing.T, tok Tokenizer, c goldenCase) {
	t.Helper()
	ids, err := tok.Encode(c.Input, true)
	if err != nil {
		t.Fatalf("Encode(%q, true): %v", c.Input, err)
	}
	if !slices.Equal(ids, c.IDs) {
		t.Errorf("Encode(%q, true)\n got %v\nwant %v", c.Input, ids, c.IDs)
	}
	if c.Tokens != nil && len(c.Tokens) == len(c.IDs) {
		for i, id := range c.IDs {
			got := tok.Token(id)
			if got == c.Tokens[i] {
				continue
			}
			if content, ok := addedContent(tok, id); ok && content == c.Tokens[i] {
				continue
			}
			t.Errorf("token %d of %q: Token(%d) = %q, want %q", i, c.Input, id, got, c.Tokens[i])
		}
	}
	if c.IDsNoAddedSpecial != nil {
		plain, err := tok.Encode(c.Input, false)
		if err != nil {
			t.Fatalf("Encode(%q, false): %v", c.Input, err)
		}
		if !slices.Equal(plain, c.IDsNoAddedSpecial) {
			t.Errorf("Encode(%q, false)\n got %v\nwant %v", c.Input, plain, c.IDsNoAddedSpecial)
		}
	}
	checkDecodes(t, tok, c)
}

// checkDecodeCase checks Token(id) (Hugging Face's id_to_token) of every id
// and both decodes.
func checkDecodeCase(t *testing.T, tok Tokenizer, c goldenCase) {
	t.Helper()
	if len(c.Tokens) != len(c.IDs) {
		t.Fatalf("golden case has %d ids and %d tokens", len(c.IDs), len(c.Tokens))
	}
	for i, id := range c.IDs {
		if got := tok.Token(id); got != c.Tokens[i] {
			t.Errorf("Token(%d) = %q, want %q", id, got, c.Tokens[i])
		}
	}
	checkDecodes(t, tok, c)
}

func checkDecodes(t *testing.T, tok Tokenizer, c goldenCase) {
	t.Helper()
	for _, d := range []struct {
		skip bool
		want string
	}{{false, c.DecodedWithSpecial}, {true, c.DecodedSkipSpecial}} {
		got, err := tok.Decode(c.IDs, d.skip)
		if err != nil {
			t.Fatalf("Decode(%v, %v): %v", c.IDs, d.skip, err)
		}
		if got != d.want {
			t.Errorf("Decode(%v, skipSpecial=%v) = %q, want %q", c.IDs, d.skip, got, d.want)
		}
	}
}

// addedContent returns the content of id when it is an added token.
func addedContent(tok Tokenizer, id int) (string, bool) {
	hf, ok := tok.(*HF)
	if !ok {
		return "", false
	}
	i, ok := hf.added.byID[id]
	if !ok {
		return "", false
	}
	return hf.added.tokens[i].content, true
}
