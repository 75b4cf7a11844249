package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/hub"
	"tracer/engine/models"
	"tracer/engine/tensor"
	"tracer/trace"
	"tracer/web"
	"tracer/web/runs"
)

// genFlags are the flags of generation options, one per option of
// engine.Options that has a flag, named as in transformers'
// GenerationConfig. Each parses into a Settings layer, so only flags given
// on the command line override the model's generation_config.json.
type genFlags struct {
	user engine.Settings
}

// addGenFlags adds the flags of GenerationConfig's own options (those a
// serving engine may also be asked for).
func addGenFlags(fs *flag.FlagSet) *genFlags {
	return addOptionFlags(fs, func(op engine.Option) bool { return op.Generation })
}

// addOptionFlags adds the flag of every option that has one and that
// keep accepts.
func addOptionFlags(fs *flag.FlagSet, keep func(engine.Option) bool) *genFlags {
	g := &genFlags{}
	for _, op := range engine.Options() {
		if op.Flag != "" && keep(op) {
			fs.Var(&optionFlag{op: op, user: &g.user}, op.Flag, op.Usage)
		}
	}
	return g
}

// settings returns the flags the user set, as a Settings layer.
func (g *genFlags) settings() (*engine.Settings, error) {
	s := g.user
	return &s, nil
}

// optionFlag is the flag of one option: it parses its text into the
// user's settings layer.
type optionFlag struct {
	op   engine.Option
	user *engine.Settings
}

// String shows the flag's value: the default before the flag is set (a
// negated flag is off).
func (f *optionFlag) String() string {
	if f == nil || f.user == nil {
		return ""
	}
	switch v := f.op.Text(f.user); {
	case v == nil && f.op.Negated:
		return ""
	case v == nil:
		return f.op.DefaultText()
	case f.op.Negated:
		b, _ := strconv.ParseBool(v[0])
		return strconv.FormatBool(!b)
	default:
		return strings.Join(v, ",")
	}
}

// IsBoolFlag lets boolean flags, and --record-attention, stand alone.
func (f *optionFlag) IsBoolFlag() bool {
	return f.op.Kind == engine.KindBool || f.op.FlagAlone
}

func (f *optionFlag) Set(text string) error {
	if f.op.Negated {
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", text)
		}
		text = strconv.FormatBool(!b)
	}
	return optionFlagError(f.op.Parse(f.user, text), text)
}

// optionMessage writes an invalid option as the command line names it:
// "--top-p must be in (0, 1], got 1.5".
func optionMessage(e *engine.OptionError) string {
	if op, ok := engine.LookupOption(e.Option); ok && op.Flag != "" && !op.Negated {
		return "--" + op.Flag + " " + e.Msg
	}
	return e.Error()
}

