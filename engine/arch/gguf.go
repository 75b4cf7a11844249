package arch

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"tracer/engine"
	"tracer/engine/gguf"
	"tracer/engine/tensor"
)

// A GGUF file (llama.cpp, Ollama) holds the hyperparameters as metadata
// under the architecture's name ("llama.embedding_length") and the weights
// under llama.cpp's tensor names:
//
//	token_embd.weight (vocab, hidden)   output_norm.weight (hidden)   output.weight (vocab, hidden), absent when tied
//	blk.N.attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down (.weight)
//	qwen2: blk.N.attn_q.bias, attn_k.bias, attn_v.bias
//
// each 2-D weight stored [out, in] (ggml lists the dims innermost first:
// [in, out]). llama.cpp's converter stores a Llama's q and k rows in
// Meta's interleaved rotary order, so the llama architecture rotates pairs
// (2i, 2i+1) as llama2.c does; qwen2 keeps Hugging Face's rotate-half.
//
// The weights keep their stored type. F16 weights take
// activations rounded to binary16, and quantized ones activations rounded
// to 8-bit blocks, as llama.cpp computes them (tensor.RoundF16,
// tensor's quant.go).

// OpenGGUF loads the GGUF file at path, memory-mapped: architectures llama
// (Llama 2/3, TinyLlama, SmolLM2 layouts), qwen2 and gpt2; tensor types F32, F16,
// BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K
// and IQ4_XS, mixed freely. The weight
// matrices are read from a copy in huge pages where the kernel allows
// (huge.go says why; Mapped: no copy). The result is a *Model; Close it
// to unmap the file and free the copy.
func OpenGGUF(path string, opts ...OpenOption) (engine.Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("arch: %w", err)
	}
	return OpenGGUFFile(f, opts...)
}

// OpenGGUFFile is OpenGGUF on a file already open (parsed once, so that a
// caller can read its tokenizer from the same parse). The model owns f from
// then on: its Close closes f, and so does a failed open.
func OpenGGUFFile(f *gguf.File, opts ...OpenOption) (engine.Model, error) {
	var freeCopies func() error
	var packed map[string]bool
	if !configOf(opts).mapped {
		freeCopies, packed = copyWeights(f)
	}
	closeAll := func() error {
		err := f.Close()
		if freeCopies != nil {
			err = errors.Join(err, freeCopies())
		}
		return err
	}
	m, err := newGGUF(f, packed, configOf(opts).quant)
	if err != nil {
		closeAll()
		return nil, err
	}
	m.closer = closerFunc(closeAll)
	return m, nil
}

// ggufLoader takes tensors out of a GGUF file, checking type and shape, and
// counts what it hands out.
type ggufLoader struct {
	f       *gguf.File
	used    map[string]bool // the tensors handed out
	params  int64
	bytes   int64
	byDType map[tensor.DType]int64
	packed  map[string]bool // the tensors packQuantized rewrote
	qc      quantCount      // quantizes float matrices as they load (the Quantized option)
}

// dtypeOf maps a ggml type to the tensor dtype that computes with it.
func dtypeOf(t gguf.Type) (tensor.DType, bool) {
	m := map[gguf.Type]tensor.DType{
		gguf.F32: tensor.F32, gguf.F16: tensor.F16, gguf.BF16: tensor.BF16,
		gguf.Q8_0: tensor.Q8_0, gguf.Q4_0: tensor.Q4_0, gguf.Q4_K: tensor.Q4_K, gguf.Q5_K: tensor.Q5_K, gguf.Q6_K: tensor.Q6_K,
		gguf.Q4_1: tensor.Q4_1, gguf.Q5_0: tensor.Q5_0, gguf.Q5_1: tensor.Q5_1, gguf.Q2_K: tensor.Q2_K, gguf.Q3_K: tensor.Q3_K,
		gguf.IQ4_NL: tensor.IQ4_NL, gguf.IQ4_XS: tensor.IQ4_XS,
	}
	dt, ok := m[t]
	return dt, ok
}

