package arch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"path/filepath"
	"strings"

	"tracer/engine"
	"tracer/engine/internal/mmap"
	"tracer/engine/tensor"
)

// A llama2.c checkpoint (Karpathy's run.c) is a header of seven
// little-endian int32
//
//	dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
//
// (a negative vocab_size means the classifier is not shared with the token
// embedding) followed by float32 tensors, stored [out, in]:
//
//	token_embedding (vocab, dim)
//	rms_att (layers, dim)
//	wq (layers, dim, dim)   wk, wv (layers, kv_dim, dim)   wo (layers, dim, dim)
//	rms_ffn (layers, dim)
//	w1 (layers, hidden_dim, dim)   w2 (layers, dim, hidden_dim)   w3 (layers, hidden_dim, dim)
//	rms_final (dim)
//	freq_cis_real, freq_cis_imag (seq_len, head_size/2): unused, run.c skips them
//	wcls (vocab, dim): only when vocab_size was negative
//
// with head_size = dim/n_heads and kv_dim = n_kv_heads·head_size. The model
// is Llama with llama2.c's interleaved rotary pairs (2i, 2i+1), theta 10000
// and RMSNorm eps 1e-5.

// llama2cHeaderSize is the byte size of the seven int32 header fields.
const llama2cHeaderSize = 7 * 4

// llama2cHeader is a checked header.
type llama2cHeader struct {
	dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen int
	shared                                                bool // classifier = token embedding
}

// llama2cTensor is one tensor of the file, per layer when layered.
type llama2cTensor struct {
	name       string
	layered    bool // one slice per layer
	layers     int  // slices: n_layers when layered, else 1
	rows, cols int  // of one layer's slice
	offset     int  // byte offset in the file
}

// parseLlama2cHeader checks the header fields and returns them.
func parseLlama2cHeader(file string, data []byte) (llama2cHeader, error) {
	if len(data) < llama2cHeaderSize {
		return llama2cHeader{}, fmt.Errorf("arch: %s: %d bytes, too short for the 28-byte llama2.c header", file, len(data))
	}
	var f [7]int
	for i := range f {
		f[i] = int(int32(binary.LittleEndian.Uint32(data[4*i:])))
	}
	h := llama2cHeader{dim: f[0], hiddenDim: f[1], layers: f[2], heads: f[3], kvHeads: f[4], vocab: f[5], seqLen: f[6], shared: f[5] > 0}
	if h.vocab < 0 {
		h.vocab = -h.vocab
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("arch: %s: llama2.c header: "+format, append([]any{file}, args...)...)
	}
	names := []string{"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"}
	for i, v := range f {
		if v == 0 || (v < 0 && i != 5) || v == -1<<31 {
			return h, bad("%s is %d, want a positive number (not a llama2.c checkpoint?)", names[i], v)
		}
	}
	switch {
	case h.dim%h.heads != 0:
		return h, bad("n_heads %d does not divide dim %d", h.heads, h.dim)
	case h.kvHeads > h.heads || h.heads%h.kvHeads != 0:
		return h, bad("n_kv_heads %d does not divide n_heads %d", h.kvHeads, h.heads)
	case (h.dim/h.heads)%2 != 0:
		return h, bad("head size %d (dim %d / n_heads %d) is odd: rotary embeddings need pairs", h.dim/h.heads, h.dim, h.heads)
	}
	return h, nil
}

