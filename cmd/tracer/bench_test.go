package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/bench"
	"tracer/engine/refdata"
)

func TestBenchUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"neither", []string{"bench"}, "exactly one of --model and --shape"},
		{"both", []string{"bench", "--model", "x", "--shape", "gpt2"}, "exactly one of --model and --shape"},
		{"unknown shape", []string{"bench", "--shape", "llama-70b"}, `unknown --shape "llama-70b" (want one of gpt2, llama-3.2-1b, qwen2.5-0.5b, smollm2-135m)`},
		{"unknown dtype", []string{"bench", "--shape", "gpt2", "--dtype", "int4"}, `unknown dtype "int4": tracer makes f32, bf16, f16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k`},
		{"dtype it cannot make", []string{"bench", "--shape", "llama-3.2-1b", "--dtype", "Q2_K"}, `dtype "Q2_K": tracer computes with q2_k weights a GGUF file holds but cannot make them; it makes f32, bf16`},
		{"dtype with model", []string{"bench", "--model", "x", "--dtype", "bf16"}, "--dtype goes with --shape"},
		{"write-gguf with model", []string{"bench", "--model", "x", "--write-gguf", "y.gguf"}, "--write-gguf goes with --shape"},
		{"few tokens", []string{"bench", "--shape", "gpt2", "--new-tokens", "1"}, "--new-tokens at least 2"},
		{"bad flag", []string{"bench", "--bogus"}, "flag provided but not defined"},
		{"argument", []string{"bench", "--shape", "gpt2", "extra"}, `unexpected argument "extra"`},
		{"llama-server with a shape", []string{"bench", "--shape", "gpt2", "--against-llama-server", "llama-server"}, "--against-llama-server goes with --model FILE.gguf"},
		{"llama-server with a checkpoint", []string{"bench", "--model", "x.bin", "--against-llama-server", "llama-server"}, "--against-llama-server goes with --model FILE.gguf"},
		{"llama-server with recording", []string{"bench", "--model", "x.gguf", "--against-llama-server", "llama-server", "--record"}, "leave out --record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := tracer(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, exitUsage, tt.want)
			}
		})
	}
}

func TestBenchHelp(t *testing.T) {
	out, _, code := tracer(t, "", "bench", "--help")
	if code != exitOK || !strings.Contains(out, "--shape") || !strings.Contains(out, "smollm2-135m") || !strings.Contains(out, "llama-3.2-1b") ||
		!strings.Contains(out, "qwen2.5-0.5b") || !strings.Contains(out, "q6_k") {
		t.Errorf("exit %d, help %q", code, out)
	}
}

