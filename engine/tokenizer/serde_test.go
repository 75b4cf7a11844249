package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// addedJSON is one complete added_tokens entry, as Hugging Face writes it.
const addedJSON = `{"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}`

// bosTemplate is a TemplateProcessing that adds <s> with the given ids.
func bosTemplate(key, ids string) string {
	return `"` + key + `":{"type":"TemplateProcessing","single":"<s> $A","pair":"<s> $A $B",` +
		`"special_tokens":{"<s>":{"id":"<s>","ids":` + ids + `,"tokens":["<s>"]}}}`
}

// TestTokenizerJSONRefused checks what ParseHF refuses, as Hugging Face's
// loader does or, for ids outside the vocabulary, where it would give ids
// the model can not use: the error names the field or token.
func TestTokenizerJSONRefused(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"template id past the vocabulary", tinyJSON(bosTemplate("post_processor", "[99]"), ""),
			`special token "<s>" has id 99, which is not in the vocabulary (18 ids`},
		{"template id past the vocabulary in a sequence", tinyJSON(`"post_processor":{"type":"Sequence","processors":[{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true},`+
			bosTemplate("x", "[1, 18]")[4:]+`]}`, ""), `special token "<s>" has id 18`},
		{"template id negative", tinyJSON(bosTemplate("post_processor", "[-1]"), ""), "special_tokens"},
		{"bert cls past the vocabulary", tinyJSON(`"post_processor":{"type":"BertProcessing","cls":["<s>",1000],"sep":["</s>",2]}`, ""),
			`cls: special token "<s>" has id 1000`},
		{"roberta sep past the vocabulary", tinyJSON(`"post_processor":{"type":"RobertaProcessing","cls":["<s>",1],"sep":["</s>",20],"trim_offsets":true,"add_prefix_space":true}`, ""),
			`sep: special token "</s>" has id 20`},
		{"added token key in another case", tinyJSON(`"normalizer":null`, strings.Replace(`[`+addedJSON+`]`, `"special"`, `"Special"`, 1)),
			`added_tokens[0]: missing field "special" (keys are case-sensitive; the file has "Special")`},
		{"added token without normalized", tinyJSON(`"normalizer":null`, `[{"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"special":true}]`),
			`added_tokens[0]: missing field "normalized"`},
		{"component type in another case", tinyJSON(`"decoder":{"Type":"Fuse"}`, ""), `decoder: missing field "type" (keys are case-sensitive; the file has "Type")`},
		{"strip content in another case", tinyJSON(`"decoder":{"type":"Strip","Content":" ","start":1,"stop":0}`, ""),
			`decoder Strip: missing field "content"`},
		{"split without invert", tinyJSON(`"pre_tokenizer":{"type":"Split","pattern":{"String":"a"},"behavior":"Isolated"}`, ""),
			`pre_tokenizer Split: missing field "invert"`},
		{"pattern variant in another case", tinyJSON(`"pre_tokenizer":{"type":"Split","pattern":{"regex":"a"},"behavior":"Isolated","invert":false}`, ""),
			"pattern is neither String nor Regex"},
		{"template piece in another case", tinyJSON(`"post_processor":{"type":"TemplateProcessing","single":[{"specialToken":{"id":"<s>","type_id":0}}],"pair":"$A $B","special_tokens":{}}`, ""),
			"neither SpecialToken nor Sequence"},
		{"template special without tokens", tinyJSON(`"post_processor":{"type":"TemplateProcessing","single":"<s> $A","pair":"$A $B","special_tokens":{"<s>":{"id":"<s>","ids":[1]}}}`, ""),
			`special_tokens["<s>"]: missing field "tokens"`},
		{"template without pair", tinyJSON(`"post_processor":{"type":"TemplateProcessing","single":"<s> $A","special_tokens":{}}`, ""),
			`post_processor TemplateProcessing: missing field "pair"`},
		{"model vocab in another case", `{"model":{"type":"BPE","Vocab":{"a":0},"merges":[]}}`, `model BPE: missing field "vocab"`},
		{"model merges null", `{"model":{"type":"BPE","vocab":{"a":0},"merges":null}}`, "merges is null"},
		{"vocab id far past its size", `{"model":{"type":"BPE","vocab":{"a":1073741824},"merges":[]}}`, `token "a" has id 1073741824, outside 0..1026`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHF([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseHF: got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestTokenizerJSONKeysExact checks that keys match exactly and that
// unknown keys, misspelled optional ones included, are ignored as Hugging
// Face ignores them: a "post_proCessor" adds no BOS, a "Prepend_scheme"
// leaves Metaspace's default ("always").
func TestTokenizerJSONKeysExact(t *testing.T) {
	metaspace := func(extra string) string {
		return `"pre_tokenizer":{"type":"Metaspace","replacement":"▁"` + extra + `}`
	}
	for _, tc := range []struct {
		name, doc, in string
		want          []int // Encode(in, true)
	}{
		{"post_processor", tinyJSON(bosTemplate("post_processor", "[1]"), ""), "ab", []int{1, 9}},
		{"post_proCessor is not post_processor", tinyJSON(bosTemplate("post_proCessor", "[1]"), ""), "ab", []int{9}},
		{"POST_PROCESSOR is not post_processor", tinyJSON(bosTemplate("POST_PROCESSOR", "[1]"), ""), "ab", []int{9}},
		{"prepend_scheme never", tinyJSON(metaspace(`,"prepend_scheme":"never"`), ""), "ab", []int{9}},
		{"Prepend_scheme is ignored", tinyJSON(metaspace(`,"Prepend_scheme":"never"`), ""), "ab", []int{11}},
		{"unknown keys are ignored", tinyJSON(metaspace(`,"str_rep":"▁","comment":{"any":[1,2]}`)+`,"truncation":null,"x-note":"hi"`, ""), "ab", []int{11}},
		{"byte_fallback in another case is ignored", strings.Replace(tinyJSON(`"normalizer":null`, ""), `"byte_fallback":true`, `"Byte_Fallback":true`, 1), "aA", []int{3, 0}},
		{"byte_fallback", tinyJSON(`"normalizer":null`, ""), "aA", []int{3, 13}},
		{"added token", tinyJSON(`"normalizer":null`, `[`+addedJSON+`]`), "<s>a", []int{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := ParseHF([]byte(tc.doc))
			if err != nil {
				t.Fatalf("ParseHF: %v", err)
			}
			got, err := tok.Encode(tc.in, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q, true) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestTokenizerJSONAddedIDs checks that added tokens get the ids Hugging
// Face tokenizers 0.23 gives them, whatever tokenizer.json says: the model's
// id for a string in its vocabulary, the id of an earlier equal content,
// else the next after the vocabulary's size.
func TestTokenizerJSONAddedIDs(t *testing.T) {
	entry := func(id int, content string, special bool) string {
		return fmt.Sprintf(`{"id":%d,"content":%q,"single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":%v}`, id, content, special)
	}
	added := "[" + strings.Join([]string{
		entry(1073741824, "<x>", true), // far past the vocabulary: numbered 18
		entry(2, "ab", false),          // in the vocabulary as 9
		entry(5, "<y>", false),         // 19
		entry(7, "<x>", false),         // seen before: 18, and still special
		entry(8, "", true),             // empty: left out
	}, ",") + "]"
	tok, err := ParseHF([]byte(tinyJSON(`"normalizer":null`, added)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.Encode("<x>ab<y>", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{18, 9, 19}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if got, want := tok.VocabSize(), 20; got != want {
		t.Errorf("VocabSize() = %d, want %d", got, want)
	}
	for _, tc := range []struct {
		id      int
		special bool
	}{{18, true}, {9, false}, {19, false}} {
		if got := tok.IsSpecial(tc.id); got != tc.special {
			t.Errorf("IsSpecial(%d) = %v, want %v", tc.id, got, tc.special)
		}
	}
}

// TestVocabMergesAddedIDBound checks that an added_tokens_decoder id far
// past the vocabulary is refused rather than sized for.
func TestVocabMergesAddedIDBound(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"vocab.json":            `{"a":0,"b":1,"ab":2}`,
		"merges.txt":            "a b\n",
		"tokenizer_config.json": `{"tokenizer_class":"GPT2Tokenizer","added_tokens_decoder":{"1073741824":{"content":"<x>","special":true}}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadVocabMerges(dir)
	if want := `added token "<x>" has id 1073741824, outside 0..`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("LoadVocabMerges: got error %v, want one containing %q", err, want)
	}
}