// tensors lays out the file's tensors after the header and returns them
// with the file size they imply, or an error naming the first tensor that
// runs past fileSize (or past any sane size).
func (h llama2cHeader) tensors(file string, fileSize int) ([]llama2cTensor, int, error) {
	hs := h.dim / h.heads
	kv := h.kvHeads * hs
	list := []llama2cTensor{
		{name: "token_embedding", layers: 1, rows: h.vocab, cols: h.dim},
		{name: "rms_att", layered: true, layers: h.layers, rows: 1, cols: h.dim},
		{name: "wq", layered: true, layers: h.layers, rows: h.dim, cols: h.dim},
		{name: "wk", layered: true, layers: h.layers, rows: kv, cols: h.dim},
		{name: "wv", layered: true, layers: h.layers, rows: kv, cols: h.dim},
		{name: "wo", layered: true, layers: h.layers, rows: h.dim, cols: h.dim},
		{name: "rms_ffn", layered: true, layers: h.layers, rows: 1, cols: h.dim},
		{name: "w1", layered: true, layers: h.layers, rows: h.hiddenDim, cols: h.dim},
		{name: "w2", layered: true, layers: h.layers, rows: h.dim, cols: h.hiddenDim},
		{name: "w3", layered: true, layers: h.layers, rows: h.hiddenDim, cols: h.dim},
		{name: "rms_final", layers: 1, rows: 1, cols: h.dim},
		{name: "freq_cis_real", layers: 1, rows: h.seqLen, cols: hs / 2},
		{name: "freq_cis_imag", layers: 1, rows: h.seqLen, cols: hs / 2},
	}
	if !h.shared {
		list = append(list, llama2cTensor{name: "wcls", layers: 1, rows: h.vocab, cols: h.dim})
	}
	off := uint64(llama2cHeaderSize)
	for i := range list {
		t := &list[i]
		t.offset = int(off)
		size, ok := mulAll(uint64(t.layers), uint64(t.rows), uint64(t.cols), 4)
		if ok {
			off, ok = addSafe(off, size)
		}
		if !ok || off > uint64(fileSize) {
			return nil, 0, fmt.Errorf("arch: %s: tensor %q (%s) runs past the end of the %d-byte file: the header (%s) does not match the file",
				file, t.name, t.shape(), fileSize, h)
		}
	}
	return list, int(off), nil
}

func (t llama2cTensor) shape() string {
	if t.layered {
		return fmt.Sprintf("%d layers × %d × %d floats", t.layers, t.rows, t.cols)
	}
	return fmt.Sprintf("%d × %d floats", t.rows, t.cols)
}

func (h llama2cHeader) String() string {
	v := h.vocab
	if !h.shared {
		v = -v
	}
	return fmt.Sprintf("dim %d, hidden_dim %d, n_layers %d, n_heads %d, n_kv_heads %d, vocab_size %d, seq_len %d",
		h.dim, h.hiddenDim, h.layers, h.heads, h.kvHeads, v, h.seqLen)
}

// mulAll multiplies, reporting false on overflow past 2^62.
func mulAll(v ...uint64) (uint64, bool) {
	p := uint64(1)
	for _, x := range v {
		hi, lo := bits.Mul64(p, x)
		if hi != 0 || lo > 1<<62 {
			return 0, false
		}
		p = lo
	}
	return p, true
}

func addSafe(a, b uint64) (uint64, bool) {
	s := a + b
	return s, s >= a && s <= 1<<62
}