// TestBenchModelJSON measures llama2.c's stories260K briefly and checks the
// report's shape; the figures themselves depend on the machine.
func TestBenchModelJSON(t *testing.T) {
	path := refdata.Need(t, "models/stories260K/stories260K.bin")
	out, errOut, code := tracer(t, "", "bench", "--model", path, "--threads", "2", "--prompt-len", "4",
		"--new-tokens", "6", "--reps", "2", "--record", "--probe-mib", "8", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if r.Model != "stories260K" || r.Threads != 2 || r.PromptLen != 4 || r.NewTokens != 6 || r.Reps != 2 {
		t.Errorf("report header: %+v", r)
	}
	if r.DecodeTokensPerSec.Median <= 0 || r.BandwidthLimitGBps <= 0 || r.BytesPerToken <= 0 || r.Record == nil || r.Record.Ratio <= 0 {
		t.Errorf("report figures: %+v", r)
	}
	if r.AllocsPerToken != 0 {
		t.Errorf("%v allocations per decoded token, want 0", r.AllocsPerToken)
	}
}

// TestBenchModelWithoutTokenizer benches Hugging Face folders that hold
// the weights and config.json but no usable tokenizer: bench never
// tokenizes, so it must not ask for one.
func TestBenchModelWithoutTokenizer(t *testing.T) {
	golden := refdata.Need(t, "golden/tiny-llama")
	for _, tc := range []struct {
		name  string
		extra map[string]string // more files in the folder
	}{
		{"weights and config only", nil},
		{"vocab.json without merges.txt", map[string]string{"vocab.json": `{"a": 0}`}},
		{"a broken tokenizer.json", map[string]string{"tokenizer.json": `{"model":`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"config.json", "model.safetensors"} {
				data, err := os.ReadFile(filepath.Join(golden, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for name, text := range tc.extra {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, errOut, code := tracer(t, "", "bench", "--model", dir, "--threads", "1", "--prompt-len", "4",
				"--new-tokens", "3", "--reps", "1", "--probe-mib", "8", "--json")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var r bench.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil || r.NewTokens != 3 || r.DecodeTokensPerSec.Median <= 0 {
				t.Errorf("report %+v, %v; want 3 new tokens measured", r, err)
			}
		})
	}
}

// TestBenchQuantizedGGUF writes SmolLM2-135M-shaped random GGUF files and
// measures them briefly, from the file (--model) and built in memory
// (--shape --dtype): the report counts the real bytes of the weights (Q4_0
// 18 bytes per 32 weights, its embedding Q8_0), not a float32 copy.
func TestBenchQuantizedGGUF(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "smol-q4_0.gguf")
	if _, errOut, code := tracer(t, "", "bench", "--shape", "smollm2-135m", "--dtype", "q4_0", "--write-gguf", file); code != exitOK {
		t.Fatalf("--write-gguf: exit %d: %s", code, errOut)
	}
	if _, errOut, code := tracer(t, "", "bench", "--shape", "gpt2", "--dtype", "q8_0", "--write-gguf", filepath.Join(dir, "gpt2.gguf")); code != exitError || !strings.Contains(errOut, "want llama") {
		t.Errorf("gpt2 shape as GGUF: exit %d, stderr %q; want exit %d and an error naming the architecture", code, errOut, exitError)
	}
	cases := []struct {
		name  string
		args  []string
		dtype string
		bytes int64 // of the weights
	}{
		{"q4_0 file", []string{"--model", file}, "q4_0", 89_941_248},
		{"q8_0 in memory", []string{"--shape", "smollm2-135m", "--dtype", "q8_0"}, "q8_0", 143_025_408},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"bench"}, c.args...)
			args = append(args, "--threads", "1", "--prompt-len", "2", "--new-tokens", "3", "--reps", "1", "--probe-mib", "8", "--json")
			out, errOut, code := tracer(t, "", args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var r bench.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v in %q", err, out)
			}
			if r.DType != c.dtype || r.WeightBytes != c.bytes {
				t.Errorf("got dtype %s, %d weight bytes; want %s, %d", r.DType, r.WeightBytes, c.dtype, c.bytes)
			}
			// A step reads every weight once (the tied head too) and a
			// little KV cache.
			if r.BytesPerToken < c.bytes || r.BytesPerToken > c.bytes+c.bytes/100 || r.BandwidthFraction <= 0 {
				t.Errorf("got %d bytes per token, fraction %v; want about %d and above 0", r.BytesPerToken, r.BandwidthFraction, c.bytes)
			}
		})
	}
}

