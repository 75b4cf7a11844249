package main

import (
	"bytes"
	"strings"
	"testing"

	"tracer/engine/refdata"
	"tracer/trace"
)

// maxStepBytes bounds a recorded step of a single row at top 20. Written
// indented with 17 significant digits per probability a step took about
// 4.1 KB; one step per line, with the float32 probabilities of the final
// distribution and the chosen token at float32 precision, it takes about
// 2.25 KB. Most of the rest is the schema's names and the candidates'
// float64 probabilities.
const maxStepBytes = 2300

// TestTraceBytesPerStep runs stories260K for 256 steps recording the top 20
// candidates and checks the trace's bytes per step, and that the trace
// reads back with a step per line.
func TestTraceBytesPerStep(t *testing.T) {
	bin := refdata.Need(t, "models/stories260K/stories260K.bin")
	out, errOut, code := tracer(t, "", "run", "--model", bin, "--max-new-tokens", "256", "--record-top", "20", "--json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	tr, err := trace.Read(strings.NewReader(out), trace.DefaultMaxSize)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != 256 {
		t.Fatalf("got %d steps, want 256", len(tr.Steps))
	}
	got := len(out) / len(tr.Steps)
	t.Logf("%d bytes per step (%d bytes, %d steps)", got, len(out), len(tr.Steps))
	if got > maxStepBytes {
		t.Errorf("got %d bytes per step, want at most %d", got, maxStepBytes)
	}
	if lines := bytes.Count([]byte(out), []byte(`{"index":`)); lines != 256 || !strings.Contains(out, "\n  {\"index\":255,") {
		t.Errorf("got %d steps written compact, want 256, one per line", lines)
	}
}