func cmdRun(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("run", "[flags]", stderr)
	model := fs.String("model", "toy", `model: "toy", a toy table .json, a Hugging Face model folder or a llama2.c .bin`)
	var prompts stringList
	fs.Var(&prompts, "prompt", "prompt text (repeat for a batch)")
	promptIDs := fs.String("prompt-ids", "", `prompt token ids: "1,2,3", or "1,2,3;4,5" for a batch`)
	chatMsg := fs.String("chat", "", "a chat message, formatted with the model's chat template")
	system := fs.String("system", "", "with --chat: a system message before it")
	asJSON := fs.Bool("json", false, "print the trace as JSON instead of the new text")
	out := fs.String("out", "", "also write the trace to this file")
	maxRowsBeams := fs.Int("max-rows-beams", web.DefaultMaxRowsBeams, "the most prompts × beams (or × return sequences, sampling) one run may use")
	maxRunMiB := fs.Int64("max-run-mib", web.DefaultMaxRunBytes>>20, "the most memory one run may need by estimate (KV cache, buffers, recorded steps; the weights aside), in MiB")
	quantize := fs.String("quantize", "", "quantize the weight matrices as the model loads, as llama-quantize writes them: `TYPE` q8_0, q4_0, q4_k, q5_k or q6_k (rows that hold no block of the type fall back as llama-quantize's do)")
	gen := addOptionFlags(fs, func(engine.Option) bool { return true })
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tracer run: "+format+"\n", a...)
		return exitUsage
	}
	quant, err := arch.ParseQuantize(*quantize)
	if err != nil {
		return usageErr("--%v", err)
	}
	if *maxRowsBeams <= 0 || *maxRunMiB <= 0 || *maxRunMiB > math.MaxInt64>>20 {
		return usageErr("--max-rows-beams and --max-run-mib must be positive (and --max-run-mib at most %d), got %d and %d", int64(math.MaxInt64>>20), *maxRowsBeams, *maxRunMiB)
	}
	user, err := gen.settings()
	if err != nil {
		return usageErr("%v", err)
	}
	recordsInside := user.RecordAttention != nil && *user.RecordAttention != "" || user.RecordLens != nil && *user.RecordLens != 0 ||
		user.RecordForward != nil && *user.RecordForward != 0
	if fs.NArg() > 0 && fs.Arg(0) == "all" && user.RecordAttention != nil && *user.RecordAttention != "" {
		return usageErr("unexpected argument \"all\": write --record-attention=all (with =) to record the prompt's matrices too")
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q (flags go before nothing else; quote the prompt: --prompt \"...\")", fs.Arg(0))
	}
	given := 0
	for _, set := range []bool{len(prompts) > 0, *promptIDs != "", *chatMsg != ""} {
		if set {
			given++
		}
	}
	if given > 1 {
		return usageErr("give one of --prompt, --prompt-ids and --chat")
	}
	if *system != "" && *chatMsg == "" {
		return usageErr("--system goes with --chat")
	}
	if recordsInside && !*asJSON && *out == "" {
		return usageErr("--record-attention, --record-lens and --record-forward go into the trace: add --json or --out FILE")
	}
	in := models.Input{Texts: prompts}
	if *chatMsg != "" {
		if *system != "" {
			in.Messages = append(in.Messages, trace.Message{Role: "system", Content: *system})
		}
		in.Messages = append(in.Messages, trace.Message{Role: "user", Content: *chatMsg})
	}
	if *promptIDs != "" {
		if in.IDs, err = parseIDs(*promptIDs); err != nil {
			return usageErr("--prompt-ids: %v", err)
		}
	}

	m, err := openModel(ctx, *model, stderr, arch.Quantized(quant))
	if err != nil {
		fmt.Fprintf(stderr, "tracer run: %s\n", hint(err))
		return exitError
	}
	defer m.Close()
	if info := m.Model.Info(); quant != 0 && info.WeightTypes[quant.String()] == 0 && info.WeightTypes[tensor.KFallback(quant).String()] == 0 {
		return usageErr("--quantize %s: model %q (%s) has no float weight matrices to quantize: it works on Hugging Face folders (Llama, Qwen2), F32/F16/BF16 GGUF files and llama2.c .bin files", quant, info.Name, strings.TrimSuffix(info.Kind+", "+info.DType, ", "))
	}
	req, err := m.Request(in, user)
	var optErr *engine.OptionError
	if errors.As(err, &optErr) {
		return usageErr("%s", optionMessage(optErr))
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracer run: %s\n", hint(err))
		return exitError
	}
	req.Record = *asJSON || *out != ""
	if err := runs.CheckRunSize(m.Model.Info(), req.Options, req.Prompts, runs.Limits{MaxRowsBeams: *maxRowsBeams, MaxRunBytes: *maxRunMiB << 20}); err != nil {
		fmt.Fprintf(stderr, "tracer run: %s\n", err)
		return exitUsage
	}
	t, err := engine.Generate(ctx, req)
	if errors.As(err, &optErr) {
		return usageErr("%s", optionMessage(optErr))
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracer run: %s\n", hint(err))
		return exitError
	}
	if !saveTrace("tracer run", t, *out, *asJSON, stdout, stderr) {
		return exitError
	}
	if *asJSON {
		if t.Output.StopReason == trace.StopNaN {
			// The trace holds the stop and where it happened: a result, not a failure.
			fmt.Fprintf(stderr, "tracer run: %s\n", nanMessage(t))
		}
		return exitOK
	}
	for _, n := range t.Notices {
		if t.Output.StopReason == trace.StopNaN && n == nanMessage(t) {
			continue // printed below as the error it is
		}
		fmt.Fprintf(stderr, "tracer: note: %s\n", n)
	}
	printText(stdout, t, req.Tokenizer != nil)
	if t.Output.StopReason == trace.StopNaN {
		// The text is cut short by a broken model or setting: say so, and fail.
		fmt.Fprintf(stderr, "tracer run: %s\n", nanMessage(t))
		return exitError
	}
	return exitOK
}