// TestBenchKQuantGGUF writes SmolLM2-135M's shape at q4_k as a GGUF file
// (--write-gguf) and reads it back as every command does: tracer run
// generates from it, and tracer bench --model reports its weight types,
// llama-quantize's: q4_k for ffn_down (rows of 1536), its fallback q5_0
// for the rows of 576, q8_0 for the tied head, f32 norms.
func TestBenchKQuantGGUF(t *testing.T) {
	file := filepath.Join(t.TempDir(), "smol-q4_k.gguf")
	if _, errOut, code := tracer(t, "", "bench", "--shape", "smollm2-135m", "--dtype", "q4_k", "--write-gguf", file); code != exitOK {
		t.Fatalf("--write-gguf: exit %d: %s", code, errOut)
	}
	if out, errOut, code := tracer(t, "", "run", "--model", file, "--prompt-ids", "1,300,301", "--max-new-tokens", "2"); code != exitOK || out == "" {
		t.Errorf("tracer run --model %s: exit %d, %q, stderr %s", file, code, out, errOut)
	}
	out, errOut, code := tracer(t, "", "bench", "--model", file, "--threads", "1", "--prompt-len", "2", "--new-tokens", "3", "--reps", "1", "--probe-mib", "8", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	want := map[string]int64{"q4_k": 14_929_920, "q5_0": 54_743_040, "q8_0": 30_081_024, "f32": 140_544}
	if fmt.Sprint(r.WeightTypes) != fmt.Sprint(want) || r.WeightBytes != 99_894_528 || r.DType != "q5_0" {
		t.Errorf("weights %s, %d bytes, types %v; want q5_0 (the most bytes), 99894528, %v", r.DType, r.WeightBytes, r.WeightTypes, want)
	}
}

// TestBenchClassJSON runs a small class with the real binary (which starts
// its own tracer serve --classroom): two followers through two moves, and
// two students' bf16 runs (a Hugging Face folder), one alone first. The
// figures depend on the machine; the report says every page followed and
// every run ended.
func TestBenchClassJSON(t *testing.T) {
	out, errOut, code := tracer(t, "", "bench", "--shape", "smollm2-135m", "--dtype", "bf16", "--class", "2", "--students", "2",
		"--moves", "2", "--every", "50ms", "--steps", "3", "--new-tokens", "3", "--json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var r struct {
		Followers, Students, Missed, Wrong int
		RunsFailed                         int     `json:"runs_failed"`
		Positions                          int     `json:"positions"`
		TokensPerSec                       float64 `json:"tokens_per_sec"`
		Alone                              float64 `json:"alone_tokens_per_sec"`
		Speedup                            float64 `json:"speedup"`
		DType                              string  `json:"dtype"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Followers != 2 || r.Students != 2 || r.Missed != 0 || r.Wrong != 0 || r.RunsFailed != 0 || r.DType != "bf16" || r.Positions < 3 ||
		!(r.TokensPerSec > 0 && r.Alone > 0 && r.Speedup > 0) {
		t.Errorf("report %+v (%s)", r, out)
	}
}

// TestBenchAgainstLlamaServer runs tracer bench with the real llama-server
// of ../shared beside it on a quant-zoo file: the report holds the
// server's build, its own prefill and decode rates (from its timings) and
// tracer's over them, one a repetition; the figures depend on the machine.
// A server that cannot start is a clear error, not a hang.
func TestBenchAgainstLlamaServer(t *testing.T) {
	bin := refdata.Need(t, "tools/llama-server/llama-server")
	model := refdata.Need(t, "models/quant-zoo/k256/model-q8_0.gguf")
	out, errOut, code := tracer(t, "", "bench", "--model", model, "--against-llama-server", bin, "--threads", "1",
		"--prompt-len", "8", "--new-tokens", "8", "--reps", "2", "--probe-mib", "8", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	p := r.Peer
	if p == nil || !strings.HasPrefix(p.Name, "llama-server b") {
		t.Fatalf("peer %+v, want llama-server and its build", p)
	}
	if p.PrefillTokensPerSec.Min <= 0 || p.DecodeTokensPerSec.Min <= 0 || p.PrefillRatio.Min <= 0 || p.DecodeRatio.Min <= 0 {
		t.Errorf("peer figures %+v, want positive rates and ratios", p)
	}
	// Each repetition's ratio is tracer's rate over llama.cpp's in that
	// repetition, so the ratios lie between the slowest tracer over the
	// fastest llama.cpp and the fastest over the slowest (a ratio taken
	// the other way round, or from other runs, falls outside).
	for _, c := range []struct {
		what         string
		ratio        bench.Stat
		tracer, peer bench.Stat
	}{{"prefill", p.PrefillRatio, r.PrefillTokensPerSec, p.PrefillTokensPerSec}, {"decode", p.DecodeRatio, r.DecodeTokensPerSec, p.DecodeTokensPerSec}} {
		lo, hi := c.tracer.Min/c.peer.Max, c.tracer.Max/c.peer.Min
		if c.ratio.Min < lo*(1-1e-9) || c.ratio.Max > hi*(1+1e-9) {
			t.Errorf("%s ratios %+v outside [%v, %v], the bounds the rates %+v and %+v give", c.what, c.ratio, lo, hi, c.tracer, c.peer)
		}
	}

	_, errOut, code = tracer(t, "", "bench", "--model", model, "--against-llama-server", filepath.Join(t.TempDir(), "no-such-server"), "--reps", "1", "--probe-mib", "8")
	if code != exitError || !strings.Contains(errOut, "--against-llama-server: start") {
		t.Errorf("a missing server binary: exit %d, stderr %q", code, errOut)
	}
}
