package arch

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"tracer/engine"
	"tracer/engine/tensor"
	"tracer/trace"
)

func TestCost(t *testing.T) {
	// Worked by hand for the tiny shapes (f32, 4 bytes a weight):
	// llama: per layer q 16·16 + k, v 8·16 + o 16·16 + gate, up, down 24·16
	// = 1920 multiply-adds a token, 2 layers = 3840; norms 2·16 a layer + 16;
	// tied head 40·16; KV 2 layers · (k+v) · 8 · 4 bytes = 128 a token.
	// gpt2: per layer c_attn 16·48 + c_proj 16·16 + c_fc 16·64 + c_proj
	// 64·16 = 3072, 2 layers = 6144; vectors 208 a layer + ln_f 32; a token
	// also reads a wte and a wpe row.
	llamaFixed := int64(4*(3840+64+16) + 40*16*4)
	gptFixed := int64(4*(6144+416+32) + 40*16*4)
	tests := []struct {
		arch            string
		rows, past, n   int
		want            trace.Traffic
		weightsPerToken int64
	}{
		{"llama", 1, 0, 5, trace.Traffic{WeightBytes: llamaFixed + 5*64, KVWriteBytes: 5 * 128, FLOPs: 2*3840*5 + 2*640 + 128*15}, 64},
		{"llama", 3, 10, 1, trace.Traffic{WeightBytes: llamaFixed + 3*64, KVReadBytes: 3 * 10 * 128, KVWriteBytes: 3 * 128, FLOPs: 2*3840*3 + 2*640*3 + 128*3*11}, 64},
		{"gpt2", 2, 4, 2, trace.Traffic{WeightBytes: gptFixed + 4*128, KVReadBytes: 2 * 4 * 256, KVWriteBytes: 2 * 2 * 256, FLOPs: 2*6144*4 + 2*640*2 + 128*2*(2*4+3)}, 128},
	}
	for _, tt := range tests {
		m := openTestModel(t, tinyShape(tt.arch))
		got := m.Cost(tt.rows, tt.past, tt.n)
		want := tt.want
		want.Intensity = float64(want.FLOPs) / float64(want.WeightBytes+want.KVReadBytes+want.KVWriteBytes)
		if got != want {
			t.Errorf("%s Cost(%d, %d, %d) = %+v, want %+v", tt.arch, tt.rows, tt.past, tt.n, got, want)
		}
	}
	m := openTestModel(t, tinyShape("llama"))
	if got := m.Cost(0, 3, 1); got != (trace.Traffic{}) {
		t.Errorf("Cost(0, 3, 1) = %+v, want zero", got)
	}
}

// procStatus returns a field of /proc/self/status in bytes, or -1.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// TestSmolLM2ShapeMemory loads a random model of SmolLM2-135M's shape
// (bf16, tied), decodes a few tokens and checks that the process's peak
// resident memory grows by about the weights plus the KV cache: the
// weights are used in place from the mapped file, never copied.
func TestSmolLM2ShapeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and runs a 269 MB model; skipped with -short")
	}
	dir := t.TempDir()
	start := time.Now()
	writeTestModel(t, dir, smolLM2, 42)
	wrote := time.Since(start)
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets VmHWM to the current RSS (Linux).
	peakReset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	base := procStatus("VmRSS")

	start = time.Now()
	em, err := OpenHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := em.(*Model)
	defer m.Close()
	info := m.Info()
	if info.Params != 134515008 || info.DType != "bf16" || info.WeightBytes != 2*info.Params {
		t.Errorf("Params %d, DType %s, WeightBytes %d: want SmolLM2-135M's 134515008 bf16 params", info.Params, info.DType, info.WeightBytes)
	}
	const capacity = 64
	c, err := m.NewCache(1, capacity)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{1, 504, 3458, 314, 253, 1345, 28, 216}
	logits := [][]float32{make([]float32, info.VocabSize)}
	if err := m.Forward(c, prompt(ids), logits); err != nil {
		t.Fatal(err)
	}
	prefill := time.Since(start)
	start = time.Now()
	const decoded = 4
	for i := 0; i < decoded; i++ {
		next := tensor.Argmax(logits[0])
		ids = append(ids, next)
		mask := make([]bool, len(ids))
		for j := range mask {
			mask[j] = true
		}
		b := &engine.Batch{Tokens: [][]int{{next}}, Positions: [][]int{{len(ids) - 1}}, Mask: [][]bool{mask}}
		if err := m.Forward(c, b, logits); err != nil {
			t.Fatal(err)
		}
	}
	perToken := time.Since(start) / decoded
	peak := procStatus("VmHWM")
	if base < 0 || peak < 0 || !peakReset {
		t.Skipf("cannot measure peak RSS here (/proc/self/status or clear_refs unavailable); loaded and decoded %d tokens", decoded)
	}
	kv := int64(capacity) * info.KVBytesPerToken
	growth := peak - base
	limit := info.WeightBytes*13/10 + kv + 64<<20
	t.Logf("wrote model in %v; open+prefill %d tokens %v; %v per decoded token", wrote.Round(time.Millisecond), 8, prefill.Round(time.Millisecond), perToken.Round(time.Millisecond))
	t.Logf("peak RSS growth %.1f MB for %.1f MB of weights + %.1f MB of KV cache (%.2f× weights; limit %.1f MB)",
		float64(growth)/1e6, float64(info.WeightBytes)/1e6, float64(kv)/1e6, float64(growth)/float64(info.WeightBytes), float64(limit)/1e6)
	if growth > limit {
		t.Errorf("peak RSS grew by %d bytes, more than %d: are the weights copied?", growth, limit)
	}
}
