package hubtest

import (
	"encoding/binary"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
)

// TinyModel returns the files of a tiny transformers model: config.json,
// generation_config.json, tokenizer.json, tokenizer_config.json with a chat
// template, and a model.safetensors of two float32 tensors (16,448
// parameters, 64 KiB: large enough to cut mid-file).
func TinyModel() map[string][]byte {
	return map[string][]byte{
		"config.json":            []byte(`{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "vocab_size": 256, "num_hidden_layers": 0, "torch_dtype": "float32"}`),
		"generation_config.json": []byte(`{"bos_token_id": 1, "eos_token_id": 2}`),
		"tokenizer.json":         []byte(`{"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}}`),
		"tokenizer_config.json":  []byte(`{"chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"}`),
		"model.safetensors":      Safetensors("F32", map[string][]int{"model.embed_tokens.weight": {256, 64}, "model.norm.weight": {64}}),
		"README.md":              []byte("# tiny\n"),
		".gitattributes":         []byte("*.safetensors filter=lfs diff=lfs merge=lfs -text\n"),
	}
}

// Safetensors encodes tensors (name → shape) of one dtype as a safetensors
// file, filled with made-up bytes.
func Safetensors(dtype string, shapes map[string][]int) []byte {
	size := map[string]int{"F32": 4, "BF16": 2, "F16": 2}[dtype]
	type info struct {
		DType   string `json:"dtype"`
		Shape   []int  `json:"shape"`
		Offsets [2]int `json:"data_offsets"`
	}
	header := map[string]info{}
	off := 0
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		n := size
		for _, d := range shapes[name] {
			n *= d
		}
		header[name] = info{dtype, shapes[name], [2]int{off, off + n}}
		off += n
	}
	h, _ := json.Marshal(header)
	if pad := len(h) % 8; pad != 0 {
		h = append(h, strings.Repeat(" ", 8-pad)...)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(out, h...)
	for i := range off {
		out = append(out, byte(i*31+7))
	}
	return out
}

// Llama2c returns a tiny legacy llama2.c checkpoint (dim 8, hidden 16, one
// layer, 2 heads, vocabulary 32, seq_len 4: 920 parameters) and a stand-in
// tokenizer.bin.
func Llama2c() (model, tokenizer []byte) {
	cfg := []int32{8, 16, 1, 2, 2, 32, 4}
	for _, v := range cfg {
		model = binary.LittleEndian.AppendUint32(model, uint32(v))
	}
	const floats = 920 + 4*4 // weights, then the RoPE tables (seq_len × head_size)
	for i := range floats {
		model = binary.LittleEndian.AppendUint32(model, math.Float32bits(float32(i%7)/7))
	}
	return model, []byte("tokenizer.bin stand-in")
}
