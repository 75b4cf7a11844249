package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tracer/engine/refdata"
)

// tokenizeGolden is one tokenizer's cases from a golden file of either
// shape: golden-<name>.json ("tokenizer", "cases") or a versioned file of
// several tokenizers ("schema": "special-decode-golden/1", "tokenizers").
type tokenizeGolden struct {
	name    string
	dir     string         // the tokenizer's folder
	encode  []tokenizeCase // text in: ids, tokens, both decodes
	decode  []tokenizeCase // hand-made ids: both decodes
	idToken map[int]string // Hugging Face's id_to_token of the added tokens
}

type tokenizeCase struct {
	Name               string   `json:"name"`
	Input              string   `json:"input"`
	IDs                []int    `json:"ids"`
	Tokens             []string `json:"tokens"`
	IDsNoSpecial       []int    `json:"ids_no_added_special"`
	DecodedWithSpecial string   `json:"decoded_with_special"`
	DecodedSkipSpecial string   `json:"decoded_skip_special"`
}

// readTokenizeGoldens reads every shared/tokenizers/golden-*.json; a schema
// it does not know fails the test.
func readTokenizeGoldens(t *testing.T) []tokenizeGolden {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(refdata.Need(t, "tokenizers"), "golden-*.json"))
	if len(files) == 0 {
		t.Fatal("no golden-*.json in shared/tokenizers")
	}
	type added struct {
		ID               int     `json:"id"`
		Content          string  `json:"content"`
		LibraryIDToToken *string `json:"library_id_to_token"`
	}
	type perTokenizer struct {
		SourceFiles []string       `json:"source_files"`
		AddedTokens []added        `json:"added_tokens"`
		EncodeCases []tokenizeCase `json:"encode_cases"`
		DecodeCases []tokenizeCase `json:"decode_cases"`
	}
	var sets []tokenizeGolden
	idTokens := map[string]map[int]string{} // folder -> added id -> id_to_token
	for _, f := range files {
		var g struct {
			Schema      string                  `json:"schema"`
			Tokenizer   string                  `json:"tokenizer"`
			SourceFiles []string                `json:"source_files"`
			Cases       []tokenizeCase          `json:"cases"`
			Tokenizers  map[string]perTokenizer `json:"tokenizers"`
		}
		readJSON(t, f, &g)
		dirOf := func(sources []string) string {
			if len(sources) == 0 {
				t.Fatalf("%s: a tokenizer without source_files", f)
			}
			return refdata.Need(t, path.Dir(strings.TrimPrefix(sources[0], "shared/")))
		}
		switch g.Schema {
		case "":
			if g.Tokenizer == "" || len(g.Cases) == 0 {
				t.Fatalf("%s: no schema, and not a per-tokenizer golden (tokenizer, cases)", f)
			}
			sets = append(sets, tokenizeGolden{name: filepath.Base(f), dir: dirOf(g.SourceFiles), encode: g.Cases})
		case "special-decode-golden/1":
			for name, tk := range g.Tokenizers {
				dir := dirOf(tk.SourceFiles)
				if idTokens[dir] == nil {
					idTokens[dir] = map[int]string{}
				}
				for _, a := range tk.AddedTokens {
					idTokens[dir][a.ID] = a.Content
					if a.LibraryIDToToken != nil {
						idTokens[dir][a.ID] = *a.LibraryIDToToken
					}
				}
				sets = append(sets, tokenizeGolden{name: filepath.Base(f) + "/" + name, dir: dir,
					encode: tk.EncodeCases, decode: tk.DecodeCases})
			}
		default:
			t.Fatalf("%s: schema %q is not one this test reads", f, g.Schema)
		}
	}
	for i := range sets {
		sets[i].idToken = idTokens[sets[i].dir]
	}
	slices.SortFunc(sets, func(a, b tokenizeGolden) int { return strings.Compare(a.name, b.name) })
	return sets
}

