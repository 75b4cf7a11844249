package arch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/engine/internal/mmap"
	"tracer/engine/safetensors"
	"tracer/engine/tensor"
)

// Shape is the architecture and sizes of a model built by NewRandom, named
// after the config.json fields they stand for.
type Shape struct {
	Arch         string // "llama", "qwen2" (q/k/v biases) or "gpt2"
	VocabSize    int
	Hidden       int // hidden_size / n_embd
	Layers       int
	Heads        int
	KVHeads      int // num_key_value_heads; GPT-2: Heads
	Intermediate int // MLP inner size
	MaxPositions int
	Tied         bool    // the output head is the token embedding
	RopeTheta    float64 // rope_theta (0: 10000); GPT-2 has none
	NormEps      float64 // rms_norm_eps / layer_norm_epsilon (0: 1e-5)
}

// knownShapes are the shapes of real releases, by the names tracer bench
// takes, as their config.json files give them (head_dim 64 in each):
//
//   - smollm2-135m: HuggingFaceTB/SmolLM2-135M (config.json as its
//     fine-tunes on the Hub copy it, e.g. Avibhi/SmolLM2-SFT-DSQA):
//     hidden_size 576, 30 layers, 9 heads, 3 kv heads, intermediate_size
//     1536, vocab_size 49152, tied, rope_theta 100000, rms_norm_eps 1e-5,
//     max_position_embeddings 8192.
//   - gpt2: openai-community/gpt2.
//   - llama-3.2-1b: meta-llama/Llama-3.2-1B (config.json as
//     kevinstephano/thunder_model_blocks hf_llama/llama_config.py copies
//     it): hidden_size 2048, 16 layers, 32 heads, 8 kv heads, head_dim
//     64, intermediate_size 8192, vocab_size 128256, tied, rope_theta
//     500000, rms_norm_eps 1e-5, max_position_embeddings 131072. Its
//     rope_scaling (llama3, factor 32 over 8192 original positions) is left
//     out: tracer implements plain rotary embeddings, and the scaling
//     changes no size and no byte a step reads.
//   - qwen2.5-0.5b: Qwen/Qwen2.5-0.5B (config.json as
//     huggingface.co/osllmai-community/Qwen2.5-0.5B copies it, and
//     unsloth/Qwen2.5-0.5B-Instruct's agrees): qwen2 (q/k/v biases),
//     hidden_size 896, 24 layers, 14 heads, 2 kv heads, intermediate_size
//     4864, vocab_size 151936, tied, rope_theta 1000000, rms_norm_eps 1e-6,
//     max_position_embeddings 32768.
func knownShapes() map[string]Shape {
	return map[string]Shape{
		"smollm2-135m": {Arch: "llama", VocabSize: 49152, Hidden: 576, Layers: 30, Heads: 9, KVHeads: 3, Intermediate: 1536, MaxPositions: 8192, Tied: true, RopeTheta: 100000, NormEps: 1e-5},
		"gpt2":         {Arch: "gpt2", VocabSize: 50257, Hidden: 768, Layers: 12, Heads: 12, KVHeads: 12, Intermediate: 3072, MaxPositions: 1024, Tied: true, NormEps: 1e-5},
		"llama-3.2-1b": {Arch: "llama", VocabSize: 128256, Hidden: 2048, Layers: 16, Heads: 32, KVHeads: 8, Intermediate: 8192, MaxPositions: 131072, Tied: true, RopeTheta: 500000, NormEps: 1e-5},
		"qwen2.5-0.5b": {Arch: "qwen2", VocabSize: 151936, Hidden: 896, Layers: 24, Heads: 14, KVHeads: 2, Intermediate: 4864, MaxPositions: 32768, Tied: true, RopeTheta: 1000000, NormEps: 1e-6},
	}
}

