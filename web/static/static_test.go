package static

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestEveryAssetIsEmbedded checks that FS holds every file of the folder
// but the Go sources: an asset of a kind the embed patterns do not name
// would be missing from the binary, and the page would not find it.
func TestEveryAssetIsEmbedded(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".go") {
			want = append(want, e.Name())
		}
	}
	embedded, err := fs.ReadDir(FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range embedded {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("embedded %q, want every asset of the folder %q", got, want)
	}
}
