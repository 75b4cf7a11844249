package hub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Description is what `tracer models` shows about a model on disk. Fields
// that cannot be found are left empty.
type Description struct {
	Format       string // "safetensors", "llama2.c" or "gguf"
	Architecture string // config.json's architectures[0] ("LlamaForCausalLM"), else its model_type
	ModelType    string // config.json's model_type ("llama")
	Params       int64  // parameters, counted from the weights' shapes
	DType        string // the weights' dtype by parameter count, as torch names it ("bfloat16")
	Tokenizer    bool   // tokenizer.json, vocab.json+merges.txt, or llama2.c's tokenizer.bin
	ChatTemplate bool   // a chat_template in tokenizer_config.json, or chat_template.jinja
}

// Describe reads a model folder (config.json, safetensors headers,
// tokenizer files) or a llama2.c checkpoint file (its header) without
// loading any weights.
//
// It opens regular files only: a named pipe, socket or device where a model
// file should be (config.json, the weights, the tokenizer files) makes an
// ErrNotRegular error that names it, and is never opened. The counts read
// from safetensors headers are remembered by path, size and modification
// time, so describing an unchanged model again does not parse its headers
// again; a header over the safetensors limit (100 MB) is refused.
func Describe(path string) (Description, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Description{}, err
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return Description{}, notRegular(path, fi.Mode())
		}
		if strings.EqualFold(filepath.Ext(path), ".gguf") {
			return describeGGUF(path)
		}
		return describeLlama2c(path, fi.Size())
	}
	d := Description{Format: "safetensors"}
	if err := checkModelFiles(path); err != nil {
		return d, err
	}
	if err := d.readConfig(filepath.Join(path, configFile)); err != nil {
		return d, err
	}
	if err := d.readWeights(path); err != nil {
		return d, err
	}
	d.Tokenizer = isFile(filepath.Join(path, "tokenizer.json")) ||
		isFile(filepath.Join(path, "vocab.json")) && isFile(filepath.Join(path, "merges.txt"))
	d.ChatTemplate = isFile(filepath.Join(path, "chat_template.jinja")) || hasChatTemplate(filepath.Join(path, "tokenizer_config.json"))
	return d, nil
}

func (d *Description) readConfig(path string) error {
	b, err := readSmall(path)
	if err != nil {
		return err
	}
	var c struct {
		ModelType     string   `json:"model_type"`
		Architectures []string `json:"architectures"`
		TorchDType    string   `json:"torch_dtype"`
		DType         string   `json:"dtype"` // transformers ≥ 4.56 writes this instead
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("%s: not a model config: %v", path, err)
	}
	d.ModelType, d.Architecture = c.ModelType, c.ModelType
	if len(c.Architectures) > 0 && c.Architectures[0] != "" {
		d.Architecture = c.Architectures[0]
	}
	d.DType = c.TorchDType
	if c.DType != "" {
		d.DType = c.DType
	}
	return nil
}

// readWeights counts the parameters in the folder's safetensors files:
// model.safetensors, the shards its index names, or else every *.safetensors.
func (d *Description) readWeights(dir string) error {
	var files []string
	if isFile(filepath.Join(dir, weightsFile)) {
		files = []string{weightsFile}
	} else if shards, err := readIndex(filepath.Join(dir, indexFile)); err == nil {
		files = shards
	} else {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
		for _, m := range matches {
			files = append(files, filepath.Base(m))
		}
	}
	byDType := map[string]int64{}
	for _, f := range files {
		if err := headers.count(filepath.Join(dir, filepath.FromSlash(f)), byDType); err != nil {
			return err
		}
	}
	var best string
	for dt, n := range byDType {
		d.Params += n
		if best == "" || n > byDType[best] || n == byDType[best] && dt < best {
			best = dt
		}
	}
	if best != "" {
		d.DType = torchDType(best)
	}
	return nil
}

// checkModelFiles returns an ErrNotRegular error when one of the files
// tracer reads from a model folder (config, weights, tokenizer, templates)
// is there but is not a regular file, or a symlink to one. Files that are
// absent are not its business.
func checkModelFiles(dir string) error {
	names := append([]string{configFile, weightsFile, indexFile}, optionalFiles()...)
	matches, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	for _, m := range matches {
		names = append(names, filepath.Base(m))
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		fi, err := os.Stat(p)
		switch {
		case notExist(err):
			continue
		case err != nil:
			return err
		case !fi.Mode().IsRegular():
			return notRegular(p, fi.Mode())
		}
	}
	return nil
}

// hasChatTemplate reports whether a tokenizer_config.json has a non-empty
// chat_template (a string, or a list of named templates).
func hasChatTemplate(path string) bool {
	b, err := readSmall(path)
	if err != nil {
		return false
	}
	var c struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if json.Unmarshal(b, &c) != nil {
		return false
	}
	t := strings.TrimSpace(string(c.ChatTemplate))
	return t != "" && t != "null" && t != `""` && t != "[]"
}

// torchDType names a safetensors dtype the way torch does.
func torchDType(st string) string {
	names := map[string]string{
		"BF16": "bfloat16", "F16": "float16", "F32": "float32", "F64": "float64",
		"I8": "int8", "U8": "uint8", "I16": "int16", "I32": "int32", "I64": "int64",
		"F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "BOOL": "bool",
	}
	if n, ok := names[st]; ok {
		return n
	}
	return strings.ToLower(st)
}
