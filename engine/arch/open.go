package arch

import (
	"fmt"
	"path/filepath"
	"strings"

	"tracer/engine"
	"tracer/engine/safetensors"
)

// OpenHF loads the Hugging Face model folder dir: config.json (gpt2, llama
// or qwen2), generation_config.json when present (its bos/eos/pad ids
// override config.json's), and model.safetensors or the shards of
// model.safetensors.index.json, memory-mapped. The result is a *Model;
// Close it to unmap the weights.
func OpenHF(dir string) (engine.Model, error) {
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
	ld := newLoader(ck, ck.Dir, strings.Join(ck.Files(), ", "), cfgPath)
	net, cost, err := spec.load(ld)
	if err != nil {
		ck.Close()
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
		WeightBytes:     ld.bytes,
		KVBytesPerToken: d.kvBytesPerToken(),
	}
	if err := specials(&info, dir, c); err != nil {
		ck.Close()
		return nil, err
	}
	return newModel(info, d, net, cost, ck), nil
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
