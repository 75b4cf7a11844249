package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTokenizeGoldens runs `tracer tokenize` over every case of the
// Hugging Face goldens: encode with and without special tokens, decode with
// and without them.
func TestTokenizeGoldens(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedDir, "tokenizers", "golden-*.json"))
	if len(files) == 0 {
		t.Skipf("no tokenizer goldens under %s/tokenizers (the shared reference data is absent)", sharedDir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var g struct {
				SourceFiles []string `json:"source_files"`
				Cases       []struct {
					Name               string   `json:"name"`
					Input              string   `json:"input"`
					IDs                []int    `json:"ids"`
					Tokens             []string `json:"tokens"`
					IDsNoSpecial       []int    `json:"ids_no_added_special"`
					DecodedWithSpecial string   `json:"decoded_with_special"`
					DecodedSkipSpecial string   `json:"decoded_skip_special"`
				} `json:"cases"`
			}
			readJSON(t, f, &g)
			dir := filepath.Join(sharedDir, filepath.Dir(strings.TrimPrefix(g.SourceFiles[0], "shared/")))
			var texts, idLines []string
			for _, c := range g.Cases {
				texts = append(texts, jsonLine(t, c.Input))
				idLines = append(idLines, jsonLine(t, c.IDs))
			}
			type encoded struct {
				IDs    []int    `json:"ids"`
				Tokens []string `json:"tokens"`
			}
			type decoded struct {
				Text string `json:"text"`
			}
			enc := runLines[encoded](t, texts, "tokenize", "--tokenizer", dir)
			bare := runLines[encoded](t, texts, "tokenize", "--tokenizer", dir, "--no-special")
			withSpecial := runLines[decoded](t, idLines, "tokenize", "--tokenizer", dir, "--decode")
			skip := runLines[decoded](t, idLines, "tokenize", "--tokenizer", dir, "--decode", "--skip-special")
			for i, c := range g.Cases {
				switch {
				case !slices.Equal(enc[i].IDs, c.IDs) || !slices.Equal(enc[i].Tokens, c.Tokens):
					t.Errorf("%s: encode %v %q, want %v %q", c.Name, enc[i].IDs, enc[i].Tokens, c.IDs, c.Tokens)
				case !slices.Equal(bare[i].IDs, c.IDsNoSpecial):
					t.Errorf("%s: --no-special %v, want %v", c.Name, bare[i].IDs, c.IDsNoSpecial)
				case withSpecial[i].Text != c.DecodedWithSpecial:
					t.Errorf("%s: --decode %q, want %q", c.Name, withSpecial[i].Text, c.DecodedWithSpecial)
				case skip[i].Text != c.DecodedSkipSpecial:
					t.Errorf("%s: --decode --skip-special %q, want %q", c.Name, skip[i].Text, c.DecodedSkipSpecial)
				}
			}
		})
	}
}

// TestTokenizeChatGoldens renders every chat-golden conversation with
// `tracer tokenize --chat` and compares text and ids with what
// transformers' apply_chat_template and tokenizer.json give.
func TestTokenizeChatGoldens(t *testing.T) {
	path := filepath.Join(sharedDir, "tokenizers", "chat-golden.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s (the shared reference data is absent)", path)
	}
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
			dir := filepath.Join(sharedDir, strings.TrimPrefix(tk.Dir, "shared/"))
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
	dir := filepath.Join(sharedDir, "tokenizers", "gpt2")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no %s (the shared reference data is absent)", dir)
	}
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