// get returns the tensor called name with dims (innermost first).
func (ld *ggufLoader) get(name string, dims ...int) (gguf.TensorInfo, tensor.DType, error) {
	t, ok := ld.f.Tensor(name)
	if !ok {
		return t, 0, fmt.Errorf("arch: %s: tensor %q is missing", ld.f.Name, name)
	}
	dt, ok := dtypeOf(t.Type)
	if !ok {
		return t, 0, fmt.Errorf("arch: %s: tensor %q has type %s, which tracer cannot compute with (want F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K or IQ4_XS)", ld.f.Name, name, t.Type)
	}
	same := len(t.Dims) == len(dims)
	for i := 0; same && i < len(dims); i++ {
		same = t.Dims[i] == uint64(dims[i])
	}
	if !same {
		return t, 0, fmt.Errorf("arch: %s: tensor %q has dims %v, the metadata says %v", ld.f.Name, name, t.Dims, dims)
	}
	ld.params += t.Elements()
	ld.bytes += int64(len(t.Data))
	ld.byDType[dt] += int64(len(t.Data))
	ld.used[name] = true
	return t, dt, nil
}

// matrix returns the (rows, cols) weight called name, in place, marked to
// round its activations as llama.cpp does, and a Q4_0 matrix of a
// multiple of 8 rows to sum as llama.cpp's repacked kernels do
// (tensor.Matrix.SumBlocks): its CPU backend (b4748, on x86 with AVX2)
// repacks every such matrix it multiplies with for
// ggml_gemv/gemm_q4_0_8x8_q8_0. The embeddings stay in the file's layout
// (a row lookup cannot take the repacked one), and so does a tied output
// matrix, which is the embedding: its products sum as
// ggml_vec_dot_q4_0_q8_0 does.
func (ld *ggufLoader) matrix(name string, rows, cols int) (tensor.Matrix, error) {
	t, dt, err := ld.get(name, cols, rows)
	if err != nil {
		return tensor.Matrix{}, err
	}
	var m tensor.Matrix
	switch {
	case ld.packed[name]:
		m, err = tensor.NewPackedQuantMatrix(t.Data, dt, rows, cols)
	case dt.Quantized():
		m, err = tensor.NewQuantMatrix(t.Data, dt, rows, cols)
	default:
		if m, err = tensor.NewMatrix(t.Data, dt, rows, cols); err == nil {
			m, err = ld.qc.matrix(m)
		}
	}
	if err != nil {
		return m, fmt.Errorf("arch: %s: tensor %q: %w", ld.f.Name, name, err)
	}
	if m.DType.Quantized() {
		if m.DType == tensor.Q4_0 && rows%8 == 0 && !strings.HasSuffix(name, "embd.weight") {
			m = m.SumBlocks()
		}
		return m, nil
	}
	return m.RoundF16(), nil
}

// vector returns the (n) tensor called name as float32.
func (ld *ggufLoader) vector(name string, n int) ([]float32, error) {
	t, dt, err := ld.get(name, n)
	if err != nil {
		return nil, err
	}
	if dt.Quantized() {
		return nil, fmt.Errorf("arch: %s: tensor %q is %s: tracer wants norm weights and biases as F32, F16 or BF16", ld.f.Name, name, t.Type)
	}
	v := make([]float32, n)
	tensor.Decode(v, t.Data, dt)
	return v, nil
}

// ggufInt reads the integer metadata key a.key: def when absent (an error
// when def < 0), at most 2^30.
func ggufInt(f *gguf.File, a, key string, def int64) (int, error) {
	v, ok, err := f.Uint(a + "." + key)
	if err != nil {
		return 0, fmt.Errorf("arch: %w", err)
	}
	if !ok {
		if def < 0 {
			return 0, fmt.Errorf("arch: %s: metadata %q is missing", f.Name, a+"."+key)
		}
		return int(def), nil
	}
	if v > 1<<30 {
		return 0, fmt.Errorf("arch: %s: metadata %q is %d, over tracer's limit of 2^30", f.Name, a+"."+key, v)
	}
	return int(v), nil
}