// ShapeNames lists the names KnownShape accepts, sorted.
func ShapeNames() []string {
	var names []string
	for n := range knownShapes() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// KnownShape returns the shape of a released model (knownShapes lists
// them and where their sizes come from): "smollm2-135m" (Llama: 576
// hidden, 30 layers, 9 heads sharing 3 kv heads of 64 dims, 1536 MLP,
// 49152 vocab, tied head), "gpt2" (768 hidden, 12 layers, 12 heads, 3072
// MLP, 50257 vocab, 1024 positions), "llama-3.2-1b" (2048 hidden, 16
// layers, 32 heads sharing 8 kv heads, 8192 MLP, 128256 vocab, tied) or
// "qwen2.5-0.5b" (Qwen2: 896 hidden, 24 layers, 14 heads sharing 2 kv
// heads, 4864 MLP, 151936 vocab, tied, q/k/v biases).
func KnownShape(name string) (Shape, bool) {
	s, ok := knownShapes()[name]
	return s, ok
}

// ropeTheta and normEps are the shape's rotary base and norm epsilon,
// defaults filled in.
func (s Shape) ropeTheta() float64 {
	if s.RopeTheta > 0 {
		return s.RopeTheta
	}
	return 10000
}

func (s Shape) normEps() float64 {
	if s.NormEps > 0 {
		return s.NormEps
	}
	return 1e-5
}

// RandomDTypes are the weight types tracer bench builds random weights
// in: the float types, as a Hugging Face checkpoint (NewRandom) or a GGUF
// file holds them, and the block types tensor.QuantizeRow makes byte for
// byte as llama-quantize does, as a GGUF file holds them (NewRandomGGUF).
var RandomDTypes = []tensor.DType{
	tensor.F32, tensor.BF16, tensor.F16,
	tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K,
}

// randomDTypeNames is RandomDTypes' names, comma-separated.
func randomDTypeNames() string {
	var names []string
	for _, t := range RandomDTypes {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}

// ParseRandomDType reads a weight type of RandomDTypes by name ("q4_k",
// "Q8_0"). The error for a type tracer computes with but cannot make
// (q2_k, q3_k, iq4_nl, iq4_xs) says so; both errors list the types it
// makes.
func ParseRandomDType(s string) (tensor.DType, error) {
	for _, t := range RandomDTypes {
		if strings.EqualFold(s, t.String()) {
			return t, nil
		}
	}
	for t := tensor.Q8_0; t.Quantized(); t++ {
		if strings.EqualFold(s, t.String()) {
			return 0, fmt.Errorf("dtype %q: tracer computes with %s weights a GGUF file holds but cannot make them; it makes %s", s, t, randomDTypeNames())
		}
	}
	return 0, fmt.Errorf("unknown dtype %q: tracer makes %s", s, randomDTypeNames())
}

// config is the config.json the shape stands for.
func (s Shape) config() *hfConfig {
	eps, theta, act := s.normEps(), s.ropeTheta(), "silu"
	tied := s.Tied
	c := &hfConfig{ModelType: s.Arch, VocabSize: s.VocabSize, TieWordEmbeddings: &tied}
	if s.Arch == "gpt2" {
		gelu := "gelu_new"
		c.NEmbd, c.NLayer, c.NHead, c.NPositions = s.Hidden, s.Layers, s.Heads, s.MaxPositions
		c.NInner, c.LayerNormEpsilon, c.ActivationFunction = &s.Intermediate, &eps, &gelu
		return c
	}
	kv := s.KVHeads
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.NumKeyValueHeads = s.Hidden, s.Layers, s.Heads, &kv
	c.IntermediateSize = s.Intermediate
	if s.MaxPositions != 0 {
		c.MaxPositionEmbeddings = &s.MaxPositions
	}
	c.RMSNormEps, c.RopeTheta, c.HiddenAct = &eps, &theta, &act
	return c
}

// tensors lists the checkpoint's tensors in transformers' names.
func (s Shape) tensors(dt safetensors.DType) []safetensors.Info {
	var out []safetensors.Info
	add := func(name string, shape ...int) {
		out = append(out, safetensors.Info{Name: name, DType: dt, Shape: shape})
	}
	h, f := s.Hidden, s.Intermediate
	if s.Arch == "gpt2" {
		add("transformer.wte.weight", s.VocabSize, h)
		add("transformer.wpe.weight", s.MaxPositions, h)
		for l := 0; l < s.Layers; l++ {
			p := fmt.Sprintf("transformer.h.%d.", l)
			add(p+"ln_1.weight", h)
			add(p+"ln_1.bias", h)
			add(p+"attn.c_attn.weight", h, 3*h)
			add(p+"attn.c_attn.bias", 3*h)
			add(p+"attn.c_proj.weight", h, h)
			add(p+"attn.c_proj.bias", h)
			add(p+"ln_2.weight", h)
			add(p+"ln_2.bias", h)
			add(p+"mlp.c_fc.weight", h, f)
			add(p+"mlp.c_fc.bias", f)
			add(p+"mlp.c_proj.weight", f, h)
			add(p+"mlp.c_proj.bias", h)
		}
		add("transformer.ln_f.weight", h)
		add("transformer.ln_f.bias", h)
	} else {
		kv := s.KVHeads * (h / s.Heads)
		add("model.embed_tokens.weight", s.VocabSize, h)
		for l := 0; l < s.Layers; l++ {
			p := fmt.Sprintf("model.layers.%d.", l)
			add(p+"input_layernorm.weight", h)
			add(p+"self_attn.q_proj.weight", h, h)
			add(p+"self_attn.k_proj.weight", kv, h)
			add(p+"self_attn.v_proj.weight", kv, h)
			if s.Arch == "qwen2" {
				add(p+"self_attn.q_proj.bias", h)
				add(p+"self_attn.k_proj.bias", kv)
				add(p+"self_attn.v_proj.bias", kv)
			}
			add(p+"self_attn.o_proj.weight", h, h)
			add(p+"post_attention_layernorm.weight", h)
			add(p+"mlp.gate_proj.weight", f, h)
			add(p+"mlp.up_proj.weight", f, h)
			add(p+"mlp.down_proj.weight", h, f)
		}
		add("model.norm.weight", h)
	}
	if !s.Tied {
		add("lm_head.weight", s.VocabSize, h)
	}
	return out
}

// NewRandom builds a model of shape s with random weights stored at dtype:
// the weights of a benchmark with no checkpoint on disk. They are laid out
// as a safetensors file in one anonymous memory region, backed by
// transparent huge pages where the kernel allows it (madvise
// MADV_HUGEPAGE: fewer TLB misses when a decode step streams every weight),
// and filled by a xorshift generator in about a second for SmolLM2-135M.
// Matrices are uniform with the variance of N(0, 1/columns), norm weights
// near 1, biases near 0. The same shape, dtype and seed give the same
// weights. The model is named "random-"+name, of kind "hf"; its BOS and EOS ids are those
// of the release's config (llama: 1 and 2; gpt2: 50256). Close frees the
// memory.
func NewRandom(name string, s Shape, dtype tensor.DType, seed uint64) (*Model, error) {
	sdt, ok := randomDTypes[dtype]
	if !ok {
		return nil, fmt.Errorf("arch: random model: dtype %v, want f32, bf16 or f16 (NewRandomGGUF makes the quantized types)", dtype)
	}
	where := "random " + name
	spec, err := checkConfig(s.config(), s.Arch, where+" config")
	if err != nil {
		return nil, err
	}
	infos := s.tensors(sdt)
	var header bytes.Buffer
	if err := safetensors.WriteHeader(&header, infos, map[string]string{"format": "pt"}); err != nil {
		return nil, fmt.Errorf("arch: %s: %w", where, err)
	}
	// Start the header so that the tensor data begins on a cache line.
	pad := (64 - header.Len()%64) % 64
	size := pad + header.Len()
	for _, in := range infos {
		size += elements(in.Shape) * dtype.Size()
	}
	region, free, err := mmap.Huge(size)
	if err != nil {
		return nil, fmt.Errorf("arch: %s: %d bytes of weights: %w", where, size, err)
	}
	file := region[pad:]
	off := copy(file, header.Bytes())
	for i, in := range infos {
		n := elements(in.Shape) * dtype.Size()
		fillTensor(file[off:off+n], in, dtype, tensorSeed(seed, i))
		off += n
	}
	f, err := safetensors.Parse(where, file)
	if err != nil {
		free()
		return nil, fmt.Errorf("arch: %w", err)
	}
	ld := newLoader(f, where, "in memory", where+" config")
	net, cost, err := spec.load(ld)
	if err != nil {
		free()
		return nil, err
	}
	d := spec.d
	info := engine.Info{
		Name: "random-" + name, Kind: "hf", Architecture: s.Arch,
		VocabSize: d.vocab, MaxPositions: d.maxPos,
		Layers: d.layers, Hidden: d.hidden, Heads: d.heads, KVHeads: d.kvHeads, HeadDim: d.headDim, Intermediate: d.ffn,
		Params: ld.params, DType: dtype.String(), WeightBytes: ld.bytes, KVBytesPerToken: d.kvBytesPerToken(),
		BOS: 1, EOS: []int{2}, PAD: -1,
	}
	if s.Arch == "gpt2" {
		info.BOS, info.EOS = s.VocabSize-1, []int{s.VocabSize - 1}
	}
	return newModel(info, d, net, cost, closerFunc(free)), nil
}

// randomDTypes are the weight types NewRandom and WriteRandomHF build, as
// safetensors stores them.
var randomDTypes = map[tensor.DType]safetensors.DType{tensor.F32: safetensors.F32, tensor.BF16: safetensors.BF16, tensor.F16: safetensors.F16}

// WriteRandomHF writes the model NewRandom builds as a Hugging Face folder
// in dir: config.json and model.safetensors (no tokenizer: feed it token
// ids). It is what tracer bench --class serves for a bf16 class.
func WriteRandomHF(dir, name string, s Shape, dtype tensor.DType, seed uint64) error {
	sdt, ok := randomDTypes[dtype]
	if !ok {
		return fmt.Errorf("arch: random model %s: dtype %v, want f32, bf16 or f16", name, dtype)
	}
	c := s.config()
	c.Architectures = []string{map[string]string{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "gpt2": "GPT2LMHeadModel"}[s.Arch]}
	c.BOS, c.EOS = json.RawMessage("1"), json.RawMessage("2")
	if s.Arch == "gpt2" {
		id := json.RawMessage(strconv.Itoa(s.VocabSize - 1))
		c.BOS, c.EOS = id, id
	}
	config, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), config, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	infos := s.tensors(sdt)
	err = safetensors.WriteHeader(w, infos, map[string]string{"format": "pt"})
	var buf []byte
	for i, in := range infos {
		if err != nil {
			break
		}
		n := elements(in.Shape) * dtype.Size()
		buf = slices.Grow(buf[:0], n)[:n]
		fillTensor(buf, in, dtype, tensorSeed(seed, i))
		_, err = w.Write(buf)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("arch: random model %s: %w", name, err)
	}
	return nil
}

// tensorSeed is the seed of the i-th tensor of a random model of seed.
func tensorSeed(seed uint64, i int) uint64 { return seed + uint64(i)*0x9e3779b97f4a7c15 }

func elements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// fillTensor writes random values for one tensor: uniform ±sqrt(3/cols)
// for matrices (the variance of N(0, 1/cols)), 1 ± 0.1 for norm weights,
// ±0.02 for biases.
func fillTensor(dst []byte, in safetensors.Info, dtype tensor.DType, seed uint64) {
	if len(in.Shape) == 2 {
		tensor.FillUniform(dst, dtype, float32(math.Sqrt(3/float64(in.Shape[1]))), seed)
		return
	}
	scale, shift := float32(0.02), float32(0)
	if len(in.Name) > 7 && in.Name[len(in.Name)-7:] == ".weight" {
		scale, shift = 0.1, 1
	}
	v := make([]float32, len(dst)/dtype.Size())
	raw := make([]byte, 4*len(v))
	tensor.FillUniform(raw, tensor.F32, scale, seed)
	tensor.Decode(v, raw, tensor.F32)
	for i, x := range v {
		x += shift
		switch dtype {
		case tensor.F32:
			u := math.Float32bits(x)
			dst[4*i], dst[4*i+1], dst[4*i+2], dst[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		case tensor.BF16:
			u := tensor.F32ToBF16(x)
			dst[2*i], dst[2*i+1] = byte(u), byte(u>>8)
		case tensor.F16:
			u := tensor.F32ToF16(x)
			dst[2*i], dst[2*i+1] = byte(u), byte(u>>8)
		}
	}
}
