package tokenizer_test

import (
	"fmt"

	"tracer/engine/tokenizer"
)

// A tiny byte-level BPE tokenizer.json: GPT-2's pipeline with a vocabulary
// that only knows "hello world".
const tinyTokenizerJSON = `{
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true},
  "model": {
    "type": "BPE",
    "vocab": {"h": 0, "e": 1, "l": 2, "o": 3, "Ġ": 4, "w": 5, "r": 6, "d": 7,
              "he": 8, "ll": 9, "hell": 10, "hello": 11, "Ġw": 12, "or": 13},
    "merges": ["h e", "l l", "he ll", "hell o", "Ġ w", "o r"]
  }
}`

func ExampleParseHF() {
	tok, err := tokenizer.ParseHF([]byte(tinyTokenizerJSON))
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, _ := tok.Encode("hello world", false)
	for _, id := range ids {
		fmt.Printf("%d %q\n", id, tok.Token(id))
	}
	text, _ := tok.Decode(ids, false)
	fmt.Println(text)
	// Output:
	// 11 "hello"
	// 12 "Ġw"
	// 13 "or"
	// 2 "l"
	// 7 "d"
	// hello world
}

func ExampleNewStream() {
	tok, err := tokenizer.ParseHF([]byte(tinyTokenizerJSON))
	if err != nil {
		fmt.Println(err)
		return
	}
	s := tokenizer.NewStream(tok, true)
	for _, id := range []int{11, 12, 13, 2, 7} {
		text, _ := s.Push(id)
		fmt.Printf("%q\n", text)
	}
	// Output:
	// "hello"
	// " w"
	// "or"
	// "l"
	// "d"
}

func ExampleParseHF_refused() {
	_, err := tokenizer.ParseHF([]byte(`{"pre_tokenizer": {"type": "Whitespace"}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`))
	fmt.Println(err)
	// Output:
	// tokenizer: tokenizer.json: pre_tokenizer type "Whitespace" is not supported
}
