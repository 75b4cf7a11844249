package plots_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"tracer/trace"
	"tracer/web/plots"
)

var (
	update = flag.Bool("update", false, "rewrite the golden files in testdata")
	outDir = flag.String("out", "", "also write every chart the tests render to this directory, to look at")
)

// save writes a rendered chart to -out, when given.
func save(t *testing.T, name string, b []byte) {
	t.Helper()
	if *outDir == "" {
		return
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*outDir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// svgText walks doc with encoding/xml, failing on any error, and returns
// the text of its elements, one per line.
func svgText(t *testing.T, doc []byte) string {
	t.Helper()
	var text strings.Builder
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return text.String()
		}
		if err != nil {
			t.Fatalf("svg does not parse as XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			text.Write(bytes.TrimSpace(cd))
			text.WriteByte('\n')
		}
	}
}

// chartCase is one chart of the rendering tests.
type chartCase struct {
	name  string
	chart plots.Chart
	runs  []*trace.Trace
	step  int
	want  []string // in the SVG (escaped as XML text)
}

func chartCases(t *testing.T) []chartCase {
	on, off := handTrace(14, true), handTrace(14, false)
	toy := toyTrace(t)
	return []chartCase{
		{"candidates", plots.Candidates, []*trace.Trace{on}, 4,
			[]string{"Ġthe", "␣a", "␣cat", "⏎", "→", `\u200b`, "日本", "<|endoftext", "supercalifra…",
				"raw p", "final p", "chosen", "removed", `Step 5 of 14: chose "␣a" (sampled, p 0.06, rank 2)`, "probability"}},
		{"candidates toy", plots.Candidates, []*trace.Trace{toy}, 1,
			[]string{"love", "eat", `Step 2 of 4: chose "love" (greedy, p 0.7, rank 1)`}},
		{"confidence", plots.Confidence, []*trace.Trace{on}, 3,
			[]string{"top-1 p (raw)", "chosen token", "entropy (nats)", "step 4", "Step 4 of 14: top-1 p"}},
		{"confidence compare", plots.Confidence, []*trace.Trace{toy, toyTrace(t)}, plots.NoStep,
			[]string{"run 1", "run 2", "Confidence over 4 steps"}},
		{"kv", plots.KV, []*trace.Trace{on}, 6,
			[]string{"KV cache (KiB)", "Step 7 of 14: KV cache 405.0\u00a0KiB for 18 positions"}},
		{"cost", plots.Cost, []*trace.Trace{on}, 0,
			[]string{"moved (MiB)", "compute (GFLOP)", "time (ms)", "prefill", "decode", "Step 1 of 14 (prefill)"}},
		{"cost cache on and off", plots.Cost, []*trace.Trace{on, off}, 13,
			[]string{"cache on", "cache off", "full (cache off)", "step 14"}},
	}
}

func TestRenderSVG(t *testing.T) {
	for _, c := range chartCases(t) {
		for _, dark := range []bool{false, true} {
			name := fmt.Sprintf("%s dark=%v", c.name, dark)
			t.Run(name, func(t *testing.T) {
				got, err := plots.Render(c.chart, c.runs, c.step, plots.SVG, plots.Options{Dark: dark})
				if err != nil {
					t.Fatal(err)
				}
				save(t, fileName(c.name, dark, "svg"), got)
				if !bytes.HasPrefix(got, []byte("<svg")) {
					t.Errorf("svg starts %q, want <svg (no prolog, to inline)", got[:min(len(got), 40)])
				}
				text := svgText(t, got)
				for _, w := range c.want {
					if !strings.Contains(text, w) {
						t.Errorf("svg text lacks %q", w)
					}
				}
				for _, bad := range []string{"<?xml", "<!DOCTYPE", "<script", "href=", "url(", "@font-face"} {
					if bytes.Contains(got, []byte(bad)) {
						t.Errorf("svg contains %q, want a self-contained element", bad)
					}
				}
				if len(got) > 200_000 {
					t.Errorf("svg is %d bytes, want it small enough to inline", len(got))
				}
			})
		}
	}
}

func TestRenderPNG(t *testing.T) {
	sizes := []struct{ w, h int }{{0, 0}, {500, 400}, {1200, 700}}
	for _, c := range chartCases(t) {
		for _, s := range sizes {
			t.Run(fmt.Sprintf("%s %dx%d", c.name, s.w, s.h), func(t *testing.T) {
				got, err := plots.Render(c.chart, c.runs, c.step, plots.PNG, plots.Options{Width: s.w, Height: s.h, Dark: s.w == 500})
				if err != nil {
					t.Fatal(err)
				}
				if s.w == 0 || s.w == 500 {
					save(t, fileName(c.name, s.w == 500, "png"), got)
				}
				if !bytes.HasPrefix(got, []byte("\x89PNG\r\n\x1a\n")) {
					t.Fatalf("output starts %q, want the PNG signature", got[:min(len(got), 8)])
				}
				img, err := png.Decode(bytes.NewReader(got))
				if err != nil {
					t.Fatal(err)
				}
				if s.w == 0 {
					return
				}
				if b := img.Bounds(); b.Dx() != s.w || b.Dy() != s.h {
					t.Errorf("png is %d×%d, want %d×%d", b.Dx(), b.Dy(), s.w, s.h)
				}
			})
		}
	}
}

func fileName(name string, dark bool, ext string) string {
	name = strings.ReplaceAll(name, " ", "-")
	if dark {
		name += "-dark"
	}
	return name + "." + ext
}

func TestRenderIsDeterministic(t *testing.T) {
	for _, c := range chartCases(t) {
		for _, f := range []plots.Format{plots.SVG, plots.PNG} {
			t.Run(c.name+" "+f.String(), func(t *testing.T) {
				a, err := plots.Render(c.chart, c.runs, c.step, f, plots.Options{})
				if err != nil {
					t.Fatal(err)
				}
				b, err := plots.Render(c.chart, c.runs, c.step, f, plots.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("two renders differ (%d and %d bytes), want the same bytes", len(a), len(b))
				}
			})
		}
	}
}

func TestRenderErrors(t *testing.T) {
	tr := handTrace(5, true)
	toy := toyTrace(t)
	empty := &trace.Trace{Format: trace.Format}
	noCands := handTrace(2, true)
	noCands.Steps[1].Rows = nil
	tests := []struct {
		name  string
		chart plots.Chart
		runs  []*trace.Trace
		step  int
		f     plots.Format
		opts  plots.Options
		want  error // nil: any error
	}{
		{"unknown chart", "pie", []*trace.Trace{tr}, 0, plots.SVG, plots.Options{}, plots.ErrUnknownChart},
		{"step past the end", plots.Candidates, []*trace.Trace{tr}, 5, plots.SVG, plots.Options{}, plots.ErrStep},
		{"negative step", plots.KV, []*trace.Trace{tr}, -2, plots.SVG, plots.Options{}, plots.ErrStep},
		{"candidates need a step", plots.Candidates, []*trace.Trace{tr}, plots.NoStep, plots.SVG, plots.Options{}, plots.ErrStep},
		{"step without candidates", plots.Candidates, []*trace.Trace{noCands}, 1, plots.SVG, plots.Options{}, plots.ErrNoData},
		{"toy keeps no KV cache", plots.KV, []*trace.Trace{toy}, 0, plots.SVG, plots.Options{}, plots.ErrNoData},
		{"toy moves no weights", plots.Cost, []*trace.Trace{toy}, 0, plots.PNG, plots.Options{}, plots.ErrNoData},
		{"no runs", plots.KV, nil, 0, plots.SVG, plots.Options{}, nil},
		{"nil overlay", plots.KV, []*trace.Trace{tr, nil}, 0, plots.SVG, plots.Options{}, nil},
		{"unknown format", plots.KV, []*trace.Trace{tr}, 0, plots.Format(7), plots.Options{}, nil},
		{"too narrow", plots.KV, []*trace.Trace{tr}, 0, plots.PNG, plots.Options{Width: 200}, nil},
		{"too low for three panels", plots.Cost, []*trace.Trace{tr}, 0, plots.PNG, plots.Options{Height: 399}, nil},
		{"negative height", plots.Cost, []*trace.Trace{tr}, 0, plots.SVG, plots.Options{Height: -1}, nil},
		{"too large", plots.KV, []*trace.Trace{tr}, 0, plots.PNG, plots.Options{Width: 100_000, Height: 300}, nil},
	}
	for _, c := range plots.Charts() {
		for _, step := range []int{0, plots.NoStep} {
			tests = append(tests, struct {
				name  string
				chart plots.Chart
				runs  []*trace.Trace
				step  int
				f     plots.Format
				opts  plots.Options
				want  error
			}{fmt.Sprintf("empty trace %s step %d", c, step), c, []*trace.Trace{empty}, step, plots.PNG, plots.Options{}, plots.ErrNoData})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plots.Render(tt.chart, tt.runs, tt.step, tt.f, tt.opts)
			if err == nil {
				t.Fatalf("got %d bytes and no error, want an error", len(got))
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("got error %q, want one wrapping %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "plots: ") {
				t.Errorf("error %q does not name the package", err)
			}
		})
	}
}

// TestOverlayWithoutData checks that an overlaid run lacking the data is left
// out, not an error: the main run decides.
func TestOverlayWithoutData(t *testing.T) {
	for _, c := range []plots.Chart{plots.KV, plots.Cost, plots.Confidence} {
		t.Run(string(c), func(t *testing.T) {
			_, err := plots.Render(c, []*trace.Trace{handTrace(4, true), toyTrace(t), {}}, 1, plots.SVG, plots.Options{})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNames(t *testing.T) {
	a, b := handTrace(3, true), handTrace(3, true)
	got, err := plots.Render(plots.KV, []*trace.Trace{a, b}, 0, plots.SVG, plots.Options{Names: []string{"greedy", "T=0.7\x00"}})
	if err != nil {
		t.Fatal(err)
	}
	text := svgText(t, got)
	for _, w := range []string{"greedy", `T=0.7\x00`} {
		if !strings.Contains(text, w) {
			t.Errorf("svg lacks the name %q", w)
		}
	}
}

func TestGoldenSVG(t *testing.T) {
	got, err := plots.Render(plots.Candidates, []*trace.Trace{handTrace(3, true)}, 2, plots.SVG, plots.Options{Width: 480, Height: 300})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "candidates.golden.svg")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("candidates chart differs from %s (%d bytes, want %d); if the change is meant, run go test -update and look at the file", path, len(got), len(want))
	}
}

func BenchmarkRenderCandidates(b *testing.B) {
	runs := []*trace.Trace{handTrace(20, true)}
	for _, f := range []plots.Format{plots.SVG, plots.PNG} {
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := plots.Render(plots.Candidates, runs, i%20, f, plots.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRenderSeries(b *testing.B) {
	for _, n := range []int{20, 200} {
		runs := []*trace.Trace{handTrace(n, true), handTrace(n, false)}
		for _, c := range []plots.Chart{plots.Confidence, plots.KV, plots.Cost} {
			for _, f := range []plots.Format{plots.SVG, plots.PNG} {
				b.Run(fmt.Sprintf("%s/steps=%d/%s", c, n, f), func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						if _, err := plots.Render(c, runs, i%n, f, plots.Options{}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// TestRenderOddTraces feeds traces a reader could produce, however odd,
// and wants a chart or an error, never a panic.
func TestRenderOddTraces(t *testing.T) {
	nan := handTrace(3, true)
	nan.Steps[1].Rows[0].Candidates[0].Prob = math.NaN()
	nan.Steps[1].Rows[0].Entropy = math.Inf(1)
	nan.Steps[1].Rows[0].Final.Probs[0] = -1
	nan.Steps[2].Rows[0].Final.Probs = nan.Steps[2].Rows[0].Final.Probs[:2] // fewer probs than ids

	huge := handTrace(3, true)
	huge.Steps[2].KV.Bytes = 1 << 60
	huge.Steps[2].Traffic.FLOPs = math.MaxInt64
	huge.Steps[1].ElapsedNS = -5

	gaps := handTrace(4, true)
	gaps.Steps[1].Rows = nil
	gaps.Steps[2].KV, gaps.Steps[2].Traffic = nil, nil

	noFinal := handTrace(2, false)
	noFinal.Steps[1].Rows[0].Final = nil
	noFinal.Steps[1].Rows[0].Chosen = trace.Chosen{ID: 77, By: trace.ByBeam}

	many := handTrace(1, true)
	for i := range 1000 {
		many.Steps[0].Rows[0].Candidates = append(many.Steps[0].Rows[0].Candidates, trace.Candidate{ID: 100 + i, Prob: 1e-9})
	}
	long := handTrace(1, true)
	long.Steps[0].Rows[0].Candidates[0].Token = strings.Repeat("\x00<&>\"", 200)

	for name, tr := range map[string]*trace.Trace{"nan": nan, "huge": huge, "gaps": gaps, "no final": noFinal, "many": many, "long": long} {
		for _, c := range plots.Charts() {
			for step := range tr.Steps {
				for _, f := range []plots.Format{plots.SVG, plots.PNG} {
					got, err := plots.Render(c, []*trace.Trace{tr}, step, f, plots.Options{Width: 320})
					if err != nil {
						if !errors.Is(err, plots.ErrNoData) {
							t.Errorf("%s %s step %d %s: %v, want a chart or ErrNoData", name, c, step, f, err)
						}
						continue
					}
					if f == plots.SVG {
						svgText(t, got)
					}
				}
			}
		}
	}
}

// TestRenderConcurrently renders from several goroutines, as the server
// does; run it with -race.
func TestRenderConcurrently(t *testing.T) {
	runs := []*trace.Trace{handTrace(8, true), handTrace(8, false)}
	want, err := plots.Render(plots.Candidates, runs, 2, plots.PNG, plots.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			c := plots.Charts()[i%4]
			f := plots.Format(i / 4 % 2)
			got, err := plots.Render(c, runs, 2, f, plots.Options{Dark: i%3 == 0})
			if err != nil {
				errs <- err
				return
			}
			if c == plots.Candidates && f == plots.PNG && i%3 != 0 && !bytes.Equal(got, want) {
				errs <- fmt.Errorf("render %d differs from the first", i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
