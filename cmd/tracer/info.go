package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/gguf"
	"tracer/engine/models"
	"tracer/engine/tensor"
)

func cmdInfo(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("info", "--model MODEL", stderr)
	model := fs.String("model", "toy", `model: "toy", a toy table .json, a Hugging Face model folder, a llama2.c .bin, a .gguf file or ollama:NAME[:TAG]`)
	asJSON := fs.Bool("json", false, "print as JSON")
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracer info: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	m, err := openModel(ctx, *model, stderr, arch.Mapped()) // nothing is computed: read no weight
	if err != nil {
		fmt.Fprintf(stderr, "tracer info: %s\n", hint(err))
		return exitError
	}
	defer m.Close()
	info := m.Model.Info()
	types, err := ggufTypes(m.Spec)
	if err != nil {
		fmt.Fprintf(stderr, "tracer info: %s\n", hint(err))
		return exitError
	}
	if *asJSON {
		return printJSON(stdout, stderr, "info", struct {
			engine.Info
			TensorTypes []gguf.TypeBytes `json:"tensor_types,omitempty"`
			Kernels     string           `json:"kernels"` // the matrix kernels in use (tensor.KernelName)
		}{info, types, tensor.KernelName()})
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(w, "%s\t%v\n", k, v) }
	row("model", info.Name)
	row("kind", info.Kind)
	row("architecture", info.Architecture)
	row("vocabulary", info.VocabSize)
	if info.Layers > 0 {
		row("layers", info.Layers)
		row("hidden", info.Hidden)
		row("heads (q/kv)", fmt.Sprintf("%d/%d, head_dim %d", info.Heads, info.KVHeads, info.HeadDim))
		row("ffn", info.Intermediate)
		row("max positions", info.MaxPositions)
		row("parameters", fmt.Sprintf("%d (%.1f M)", info.Params, float64(info.Params)/1e6))
		row("dtype", info.DType)
		row("weight bytes", fmt.Sprintf("%d (%.1f MB)", info.WeightBytes, float64(info.WeightBytes)/1e6))
		for _, tb := range types {
			noun := "tensors"
			if tb.Tensors == 1 {
				noun = "tensor"
			}
			row("  "+tb.Type, fmt.Sprintf("%d bytes in %d %s", tb.Bytes, tb.Tensors, noun))
		}
		row("KV cache per token", fmt.Sprintf("%d bytes", info.KVBytesPerToken))
	}
	row("bos / eos / pad", fmt.Sprintf("%d / %v / %d", info.BOS, info.EOS, info.PAD))
	row("tokenizer", m.Tokenizer != nil)
	row("chat template", m.Chat != nil)
	row("kernels", tensor.KernelName())
	w.Flush()
	return exitOK
}

// ggufTypes lists the tensor bytes per ggml type of a GGUF model (a .gguf
// file or ollama:NAME[:TAG]); nil for other models.
func ggufTypes(spec string) ([]gguf.TypeBytes, error) {
	path := spec
	if strings.HasPrefix(spec, models.OllamaPrefix) {
		var err error
		if path, err = models.OllamaBlob(spec); err != nil {
			return nil, err
		}
	} else if st, err := os.Stat(spec); err != nil || st.IsDir() || !strings.EqualFold(filepath.Ext(spec), ".gguf") {
		return nil, nil
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.BytesByType(), nil
}
