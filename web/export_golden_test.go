package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/refdata"
	"tracer/trace"
	"tracer/web/export"
)

// exportGoldens are the one-file exports TestExportIsByteIdentical checks,
// by name: fixed traces (testdata/export/) in each language, with and
// without charts, alone and compared.
var exportGoldens = []struct {
	name   string
	traces []string // testdata/export/ files, each a run
	opts   export.Options
}{
	{"sampled-en", []string{"sampled.json"}, export.Options{Lang: "en", Source: "sampled.json"}},
	{"sampled-hi", []string{"sampled.json"}, export.Options{Lang: "hi", Source: "sampled.json"}},
	{"sampled-en-nocharts", []string{"sampled.json"}, export.Options{Lang: "en", NoCharts: true}},
	{"toy-en", []string{"toy.json"}, export.Options{Lang: "en"}},
	{"compare-hi", []string{"sampled.json", "toy.json"}, export.Options{Lang: "hi"}},
}

// TestExportIsByteIdentical exports fixed traces and requires the very
// bytes exported before web/ was split into packages (the SHA-256 of each
// file in testdata/export/golden.txt): moving code must change nothing in
// an exported file. A changed file is written to the test's temporary
// folder for diffing; TRACER_UPDATE_EXPORT_GOLDEN=1 rewrites golden.txt,
// for a change of the export that is meant.
func TestExportIsByteIdentical(t *testing.T) {
	goldenPath := refdata.Need(t, "export/golden.txt")
	raw, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			want[f[0]] = f[1]
		}
	}
	var got strings.Builder
	for _, g := range exportGoldens {
		var runs []export.Run
		for i, name := range g.traces {
			f, err := os.Open(refdata.Need(t, "export/"+name))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := trace.Read(f, 1<<20)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, export.Run{Trace: tr, Label: fmt.Sprintf("run %d", i+1)})
		}
		var b bytes.Buffer
		if err := export.HTML(context.Background(), &b, runs, g.opts); err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		sum := sha256.Sum256(b.Bytes())
		h := hex.EncodeToString(sum[:])
		fmt.Fprintf(&got, "%s %s\n", g.name, h)
		if want[g.name] != h {
			out := filepath.Join(t.TempDir(), g.name+".html")
			os.WriteFile(out, b.Bytes(), 0o644)
			t.Errorf("%s: the export changed (sha256 %s, golden %s); it is in %s", g.name, h, want[g.name], out)
		}
	}
	if os.Getenv("TRACER_UPDATE_EXPORT_GOLDEN") == "1" {
		if err := os.WriteFile(goldenPath, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