// ggufSizes reads the sizes every architecture has and checks them.
func ggufSizes(f *gguf.File, a string) (dims, error) {
	var d dims
	var err error
	steps := []struct {
		dst *int
		key string
		def int64
	}{
		{&d.hidden, "embedding_length", -1}, {&d.layers, "block_count", -1}, {&d.ffn, "feed_forward_length", -1},
		{&d.heads, "attention.head_count", -1}, {&d.maxPos, "context_length", 0},
	}
	for _, s := range steps {
		if *s.dst, err = ggufInt(f, a, s.key, s.def); err != nil {
			return d, err
		}
	}
	if d.kvHeads, err = ggufInt(f, a, "attention.head_count_kv", int64(d.heads)); err != nil {
		return d, err
	}
	if err := checkLimits(f.Name, limit{a + ".embedding_length", d.hidden, maxWidth}, limit{a + ".block_count", d.layers, maxLayers},
		limit{a + ".feed_forward_length", d.ffn, maxWidth}, limit{a + ".attention.head_count", d.heads, maxHeads},
		limit{a + ".attention.head_count_kv", d.kvHeads, maxHeads}); err != nil {
		return d, err
	}
	if d.hidden <= 0 || d.layers <= 0 || d.ffn <= 0 || d.heads <= 0 || d.kvHeads <= 0 || d.hidden%d.heads != 0 || d.heads%d.kvHeads != 0 {
		return d, fmt.Errorf("arch: %s: %s.embedding_length %d, block_count %d, feed_forward_length %d, attention.head_count %d and head_count_kv %d must be positive, heads must divide the width and kv heads the heads",
			f.Name, a, d.hidden, d.layers, d.ffn, d.heads, d.kvHeads)
	}
	d.headDim = d.hidden / d.heads
	return d, nil
}

// ggufDims reads the hyperparameters of a Llama-family architecture a
// from the metadata: sizes, RMSNorm epsilon and rotary base.
func ggufDims(f *gguf.File, a string) (dims, float32, float64, error) {
	get := func(key string, def int64) (int, error) { return ggufInt(f, a, key, def) }
	d, err := ggufSizes(f, a)
	if err != nil {
		return d, 0, 0, err
	}
	if kl, err := get("attention.key_length", int64(d.headDim)); err != nil || kl != d.headDim {
		if err == nil {
			err = fmt.Errorf("arch: %s: %s.attention.key_length %d differs from embedding_length/head_count %d: not supported", f.Name, a, kl, d.headDim)
		}
		return d, 0, 0, err
	}
	if d.headDim%2 != 0 {
		return d, 0, 0, fmt.Errorf("arch: %s: head size %d is odd: rotary embeddings need pairs", f.Name, d.headDim)
	}
	if rd, err := get("rope.dimension_count", int64(d.headDim)); err != nil || rd != d.headDim {
		if err == nil {
			err = fmt.Errorf("arch: %s: %s.rope.dimension_count %d is not the head size %d: partial rotary embeddings are not supported", f.Name, a, rd, d.headDim)
		}
		return d, 0, 0, err
	}
	if s, ok, _ := f.String(a + ".rope.scaling.type"); ok && s != "none" {
		return d, 0, 0, fmt.Errorf("arch: %s: %s.rope.scaling.type %q not supported (tracer implements plain rotary embeddings only)", f.Name, a, s)
	}
	eps, theta := 1e-5, 10000.0
	if v, ok, err := f.Float(a + ".attention.layer_norm_rms_epsilon"); err != nil {
		return d, 0, 0, fmt.Errorf("arch: %w", err)
	} else if ok {
		eps = v
	}
	if v, ok, err := f.Float(a + ".rope.freq_base"); err != nil {
		return d, 0, 0, fmt.Errorf("arch: %w", err)
	} else if ok {
		theta = v
	}
	if !(eps >= 0 && eps <= 1) || !(theta > 0 && theta < 1e30) {
		return d, 0, 0, fmt.Errorf("arch: %s: rms epsilon %v must be in [0, 1] and rope.freq_base %v positive", f.Name, eps, theta)
	}
	return d, float32(eps), theta, nil
}

