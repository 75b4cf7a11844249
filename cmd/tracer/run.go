package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"tracer/engine"
	"tracer/engine/hub"
	"tracer/engine/models"
	"tracer/trace"
)

// genFlags are the generation flags, named as in transformers'
// GenerationConfig. Only flags given on the command line override the
// model's generation_config.json.
type genFlags struct {
	fs                                       *flag.FlagSet
	maxNew, maxLen, minNew, topK, beams, nrs int
	doSample, noCache                        bool
	temp, topP, minP, rep, lenPen            float64
	seed                                     uint64
	earlyStopping                            string
	eos                                      intList
	pad                                      int
	stops                                    stringList
}

func addGenFlags(fs *flag.FlagSet) *genFlags {
	g := &genFlags{fs: fs}
	fs.IntVar(&g.maxNew, "max-new-tokens", 0, "at most this many new tokens (unset: the model's max_length, or transformers' default of 20 tokens in all)")
	fs.IntVar(&g.maxLen, "max-length", 0, "at most this many tokens in all, prompt included")
	fs.IntVar(&g.minNew, "min-new-tokens", 0, "suppress EOS until this many new tokens")
	fs.BoolVar(&g.doSample, "do-sample", false, "sample instead of greedy decoding")
	fs.Float64Var(&g.temp, "temperature", 1, "divide logits by this before sampling")
	fs.IntVar(&g.topK, "top-k", 50, "keep the k most probable tokens when sampling (0: off)")
	fs.Float64Var(&g.topP, "top-p", 1, "keep the most probable tokens whose mass exceeds p when sampling")
	fs.Float64Var(&g.minP, "min-p", 0, "drop tokens less probable than min-p times the top one (0: off)")
	fs.Float64Var(&g.rep, "repetition-penalty", 1, "penalise tokens already in the sequence (1: off)")
	fs.IntVar(&g.beams, "num-beams", 1, "beam search with this many beams")
	fs.Float64Var(&g.lenPen, "length-penalty", 1, "beam search: score = sum of log-probs / length^penalty")
	fs.StringVar(&g.earlyStopping, "early-stopping", "false", "beam search stopping rule: true, false or never")
	fs.IntVar(&g.nrs, "num-return-sequences", 1, "sequences to return per prompt")
	fs.Var(&g.eos, "eos-id", "stop at this token id (repeat for a list; replaces the model's)")
	fs.IntVar(&g.pad, "pad-id", 0, "pad token id (default: the model's, else the first EOS)")
	fs.Var(&g.stops, "stop", "stop when the new text contains this string (repeatable)")
	fs.Uint64Var(&g.seed, "seed", 0, "seed of the random stream")
	fs.BoolVar(&g.noCache, "no-cache", false, "recompute the whole sequence every step (no KV cache)")
	return g
}

// settings returns the flags the user set, as a Settings layer.
func (g *genFlags) settings() (*engine.Settings, error) {
	s := &engine.Settings{}
	var err error
	g.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "max-new-tokens":
			s.MaxNewTokens = &g.maxNew
		case "max-length":
			s.MaxLength = &g.maxLen
		case "min-new-tokens":
			s.MinNewTokens = &g.minNew
		case "do-sample":
			s.DoSample = &g.doSample
		case "temperature":
			s.Temperature = &g.temp
		case "top-k":
			s.TopK = &g.topK
		case "top-p":
			s.TopP = &g.topP
		case "min-p":
			s.MinP = &g.minP
		case "repetition-penalty":
			s.RepetitionPenalty = &g.rep
		case "num-beams":
			s.NumBeams = &g.beams
		case "length-penalty":
			s.LengthPenalty = &g.lenPen
		case "early-stopping":
			v, e := engine.ParseEarlyStopping(g.earlyStopping)
			if e != nil {
				err = e
			}
			s.EarlyStopping = &v
		case "num-return-sequences":
			s.NumReturnSequences = &g.nrs
		case "eos-id":
			s.EOSTokenID = []int(g.eos)
		case "pad-id":
			s.PadTokenID = &g.pad
		case "stop":
			s.StopStrings = []string(g.stops)
		case "seed":
			s.Seed = &g.seed
		case "no-cache":
			useCache := !g.noCache
			s.UseCache = &useCache
		}
	})
	return s, err
}

