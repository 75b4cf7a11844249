//go:build hftokenizers

package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRustHFGolden runs the shared golden encodings through the Rust
// library (build with -tags hftokenizers and libtokenizers.a; see
// hfrust.go) and compares its ids, decodes and token bytes.
func TestRustHFGolden(t *testing.T) {
	dir := sharedPath(t, "tokenizers")
	for _, name := range []string{"gpt2", "smollm2-135m-instruct", "llama-sp"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "golden-"+name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var golden struct {
				Cases []struct {
					Name        string `json:"name"`
					Input       string `json:"input"`
					IDs         []int  `json:"ids"`
					IDsNoAdded  []int  `json:"ids_no_added_special"`
					DecodedWith string `json:"decoded_with_special"`
					DecodedSkip string `json:"decoded_skip_special"`
				} `json:"cases"`
			}
			if err := json.Unmarshal(data, &golden); err != nil {
				t.Fatal(err)
			}
			tok, err := LoadRustHF(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range golden.Cases {
				ids, err := tok.Encode(c.Input, true)
				if err != nil || !slices.Equal(ids, c.IDs) {
					t.Errorf("%s: Encode(%q, true) = %v, %v; want %v", c.Name, c.Input, ids, err, c.IDs)
				}
				plain, err := tok.Encode(c.Input, false)
				if err != nil || !slices.Equal(plain, c.IDsNoAdded) {
					t.Errorf("%s: Encode(%q, false) = %v, %v; want %v", c.Name, c.Input, plain, err, c.IDsNoAdded)
				}
				if got, err := tok.Decode(c.IDs, false); err != nil || got != c.DecodedWith {
					t.Errorf("%s: Decode(ids, false) = %q, %v; want %q", c.Name, got, err, c.DecodedWith)
				}
				if got, err := tok.Decode(c.IDs, true); err != nil || got != c.DecodedSkip {
					t.Errorf("%s: Decode(ids, true) = %q, %v; want %q", c.Name, got, err, c.DecodedSkip)
				}
			}
		})
	}
}