// newGGUF builds a model on a parsed GGUF file.
func newGGUF(f *gguf.File, packed map[string]bool, quant tensor.DType) (*Model, error) {
	a, _, err := f.String("general.architecture")
	if err != nil {
		return nil, fmt.Errorf("arch: %w", err)
	}
	ld := &ggufLoader{f: f, used: map[string]bool{}, byDType: map[tensor.DType]int64{}, packed: packed, qc: quantCount{quant: quant, byDType: map[tensor.DType]int64{}}}
	var (
		d        dims
		net      network
		cost     costModel
		rounding []string
	)
	switch a {
	case "llama", "qwen2":
		n, err := loadGGUFLlama(f, ld, a)
		if err != nil {
			return nil, err
		}
		d, net, cost, rounding = n.d, n, ggufCost(n), activationRounding(n)
	case "gpt2":
		n, err := loadGGUFGPT2(f, ld)
		if err != nil {
			return nil, err
		}
		d, net, cost, rounding = n.d, n, n.cost(), n.rounding()
	default:
		return nil, fmt.Errorf("arch: %s: general.architecture %q not supported (want llama, qwen2 or gpt2)", f.Name, a)
	}
	// A tensor left over belongs to a variant tracer does not compute
	// (Llama 3.1's rope_freqs, extra norms, biases): refuse rather than
	// run another model than the file's.
	for _, t := range f.Tensors {
		if !ld.used[t.Name] {
			return nil, fmt.Errorf("arch: %s: tensor %q is not part of the %s layout tracer implements (a variant of %s it cannot compute?)", f.Name, t.Name, a, a)
		}
	}
	ld.bytes += ld.qc.bytes // what quantizing as it loaded changed
	for dt, b := range ld.qc.byDType {
		if ld.byDType[dt] += b; ld.byDType[dt] <= 0 {
			delete(ld.byDType, dt)
		}
	}
	best := tensor.F32
	for dt, b := range ld.byDType {
		if b > ld.byDType[best] || b == ld.byDType[best] && dt < best {
			best = dt
		}
	}
	name, _, _ := f.String("general.name")
	if name == "" || name == a {
		name = strings.TrimSuffix(filepath.Base(f.Name), filepath.Ext(f.Name))
	}
	info := engine.Info{
		Name: name, Kind: "gguf", Architecture: a, VocabSize: d.vocab, MaxPositions: d.maxPos,
		Layers: d.layers, Hidden: d.hidden, Heads: d.heads, KVHeads: d.kvHeads, HeadDim: d.headDim, Intermediate: d.ffn,
		Params: ld.params, DType: best.String(), WeightBytes: ld.bytes, KVBytesPerToken: d.kvBytesPerToken(),
		WeightTypes: map[string]int64{}, ActivationRounding: rounding,
	}
	for dt, b := range ld.byDType {
		info.WeightTypes[dt.String()] = b
	}
	if err := ggufSpecials(&info, f); err != nil {
		return nil, err
	}
	return newModel(info, d, net, cost, nil), nil
}

