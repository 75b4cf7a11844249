package main

import (
	le "encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracer/engine/safetensors"
	"tracer/trace"
)

// TestRobustSamplingLimits runs settings whose arithmetic used to overflow
// to ±Inf and NaN and panic in the pick (index -1). A temperature tending
// to 0 samples greedily, so the toy says what greedy decoding says.
func TestRobustSamplingLimits(t *testing.T) {
	greedy, _, code := tracer(t, "", "run", "--model", "toy")
	if code != 0 {
		t.Fatalf("greedy run: exit %d", code)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		wantGreedy bool
	}{
		{"temperature 1e-45", []string{"--temperature", "1e-45"}, true},
		{"temperature 1e-300", []string{"--temperature", "1e-300"}, true},
		{"temperature 5e-324", []string{"--temperature", "5e-324"}, true},
		{"temperature 1e30", []string{"--temperature", "1e30"}, false},
		{"repetition penalty 1e-300", []string{"--repetition-penalty", "1e-300"}, false},
		{"repetition penalty 1e300", []string{"--repetition-penalty", "1e300"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--model", "toy", "--do-sample", "--seed", "3"}, tc.args...)
			out, errOut, code := tracer(t, "", args...)
			if code != 0 || strings.Contains(errOut, "panic") {
				t.Fatalf("exit %d, stderr %q; want a run", code, errOut)
			}
			if tc.wantGreedy && out != greedy {
				t.Errorf("got %q, want greedy decoding's %q", out, greedy)
			}
			js, errOut, code := tracer(t, "", append(args, "--json")...)
			if code != 0 {
				t.Fatalf("--json: exit %d, stderr %q", code, errOut)
			}
			if _, err := trace.Decode([]byte(js)); err != nil {
				t.Errorf("--json wrote a trace that does not read back: %v", err)
			}
		})
	}
}

// writeNaNModel writes a tiny Llama model (2 layers, vocab 32, hidden 16)
// into a new folder, with a NaN in one weight of layer nanLayer's MLP.
func writeNaNModel(t *testing.T, nanLayer int) string {
	t.Helper()
	const vocab, hidden, layers, heads, ffn = 32, 16, 2, 4, 24
	dir := t.TempDir()
	cfg := map[string]any{
		"architectures": []string{"LlamaForCausalLM"}, "model_type": "llama",
		"vocab_size": vocab, "hidden_size": hidden, "num_hidden_layers": layers,
		"num_attention_heads": heads, "num_key_value_heads": heads, "intermediate_size": ffn,
		"max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
		"hidden_act": "silu", "tie_word_embeddings": true, "bos_token_id": 1, "eos_token_id": 2,
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var ts []safetensors.Tensor
	add := func(name string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			v := float32(r.NormFloat64() / math.Sqrt(float64(shape[len(shape)-1])))
			if len(shape) == 1 {
				v = 1 // norm weights
			}
			le.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		ts = append(ts, safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: data})
	}
	add("model.embed_tokens.weight", vocab, hidden)
	for l := 0; l < layers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", hidden)
		add(p+"self_attn.q_proj.weight", hidden, hidden)
		add(p+"self_attn.k_proj.weight", hidden, hidden)
		add(p+"self_attn.v_proj.weight", hidden, hidden)
		add(p+"self_attn.o_proj.weight", hidden, hidden)
		add(p+"post_attention_layernorm.weight", hidden)
		add(p+"mlp.gate_proj.weight", ffn, hidden)
		add(p+"mlp.up_proj.weight", ffn, hidden)
		add(p+"mlp.down_proj.weight", hidden, ffn)
		if l == nanLayer {
			le.LittleEndian.PutUint32(ts[len(ts)-1].Data[4*5:], math.Float32bits(float32(math.NaN())))
		}
	}
	add("model.norm.weight", hidden)
	f, err := os.Create(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := safetensors.Write(f, ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRobustNaNWeights: a model with a NaN in layer 1's weights stops
// greedy decoding, sampling and beam search with stop reason nan, naming
// layer 1; without --json it says so and fails, with --json it writes the
// trace.
func TestRobustNaNWeights(t *testing.T) {
	dir := writeNaNModel(t, 1)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"greedy", nil},
		{"sample", []string{"--do-sample", "--temperature", "0.7"}},
		{"beam", []string{"--num-beams", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--model", dir, "--prompt-ids", "1,5,9", "--max-new-tokens", "4"}, tc.args...)
			out, errOut, code := tracer(t, "", args...)
			if code != 1 || !strings.Contains(errOut, "stop reason nan") || !strings.Contains(errOut, "layer 1") {
				t.Errorf("text: exit %d, stdout %q, stderr %q; want exit 1 and a message naming layer 1 and stop reason nan", code, out, errOut)
			}
			js, errOut, code := tracer(t, "", append(args, "--json")...)
			if code != 0 {
				t.Fatalf("--json: exit %d, stderr %q; want the trace written", code, errOut)
			}
			tr, err := trace.Decode([]byte(js))
			if err != nil {
				t.Fatalf("--json wrote a trace that does not read back: %v", err)
			}
			want := trace.NaN{Step: 0, Row: 0, Where: trace.NaNLayer, Layer: 1}
			if tr.Output.StopReason != trace.StopNaN || tr.Output.NaN == nil || *tr.Output.NaN != want {
				t.Errorf("--json: got stop %q, nan %+v; want stop nan, nan %+v", tr.Output.StopReason, tr.Output.NaN, want)
			}
		})
	}
}

