//go:build !hftokenizers

package tokenizer

// loadTokenizerJSON reads a tokenizer.json with the pure-Go pipeline. Built
// with the hftokenizers tag, Load uses Hugging Face's Rust library instead
// (hfrust.go).
func loadTokenizerJSON(path string) (Tokenizer, error) {
	return asTokenizer(LoadHF(path))
}
