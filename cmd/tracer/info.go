package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

func cmdInfo(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("info", "--model MODEL", stderr)
	model := fs.String("model", "toy", `model: "toy", a toy table .json, a Hugging Face model folder or a llama2.c .bin`)
	asJSON := fs.Bool("json", false, "print as JSON")
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracer info: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	m, err := openModel(ctx, *model, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tracer info: %v\n", err)
		return exitError
	}
	defer m.Close()
	info := m.Model.Info()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(info)
		return exitOK
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
		row("KV cache per token", fmt.Sprintf("%d bytes", info.KVBytesPerToken))
	}
	row("bos / eos / pad", fmt.Sprintf("%d / %v / %d", info.BOS, info.EOS, info.PAD))
	row("tokenizer", m.Tokenizer != nil)
	row("chat template", m.Chat != nil)
	w.Flush()
	return exitOK
}
