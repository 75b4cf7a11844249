package arch

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"tracer/engine/gguf"
	"tracer/engine/internal/mmap"
	"tracer/engine/safetensors"
	"tracer/engine/tensor"
)

// ggufTypeOf maps the dtypes a random GGUF can hold to ggml's types.
var ggufTypeOf = map[tensor.DType]gguf.Type{
	tensor.F32: gguf.F32, tensor.F16: gguf.F16, tensor.Q8_0: gguf.Q8_0, tensor.Q4_0: gguf.Q4_0,
}

// WriteRandomGGUF writes a GGUF file of a llama-architecture shape s with
// random weights at dtype (f32, f16, q8_0 or q4_0), as llama.cpp's
// converter and quantizer lay one out: the metadata of the llama
// architecture, norm weights in F32, the matrices at dtype, except that a
// Q4_0 file keeps its token embedding (the tied output head) in Q8_0, as
// llama-quantize does for a head whose rows are not a multiple of 256.
// The weights have NewRandom's spread. The file carries a placeholder
// SentencePiece vocabulary (randomVocab), so that llama.cpp loads it too
// and the two engines can be timed on the same file. It is what
// `tracer bench --write-gguf` writes, to be measured like any GGUF.
func WriteRandomGGUF(w io.Writer, name string, s Shape, dtype tensor.DType, seed uint64) error {
	meta, tensors, err := randomGGUF(name, s, dtype, seed)
	if err != nil {
		return err
	}
	if err := gguf.Write(w, meta, tensors, 0); err != nil {
		return fmt.Errorf("arch: random %s: %w", name, err)
	}
	return nil
}

// NewRandomGGUF builds the model WriteRandomGGUF writes, in memory (huge
// pages where the kernel allows), loaded by the GGUF loader as a file
// would be: the products round their activations as llama.cpp does. Close
// frees the memory.
func NewRandomGGUF(name string, s Shape, dtype tensor.DType, seed uint64) (*Model, error) {
	var buf bytes.Buffer
	if err := WriteRandomGGUF(&buf, name, s, dtype, seed); err != nil {
		return nil, err
	}
	region, free, err := mmap.Huge(buf.Len())
	if err != nil {
		return nil, fmt.Errorf("arch: random %s: %d bytes of weights: %w", name, buf.Len(), err)
	}
	copy(region, buf.Bytes())
	buf = bytes.Buffer{}
	f, err := gguf.Parse("random-"+name+".gguf", region)
	if err != nil {
		free()
		return nil, fmt.Errorf("arch: %w", err)
	}
	m, err := newGGUF(f, packQuantized(f), 0)
	if err != nil {
		free()
		return nil, err
	}
	m.closer = closerFunc(free)
	return m, nil
}

