package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/bench"
	"tracer/engine/models"
	"tracer/engine/tensor"
	"tracer/toy"
)

func cmdBench(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("bench", "--model MODEL | --shape "+strings.Join(arch.ShapeNames(), "|")+" [flags]", stderr)
	model := fs.String("model", "", "a Hugging Face model folder, a llama2.c .bin or a .gguf file to measure")
	shape := fs.String("shape", "", "measure random weights generated in memory at a real model's shape: "+strings.Join(arch.ShapeNames(), ", "))
	dtype := fs.String("dtype", "f32", "with --shape: weight dtype, f32, bf16 or f16 (a Hugging Face layout), or q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k or q6_k (a GGUF file's, quantized as llama-quantize quantizes, with its fallback types, built in memory)")
	writeGGUF := fs.String("write-gguf", "", "with --shape: write the random weights as a GGUF `FILE` (llama and qwen2 shapes, any --dtype) and exit, to measure it with --model FILE or with llama.cpp")
	threads := fs.Int("threads", 0, "goroutines for the kernels (0: one per CPU)")
	promptLen := fs.Int("prompt-len", 64, "prompt tokens, fed in one prefill step")
	newTokens := fs.Int("new-tokens", 128, "tokens to generate per repetition")
	reps := fs.Int("reps", 3, "repetitions")
	record := fs.Bool("record", false, "also generate with recording on (top-20 candidates, every stage, traffic) and report its cost")
	var recordAttention attentionFlag
	fs.Var(&recordAttention, "record-attention", "with recording on, also record each step's attention per layer and head (=all: also the prompt's matrices); implies --record")
	recordLens := fs.Int("record-lens", 0, "with recording on, also record the top `K` tokens of every layer's logit lens; implies --record")
	recordForward := fs.Int("record-forward", 0, fmt.Sprintf("with recording on, also record the forward pass with the `K` heads that added most and the K most active MLP neurons of every layer (1 to %d); implies --record", engine.MaxRecordForward))
	probeMiB := fs.Int("probe-mib", 0, "bandwidth probe array in MiB (0: 4× the L3 cache, at least 512)")
	seed := fs.Uint64("seed", 1, "seed of the random weights and prompt")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	class := fs.Int("class", 0, "with --shape: a class of `N` pages following an instructor, on loopback against a tracer serve --classroom process it starts: reports the delay from each move to each page, bytes per page and move, the server's CPU per move and peak memory (see the README's classroom section)")
	students := fs.Int("students", 0, "with --class: also `M` students who detach and generate a greedy run each while the instructor moves")
	moves := fs.Int("moves", 60, "with --class: the instructor's moves")
	every := fs.Duration("every", 200*time.Millisecond, "with --class: the time between the instructor's moves")
	steps := fs.Int("steps", 80, "with --class: the new tokens of the instructor's run, the positions stepped through")
	spread := fs.Duration("spread", 0, "with --students: start the students' runs evenly over this time (0: all at once)")
	againstLlama := fs.String("against-llama-server", "", "with --model FILE.gguf: also measure llama.cpp's `llama-server` binary on the same file, prompt and threads, a run of each after each of tracer's repetitions, and report tracer's rates over its")
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tracer bench: "+format+"\n", a...)
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q", fs.Arg(0))
	case (*model == "") == (*shape == ""):
		return usageErr("give exactly one of --model and --shape")
	case *model != "" && set["dtype"]:
		return usageErr("--dtype goes with --shape: a checkpoint has its own dtype")
	case *model != "" && *writeGGUF != "":
		return usageErr("--write-gguf goes with --shape: it writes random weights")
	case *threads < 0 || *promptLen < 1 || *newTokens < 2 || *reps < 1 || *probeMiB < 0:
		return usageErr("--threads must be at least 0, --prompt-len and --reps at least 1, --new-tokens at least 2")
	case *recordLens < 0:
		return usageErr("--record-lens must be 0 (off) or more, got %d", *recordLens)
	case *recordForward < 0 || *recordForward > engine.MaxRecordForward:
		return usageErr("--record-forward must be 0 (off) to %d (the heads and MLP neurons kept per layer), got %d", engine.MaxRecordForward, *recordForward)
	case *class < 0 || *class > maxClass || *students < 0 || *students > maxClass:
		return usageErr("--class and --students must be 0 to %d", maxClass)
	case *class == 0 && (set["students"] || set["moves"] || set["every"] || set["steps"] || set["spread"]):
		return usageErr("--students, --moves, --every, --steps and --spread go with --class")
	case *class > 0 && (*shape == "" || *writeGGUF != ""):
		return usageErr("--class goes with --shape (the class runs random weights at that shape) and without --write-gguf")
	case *againstLlama != "" && (*model == "" || !strings.HasSuffix(strings.ToLower(*model), ".gguf")):
		return usageErr("--against-llama-server goes with --model FILE.gguf: llama.cpp opens GGUF files")
	case *againstLlama != "" && (*record || *recordLens > 0 || *recordForward > 0 || recordAttention != ""):
		return usageErr("--against-llama-server compares plain greedy runs: leave out --record and its kin")
	case *class > 0 && (*moves < 1 || *moves > 10000 || *every < time.Millisecond || *steps < 2 || *steps > 1024 || *spread < 0 || *newTokens > 1024):
		return usageErr("--moves must be 1 to 10000, --every at least 1ms, --steps 2 to 1024, --new-tokens at most 1024 and --spread not negative")
	}
	opts := bench.Options{
		Threads: *threads, PromptLen: *promptLen, NewTokens: *newTokens, Reps: *reps,
		Record: *record, ProbeBytes: int64(*probeMiB) << 20, Seed: *seed, Log: stderr,
		RecordAttention: string(recordAttention), RecordLens: *recordLens, RecordForward: *recordForward,
	}

	var m engine.Model
	if *shape != "" {
		s, ok := arch.KnownShape(*shape)
		if !ok {
			return usageErr("unknown --shape %q (want one of %s)", *shape, strings.Join(arch.ShapeNames(), ", "))
		}
		dt, err := arch.ParseRandomDType(*dtype)
		if err != nil {
			return usageErr("%v", err)
		}
		if *writeGGUF != "" {
			return writeRandomGGUF(*writeGGUF, *shape, s, dt, *seed, stderr)
		}
		if *class > 0 {
			if !set["dtype"] {
				dt = tensor.F16 // what a student downloads, at half the bytes of f32
			}
			o := classOptions{
				followers: *class, students: *students, moves: *moves, every: *every, steps: *steps,
				newTokens: 64, spread: *spread, shape: *shape, dtype: dt, seed: *seed,
				deadline: classDeadline,
			}
			if set["new-tokens"] {
				o.newTokens = *newTokens
			}
			return benchClass(ctx, o, *asJSON, stdout, stderr)
		}
		fmt.Fprintf(stderr, "generating random %s weights at %s's shape\n", dt, *shape)
		var rm *arch.Model
		if dt.Quantized() {
			rm, err = arch.NewRandomGGUF(*shape, s, dt, *seed)
		} else {
			rm, err = arch.NewRandom(*shape, s, dt, *seed)
		}
		if err != nil {
			fmt.Fprintf(stderr, "tracer bench: %s\n", hint(err))
			return exitError
		}
		defer rm.Close()
		m = rm
	} else {
		l, err := openWeights(ctx, *model, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "tracer bench: %s\n", hint(err))
			return exitError
		}
		defer l.Close()
		if toy.Of(l) != nil {
			return usageErr("the toy model has no weights to measure: give a Hugging Face folder or a llama2.c .bin")
		}
		m = l.Model
	}

	if *againstLlama != "" {
		threads := *threads
		if threads == 0 {
			threads = runtime.GOMAXPROCS(0)
		}
		fmt.Fprintf(stderr, "starting %s on %s\n", *againstLlama, *model)
		peer, err := startLlamaServer(ctx, *againstLlama, *model, threads, *promptLen+*newTokens+16)
		if err != nil {
			fmt.Fprintf(stderr, "tracer bench: %v\n", err)
			return exitError
		}
		defer peer.Close()
		opts.Peer = peer
	}
	r, err := bench.Run(ctx, m, opts)
	if err != nil {
		fmt.Fprintf(stderr, "tracer bench: %s\n", hint(err))
		return exitError
	}
	if *asJSON {
		return printJSON(stdout, stderr, "bench", r)
	}
	printBench(stdout, r)
	return exitOK
}

