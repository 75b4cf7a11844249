package arch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"

	"tracer/engine/gguf"
	"tracer/engine/internal/mmap"
	"tracer/engine/safetensors"
	"tracer/engine/tensor"
)

// ggufTypeOf maps the dtypes a random GGUF can hold to ggml's types.
var ggufTypeOf = map[tensor.DType]gguf.Type{
	tensor.F32: gguf.F32, tensor.F16: gguf.F16, tensor.BF16: gguf.BF16,
	tensor.Q8_0: gguf.Q8_0, tensor.Q4_0: gguf.Q4_0, tensor.Q4_1: gguf.Q4_1, tensor.Q5_0: gguf.Q5_0, tensor.Q5_1: gguf.Q5_1,
	tensor.Q4_K: gguf.Q4_K, tensor.Q5_K: gguf.Q5_K, tensor.Q6_K: gguf.Q6_K,
}

// WriteRandomGGUF writes a GGUF file of a llama or qwen2 shape s with
// random weights at dtype (any of RandomDTypes), as llama.cpp's converter
// and llama-quantize lay one out: the architecture's metadata, norm
// weights and biases in F32, the matrices at dtype. A quantized matrix is
// the F32 file's matrix quantized by tensor.QuantizeRow, byte for byte
// as llama-quantize quantizes it, with llama-quantize's choice of type per
// tensor (c392e509, without an importance matrix):
//
//   - a matrix whose rows (its input width) are not whole blocks of a
//     K-quant takes the fallback type (tensor.KFallback: Q4_K → Q5_0,
//     Q5_K → Q5_1, Q6_K → Q8_0);
//   - the output head (the token embedding when tied) is Q6_K, or Q8_0
//     where its rows are not a multiple of 256 and in a Q8_0 file.
//
// So a Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or Q6_K file holds, tensor for tensor,
// what `llama-quantize F32.gguf OUT.gguf TYPE` writes from the F32 file of
// the same shape and seed (TestRandomGGUFAsLlamaQuantize). A Q4_K or Q5_K
// file holds no Q4_K_M or Q5_K_M mix (llama-quantize's "Q4_K" and "Q5_K"),
// which gives some attn_v and ffn_down matrices Q6_K as well. The
// weights have NewRandom's spread and are made chunkBytes of values at a
// time: writing a model never holds it whole in memory. The file carries
// a placeholder SentencePiece vocabulary (randomVocab), so that llama.cpp
// loads it too and the two engines can be timed on the same file. It is
// what `tracer bench --write-gguf` writes, to be measured like any GGUF.
func WriteRandomGGUF(w io.Writer, name string, s Shape, dtype tensor.DType, seed uint64) error {
	meta, ts, err := randomGGUF(name, s, dtype, seed)
	if err != nil {
		return err
	}
	if err := writeRandomGGUF(w, meta, ts); err != nil {
		return fmt.Errorf("arch: random %s: %w", name, err)
	}
	return nil
}

