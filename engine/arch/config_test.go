package arch

import (
	"runtime"
	"strings"
	"testing"
)

// openAllocs opens dir and returns the model (nil on error), the bytes
// allocated meanwhile and the error.
func openAllocs(t *testing.T, dir string) (*Model, uint64, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := OpenHF(dir)
	runtime.ReadMemStats(&after)
	if err != nil {
		return nil, after.TotalAlloc - before.TotalAlloc, err
	}
	t.Cleanup(func() { m.(*Model).Close() })
	return m.(*Model), after.TotalAlloc - before.TotalAlloc, nil
}

// TestConfigFieldsChecked: every config.json size tracer allocates from is
// checked, against tracer's limits and then against the weights present,
// before anything is allocated from it, and the error names the file and
// the field. Absurd values used to die out of memory (head_dim 2^40 in the
// rotary table) or pass silently (max_position_embeddings 0 or -1 meant
// unlimited).
func TestConfigFieldsChecked(t *testing.T) {
	const huge = 1 << 40
	for _, tc := range []struct {
		name    string
		arch    string
		changes map[string]any
		want    []string // substrings of the error; nil: opens
	}{
		{"head_dim 2^40", "llama", map[string]any{"head_dim": huge}, []string{"config.json", "head_dim 1099511627776 is not hidden_size/num_attention_heads (4)"}},
		{"head_dim disagrees with q_proj", "llama", map[string]any{"head_dim": 8}, []string{"config.json", "head_dim 8 is not hidden_size/num_attention_heads (4)", `"model.layers.0.self_attn.q_proj.weight" has shape [16 16]`}},
		{"head_dim negative", "llama", map[string]any{"head_dim": -4}, []string{"config.json", "head_dim -4"}},
		{"head_dim equal to hidden/heads", "llama", map[string]any{"head_dim": 4}, nil},
		{"hidden_size 2^40", "llama", map[string]any{"hidden_size": huge}, []string{"config.json", "hidden_size 1099511627776 exceeds"}},
		{"hidden_size disagrees", "llama", map[string]any{"hidden_size": 32}, []string{"hidden_size 32 disagrees with the weights", "model.embed_tokens.weight"}},
		{"vocab_size 2^40", "llama", map[string]any{"vocab_size": huge}, []string{"vocab_size 1099511627776 exceeds"}},
		{"vocab_size disagrees", "llama", map[string]any{"vocab_size": 41}, []string{"vocab_size 41 disagrees", "model.embed_tokens.weight"}},
		{"intermediate_size 2^40", "llama", map[string]any{"intermediate_size": huge}, []string{"intermediate_size 1099511627776 exceeds"}},
		{"intermediate_size disagrees", "llama", map[string]any{"intermediate_size": 48}, []string{"intermediate_size 48 disagrees", "mlp.gate_proj.weight"}},
		{"num_hidden_layers 2^40", "llama", map[string]any{"num_hidden_layers": huge}, []string{"num_hidden_layers 1099511627776 exceeds"}},
		{"num_hidden_layers past the weights", "llama", map[string]any{"num_hidden_layers": 1000}, []string{"num_hidden_layers 1000, but the weights hold only 2 layers"}},
		{"num_attention_heads 2^40", "llama", map[string]any{"num_attention_heads": huge}, []string{"num_attention_heads 1099511627776 exceeds"}},
		{"num_key_value_heads 2^40", "llama", map[string]any{"num_key_value_heads": huge}, []string{"num_key_value_heads 1099511627776 exceeds"}},
		{"num_key_value_heads disagrees", "llama", map[string]any{"num_key_value_heads": 4}, []string{"num_key_value_heads 4 disagrees", "k_proj.weight"}},
		{"max_position_embeddings 0", "llama", map[string]any{"max_position_embeddings": 0}, []string{"config.json", "max_position_embeddings 0 must be positive"}},
		{"max_position_embeddings -1", "llama", map[string]any{"max_position_embeddings": -1}, []string{"config.json", "max_position_embeddings -1 must be positive"}},
		{"max_position_embeddings -1 qwen2", "qwen2", map[string]any{"max_position_embeddings": -1}, []string{"max_position_embeddings -1 must be positive"}},
		{"max_position_embeddings 2^40", "llama", map[string]any{"max_position_embeddings": huge}, []string{"max_position_embeddings 1099511627776 exceeds"}},
		{"rope_theta 0", "llama", map[string]any{"rope_theta": 0}, []string{"rope_theta 0 must be a positive number"}},
		{"rope_scaling", "llama", map[string]any{"rope_scaling": map[string]any{"type": "linear", "factor": 2}}, []string{"rope_scaling", "not supported"}},
		{"rms_norm_eps negative", "llama", map[string]any{"rms_norm_eps": -1}, []string{"rms_norm_eps -1 must be in [0, 1]"}},
		{"n_embd 2^40", "gpt2", map[string]any{"n_embd": huge}, []string{"n_embd 1099511627776 exceeds"}},
		{"n_head 2^40", "gpt2", map[string]any{"n_head": huge}, []string{"n_head 1099511627776 exceeds"}},
		{"n_layer past the weights", "gpt2", map[string]any{"n_layer": 99}, []string{"n_layer 99, but the weights hold only 2 layers"}},
		{"n_positions 0", "gpt2", map[string]any{"n_positions": 0}, []string{"n_positions 0"}},
		{"n_positions 2^40", "gpt2", map[string]any{"n_positions": huge}, []string{"n_positions 1099511627776 exceeds"}},
		{"n_positions disagrees", "gpt2", map[string]any{"n_positions": 64}, []string{"n_positions 64 disagrees", "wpe.weight"}},
		{"n_inner 2^40", "gpt2", map[string]any{"n_inner": huge}, []string{"n_inner 1099511627776 exceeds"}},
		{"n_inner disagrees", "gpt2", map[string]any{"n_inner": 32}, []string{"n_inner 32 disagrees", "c_fc.weight"}},
		{"layer_norm_epsilon negative", "gpt2", map[string]any{"layer_norm_epsilon": -0.5}, []string{"layer_norm_epsilon -0.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := badModel(t, tinyShape(tc.arch), editConfig(t, tc.changes))
			m, alloc, err := openAllocs(t, dir)
			if alloc > 16<<20 {
				t.Errorf("OpenHF allocated %d bytes, want under 16 MiB for a tiny model", alloc)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("got error %v, want the model", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got a model (max positions %d), want an error", m.Info().MaxPositions)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got error %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestMaxPositionsDefault: an absent max_position_embeddings takes
// transformers' default rather than meaning unlimited.
func TestMaxPositionsDefault(t *testing.T) {
	for _, tc := range []struct {
		arch string
		want int
	}{{"llama", 2048}, {"qwen2", 32768}} {
		t.Run(tc.arch, func(t *testing.T) {
			dir := badModel(t, tinyShape(tc.arch), editConfig(t, map[string]any{"max_position_embeddings": nil}))
			m, _, err := openAllocs(t, dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Info().MaxPositions; got != tc.want {
				t.Errorf("got max positions %d, want %d", got, tc.want)
			}
		})
	}
}
