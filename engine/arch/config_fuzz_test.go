package arch

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"tracer/engine/safetensors"
)

// fuzzWeights holds one tiny checkpoint per architecture, in memory.
func fuzzWeights(f *testing.F) map[string]*safetensors.File {
	f.Helper()
	out := map[string]*safetensors.File{}
	for _, arch := range []string{"llama", "qwen2", "gpt2"} {
		s := tinyShape(arch)
		infos := s.tensors()
		var buf bytes.Buffer
		if err := safetensors.WriteHeader(&buf, infos, nil); err != nil {
			f.Fatal(err)
		}
		for _, in := range infos {
			buf.Write(make([]byte, elements(in.Shape)*in.DType.Size()))
		}
		file, err := safetensors.Parse(arch+".safetensors", buf.Bytes())
		if err != nil {
			f.Fatal(err)
		}
		out[arch] = file
	}
	return out
}

// FuzzConfig feeds arbitrary config.json bytes to the loader with a tiny
// checkpoint of the architecture the config names. It must return a model
// whose sizes are the checkpoint's, or an error that names config.json,
// and never allocate more than a few MiB: every size is checked against
// the limits and the weights before anything is allocated from it.
func FuzzConfig(f *testing.F) {
	weights := fuzzWeights(f)
	for _, arch := range []string{"llama", "qwen2", "gpt2"} {
		js, _ := json.Marshal(tinyShape(arch).config())
		f.Add(js)
	}
	f.Add([]byte(`{"model_type":"llama","vocab_size":40,"hidden_size":16,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":24,"head_dim":1099511627776}`))
	f.Add([]byte(`{"model_type":"llama","vocab_size":40,"hidden_size":16,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":24,"max_position_embeddings":-1}`))
	f.Add([]byte(`{"model_type":"gpt2","vocab_size":40,"n_embd":16,"n_layer":1000000,"n_head":4,"n_positions":32}`))
	f.Add([]byte(`{"model_type":"qwen2","vocab_size":40,"hidden_size":16,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":24,"head_dim":8,"rope_theta":1e308}`))
	f.Fuzz(func(t *testing.T, js []byte) {
		var c hfConfig
		if err := json.Unmarshal(js, &c); err != nil {
			return // readConfig reports it with the file's name
		}
		const path = "config.json"
		arch, err := c.architecture(path)
		if err != nil {
			return
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		spec, err := checkConfig(&c, arch, path)
		var net network
		if err == nil {
			ld := newLoader(weights[arch], "fuzz", arch+".safetensors", path)
			net, _, err = spec.load(ld)
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Fatalf("checking and loading a tiny model allocated %d bytes, want under 8 MiB (config %s)", alloc, js)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "config.json") && !strings.Contains(err.Error(), arch+".safetensors") {
				t.Fatalf("error %q names neither config.json nor the weights", err)
			}
			return
		}
		want := tinyShape(arch)
		// Fewer layers than the checkpoint holds is allowed (transformers
		// leaves the rest unused), more is not.
		if d := spec.d; d.vocab != want.vocab || d.hidden != want.hidden || d.layers < 1 || d.layers > want.layers || d.ffn != want.ffn || d.qDim() != want.hidden {
			t.Fatalf("loaded sizes %+v from config %s, want the checkpoint's %+v", d, js, want)
		}
		if net.head().Rows != want.vocab {
			t.Fatalf("head has %d rows, want %d", net.head().Rows, want.vocab)
		}
	})
}