// randomGGUF lays out the metadata and tensors of WriteRandomGGUF.
func randomGGUF(name string, s Shape, dtype tensor.DType, seed uint64) ([]gguf.KV, []gguf.TensorInfo, error) {
	typ, ok := ggufTypeOf[dtype]
	if !ok {
		return nil, nil, fmt.Errorf("arch: random GGUF %s: dtype %v, want f32, f16, q8_0 or q4_0", name, dtype)
	}
	if s.Arch != "llama" {
		return nil, nil, fmt.Errorf("arch: random GGUF %s: architecture %q, want llama (the only one tracer writes as GGUF)", name, s.Arch)
	}
	h, ff, kv := s.Hidden, s.Intermediate, s.KVHeads*(s.Hidden/s.Heads)
	if dtype.Quantized() && (h%32 != 0 || ff%32 != 0) {
		return nil, nil, fmt.Errorf("arch: random GGUF %s: %s needs widths that are multiples of 32, got hidden %d, intermediate %d", name, dtype, h, ff)
	}
	u32 := func(k string, v int) gguf.KV { return gguf.KV{Key: k, Type: gguf.TypeUint32, Value: uint32(v)} }
	meta := []gguf.KV{
		{Key: "general.architecture", Type: gguf.TypeString, Value: "llama"},
		{Key: "general.name", Type: gguf.TypeString, Value: "random-" + name},
		u32("llama.context_length", s.MaxPositions), u32("llama.embedding_length", h),
		u32("llama.block_count", s.Layers), u32("llama.feed_forward_length", ff),
		u32("llama.attention.head_count", s.Heads), u32("llama.attention.head_count_kv", s.KVHeads),
		{Key: "llama.attention.layer_norm_rms_epsilon", Type: gguf.TypeFloat32, Value: float32(1e-5)},
		{Key: "llama.rope.freq_base", Type: gguf.TypeFloat32, Value: float32(10000)},
		u32("tokenizer.ggml.bos_token_id", 1), u32("tokenizer.ggml.eos_token_id", 2),
	}
	meta = append(meta, randomVocab(s.VocabSize)...)
	var tensors []gguf.TensorInfo
	add := func(n string, t gguf.Type, dims ...int) {
		seed := tensorSeed(seed, len(tensors))
		ti := gguf.TensorInfo{Name: n, Type: t}
		size := 1
		for _, d := range dims {
			ti.Dims = append(ti.Dims, uint64(d))
			size *= d
		}
		elems, bytes := t.Block()
		ti.Data = make([]byte, size/elems*bytes)
		switch {
		case len(dims) == 1: // a norm weight, 1 ± 0.1
			fillTensor(ti.Data, safetensors.Info{Name: n, Shape: dims}, tensor.F32, seed)
		case t == gguf.Q8_0 || t == gguf.Q4_0:
			dt := map[gguf.Type]tensor.DType{gguf.Q8_0: tensor.Q8_0, gguf.Q4_0: tensor.Q4_0}[t]
			tensor.FillQuantUniform(ti.Data, dt, float32(math.Sqrt(3/float64(dims[0]))), seed)
		default:
			fillTensor(ti.Data, safetensors.Info{Name: n, Shape: []int{dims[1], dims[0]}}, dtype, seed)
		}
		tensors = append(tensors, ti)
	}
	head := typ
	if typ == gguf.Q4_0 {
		head = gguf.Q8_0
	}
	add("token_embd.weight", head, h, s.VocabSize)
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", gguf.F32, h)
		add(p+"attn_q.weight", typ, h, h)
		add(p+"attn_k.weight", typ, h, kv)
		add(p+"attn_v.weight", typ, h, kv)
		add(p+"attn_output.weight", typ, h, h)
		add(p+"ffn_norm.weight", gguf.F32, h)
		add(p+"ffn_gate.weight", typ, h, ff)
		add(p+"ffn_up.weight", typ, h, ff)
		add(p+"ffn_down.weight", typ, ff, h)
	}
	add("output_norm.weight", gguf.F32, h)
	if !s.Tied {
		add("output.weight", head, h, s.VocabSize)
	}
	return meta, tensors, nil
}

// randomVocab is the tokenizer metadata of a random GGUF: a SentencePiece
// ("llama") vocabulary of n tokens, <unk>, <s> and </s> (ids 0, 1, 2), then
// the byte tokens <0x00>, <0x01>, … as far as n allows, then "▁t<id>"
// placeholders scored by id, so that text encodes through the byte tokens.
func randomVocab(n int) []gguf.KV {
	tokens, scores, types := make([]string, n), make([]float32, n), make([]int32, n)
	for id := range tokens {
		switch {
		case id < 3:
			tokens[id], types[id] = []string{"<unk>", "<s>", "</s>"}[id], 3 // control
			if id == 0 {
				types[id] = 2 // unknown
			}
		case id < 3+256:
			tokens[id], types[id] = fmt.Sprintf("<0x%02X>", id-3), 6 // byte
		default:
			tokens[id], types[id] = fmt.Sprintf("\u2581t%d", id), 1 // normal
		}
		scores[id] = -float32(id)
	}
	return []gguf.KV{
		{Key: "tokenizer.ggml.model", Type: gguf.TypeString, Value: "llama"},
		{Key: "tokenizer.ggml.tokens", Type: gguf.TypeArray, Value: tokens},
		{Key: "tokenizer.ggml.scores", Type: gguf.TypeArray, Value: scores},
		{Key: "tokenizer.ggml.token_type", Type: gguf.TypeArray, Value: types},
		{Key: "tokenizer.ggml.unknown_token_id", Type: gguf.TypeUint32, Value: uint32(0)},
	}
}