// writeRandomGGUF writes the file: the header (gguf.Write's, given tensors
// of the right lengths whose bytes it does not keep), then each tensor's
// bytes as they are made.
func writeRandomGGUF(w io.Writer, meta []gguf.KV, ts []*randomTensor) error {
	header, err := ggufHeaderSize(meta, ts)
	if err != nil {
		return err
	}
	largest := 1
	for _, t := range ts {
		largest = max(largest, t.size)
	}
	// Untouched anonymous memory: only its length is read, and a few KiB
	// that bufio copies before it learns they are not kept.
	blank, free, err := mmap.Huge(largest)
	if err != nil {
		return err
	}
	for _, t := range ts {
		t.Data = blank[:t.size]
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	err = gguf.Write(&prefixWriter{w: bw, left: header}, meta, tensorInfos(ts), ggufAlign)
	for _, t := range ts {
		t.Data = nil
	}
	free()
	if err != nil {
		return err
	}
	var buf, scratch []byte
	pad := make([]byte, ggufAlign)
	for _, t := range ts {
		err := t.chunks(func(r0, r1 int) error {
			n := (r1 - r0) * t.rowBytes()
			buf = slices.Grow(buf[:0], n)[:n]
			if err := t.fill(buf, r0, r1, &scratch); err != nil {
				return err
			}
			_, err := bw.Write(buf)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := bw.Write(pad[:alignUp(t.size)-t.size]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ggufAlign is the data alignment of a random GGUF (general.alignment is
// left out, so readers take this default).
const ggufAlign = gguf.DefaultAlignment

func alignUp(n int) int { return (n + ggufAlign - 1) / ggufAlign * ggufAlign }

// ggufHeaderSize is the length of the file's header, padded: gguf.Write's
// output for tensors without bytes (the tensors' offsets have a fixed
// width, so their values do not change it).
func ggufHeaderSize(meta []gguf.KV, ts []*randomTensor) (int, error) {
	infos := tensorInfos(ts)
	for i := range infos {
		infos[i].Data = nil
	}
	var c prefixWriter // counts, keeps nothing
	if err := gguf.Write(&c, meta, infos, ggufAlign); err != nil {
		return 0, err
	}
	return -c.left, nil
}

// prefixWriter passes the first left bytes written to it on to w and
// drops the rest (with w nil, it drops everything and counts down left).
type prefixWriter struct {
	w    io.Writer
	left int
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if p.w != nil && p.left > 0 {
		if _, err := p.w.Write(b[:min(len(b), p.left)]); err != nil {
			return 0, err
		}
	}
	p.left -= len(b)
	return len(b), nil
}

func tensorInfos(ts []*randomTensor) []gguf.TensorInfo {
	infos := make([]gguf.TensorInfo, len(ts))
	for i, t := range ts {
		infos[i] = t.TensorInfo
	}
	return infos
}

// NewRandomGGUF builds the model WriteRandomGGUF writes, in memory (one
// region in huge pages where the kernel allows, each tensor made in
// place), loaded by the GGUF loader as the file would be: the products
// round their activations as llama.cpp does. Close frees the memory.
func NewRandomGGUF(name string, s Shape, dtype tensor.DType, seed uint64) (*Model, error) {
	meta, ts, err := randomGGUF(name, s, dtype, seed)
	if err != nil {
		return nil, err
	}
	header, err := ggufHeaderSize(meta, ts)
	if err != nil {
		return nil, fmt.Errorf("arch: random %s: %w", name, err)
	}
	size := header
	for _, t := range ts {
		size += alignUp(t.size)
	}
	region, free, err := mmap.Huge(size)
	if err != nil {
		return nil, fmt.Errorf("arch: random %s: %d bytes of weights: %w", name, size, err)
	}
	fail := func(err error) (*Model, error) {
		free()
		return nil, fmt.Errorf("arch: random %s: %w", name, err)
	}
	off := header
	var scratch []byte
	for _, t := range ts {
		t.Data = region[off : off+t.size]
		off += alignUp(t.size)
		rb := t.rowBytes()
		if err := t.chunks(func(r0, r1 int) error { return t.fill(t.Data[r0*rb:r1*rb], r0, r1, &scratch) }); err != nil {
			return fail(err)
		}
	}
	// The header goes in front; the tensors' bytes are already in place.
	var head bytes.Buffer
	if err := gguf.Write(&prefixWriter{w: &head, left: header}, meta, tensorInfos(ts), ggufAlign); err != nil {
		return fail(err)
	}
	copy(region, head.Bytes())
	f, err := gguf.Parse("random-"+name+".gguf", region)
	if err != nil {
		return fail(err)
	}
	m, err := newGGUF(f, packQuantized(f), 0)
	if err != nil {
		free()
		return nil, err
	}
	m.closer = closerFunc(free)
	return m, nil
}

// randomTensor is one tensor of a random GGUF and how its bytes are made.
type randomTensor struct {
	gguf.TensorInfo              // Name, Dims and Type; Data only while a header is written
	dtype           tensor.DType // Type's
	rows, cols      int          // a vector: 1 row
	vector          bool
	seed            uint64
	size            int // bytes
}

// src is the type a tensor's values are drawn in: its own for a float
// type, float32 for a quantized one, whose blocks QuantizeRow makes from
// those values.
func (t *randomTensor) src() tensor.DType {
	if t.dtype.Quantized() {
		return tensor.F32
	}
	return t.dtype
}

func (t *randomTensor) rowBytes() int {
	elems, bytes := t.dtype.Block()
	return t.cols / elems * bytes
}

// fillBlock is the span of bytes of the stream of tensor.FillUniform that
// has a seed of its own (seed + i·0x9e3779b97f4a7c15 for the i-th): a fill
// of the rows from a multiple of it on, seeded as that span, writes the
// bytes that one fill of the whole tensor writes there
// (TestRandomGGUFChunks holds the two together).
const fillBlock = 1 << 20

// chunkBytes is about how many bytes of values a chunk of a matrix holds.
var chunkBytes = 16 << 20

// chunks calls each for the rows [r0, r1) of the tensor in turn, in
// chunks of about chunkBytes of values that start at a multiple of
// fillBlock (a matrix whose rows only line up with it over more than 16
// chunks' bytes, or that is smaller than a chunk, is one chunk).
func (t *randomTensor) chunks(each func(r0, r1 int) error) error {
	n := t.rows
	if !t.vector {
		row := t.cols * t.src().Size()
		unit := fillBlock / gcd(row, fillBlock) // rows that end on a block's end
		if unit*row <= 16*chunkBytes {
			n = unit * max(1, chunkBytes/(unit*row))
		}
	}
	for r0 := 0; r0 < t.rows; r0 += n {
		if err := each(r0, min(r0+n, t.rows)); err != nil {
			return err
		}
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fill writes rows [r0, r1) of the tensor into dst, (r1-r0)·rowBytes
// bytes: norm weights 1 ± 0.1 and biases ±0.02 (fillTensor), matrices
// uniform ±sqrt(3/cols), the variance of N(0, 1/cols), drawn in src and
// quantized row by row (in parallel) where the tensor is quantized.
// scratch holds the float32 values between calls.
func (t *randomTensor) fill(dst []byte, r0, r1 int, scratch *[]byte) error {
	if t.vector {
		fillTensor(dst, safetensors.Info{Name: t.Name, Shape: []int{t.cols}}, tensor.F32, t.seed)
		return nil
	}
	src := t.src()
	off := r0 * t.cols * src.Size()
	if r0 > 0 && off%fillBlock != 0 {
		return fmt.Errorf("tensor %s: rows from %d do not start a block of random values", t.Name, r0)
	}
	seed := t.seed + uint64(off/fillBlock)*0x9e3779b97f4a7c15
	scale := float32(math.Sqrt(3 / float64(t.cols)))
	if !t.dtype.Quantized() {
		tensor.FillUniform(dst, t.dtype, scale, seed)
		return nil
	}
	rows := r1 - r0
	n := rows * t.cols * 4
	*scratch = slices.Grow((*scratch)[:0], n)[:n]
	values := *scratch
	tensor.FillUniform(values, tensor.F32, scale, seed)
	rb := t.rowBytes()
	workers := min(runtime.GOMAXPROCS(0), rows)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := rows*w/workers, rows*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			row := make([]float32, t.cols)
			for i := lo; i < hi && errs[w] == nil; i++ {
				tensor.Decode(row, values[i*t.cols*4:(i+1)*t.cols*4], tensor.F32)
				errs[w] = tensor.QuantizeRow(dst[i*rb:(i+1)*rb], row, t.dtype)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// randomGGUF lays out the metadata and tensors of WriteRandomGGUF.
func randomGGUF(name string, s Shape, dtype tensor.DType, seed uint64) ([]gguf.KV, []*randomTensor, error) {
	if _, ok := ggufTypeOf[dtype]; !ok {
		return nil, nil, fmt.Errorf("arch: random GGUF %s: dtype %v, want one of %s", name, dtype, randomDTypeNames())
	}
	a := s.Arch
	if a != "llama" && a != "qwen2" {
		return nil, nil, fmt.Errorf("arch: random GGUF %s: architecture %q, want llama or qwen2 (the ones tracer writes as GGUF)", name, a)
	}
	if s.Heads <= 0 || s.Hidden <= 0 || s.Hidden%s.Heads != 0 || s.KVHeads <= 0 || s.Intermediate <= 0 || s.VocabSize <= 0 || s.Layers <= 0 {
		return nil, nil, fmt.Errorf("arch: random GGUF %s: sizes %+v must be positive, with heads dividing the hidden width", name, s)
	}
	h, ff, kv := s.Hidden, s.Intermediate, s.KVHeads*(s.Hidden/s.Heads)
	if dtype.Quantized() && (h%32 != 0 || ff%32 != 0) {
		return nil, nil, fmt.Errorf("arch: random GGUF %s: %s needs widths that are multiples of 32, got hidden %d, intermediate %d", name, dtype, h, ff)
	}
	u32 := func(k string, v int) gguf.KV {
		return gguf.KV{Key: a + "." + k, Type: gguf.TypeUint32, Value: uint32(v)}
	}
	meta := []gguf.KV{
		{Key: "general.architecture", Type: gguf.TypeString, Value: a},
		{Key: "general.name", Type: gguf.TypeString, Value: "random-" + name},
		u32("context_length", s.MaxPositions), u32("embedding_length", h),
		u32("block_count", s.Layers), u32("feed_forward_length", ff),
		u32("attention.head_count", s.Heads), u32("attention.head_count_kv", s.KVHeads),
		{Key: a + ".attention.layer_norm_rms_epsilon", Type: gguf.TypeFloat32, Value: float32(s.normEps())},
		{Key: a + ".rope.freq_base", Type: gguf.TypeFloat32, Value: float32(s.ropeTheta())},
		{Key: "tokenizer.ggml.bos_token_id", Type: gguf.TypeUint32, Value: uint32(1)},
		{Key: "tokenizer.ggml.eos_token_id", Type: gguf.TypeUint32, Value: uint32(2)},
	}
	meta = append(meta, randomVocab(s.VocabSize)...)

	// A matrix takes dtype, or its fallback where its rows of cols values
	// are not whole blocks of it; the head takes Q6_K, or Q8_0 (see
	// WriteRandomGGUF).
	matrix := func(cols int) tensor.DType {
		if elems, _ := dtype.Block(); cols%elems != 0 {
			return tensor.KFallback(dtype)
		}
		return dtype
	}
	head := dtype
	if dtype.Quantized() {
		head = tensor.Q6_K
		if dtype == tensor.Q8_0 || h%256 != 0 {
			head = tensor.Q8_0
		}
	}
	var ts []*randomTensor
	add := func(n string, dt tensor.DType, dims ...int) {
		t := &randomTensor{TensorInfo: gguf.TensorInfo{Name: n, Type: ggufTypeOf[dt]}, dtype: dt, seed: tensorSeed(seed, len(ts))}
		for _, d := range dims {
			t.Dims = append(t.Dims, uint64(d))
		}
		t.cols, t.rows, t.vector = dims[0], 1, len(dims) == 1
		if !t.vector {
			t.rows = dims[1]
		}
		t.size = t.rows * t.rowBytes()
		ts = append(ts, t)
	}
	embd := matrix(h)
	if s.Tied {
		embd = head
	}
	add("token_embd.weight", embd, h, s.VocabSize)
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", tensor.F32, h)
		add(p+"attn_q.weight", matrix(h), h, h)
		add(p+"attn_k.weight", matrix(h), h, kv)
		add(p+"attn_v.weight", matrix(h), h, kv)
		if a == "qwen2" {
			add(p+"attn_q.bias", tensor.F32, h)
			add(p+"attn_k.bias", tensor.F32, kv)
			add(p+"attn_v.bias", tensor.F32, kv)
		}
		add(p+"attn_output.weight", matrix(h), h, h)
		add(p+"ffn_norm.weight", tensor.F32, h)
		add(p+"ffn_gate.weight", matrix(h), h, ff)
		add(p+"ffn_up.weight", matrix(h), h, ff)
		add(p+"ffn_down.weight", matrix(ff), ff, h)
	}
	add("output_norm.weight", tensor.F32, h)
	if !s.Tied {
		add("output.weight", head, h, s.VocabSize)
	}
	return meta, ts, nil
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