// nanMessage is the engine's explanation of a nan stop: the last notice.
func nanMessage(t *trace.Trace) string {
	if len(t.Notices) == 0 {
		return "generation stopped: the logits hold a NaN (stop reason nan)"
	}
	return t.Notices[len(t.Notices)-1]
}

// printText prints the new text of every row (the new ids when the model has
// no tokenizer).
func printText(w io.Writer, t *trace.Trace, hasTokenizer bool) {
	texts := t.Output.NewTexts
	if len(t.Output.Sequences) == 0 {
		texts = []string{t.Output.NewText}
	}
	for i, s := range texts {
		if !hasTokenizer {
			ids := t.Output.NewIDs
			if len(t.Output.Sequences) > 0 {
				ids = t.Output.Sequences[i][len(t.Output.Sequences[i])-len(t.Steps):]
			}
			s = strings.Trim(fmt.Sprint(ids), "[]")
		}
		fmt.Fprintln(w, s)
	}
}

// saveTrace writes t to the file out (when given) and, with asJSON, to
// stdout; a failure is reported on stderr under cmd and returns false.
func saveTrace(cmd string, t *trace.Trace, out string, asJSON bool, stdout, stderr io.Writer) bool {
	var size int64
	if out != "" {
		n, err := writeTraceFile(out, t)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return false
		}
		size = n
	}
	if asJSON {
		w := &countingWriter{w: stdout}
		if err := trace.Write(w, t); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return false
		}
		size = w.n
	}
	if size > trace.DefaultMaxSize {
		// Say so now, not when validate or export refuses the file.
		mib := (size + 1<<20 - 1) >> 20
		fmt.Fprintf(stderr, "%s: note: the trace is %d MiB, more than tracer validate and tracer export read by default (%d MiB): give them --max-size %d\n", cmd, mib, trace.DefaultMaxSize>>20, mib)
	}
	return true
}

// countingWriter counts what it writes to w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeTraceFile writes a trace next to path and renames it into place, so a
// failed write never leaves half a trace; it returns the trace's size.
func writeTraceFile(path string, t *trace.Trace) (int64, error) {
	tmp, err := os.CreateTemp(dirOf(path), ".tracer-*.json")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	w := &countingWriter{w: tmp}
	if err := trace.Write(w, t); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	return w.n, os.Rename(tmp.Name(), path)
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "."
}

// openModel opens a model by name: "toy", a file or folder, or a Hugging
// Face name (ORG/NAME[@REVISION]) resolved through the Hugging Face cache,
// downloaded when missing unless HF_HUB_OFFLINE=1. The options go to
// models.Open.
func openModel(ctx context.Context, spec string, stderr io.Writer, opts ...arch.OpenOption) (*models.Loaded, error) {
	path, err := locateModel(ctx, spec, stderr)
	if err != nil {
		return nil, err
	}
	return models.Open(path, opts...)
}

// locateModel turns a model name into what models.Open takes, resolving a
// Hugging Face name through the cache with a progress bar on stderr.
func locateModel(ctx context.Context, spec string, stderr io.Writer) (string, error) {
	opts, err := hub.FromEnv(os.Getenv)
	if err != nil {
		return "", err
	}
	bar := newProgress(stderr)
	opts.Progress = bar.update
	path, err := models.Locate(ctx, spec, opts)
	bar.flush()
	return path, err
}
