package hub

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"tracer/engine/gguf"

	"tracer/engine/safetensors"
)

// countTensors adds the parameter count of each tensor in a safetensors
// file to byDType (by dtype name, "F32", "BF16", ...). The file is mapped,
// not read: only its header is parsed.
func countTensors(path string, byDType map[string]int64) error {
	f, err := safetensors.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, name := range f.Names() {
		t, _ := f.Tensor(name)
		byDType[string(t.DType)] += t.Elements()
	}
	return nil
}

// llama2cMagic opens llama2.c's versioned checkpoints ("ak42" read as a
// little-endian uint32); the legacy format starts with the config instead.
const llama2cMagic = 0x616b3432

// llama2cConfig is the header of a llama2.c checkpoint: seven int32s.
type llama2cConfig struct {
	Dim, HiddenDim, NLayers, NHeads, NKVHeads, VocabSize, SeqLen int32
}

// describeLlama2c reads a llama2.c checkpoint's header and checks it against
// the file size.
func describeLlama2c(path string, size int64) (Description, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return Description{}, err
	}
	defer f.Close()
	notOne := fmt.Errorf("%s: not a llama2.c checkpoint", path)
	var head [2]uint32
	if err := binary.Read(f, binary.LittleEndian, &head); err != nil {
		return Description{}, notOne
	}
	version, offset := 0, int64(0)
	if head[0] == llama2cMagic {
		version, offset = int(head[1]), 8
	}
	var c llama2cConfig
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return Description{}, err
	}
	if err := binary.Read(f, binary.LittleEndian, &c); err != nil {
		return Description{}, notOne
	}
	shared := c.VocabSize > 0 // legacy: a negative vocab size means a separate classifier
	if version > 0 {
		var flag [1]byte
		if _, err := io.ReadFull(f, flag[:]); err != nil {
			return Description{}, notOne
		}
		shared = flag[0] == 1
	}
	params, freqs, err := c.params(shared)
	if err != nil {
		return Description{}, fmt.Errorf("%s: not a llama2.c checkpoint: %v", path, err)
	}
	d := Description{Format: "llama2.c", Architecture: "llama2.c", ModelType: "llama", Params: params, DType: "float32"}
	switch version {
	case 0:
		if size != 28+4*(params+freqs) {
			return Description{}, fmt.Errorf("%s: not a llama2.c checkpoint: %d bytes, its header implies %d", path, size, 28+4*(params+freqs))
		}
	case 1:
		if size != 256+4*params {
			return Description{}, fmt.Errorf("%s: not a llama2.c checkpoint: %d bytes, its header implies %d", path, size, 256+4*params)
		}
	case 2:
		d.DType = "int8"
	default:
		return Description{}, fmt.Errorf("%s: llama2.c checkpoint version %d is unknown", path, version)
	}
	dir := filepath.Dir(path)
	d.Tokenizer = isFile(filepath.Join(dir, "tokenizer.bin"))
	return d, nil
}

// params counts the weights of the checkpoint (and, separately, the
// legacy format's RoPE tables, seq_len × head_size floats).
func (c llama2cConfig) params(shared bool) (params, freqs int64, err error) {
	vocab := int64(c.VocabSize)
	if vocab < 0 {
		vocab = -vocab
	}
	dim, hidden, layers, heads, kvHeads, seq := int64(c.Dim), int64(c.HiddenDim), int64(c.NLayers), int64(c.NHeads), int64(c.NKVHeads), int64(c.SeqLen)
	const limit = 1 << 18 // keeps every product below 2^63
	for _, v := range []int64{dim, hidden, layers, heads, kvHeads, vocab, seq} {
		if v <= 0 || v > limit {
			return 0, 0, errors.New("implausible header")
		}
	}
	if dim%heads != 0 || kvHeads > heads || heads%kvHeads != 0 {
		return 0, 0, errors.New("implausible header")
	}
	headSize := dim / heads
	kvDim := kvHeads * headSize
	perLayer := 2*dim + // rms_att_weight, rms_ffn_weight
		2*dim*dim + 2*dim*kvDim + // wq, wo (dim, dim); wk, wv (dim, kv_dim)
		3*dim*hidden // w1, w3 (hidden, dim); w2 (dim, hidden)
	params = vocab*dim + layers*perLayer + dim // embeddings, layers, rms_final_weight
	if !shared {
		params += vocab * dim // wcls
	}
	return params, seq * headSize, nil
}

// describeGGUF reads a GGUF file's metadata and tensor table (never its
// weights): the architecture, the parameters and the tensor type holding
// most of them, and whether it carries a tokenizer and a chat template.
func describeGGUF(path string) (Description, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return Description{}, err
	}
	defer f.Close()
	arch, _, err := f.String("general.architecture")
	if err != nil {
		return Description{}, err
	}
	d := Description{Format: "gguf", Architecture: arch, ModelType: arch}
	byType := map[string]int64{}
	for _, t := range f.Tensors {
		n := t.Elements()
		d.Params += n
		byType[strings.ToLower(t.Type.String())] += n
	}
	for name, n := range byType {
		if n > byType[d.DType] || n == byType[d.DType] && name < d.DType {
			d.DType = name
		}
	}
	d.Tokenizer = f.Has("tokenizer.ggml.model")
	d.ChatTemplate = f.Has("tokenizer.chat_template")
	return d, nil
}