func cmdRun(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("run", "[flags]", stderr)
	model := fs.String("model", "toy", `model: "toy", a toy table .json, a Hugging Face model folder or a llama2.c .bin`)
	var prompts stringList
	fs.Var(&prompts, "prompt", "prompt text (repeat for a batch)")
	promptIDs := fs.String("prompt-ids", "", `prompt token ids: "1,2,3", or "1,2,3;4,5" for a batch`)
	chatMsg := fs.String("chat", "", "a chat message, formatted with the model's chat template")
	system := fs.String("system", "", "with --chat: a system message before it")
	padding := fs.String("padding", "left", "batch padding side: left, or right to show its pitfall")
	forceIDs := fs.String("force-ids", "", `make step i choose the i-th of these ids ("5,9,2"), still recording the distributions`)
	recordTop := fs.Int("record-top", engine.DefaultRecordTop, "candidates recorded per step")
	fullLogits := fs.Bool("full-logits", false, "record every logit of every step")
	var recordAttention attentionFlag
	fs.Var(&recordAttention, "record-attention", "record each step's attention per layer and head (=all: also the prompt's matrices at step 0)")
	recordLens := fs.Int("record-lens", 0, "record the top `K` tokens of every layer's logit lens at each step (0: off)")
	asJSON := fs.Bool("json", false, "print the trace as JSON instead of the new text")
	out := fs.String("out", "", "also write the trace to this file")
	gen := addGenFlags(fs)
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tracer run: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 && fs.Arg(0) == "all" && recordAttention != "" {
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
	if *padding != "left" && *padding != "right" {
		return usageErr("--padding must be left or right, got %q", *padding)
	}
	if *recordLens < 0 {
		return usageErr("--record-lens must be 0 (off) or more, got %d", *recordLens)
	}
	if (recordAttention != "" || *recordLens > 0) && !*asJSON && *out == "" {
		return usageErr("--record-attention and --record-lens go into the trace: add --json or --out FILE")
	}
	user, err := gen.settings()
	if err != nil {
		return usageErr("%v", err)
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
	var force [][]int
	if *forceIDs != "" {
		if force, err = parseIDs(*forceIDs); err != nil || len(force) != 1 {
			return usageErr("--force-ids: want ids separated by commas, got %q", *forceIDs)
		}
	}

	m, err := openModel(ctx, *model, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tracer run: %v\n", err)
		return exitError
	}
	defer m.Close()
	req, err := m.Request(in, user)
	var optErr *engine.OptionError
	if errors.As(err, &optErr) {
		return usageErr("%v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracer run: %v\n", err)
		return exitError
	}
	req.Options.RecordTop, req.Options.FullLogits = *recordTop, *fullLogits
	req.Options.RecordAttention, req.Options.RecordLens = string(recordAttention), *recordLens
	if len(req.Prompts) > 1 {
		req.Options.Padding = *padding
	}
	if force != nil {
		req.Options.ForceIDs = force[0]
	}
	req.Record = *asJSON || *out != ""
	t, err := engine.Generate(ctx, req)
	if errors.As(err, &optErr) {
		return usageErr("%v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracer run: %v\n", err)
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
	if out != "" {
		if err := writeTraceFile(out, t); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return false
		}
	}
	if asJSON {
		if err := trace.Write(stdout, t); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return false
		}
	}
	return true
}

// writeTraceFile writes a trace next to path and renames it into place, so a
// failed write never leaves half a trace.
func writeTraceFile(path string, t *trace.Trace) error {
	tmp, err := os.CreateTemp(dirOf(path), ".tracer-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := trace.Write(tmp, t); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "."
}

// openModel opens a model by name: "toy", a file or folder, or a Hugging
// Face name (ORG/NAME[@REVISION]) resolved through the Hugging Face cache,
// downloaded when missing unless HF_HUB_OFFLINE=1.
func openModel(ctx context.Context, spec string, stderr io.Writer) (*models.Loaded, error) {
	opts, err := hub.FromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	bar := newProgress(stderr)
	opts.Progress = bar.update
	path, err := models.Locate(ctx, spec, opts)
	bar.flush()
	if err != nil {
		return nil, err
	}
	return models.Open(path)
}
