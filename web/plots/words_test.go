package plots_test

import (
	"reflect"
	"strings"
	"testing"

	"tracer/trace"
	"tracer/web/plots"
)

// whitespaceStep is one step whose candidates are whitespace tokens.
func whitespaceStep() *trace.Trace {
	return &trace.Trace{Format: trace.Format, Steps: []trace.Step{{Rows: []trace.StepRow{{
		Candidates: []trace.Candidate{{ID: 1, Token: " the", Prob: 0.5}, {ID: 2, Token: "\n", Prob: 0.3}, {ID: 3, Token: "\t", Prob: 0.2}},
		Final:      &trace.Final{KeptCount: 3, IDs: []int{1, 2, 3}, Probs: []float64{0.5, 0.3, 0.2}},
		Chosen:     trace.Chosen{ID: 1, Token: " the", Prob: 0.5, Rank: 1, By: trace.ByGreedy},
	}}}}}
}

// TestSVGMarksWhitespaceAsThePage: the SVG's token labels use the page's
// marks (␣ ⏎ →), not the PNG's own (· ¶), nor escapes.
func TestSVGMarksWhitespaceAsThePage(t *testing.T) {
	svg, err := plots.Render(plots.Candidates, []*trace.Trace{whitespaceStep()}, 0, plots.SVG, plots.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := svgText(t, svg)
	for _, want := range []string{"␣the", "⏎", "→", `chose "␣the"`} {
		if !strings.Contains(text, want) {
			t.Errorf("svg text lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"·the", `\n`, `\t`, "¶"} {
		if strings.Contains(text, bad) {
			t.Errorf("svg text has %q, want the page's marks:\n%s", bad, text)
		}
	}
	if !strings.Contains(string(svg), "'tracer mono','tracer',Cousine") {
		t.Errorf("the svg's token font does not fall back to the page's shipped faces")
	}
}

// hindi is a Words with every field in Devanagari (and its placeholders).
func hindi() plots.Words {
	w := plots.Words{}
	en := plots.English()
	v, e := reflect.ValueOf(&w).Elem(), reflect.ValueOf(en)
	for i := range v.NumField() {
		var ph []string
		for _, f := range strings.Split(e.Field(i).String(), "{")[1:] {
			ph = append(ph, "{"+f[:strings.Index(f, "}")+1])
		}
		v.Field(i).SetString("शब्द" + strings.Join(ph, " "))
	}
	return w
}

// TestRenderWords: every chart draws the words it is given and none of
// the English ones; the PNG, whose font has no Devanagari, keeps English
// (tested through its size: the same as the English chart's).
func TestRenderWords(t *testing.T) {
	words := hindi()
	var english []string
	en := plots.English()
	e := reflect.ValueOf(en)
	for i := range e.NumField() {
		for _, f := range strings.FieldsFunc(e.Field(i).String(), func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) {
			switch f {
			case "n", "total", "token", "how", "by", "p", "rank", "h", "unit", "bytes", "positions", "phase", "flops", "ms", "nats", "KV":
				continue // placeholders, and what the chart writes in every language
			}
			english = append(english, f)
		}
	}
	for _, c := range chartCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got, err := plots.Render(c.chart, c.runs, c.step, plots.SVG, plots.Options{Words: words})
			if err != nil {
				t.Fatal(err)
			}
			text := svgText(t, got)
			if !strings.Contains(text, "शब्द") {
				t.Errorf("svg text lacks the given words:\n%s", text)
			}
			for _, w := range english {
				for _, f := range strings.Fields(text) {
					if strings.Trim(f, `"(),:.`) == w {
						t.Errorf("svg text has the English word %q:\n%s", w, text)
					}
				}
			}
			png, err := plots.Render(c.chart, c.runs, c.step, plots.PNG, plots.Options{Words: words})
			if err != nil {
				t.Fatal(err)
			}
			enPNG, err := plots.Render(c.chart, c.runs, c.step, plots.PNG, plots.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if string(png) != string(enPNG) {
				t.Errorf("the png with Devanagari words differs from the English one: want English, which its font draws")
			}
		})
	}
}
