package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// peerFile is a swift-transformers baseline: Python transformers 4.57.1 on
// the 83 inputs of inputs.json.
type peerFile struct {
	Metadata struct {
		ModelID string `json:"model_id"`
	} `json:"metadata"`
	Entries []struct {
		ID                 string   `json:"id"`
		InputIDs           []int    `json:"input_ids"`
		Tokens             []string `json:"tokens"`
		DecodedWithSpecial string   `json:"decoded_with_special"`
		DecodedSkipSpecial string   `json:"decoded_skip_special"`
	} `json:"entries"`
}

// tinyLlama returns the llama-sp tokenizer as TinyLlama ships it: the same
// vocabulary and merges, but <unk>, <s> and </s> with normalized=false (see
// shared/tokenizers/SOURCE.md), which makes Decode(ids, true) drop <s>.
func tinyLlama(t *testing.T) Tokenizer {
	t.Helper()
	path := sharedPath(t, "tokenizers", "llama-sp", "tokenizer.json")
	return loadWith(t, path+"#tinyllama", func() (Tokenizer, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, err
		}
		var added []map[string]any
		if err := json.Unmarshal(doc["added_tokens"], &added); err != nil {
			return nil, err
		}
		for _, a := range added {
			a["normalized"] = false
		}
		if doc["added_tokens"], err = json.Marshal(added); err != nil {
			return nil, err
		}
		if data, err = json.Marshal(doc); err != nil {
			return nil, err
		}
		return asTokenizer(ParseHF(data))
	})
}

// TestPeerVectors checks the multilingual baselines that swift-transformers
// keeps for GPT-2, Qwen2.5 and TinyLlama.
func TestPeerVectors(t *testing.T) {
	dir := sharedPath(t, "tokenizers", "peer-vectors", "swift-transformers")
	var inputs []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &inputs); err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, in := range inputs {
		text[in.ID] = in.Text
	}
	for _, tc := range []struct {
		file string
		tok  func(t *testing.T) Tokenizer
	}{
		{"gpt2_multilingual.json", func(t *testing.T) Tokenizer { return load(t, "tokenizers", "gpt2") }},
		{"qwen2_5_multilingual.json", func(t *testing.T) Tokenizer { return load(t, "tokenizers", "qwen2.5-0.5b-instruct") }},
		{"tinyllama_multilingual.json", tinyLlama},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var pf peerFile
			if err := json.Unmarshal(data, &pf); err != nil {
				t.Fatal(err)
			}
			if len(pf.Entries) == 0 {
				t.Fatal("no entries")
			}
			tok := tc.tok(t)
			for _, e := range pf.Entries {
				in, ok := text[e.ID]
				if !ok {
					t.Errorf("entry %s has no input", e.ID)
					continue
				}
				t.Run(e.ID, func(t *testing.T) {
					checkEncodeCase(t, tok, goldenCase{Input: in, IDs: e.InputIDs, Tokens: e.Tokens,
						DecodedWithSpecial: e.DecodedWithSpecial, DecodedSkipSpecial: e.DecodedSkipSpecial})
				})
			}
		})
	}
}

// TestVocabMergesMatchesTokenizerJSON builds GPT-2 from vocab.json +
// merges.txt (the GPT2Tokenizer conversion) and checks it against the
// golden vectors of its tokenizer.json.
func TestVocabMergesMatchesTokenizerJSON(t *testing.T) {
	dir := sharedPath(t, "tokenizers", "gpt2")
	tok, err := LoadVocabMerges(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.Specials(), (Specials{BOS: 50256, EOS: 50256, PAD: -1, UNK: 50256}); got != want {
		t.Errorf("Specials() = %+v, want %+v", got, want)
	}
	for _, g := range readGolden(t, filepath.Join(filepath.Dir(dir), "golden-gpt2.json")) {
		for _, c := range g.encode {
			t.Run(c.Name, func(t *testing.T) { checkEncodeCase(t, tok, c) })
		}
	}
}

// TestSpecials checks the special tokens read from tokenizer_config.json,
// special_tokens_map.json and the tokenizer classes' defaults.
func TestSpecials(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want Specials
	}{
		{"gpt2", Specials{BOS: 50256, EOS: 50256, PAD: -1, UNK: 50256}},
		{"smollm2-135m-instruct", Specials{BOS: 1, EOS: 2, PAD: 2, UNK: 0}},
		{"qwen2.5-0.5b-instruct", Specials{BOS: -1, EOS: 151645, PAD: 151643, UNK: -1}},
		{"llama-sp", Specials{BOS: 1, EOS: 2, PAD: -1, UNK: 0}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			if got := load(t, "tokenizers", tc.dir).Specials(); got != tc.want {
				t.Errorf("Specials() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestIsSpecial(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		id   int
		want bool
	}{
		{"gpt2", 50256, true},
		{"gpt2", 15496, false},
		{"qwen2.5-0.5b-instruct", 151645, true},
		{"qwen2.5-0.5b-instruct", 151657, false}, // <tool_call> is added but not special
		{"llama-sp", 1, false},                   // normalized=true: Decode keeps it (see IsSpecial)
	} {
		if got := load(t, "tokenizers", tc.dir).IsSpecial(tc.id); got != tc.want {
			t.Errorf("%s: IsSpecial(%d) = %v, want %v", tc.dir, tc.id, got, tc.want)
		}
	}
	if got := tinyLlama(t).IsSpecial(1); !got {
		t.Errorf("tinyllama: IsSpecial(1) = false, want true")
	}
}

// TestChatGolden encodes the rendered chat templates of shared/tokenizers/
// chat-golden.json without added special tokens (the templates hold them)
// and checks the ids Hugging Face tokenizers gives (ids_tokenizer_json).
func TestChatGolden(t *testing.T) {
	path := sharedPath(t, "tokenizers", "chat-golden.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Tokenizers map[string]struct {
			Cases []struct {
				Name             string `json:"name"`
				Rendered         string `json:"rendered"`
				IDsTokenizerJSON []int  `json:"ids_tokenizer_json"`
			} `json:"cases"`
		} `json:"tokenizers"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	for name, tk := range g.Tokenizers {
		t.Run(name, func(t *testing.T) {
			tok := load(t, "tokenizers", name)
			for _, c := range tk.Cases {
				t.Run(c.Name, func(t *testing.T) {
					ids, err := tok.Encode(c.Rendered, false)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(ids, c.IDsTokenizerJSON) {
						t.Errorf("Encode(rendered)\n got %v\nwant %v", ids, c.IDsTokenizerJSON)
					}
				})
			}
		})
	}
}

// TestFolderPrefersTokenizerJSON: SmolLM2's folder has tokenizer.json and
// vocab.json + merges.txt, which differ before digits; Load must use
// tokenizer.json, as AutoTokenizer does (a  1 -> Ġa ĠĠ 1, not Ġa Ġ Ġ 1).
func TestFolderPrefersTokenizerJSON(t *testing.T) {
	tok := load(t, "tokenizers", "smollm2-135m-instruct")
	ids, err := tok.Encode("a  1", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, id := range ids {
		got = append(got, tok.Token(id))
	}
	if want := []string{"a", "ĠĠ", "1"}; !slices.Equal(got, want) {
		t.Errorf("Encode(%q) tokens %q, want %q", "a  1", got, want)
	}
}
