package arch

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"tracer/engine"
	"tracer/engine/safetensors"
)

// OpenHF loads the Hugging Face model folder dir: config.json (gpt2, llama
// or qwen2), generation_config.json when present (its bos/eos/pad ids
// override config.json's), and model.safetensors or the shards of
// model.safetensors.index.json, memory-mapped, the weight matrices read
// from a copy in huge pages where the kernel allows (huge.go says why;
// Mapped: no copy). The result is a *Model; Close it to unmap the weights.
func OpenHF(dir string, opts ...OpenOption) (engine.Model, error) {
	c, cfgPath, err := readConfig(dir)
	if err != nil {
		return nil, err
	}
	arch, err := c.architecture(cfgPath)
	if err != nil {
		return nil, err
	}
	spec, err := checkConfig(c, arch, cfgPath) // before mapping any weights
	if err != nil {
		return nil, err
	}
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("arch: %w", err)
	}
	var src tensorSource = ck
	var closer io.Closer = ck
	if !configOf(opts).mapped {
		src, closer = copyMatrices(ck)
	}
	ld := newLoader(src, ck.Dir, strings.Join(ck.Files(), ", "), cfgPath)
	if ld.qc.quant = configOf(opts).quant; ld.qc.quant != 0 && arch == "gpt2" {
		closer.Close()
		return nil, fmt.Errorf("arch: %s: quantizing GPT-2 as it loads is not supported (its Conv1D matrices are stored input by output): quantize a Llama-family model (Llama, Qwen2, a llama2.c .bin or an F32/F16 GGUF)", cfgPath)
	}
	net, cost, err := spec.load(ld)
	if err != nil {
		closer.Close()
		return nil, err
	}
	d := spec.d
	info := engine.Info{
		Name:         modelName(dir),
		Kind:         "hf",
		Architecture: arch,
		VocabSize:    d.vocab,
		MaxPositions: d.maxPos,
		Layers:       d.layers, Hidden: d.hidden, Heads: d.heads, KVHeads: d.kvHeads, HeadDim: d.headDim, Intermediate: d.ffn,
		Params:          ld.params,
		DType:           ld.dtype().String(),
		WeightBytes:     ld.bytes + ld.qc.bytes,
		KVBytesPerToken: d.kvBytesPerToken(),
	}
	if n, ok := net.(*llama); ok {
		ld.qc.describe(&info, activationRounding(n))
	}
	if err := specials(&info, dir, c); err != nil {
		closer.Close()
		return nil, err
	}
	return newModel(info, d, net, cost, closer), nil
}

// copiedSource is a checkpoint whose weight matrices are read from copies.
type copiedSource struct {
	*safetensors.Checkpoint
	copies map[string]safetensors.Tensor
}

func (c copiedSource) Tensor(name string) (safetensors.Tensor, bool) {
	if t, ok := c.copies[name]; ok {
		return t, true
	}
	return c.Checkpoint.Tensor(name)
}

// copyMatrices copies the 2-D float tensors of ck (the weight matrices)
// into huge-page memory with hugeCopy. It returns where the loader reads
// the tensors and what closes both the checkpoint and the copies; when
// nothing is copied, ck itself for both.
func copyMatrices(ck *safetensors.Checkpoint) (tensorSource, io.Closer) {
	var mats []safetensors.Tensor
	var srcs [][]byte
	for _, name := range ck.Names() {
		if t, _ := ck.Tensor(name); t.DType.Float() && len(t.Shape) == 2 && len(t.Data) > 0 {
			mats = append(mats, t)
			srcs = append(srcs, t.Data)
		}
	}
	dsts, free := hugeCopy(srcs)
	if dsts == nil {
		return ck, ck
	}
	copies := make(map[string]safetensors.Tensor, len(mats))
	for i, t := range mats {
		t.Data = dsts[i]
		copies[t.Name] = t
	}
	return copiedSource{ck, copies}, closerFunc(func() error { return errors.Join(ck.Close(), free()) })
}

// hfSpec is what config.json decides about a model before its weights are
// read.
type hfSpec struct {
	arch  string
	d     dims
	eps   float32
	tied  bool
	llama llamaHFOptions // llama and qwen2 only
}

// checkConfig checks the config of an architecture and returns its spec.
func checkConfig(c *hfConfig, arch, path string) (hfSpec, error) {
	s := hfSpec{arch: arch}
	var err error
	switch arch {
	case "gpt2":
		s.d, s.eps, err = gpt2Config(c, path)
		s.tied = tieDefault(c, true)
	case "llama":
		s.d, s.eps, s.llama, err = llamaConfig(c, path)
		s.tied = tieDefault(c, false)
	case "qwen2":
		s.d, s.eps, s.llama, err = qwen2Config(c, path)
		s.tied = tieDefault(c, false)
	}
	return s, err
}

// load reads the network's weights, once their shapes agree with the
// config.
func (s hfSpec) load(ld *loader) (network, costModel, error) {
	if err := s.checkWeights(ld); err != nil {
		return nil, costModel{}, err
	}
	if s.arch == "gpt2" {
		g, err := loadGPT2(ld, s.d, s.eps, s.tied)
		if err != nil {
			return nil, costModel{}, err
		}
		return g, g.cost(), nil
	}
	l, err := loadLlamaHF(ld, s.d, s.eps, s.llama.theta, s.tied, s.llama.bias)
	if err != nil {
		return nil, costModel{}, err
	}
	return l, l.cost(), nil
}

// tieDefault is tie_word_embeddings, or def when config.json leaves it out
// (GPT2Config defaults to true, LlamaConfig and Qwen2Config to false).
func tieDefault(c *hfConfig, def bool) bool {
	if c.TieWordEmbeddings == nil {
		return def
	}
	return *c.TieWordEmbeddings
}

// modelName is the folder's name, made absolute first so "." has one.
func modelName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Base(dir)
}
