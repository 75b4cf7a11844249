package main

import (
	"encoding/json"
	"strings"
	"testing"

	"tracer/engine/bench"
	"tracer/engine/refdata"
	"tracer/engine/tensor"
)

// TestInfoNamesKernels checks that tracer info names the matrix kernels
// this machine runs ("avx512", "avx2+fma" or "go"), in text and JSON.
func TestInfoNamesKernels(t *testing.T) {
	want := tensor.KernelName()
	t.Run("text", func(t *testing.T) {
		out, errOut, code := tracer(t, "", "info", "--model", "toy")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "kernels" {
				got = f[1]
			}
		}
		if got != want {
			t.Errorf("kernels line %q in %q, want %q", got, out, want)
		}
	})
	t.Run("json", func(t *testing.T) {
		out, errOut, code := tracer(t, "", "info", "--model", "toy", "--json")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var r struct {
			Kernels string `json:"kernels"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		if r.Kernels != want {
			t.Errorf("kernels %q, want %q", r.Kernels, want)
		}
	})
}

// TestBenchTwoNewTokens runs tracer bench with the fewest new tokens it
// accepts, 2, where there is no decode step left to count allocations on:
// --json once printed nothing and exited 0 (a NaN count the encoder
// refused, its error dropped). The report must parse, name the kernels in
// use and say the count is unknown (-1), and the table must say so too.
func TestBenchTwoNewTokens(t *testing.T) {
	path := refdata.Need(t, "models/stories260K/stories260K.bin")
	args := []string{"bench", "--model", path, "--threads", "1", "--prompt-len", "4",
		"--new-tokens", "2", "--reps", "1", "--probe-mib", "8"}
	t.Run("json", func(t *testing.T) {
		out, errOut, code := tracer(t, "", append(args, "--json")...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var r bench.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		if want := tensor.KernelName(); r.Kernels != want {
			t.Errorf("kernels %q, want %q", r.Kernels, want)
		}
		if r.AllocsPerToken != -1 {
			t.Errorf("allocs_per_token %v, want -1 (unknown)", r.AllocsPerToken)
		}
	})
	t.Run("text", func(t *testing.T) {
		out, errOut, code := tracer(t, "", args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if want := "not counted (needs --new-tokens 3 or more)"; !strings.Contains(out, want) {
			t.Errorf("table %q, want it to contain %q", out, want)
		}
	})
}