// OpenLlama2c loads the llama2.c checkpoint at path, memory-mapped, its
// weights read from a copy in huge pages where the kernel allows (huge.go
// says why; Mapped: no copy). The result is a *Model with BOS 1, EOS [2]
// and no pad; Close it to unmap the file.
func OpenLlama2c(path string, opts ...OpenOption) (engine.Model, error) {
	data, unmap, err := mmap.File(path)
	if err != nil {
		return nil, fmt.Errorf("arch: %s: %w", path, err)
	}
	closeAll := unmap
	if !configOf(opts).mapped {
		if c, free := hugeCopy([][]byte{data}); c != nil {
			data = c[0]
			closeAll = func() error { return errors.Join(unmap(), free()) }
		}
	}
	m, err := newLlama2c(path, data, configOf(opts).quant)
	if err != nil {
		closeAll()
		return nil, err
	}
	m.closer = closerFunc(closeAll)
	return m, nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// newLlama2c builds a model on the bytes of a llama2.c checkpoint, its
// matrices quantized to quant when not 0 (quantize.go); file names it in
// errors and Info.
func newLlama2c(file string, data []byte, quant tensor.DType) (*Model, error) {
	h, err := parseLlama2cHeader(file, data)
	if err != nil {
		return nil, err
	}
	list, size, err := h.tensors(file, len(data))
	if err != nil {
		return nil, err
	}
	if size != len(data) {
		return nil, fmt.Errorf("arch: %s: %d bytes after the last tensor %q: the header (%s) does not match the file", file, len(data)-size, list[len(list)-1].name, h)
	}
	d := dims{vocab: h.vocab, hidden: h.dim, layers: h.layers, heads: h.heads, kvHeads: h.kvHeads,
		headDim: h.dim / h.heads, ffn: h.hiddenDim, maxPos: h.seqLen}
	n := &llama{d: d, eps: 1e-5, pairs: true, invFreq: make([]float32, d.headDim/2), layers: make([]llamaLayer, d.layers)}
	tensor.RopeInvFreq(n.invFreq, d.headDim, 10000)
	var params int64
	qc := &quantCount{quant: quant, byDType: map[tensor.DType]int64{}}
	for _, t := range list {
		per := t.rows * t.cols * 4
		if !strings.HasPrefix(t.name, "freq_cis") {
			params += int64(t.layers) * int64(t.rows) * int64(t.cols)
		}
		for l := 0; l < t.layers; l++ {
			b := data[t.offset+l*per : t.offset+(l+1)*per]
			if err := n.setLlama2c(t.name, l, b, t.rows, t.cols, qc); err != nil {
				return nil, fmt.Errorf("arch: %s: tensor %q: %w", file, t.name, err)
			}
		}
	}
	if h.shared {
		n.lmHead = n.embedW
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	info := engine.Info{
		Name: name, Kind: "llama2c", Architecture: "llama2c",
		VocabSize: d.vocab, MaxPositions: d.maxPos,
		Layers: d.layers, Hidden: d.hidden, Heads: d.heads, KVHeads: d.kvHeads, HeadDim: d.headDim, Intermediate: d.ffn,
		Params: params, DType: tensor.F32.String(), WeightBytes: params*4 + qc.bytes, KVBytesPerToken: d.kvBytesPerToken(),
		BOS: 1, EOS: []int{2}, PAD: -1,
	}
	qc.describe(&info, activationRounding(n))
	return newModel(info, d, n, n.cost(), nil), nil
}

// setLlama2c stores layer l's slice b (rows, cols) of the tensor called
// name; qc quantizes the matrices (quantize.go).
func (n *llama) setLlama2c(name string, l int, b []byte, rows, cols int, qc *quantCount) error {
	vec := func() []float32 {
		v := make([]float32, rows*cols)
		tensor.Decode(v, b, tensor.F32)
		return v
	}
	mat := func(dst *tensor.Matrix) (err error) {
		if *dst, err = tensor.NewMatrix(b, tensor.F32, rows, cols); err != nil {
			return err
		}
		*dst, err = qc.matrix(*dst)
		return err
	}
	L := &n.layers[min(l, len(n.layers)-1)]
	switch name {
	case "token_embedding":
		return mat(&n.embedW)
	case "wcls":
		return mat(&n.lmHead)
	case "rms_att":
		L.attnNorm = vec()
	case "rms_ffn":
		L.mlpNorm = vec()
	case "rms_final":
		n.normW = vec()
	case "wq":
		return mat(&L.wq)
	case "wk":
		return mat(&L.wk)
	case "wv":
		return mat(&L.wv)
	case "wo":
		return mat(&L.wo)
	case "w1":
		return mat(&L.gate)
	case "w2":
		return mat(&L.down)
	case "w3":
		return mat(&L.up)
	}
	return nil // freq_cis: llama2.c's own table of the angles we compute
}
