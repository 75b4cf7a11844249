package web

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"tracer/trace"
)

// outputTextOf returns the text of a view's data-testid="output-text"
// element, tags stripped, and whether the element is there.
func outputTextOf(h string) (string, bool) {
	m := regexp.MustCompile(`(?s)data-testid="output-text">(.*?)</span></p>`).FindStringSubmatch(h)
	if m == nil {
		return "", false
	}
	return html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], "")), true
}

func TestVisibleToken(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "the", "the"},
		{"leading space", " the", "␣the"},
		{"sentencepiece space", "▁the", "␣the"},
		{"only a space", " ", "␣"},
		{"newline", "\n", "⏎"},
		{"crlf", "\r\n", "⏎⏎"},
		{"tab", "\tx", "→x"},
		{"gpt-2 marks stay", "Ġthe", "Ġthe"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := visibleToken(tc.in); got != tc.want {
				t.Errorf("visibleToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCompleteUTF8(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want int
	}{
		{"ascii", []byte("ab"), 2},
		{"whole character", []byte("é"), 2},
		{"first byte of two", []byte{'a', 0xc3}, 1},
		{"two bytes of three", []byte{0xe2, 0x80}, 0},
		{"three bytes of four", []byte{'x', 0xf0, 0x9f, 0x98}, 1},
		{"stray continuation", []byte{0x80}, 1},
		{"empty", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := completeUTF8(tc.in); got != tc.want {
				t.Errorf("completeUTF8(% x) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestTintBand(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{{0, "p0"}, {0.049, "p0"}, {0.05, "p1"}, {0.2, "p2"}, {0.5, "p3"}, {0.79, "p3"}, {0.8, "p4"}, {1, "p4"}} {
		if got := tintBand(tc.p); got != tc.want {
			t.Errorf("tintBand(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// TestRunOutputSoFar: the text grows with the steps, an imported trace reads
// its vocabulary strings, finished rows and EOS add nothing.
func TestRunOutputSoFar(t *testing.T) {
	step := func(id int, tok string, p float64, finished bool) trace.Step {
		return trace.Step{Rows: []trace.StepRow{{Finished: finished, Candidates: []trace.Candidate{{ID: id, Token: tok, Prob: p}, {ID: 99, Token: " x", Prob: 0.01}},
			Chosen: trace.Chosen{ID: id, Token: tok, Prob: p}}}}
	}
	tr := &trace.Trace{Model: trace.Model{Kind: "hf", EOS: []int{2}, BOS: 1, PAD: -1}, Prompt: trace.Prompt{Text: "Once"},
		Steps: []trace.Step{step(5, " upon", 0.9, false), step(6, " a", 0.3, false), step(2, "</s>", 0.7, false)}}
	r := &run{trace: tr}
	for _, tc := range []struct {
		name     string
		pos      int
		want     string
		wantTint []string
	}{
		{"first step", 0, " upon", []string{"p4"}},
		{"second step", 1, " upon a", []string{"p4", "p2"}},
		{"eos adds nothing", 2, " upon a", []string{"p4", "p2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := runOutput(r, tr.Steps, tc.pos, 0)
			var got strings.Builder
			var tints []string
			for _, k := range v.Tokens {
				got.WriteString(k.Text)
				tints = append(tints, k.Tint)
			}
			if got.String() != tc.want || strings.Join(tints, " ") != strings.Join(tc.wantTint, " ") || v.Prompt != "Once" {
				t.Errorf("got prompt %q text %q tints %v, want Once, %q, %v", v.Prompt, got.String(), tints, tc.want, tc.wantTint)
			}
			if last := v.Tokens[len(v.Tokens)-1]; len(last.Alts) != 2 || last.Alts[1].Token != "␣x" {
				t.Errorf("got alternatives %+v, want two with ␣x second", last.Alts)
			}
		})
	}
}
