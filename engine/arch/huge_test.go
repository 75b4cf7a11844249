package arch

import "testing"

// TestCopyWorthIt: the copy is made only with transparent huge pages on
// request and at most half of the available memory.
func TestCopyWorthIt(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		thp   string
		avail int64
		want  bool
	}{
		{"madvise", 100 << 20, "madvise", 1 << 30, true},
		{"always", 100 << 20, "always", 1 << 30, true},
		{"never", 100 << 20, "never", 1 << 30, false},
		{"no THP in the kernel", 100 << 20, "", 1 << 30, false},
		{"half the memory", 512 << 20, "madvise", 1 << 30, true},
		{"over half the memory", 512<<20 + 1, "madvise", 1 << 30, false},
		{"memory unknown", 1 << 20, "madvise", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := copyWorthIt(c.n, c.thp, c.avail); got != c.want {
				t.Errorf("copyWorthIt(%d, %q, %d): got %v, want %v", c.n, c.thp, c.avail, got, c.want)
			}
		})
	}
}
