package plots_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"tracer/trace"
	"tracer/web/plots"
)

// svgGeometry is what the size tests read from a chart: how many CSS px one
// user unit of its viewBox is at the chart's own size, each text's font
// size in user units, and the text itself.
type svgGeometry struct {
	pxPerUnit float64
	widthPx   float64
	heightPx  float64
	sizes     []float64
	texts     []string
}

// readGeometry parses a chart's <svg width="480pt" viewBox="0 0 480 …">
// and the font-size of each <text>.
func readGeometry(t *testing.T, doc []byte) svgGeometry {
	t.Helper()
	var g svgGeometry
	d := xml.NewDecoder(bytes.NewReader(doc))
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return g
		}
		if err != nil {
			t.Fatalf("svg does not parse: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch e.Name.Local {
			case "svg":
				w := ptToPx(t, attr["width"])
				g.heightPx = ptToPx(t, attr["height"])
				vb := strings.Fields(attr["viewBox"])
				if len(vb) != 4 {
					t.Fatalf("viewBox %q, want four numbers", attr["viewBox"])
				}
				vw, err := strconv.ParseFloat(vb[2], 64)
				if err != nil || vw <= 0 {
					t.Fatalf("viewBox %q: %v", attr["viewBox"], err)
				}
				g.pxPerUnit, g.widthPx = w/vw, w
			case "text":
				inText = true
				_, rest, ok := strings.Cut(attr["style"], "font-size:")
				if !ok {
					t.Fatalf("text with style %q has no font-size", attr["style"])
				}
				v, _, _ := strings.Cut(rest, "px")
				size, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("font-size %q: %v", v, err)
				}
				g.sizes = append(g.sizes, size)
			}
		case xml.CharData:
			if inText {
				g.texts = append(g.texts, string(e))
			}
		case xml.EndElement:
			inText = false
		}
	}
}

// ptToPx reads "480pt" as CSS px.
func ptToPx(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "pt"), 64)
	if err != nil || !strings.HasSuffix(s, "pt") {
		t.Fatalf("svg size %q, want a length in pt", s)
	}
	return v * 4 / 3
}

// TestTextReadsAtMinScale renders every chart at the widths a page asks
// for and wants every text 11 CSS px or more when the chart is shown at
// MinScale of its size.
func TestTextReadsAtMinScale(t *testing.T) {
	const least = 11.0 // CSS px
	for _, c := range chartCases(t) {
		for _, w := range []int{320, 360, 640} {
			t.Run(fmt.Sprintf("%s %dpx", c.name, w), func(t *testing.T) {
				got, err := plots.Render(c.chart, c.runs, c.step, plots.SVG, plots.Options{Width: w})
				if err != nil {
					t.Fatal(err)
				}
				save(t, fmt.Sprintf("%s-%d.svg", strings.ReplaceAll(c.name, " ", "-"), w), got)
				g := readGeometry(t, got)
				if g.pxPerUnit <= 0 || len(g.sizes) == 0 {
					t.Fatalf("got %v px per unit and %d texts, want a sized chart with text", g.pxPerUnit, len(g.sizes))
				}
				for i, s := range g.sizes {
					if px := s * g.pxPerUnit * plots.MinScale; px < least {
						t.Errorf("text %q is %.1f px at scale %.2f, want at least %v", g.texts[i], px, plots.MinScale, least)
					}
				}
			})
		}
	}
}

// TestNarrowChartHeight wants a narrow chart's panels lower than at the
// default width, so that shown at a phone's width it is not a tall strip,
// and its height in proportion to its panels.
func TestNarrowChartHeight(t *testing.T) {
	on := handTrace(14, true)
	tests := []struct {
		chart plots.Chart
		width int
		want  float64 // px
	}{
		{plots.KV, 640, 320},
		{plots.KV, 320, 280},
		{plots.Cost, 640, 640},
		{plots.Cost, 320, 520},
		{plots.Cost, 480, 580},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %dpx", tt.chart, tt.width), func(t *testing.T) {
			got, err := plots.Render(tt.chart, []*trace.Trace{on}, 3, plots.SVG, plots.Options{Width: tt.width})
			if err != nil {
				t.Fatal(err)
			}
			if h := readGeometry(t, got).heightPx; h != tt.want {
				t.Errorf("got %v px high, want %v", h, tt.want)
			}
		})
	}
}

// TestTitleWraps wants a long title broken over two lines at a narrow
// width rather than cut.
func TestTitleWraps(t *testing.T) {
	on := handTrace(14, true)
	got, err := plots.Render(plots.Cost, []*trace.Trace{on}, 0, plots.SVG, plots.Options{Width: 320})
	if err != nil {
		t.Fatal(err)
	}
	texts := readGeometry(t, got).texts
	if len(texts) < 2 {
		t.Fatalf("got texts %q, want a title of two lines", texts)
	}
	title := texts[0] + " " + texts[1]
	if !strings.HasPrefix(title, "Step 1 of 14 (prefill): moved") || strings.Contains(title, "…") || !strings.Contains(title, "\u00a0ms") {
		t.Errorf("got title lines %q and %q, want the whole title over two lines", texts[0], texts[1])
	}
}

// FuzzRenderSize asks for any chart at any size and step: no panic, and
// either an error or a chart of exactly the asked width whose text reads at
// 11 px or more at MinScale.
func FuzzRenderSize(f *testing.F) {
	f.Add(uint8(0), 360, 0, 2)
	f.Add(uint8(3), 320, 0, 0)
	f.Add(uint8(1), 4096, 4096, 13)
	f.Add(uint8(2), 319, 100, -1)
	f.Add(uint8(3), 500, 250, 20)
	runs := []*trace.Trace{handTrace(14, true), handTrace(14, false)}
	f.Fuzz(func(t *testing.T, chart uint8, width, height, step int) {
		c := plots.Charts()[int(chart)%len(plots.Charts())]
		got, err := plots.Render(c, runs[:1+int(chart/4)%2], step, plots.SVG, plots.Options{Width: width, Height: height})
		if err != nil {
			return
		}
		g := readGeometry(t, got)
		if width != 0 && math.Abs(g.widthPx-float64(width)) > 0.01 {
			t.Errorf("%s: got a chart %v px wide, want %d", c, g.widthPx, width)
		}
		for i, s := range g.sizes {
			if px := s * g.pxPerUnit * plots.MinScale; px < 11 {
				t.Errorf("%s at %d×%d: text %q is %.1f px at MinScale, want 11 or more", c, width, height, g.texts[i], px)
			}
		}
	})
}
