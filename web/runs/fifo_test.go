package runs

import (
	"slices"
	"testing"
)

func TestFIFOCacheDropsTheOldest(t *testing.T) {
	tests := []struct {
		name string
		puts []string
		want []string // the keys kept, oldest first
	}{
		{"under the bound", []string{"a", "b"}, []string{"a", "b"}},
		{"at the bound", []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"past the bound", []string{"a", "b", "c", "d", "e"}, []string{"c", "d", "e"}},
		{"a key put again keeps its place", []string{"a", "b", "a", "c", "d"}, []string{"b", "c", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewFIFO[int](3)
			for i, k := range tt.puts {
				c.Put(k, i)
			}
			var kept []string
			for _, k := range []string{"a", "b", "c", "d", "e"} {
				if _, ok := c.Get(k); ok {
					kept = append(kept, k)
				}
			}
			if !slices.Equal(c.order, tt.want) || !slices.Equal(kept, slices.Sorted(slices.Values(tt.want))) {
				t.Errorf("after %v: order %v, kept %v; want %v", tt.puts, c.order, kept, tt.want)
			}
			if v, ok := c.Get(tt.puts[len(tt.puts)-1]); !ok || v != len(tt.puts)-1 {
				t.Errorf("get(%q) = %d, %v; want %d, true", tt.puts[len(tt.puts)-1], v, ok, len(tt.puts)-1)
			}
		})
	}
}