// TestTokenizeGoldens runs `tracer tokenize` over every case of the
// Hugging Face goldens: encode with and without special tokens, decode with
// and without them, of encoded text and of hand-made id lists.
//
// tokenize writes Token(id), Hugging Face's id_to_token, as a token; the
// goldens' encode tokens are its Encoding.tokens, which for an added token
// hold the text it matched (Llama's "▁<s>") or the string the
// post-processor adds ("<s>"). So at an added id the token must be the
// id_to_token the special-decode golden records.
func TestTokenizeGoldens(t *testing.T) {
	for _, g := range readTokenizeGoldens(t) {
		t.Run(g.name, func(t *testing.T) {
			var texts, idLines []string
			for _, c := range g.encode {
				texts = append(texts, jsonLine(t, c.Input))
			}
			for _, c := range append(slices.Clip(g.encode), g.decode...) {
				idLines = append(idLines, jsonLine(t, c.IDs))
			}
			type encoded struct {
				IDs    []int    `json:"ids"`
				Tokens []string `json:"tokens"`
			}
			type decoded struct {
				Text string `json:"text"`
			}
			var enc, bare []encoded
			if len(texts) > 0 {
				enc = runLines[encoded](t, texts, "tokenize", "--tokenizer", g.dir)
				bare = runLines[encoded](t, texts, "tokenize", "--tokenizer", g.dir, "--no-special")
			}
			withSpecial := runLines[decoded](t, idLines, "tokenize", "--tokenizer", g.dir, "--decode")
			skip := runLines[decoded](t, idLines, "tokenize", "--tokenizer", g.dir, "--decode", "--skip-special")
			for i, c := range g.encode {
				want := slices.Clone(c.Tokens)
				for j, id := range c.IDs {
					if tok, ok := g.idToken[id]; ok && j < len(want) {
						want[j] = tok
					}
				}
				if !slices.Equal(enc[i].IDs, c.IDs) || !slices.Equal(enc[i].Tokens, want) {
					t.Errorf("%s: encode %v %q, want %v %q", c.Name, enc[i].IDs, enc[i].Tokens, c.IDs, want)
				}
				if !slices.Equal(bare[i].IDs, c.IDsNoSpecial) {
					t.Errorf("%s: --no-special %v, want %v", c.Name, bare[i].IDs, c.IDsNoSpecial)
				}
			}
			for i, c := range append(slices.Clip(g.encode), g.decode...) {
				if withSpecial[i].Text != c.DecodedWithSpecial {
					t.Errorf("%s: --decode %v: %q, want %q", c.Name, c.IDs, withSpecial[i].Text, c.DecodedWithSpecial)
				}
				if skip[i].Text != c.DecodedSkipSpecial {
					t.Errorf("%s: --decode --skip-special %v: %q, want %q", c.Name, c.IDs, skip[i].Text, c.DecodedSkipSpecial)
				}
			}
		})
	}
}

// TestTokenizeChatGoldens renders every chat-golden conversation with
// `tracer tokenize --chat` and compares text and ids with what
// transformers' apply_chat_template and tokenizer.json give.
func TestTokenizeChatGoldens(t *testing.T) {
	path := refdata.Need(t, "tokenizers/chat-golden.json")
	var g struct {
		Tokenizers map[string]struct {
			Dir   string `json:"dir"`
			Cases []struct {
				Name     string          `json:"name"`
				Messages json.RawMessage `json:"messages"`
				Kwargs   struct {
					AddGenerationPrompt bool            `json:"add_generation_prompt"`
					Tools               json.RawMessage `json:"tools"`
				} `json:"kwargs"`
				Rendered string `json:"rendered"`
				IDs      []int  `json:"ids_tokenizer_json"`
			} `json:"cases"`
		} `json:"tokenizers"`
	}
	readJSON(t, path, &g)
	for name, tk := range g.Tokenizers {
		t.Run(name, func(t *testing.T) {
			var lines []string
			for _, c := range tk.Cases {
				line := map[string]any{"messages": c.Messages, "add_generation_prompt": c.Kwargs.AddGenerationPrompt}
				if len(c.Kwargs.Tools) > 0 {
					line["tools"] = c.Kwargs.Tools
				}
				lines = append(lines, jsonLine(t, line))
			}
			type rendered struct {
				Text string `json:"text"`
				IDs  []int  `json:"ids"`
			}
			dir := refdata.Need(t, strings.TrimPrefix(tk.Dir, "shared/"))
			got := runLines[rendered](t, lines, "tokenize", "--tokenizer", dir, "--chat")
			for i, c := range tk.Cases {
				if got[i].Text != c.Rendered {
					t.Errorf("%s: rendered\n%q\nwant\n%q", c.Name, got[i].Text, c.Rendered)
				} else if !slices.Equal(got[i].IDs, c.IDs) {
					t.Errorf("%s: ids %v, want %v", c.Name, got[i].IDs, c.IDs)
				}
			}
		})
	}
}

func TestTokenizeErrors(t *testing.T) {
	dir := refdata.Need(t, "tokenizers/gpt2")
	for _, tc := range []struct {
		name, stdin string
		args        []string
		code        int
		want        string
	}{
		{"not a string", "42\n", nil, 1, "line 1: want a JSON string"},
		{"bad ids", "[1, \"x\"]\n", []string{"--decode"}, 1, "line 1: want a JSON array"},
		{"id outside vocabulary", "[99999999]\n", []string{"--decode"}, 1, "line 1"},
		{"no chat template", `{"messages": []}` + "\n", []string{"--chat"}, 1, "chat_template"},
		{"no tokenizer", "", []string{"--tokenizer", "/nonexistent"}, 1, "nonexistent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"tokenize", "--tokenizer", dir}, tc.args...)
			_, errOut, code := tracer(t, tc.stdin, args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d stderr %q, want exit %d and %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func jsonLine(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runLines runs tracer with one JSON line per input and decodes one output
// line per input.
func runLines[T any](t *testing.T, lines []string, args ...string) []T {
	t.Helper()
	out, errOut, code := tracer(t, strings.Join(lines, "\n")+"\n", args...)
	if code != 0 {
		t.Fatalf("tracer %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var got []T
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		got = append(got, v)
	}
	if len(got) != len(lines) {
		t.Fatalf("got %d output lines for %d inputs", len(got), len(lines))
	}
	return got
}