// writeRandomGGUF writes the random model of shape s as the GGUF file
// path, removing a partial file on failure.
func writeRandomGGUF(path, name string, s arch.Shape, dt tensor.DType, seed uint64, stderr io.Writer) int {
	f, err := os.Create(path)
	if err == nil {
		err = arch.WriteRandomGGUF(f, name, s, dt, seed)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracer bench: --write-gguf %s: %v\n", path, err)
		return exitError
	}
	fmt.Fprintf(stderr, "wrote random %s weights at %s's shape to %s\n", dt, name, path)
	return exitOK
}

// printBench writes the report as a table.
func printBench(out io.Writer, r *bench.Report) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(w, "%s\t"+format+"\n", append([]any{k}, a...)...) }
	stat := func(s bench.Stat, unit string) string {
		return fmt.Sprintf("%.1f %s (min %.1f, max %.1f)", s.Median, unit, s.Min, s.Max)
	}
	row("model", "%s (%s, %s, %.1f M params, %.1f MB)", r.Model, r.Architecture, r.DType, float64(r.Params)/1e6, float64(r.WeightBytes)/1e6)
	if len(r.WeightTypes) > 1 {
		row("weight types", "%s", weightTypes(r.WeightTypes))
	}
	row("kernels", "%s, %d threads", r.Kernels, r.Threads)
	row("run", "%d prompt + %d new tokens, %d repetitions, greedy", r.PromptLen, r.NewTokens, r.Reps)
	row("prefill", "%s", stat(r.PrefillTokensPerSec, "tokens/s"))
	row("prefill compute", "%s = %.0f%% of the FMA peak", stat(r.PrefillGFLOPS, "GFLOP/s"), 100*r.PrefillFMAFraction)
	row("decode", "%s", stat(r.DecodeTokensPerSec, "tokens/s"))
	row("bytes per token", "%.1f MB (weights + KV cache read)", float64(r.BytesPerToken)/1e6)
	row("decode bandwidth", "%s", stat(r.DecodeGBps, "GB/s"))
	for _, b := range r.BandwidthBefore {
		row(fmt.Sprintf("read bandwidth, %d thr", b.Threads), "%.1f GB/s median before (best %.1f), best %.1f between repetitions, %.1f after (%d passes over %d MiB, %s)",
			b.MedianGBps, b.BestGBps, best(r.BandwidthBetween, b.Threads), best(r.BandwidthAfter, b.Threads), r.ProbeReps, r.ProbeBytes>>20, r.ProbeISA)
	}
	row("of the limit", "%.0f%% best, %.0f%% median (limit %.1f GB/s)", 100*r.BandwidthFraction, 100*r.MedianFraction, r.BandwidthLimitGBps)
	row("of the probes around", "%.0f%% best, %.0f%% median (each repetition against the better probe before or after it)", 100*r.PairedFraction.Max, 100*r.PairedFraction.Median)
	for i, f := range r.FMA {
		after := 0.0
		if i < len(r.FMAAfter) {
			after = r.FMAAfter[i].BestGFLOPS
		}
		row(fmt.Sprintf("FMA peak, %d thr", f.Threads), "%.1f GFLOP/s before, %.1f GFLOP/s after", f.BestGFLOPS, after)
	}
	if r.AllocsPerToken >= 0 {
		row("allocations", "%.2f per decoded token", r.AllocsPerToken)
	} else {
		row("allocations", "not counted (needs --new-tokens 3 or more)")
	}
	if r.PeakRSSBytes >= 0 {
		row("peak RSS", "%.1f MB", float64(r.PeakRSSBytes)/1e6)
	}
	if p := r.Peer; p != nil {
		row(p.Name, "prefill %s, decode %s (a run after each of tracer's)", stat(p.PrefillTokensPerSec, "tokens/s"), stat(p.DecodeTokensPerSec, "tokens/s"))
		ratio := func(s bench.Stat) string { return fmt.Sprintf("%.2f× (min %.2f, max %.2f)", s.Median, s.Min, s.Max) }
		row("tracer over it", "prefill %s, decode %s", ratio(p.PrefillRatio), ratio(p.DecodeRatio))
	}
	if rec := r.Record; rec != nil {
		row("sampling", "%s", rec.Generation)
		row("  recording off", "%s", stat(rec.OffTokensPerSec, "tokens/s"))
		what := fmt.Sprintf("top %d, every stage, traffic", rec.Top)
		if rec.Attention != "" {
			what += ", attention (" + rec.Attention + ")"
		}
		if rec.Lens > 0 {
			what += fmt.Sprintf(", logit lens top %d", rec.Lens)
		}
		if rec.Forward > 0 {
			what += fmt.Sprintf(", forward pass with %d heads and neurons a layer", rec.Forward)
		}
		row("  recording on", "%s (%s)", stat(rec.OnTokensPerSec, "tokens/s"), what)
		row("  recording cost", "%.3f× the time per token", rec.Ratio)
		row("  outside the forward pass", "%.0f µs a token with recording on, %.0f off", rec.OutsideOnUS, rec.OutsideOffUS)
	}
	w.Flush()
}

// weightTypes lists a model's weight types, the most bytes first:
// "q4_k 61.2 MB, q5_0 54.7 MB, ...".
func weightTypes(types map[string]int64) string {
	names := make([]string, 0, len(types))
	for k := range types {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(types[b], types[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %.1f MB", k, float64(types[k])/1e6)
	}
	return strings.Join(parts, ", ")
}

// best is the best of the bandwidths bs at threads, or 0.
func best(bs []bench.Bandwidth, threads int) float64 {
	v := 0.0
	for _, b := range bs {
		if b.Threads == threads {
			v = max(v, b.BestGBps)
		}
	}
	return v
}

// openWeights opens the model bench measures. bench never tokenizes: a
// Hugging Face folder is opened for its weights alone, so that a folder
// without a tokenizer (or with an incomplete one) benches; other models
// open as every command opens them.
func openWeights(ctx context.Context, spec string, stderr io.Writer) (*models.Loaded, error) {
	path, err := locateModel(ctx, spec, stderr)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return models.Open(path)
	}
	m, err := arch.OpenHF(path)
	if err != nil {
		return nil, err
	}
	return &models.Loaded{Spec: path, Model: m}, nil
}
