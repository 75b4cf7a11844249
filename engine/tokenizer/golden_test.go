package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// sharedDir holds the staged tokenizers and golden vectors (see
// shared/tokenizers/SOURCE.md); tests skip when it is absent.
const sharedDir = "../../../shared"

func sharedPath(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{sharedDir}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test data %s is absent: %v", p, err)
	}
	return p
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

type goldenFile struct {
	Tokenizer          string       `json:"tokenizer"`
	SourceFiles        []string     `json:"source_files"`
	VocabSizeWithAdded int          `json:"vocab_size_with_added"`
	Cases              []goldenCase `json:"cases"`
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

func readGolden(t *testing.T, path string) goldenFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

// TestGolden checks every case of every shared/tokenizers/golden-*.json
// (Hugging Face tokenizers 0.23.2): ids with and without added special
// tokens, token strings, and both decodes.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedPath(t, "tokenizers"), "golden-*.json"))
	if len(files) == 0 {
		t.Skip("no golden-*.json in shared/tokenizers")
	}
	for _, file := range files {
		g := readGolden(t, file)
		t.Run(g.Tokenizer, func(t *testing.T) {
			dir := filepath.Dir(file)
			tok := load(t, "tokenizers", g.Tokenizer)
			if got := tok.VocabSize(); got != g.VocabSizeWithAdded {
				t.Errorf("VocabSize() = %d, want %d", got, g.VocabSizeWithAdded)
			}
			_ = dir
			for _, c := range g.Cases {
				t.Run(c.Name, func(t *testing.T) { checkCase(t, tok, c) })
			}
		})
	}
}

func checkCase(t *testing.T, tok Tokenizer, c goldenCase) {
	t.Helper()
	ids, err := tok.Encode(c.Input, true)
	if err != nil {
		t.Fatalf("Encode(%q, true): %v", c.Input, err)
	}
	if !slices.Equal(ids, c.IDs) {
		t.Errorf("Encode(%q, true)\n got %v\nwant %v", c.Input, ids, c.IDs)
	}
	if c.Tokens != nil {
		tokens := make([]string, len(c.IDs))
		for i, id := range c.IDs {
			tokens[i] = tok.Token(id)
		}
		if !slices.Equal(tokens, c.Tokens) {
			t.Errorf("tokens of %q\n got %q\nwant %q", c.Input, tokens, c.Tokens)
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
	for _, d := range []struct {
		skip bool
		want string
	}{{false, c.DecodedWithSpecial}, {true, c.DecodedSkipSpecial}} {
		got, err := tok.Decode(c.IDs, d.skip)
		if err != nil {
			t.Fatalf("Decode(%v, %v): %v", c.IDs, d.skip, err)
		}
		if got != d.want {
			t.Errorf("Decode(ids of %q, skipSpecial=%v) = %q, want %q", c.Input, d.skip, got, d.want)
		}
	}
}
