// Package tokenizer turns text into token ids and back, exactly as Hugging
// Face's tokenizers do: a pure-Go reader of tokenizer.json (and of
// vocab.json + merges.txt folders), llama2.c's tokenizer.bin, and a streaming
// decoder that holds back incomplete UTF-8.
//
// Load picks the format. The files follow the data:
//
//	load.go, json.go, components.go, vocabmerges.go  reading the files
//	added.go        added tokens, cut out of the text first
//	normalize.go    normalizers (NFC, Prepend, Replace)
//	pretokenize.go  pre-tokenizers (ByteLevel, Split, Digits, Metaspace)
//	scan.go         the GPT-2, Llama-3 and Qwen2 split patterns, hand-written
//	regex*.go       a small backtracking matcher for other patterns
//	bytelevel.go    GPT-2's byte-to-character table, lossy UTF-8
//	bpe.go          the BPE model: ranked merges over a pair-of-ids map
//	hf.go           the pipeline, Encode and Decode
//	decode.go       decoders (ByteLevel, ByteFallback, Fuse, Strip, ...)
//	llama2c.go      llama2.c's tokenizer, as run.c encodes and decodes
//	stream.go       Stream, decoding one generated id at a time
package tokenizer

// Tokenizer is what the engine, the CLI and the web UI use.
type Tokenizer interface {
	// Encode returns the ids of text; addSpecial adds the special tokens the
	// post-processor adds (e.g. a BOS), like add_special_tokens=True.
	Encode(text string, addSpecial bool) ([]int, error)

	// Decode returns the text of ids; skipSpecial drops special tokens, like
	// skip_special_tokens=True. Ids outside the vocabulary are an error.
	Decode(ids []int, skipSpecial bool) (string, error)

	// Token returns the string of id ("" when out of range): the
	// vocabulary string, as Hugging Face's id_to_token gives it (for an
	// added token with normalized=true, its normalized form: Llama's
	// "▁<s>").
	Token(id int) string

	// TokenBytes returns the raw bytes id stands for in decoded text (for
	// byte-level and byte-fallback tokens, possibly an incomplete UTF-8
	// sequence); nil when out of range.
	TokenBytes(id int) []byte

	// VocabSize is the number of ids, added tokens included.
	VocabSize() int

	// Specials returns the special-token ids; -1 where absent.
	Specials() Specials

	// IsSpecial reports whether id is a special token (skipped by
	// Decode(ids, true)).
	IsSpecial(id int) bool
}

// Specials are the ids of a tokenizer's special tokens; -1 where absent.
type Specials struct {
	BOS, EOS, PAD, UNK int
}
