package runs

import "testing"

// TestFunnelKeptShare wants the funnel's bars linear in the kept count: "8
// of 512" is 1.6 % of the bar, not a third of it as on the old log scale.
func TestFunnelKeptShare(t *testing.T) {
	tests := []struct {
		name        string
		kept, vocab int
		want        string
	}{
		{"all kept", 512, 512, "100.000%"},
		{"top-k 8 of 512", 8, 512, "1.562%"},
		{"top-k 50 of gpt-2's vocabulary", 50, 50257, "0.099%"},
		{"one token", 1, 512, "0.195%"},
		{"none", 0, 512, "0%"},
		{"more than the vocabulary", 600, 512, "100.000%"},
		{"no vocabulary size", 8, 0, "0%"},
		{"negative count", -3, 512, "0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keptShare(tt.kept, tt.vocab); got != tt.want {
				t.Errorf("keptShare(%d, %d) = %q, want %q", tt.kept, tt.vocab, got, tt.want)
			}
		})
	}
}