// TestRecordTopHuge asks for more recorded candidates than any vocabulary
// has: the list holds the vocabulary, and nothing is sized from the request.
func TestRecordTopHuge(t *testing.T) {
	out, errOut, code := tracer(t, "", "run", "--model", "toy", "--record-top", "1000000000000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"final"`) {
		t.Errorf("the trace has no final candidates: %.200s", out)
	}
}

// TestRunHasTheServersLimits: tracer run holds a run to the limits serve
// holds a page's to (sequences at once, memory by estimate), with an
// error naming the flag that raises them, instead of dying out of memory.
func TestRunHasTheServersLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"beams", []string{"--num-beams", "100000"}, "--max-rows-beams"},
		{"return sequences", []string{"--num-return-sequences", "100000", "--do-sample"}, "--max-rows-beams"},
		{"new tokens", []string{"--max-new-tokens", "100000000"}, "--max-run-mib"},
		{"memory raised, beams not", []string{"--num-beams", "100", "--max-run-mib", "100000"}, "--max-rows-beams"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := tracer(t, "", append([]string{"run", "--model", "toy"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.says) || strings.Contains(errOut, "panic") {
				t.Errorf("exit %d, stderr %q; want exit %d naming %s", code, errOut, exitUsage, tc.says)
			}
		})
	}
	if out, errOut, code := tracer(t, "", "run", "--model", "toy", "--num-beams", "3", "--max-rows-beams", "3"); code != 0 || out == "" {
		t.Errorf("three beams within --max-rows-beams 3: exit %d, stderr %q", code, errOut)
	}
}

// TestNotRegularFilesAreRefused: a named pipe or a device given as a
// trace is refused before it is read (a pipe would block, /dev/zero never
// end).
func TestNotRegularFilesAreRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "trace.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, says string }{{fifo, "a named pipe"}, {"/dev/zero", "a device"}} {
		for _, cmd := range [][]string{{"validate"}, {"export", "--html"}} {
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, errOut, code := tracer(t, "", append(cmd, tc.path)...)
				if code != exitError || !strings.Contains(errOut, tc.says) {
					t.Errorf("tracer %s %s: exit %d, stderr %q; want exit %d saying %q", cmd, tc.path, code, errOut, exitError, tc.says)
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("tracer %s %s still runs after 20 s", cmd, tc.path)
			}
		}
	}
}

// TestSecondInterruptEnds: the first Ctrl-C asks a command to stop; one
// blocked where it cannot notice (reading a stdin that never ends) ends at
// the second.
func TestSecondInterruptEnds(t *testing.T) {
	cmd := exec.Command(binary, "validate", "-")
	w, err := cmd.StdinPipe() // never written, never closed
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(300 * time.Millisecond) // let it block on stdin
	for i := range 2 {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
			return
		case <-time.After(2 * time.Second):
			if i == 1 {
				cmd.Process.Kill()
				t.Fatal("tracer validate - still runs after two interrupts")
			}
		}
	}
}

// TestExportBoundsBranches: a trace of 2,000 branches (180 KB) is refused
// by tracer export at once, naming --max-branches, instead of rendering
// every branch's positions with the whole tree (49 s and 755 MB); within
// the flag it exports.
func TestExportBoundsBranches(t *testing.T) {
	tr, err := trace.Decode([]byte(mustToy(t)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		tr.Branches = append(tr.Branches, trace.Branch{ID: i + 1, Steps: []trace.Step{}, Output: trace.Output{StopReason: trace.StopCancelled}})
	}
	path := filepath.Join(t.TempDir(), "branches.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Write(f, tr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, errOut, code := tracer(t, "", "export", "--html", path, "-o", filepath.Join(t.TempDir(), "out.html"))
	if code != exitError || !strings.Contains(errOut, "--max-branches") {
		t.Errorf("exit %d, stderr %q; want exit %d naming --max-branches", code, errOut, exitError)
	}
	tr.Branches = tr.Branches[:3]
	f, _ = os.Create(path)
	trace.Write(f, tr)
	f.Close()
	if _, errOut, code := tracer(t, "", "export", "--html", path, "-o", filepath.Join(t.TempDir(), "out.html")); code != 0 {
		t.Errorf("three branches: exit %d, stderr %q", code, errOut)
	}
}

// mustToy is the toy's greedy trace as tracer run --json writes it.
func mustToy(t *testing.T) string {
	t.Helper()
	out, errOut, code := tracer(t, "", "run", "--model", "toy", "--json")
	if code != 0 {
		t.Fatalf("tracer run: exit %d, %s", code, errOut)
	}
	return out
}