// loadGGUFLlama reads a llama or qwen2 GGUF's weights.
func loadGGUFLlama(f *gguf.File, ld *ggufLoader, a string) (*llama, error) {
	d, eps, theta, err := ggufDims(f, a)
	if err != nil {
		return nil, err
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 || emb.Dims[0] != uint64(d.hidden) || emb.Dims[1] > maxWidth {
		return nil, fmt.Errorf("arch: %s: tensor \"token_embd.weight\" is missing or not (%d, vocab) with vocab ≤ %d", f.Name, d.hidden, maxWidth)
	}
	d.vocab = int(emb.Dims[1])
	n := &llama{d: d, eps: eps, pairs: a == "llama", layers: make([]llamaLayer, d.layers)}
	if n.embedW, err = ld.matrix("token_embd.weight", d.vocab, d.hidden); err != nil {
		return nil, err
	}
	for l := range n.layers {
		if err := ld.layer(&n.layers[l], d, fmt.Sprintf("blk.%d.", l), a == "qwen2"); err != nil {
			return nil, err
		}
	}
	if n.normW, err = ld.vector("output_norm.weight", d.hidden); err != nil {
		return nil, err
	}
	n.lmHead = n.embedW
	if _, ok := f.Tensor("output.weight"); ok {
		if n.lmHead, err = ld.matrix("output.weight", d.vocab, d.hidden); err != nil {
			return nil, err
		}
	}
	// Products that round their inputs (quantized or F16 weights) flip a
	// rounding where an input differs from llama.cpp's by an ulp, so
	// those files compute the inputs in ggml's float order; F32 files keep
	// tracer's, which their Hugging Face and llama2.c forms share.
	n.ggml = len(activationRounding(n)) > 0
	n.invFreq = make([]float32, d.headDim/2)
	tensor.RopeInvFreq(n.invFreq, d.headDim, theta)
	n.thetaScale = float32(math.Pow(float64(float32(theta)), float64(float32(-2)/float32(d.headDim))))
	return n, nil
}

// layer reads the tensors of one block.
func (ld *ggufLoader) layer(L *llamaLayer, d dims, pre string, qwen bool) error {
	q, kv, h, ff := d.qDim(), d.kvDim(), d.hidden, d.ffn
	mats := []struct {
		dst        *tensor.Matrix
		name       string
		rows, cols int
	}{
		{&L.wq, "attn_q", q, h}, {&L.wk, "attn_k", kv, h}, {&L.wv, "attn_v", kv, h}, {&L.wo, "attn_output", h, q},
		{&L.gate, "ffn_gate", ff, h}, {&L.up, "ffn_up", ff, h}, {&L.down, "ffn_down", h, ff},
	}
	var err error
	for _, m := range mats {
		if *m.dst, err = ld.matrix(pre+m.name+".weight", m.rows, m.cols); err != nil {
			return err
		}
	}
	vecs := []struct {
		dst  *[]float32
		name string
		n    int
		want bool
	}{
		{&L.attnNorm, "attn_norm.weight", h, true}, {&L.mlpNorm, "ffn_norm.weight", h, true},
		{&L.bq, "attn_q.bias", q, qwen}, {&L.bk, "attn_k.bias", kv, qwen}, {&L.bv, "attn_v.bias", kv, qwen},
	}
	for _, v := range vecs {
		if !v.want {
			continue
		}
		if *v.dst, err = ld.vector(pre+v.name, v.n); err != nil {
			return err
		}
	}
	return nil
}

// ggufCost is the llama cost model with the real bytes of every weight:
// quantized blocks at their size (Q8_0 34/32 bytes per weight, Q4_K
// 144/256, ...), norm vectors as the F32 they are stored in, and one
// embedding row at the embedding's type.
func ggufCost(n *llama) costModel {
	c := n.costAt(4)
	c.tokenBytes = n.embedW.Bytes() / int64(n.embedW.Rows)
	return c
}

// ggufSpecials fills BOS, EOS and PAD from tokenizer.ggml.*_token_id; ids
// outside the vocabulary (llama.cpp's converter writes 4294967295 for
// "none") mean none.
func ggufSpecials(info *engine.Info, f *gguf.File) error {
	id := func(key string) (int, error) {
		v, ok, err := f.Uint("tokenizer.ggml." + key)
		if err != nil {
			return -1, fmt.Errorf("arch: %w", err)
		}
		if !ok || v >= uint64(info.VocabSize) {
			return -1, nil
		}
		return int(v), nil
	}
	var err error
	if info.BOS, err = id("bos_token_id"); err != nil {
		return err
	}
	if info.PAD, err = id("padding_token_id"); err != nil {
		return err
	}
	eos, err := id("eos_token_id")
	if err != nil {
		return err
	}
	info.EOS = []int{}
	if eos >= 0 {
		info.EOS = append(info.EOS, eos)
	}
	if eot, err := id("eot_token_id"); err == nil && eot >= 0 && eot != eos {
		info.EOS = append(info.EOS, eot)
	}
	return nil
}

// activationRounding lists how the model's products round their inputs,
// in the order first met: "f16", "q8_0", "q8_1", "q8_k"; nil when none does.
func activationRounding(n *llama) []string {
	mats := []tensor.Matrix{n.lmHead}
	for _, L := range n.layers {
		mats = append(mats, L.wq, L.wk, L.wv, L.wo, L.gate, L.up, L.down)
	}
	return roundingOf(mats)
}

// roundingOf lists the distinct activation roundings of mats.
func roundingOf(mats []tensor.Matrix) []string {
	var out []string
	for _, m := range mats {
		if r := m.ActRounding(); r != "f32" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
