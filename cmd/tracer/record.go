package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"tracer/engine"
	"tracer/engine/remote"
	"tracer/trace"
)

// serverLacks says why a generation flag cannot be sent to a serving
// engine, or "" when it can.
func serverLacks(flag string) string {
	switch flag {
	case "num-beams":
		return "servers' OpenAI APIs have no beam search"
	case "length-penalty", "early-stopping":
		return "it only matters for beam search"
	case "num-return-sequences":
		return "tracer records one sequence per request"
	case "min-new-tokens":
		return "the OpenAI API cannot suppress EOS"
	case "eos-id":
		return "the server stops at its model's own EOS"
	case "pad-id":
		return "a single prompt needs no padding"
	case "no-cache":
		return "the server manages its own KV cache"
	}
	return ""
}

func cmdRecord(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("record", "--server URL [flags]", stderr)
	server := fs.String("server", "", "the serving engine's base URL, e.g. http://127.0.0.1:8080 (llama.cpp, vLLM, SGLang, Ollama or any OpenAI-compatible server)")
	serverModel := fs.String("server-model", "", "the server's model name (default: its only model)")
	serverEngine := fs.String("server-engine", "", "the serving engine, to override what /v1/models says: llama.cpp, vllm, sglang, ollama or openai (plain OpenAI API)")
	keyEnv := fs.String("server-key-env", "OPENAI_API_KEY", "environment variable holding the API key (sent as a bearer token, never recorded)")
	prompt := fs.String("prompt", "", "prompt text")
	promptIDs := fs.String("prompt-ids", "", `prompt token ids, "1,2,3" (where the server takes ids)`)
	chatMsg := fs.String("chat", "", "a chat message, formatted with the server's chat template")
	system := fs.String("system", "", "with --chat: a system message before it")
	topLogprobs := fs.Int("top-logprobs", 20, "alternatives recorded per step (20 is the OpenAI maximum)")
	step := fs.Bool("step", false, "one request per token: each step's distribution is the model's own at that position")
	forceIDs := fs.String("force-ids", "", `with --step: make step i choose the i-th of these ids ("5,9,2"), still recording the distributions`)
	timeout := fs.Duration("timeout", 5*time.Minute, "per request")
	asJSON := fs.Bool("json", false, "print the trace as JSON instead of the new text")
	out := fs.String("out", "", "also write the trace to this file")
	gen := addGenFlags(fs)
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tracer record: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q (quote the prompt: --prompt \"...\")", fs.Arg(0))
	}
	if u, err := url.Parse(*server); *server == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := *server
		if err == nil {
			u.User = nil
			shown = u.String()
		} else if i := strings.LastIndexByte(shown, '@'); i >= 0 {
			shown = "..." + shown[i:] // never echo a password
		}
		return usageErr("--server URL is required, as http://HOST:PORT or https://HOST, e.g. --server http://127.0.0.1:8080; got %q", shown)
	}
	given := 0
	for _, set := range []bool{*prompt != "", *promptIDs != "", *chatMsg != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return usageErr("give one of --prompt, --prompt-ids and --chat")
	}
	if *system != "" && *chatMsg == "" {
		return usageErr("--system goes with --chat")
	}
	if *topLogprobs < 1 || *topLogprobs > 1000 {
		return usageErr("--top-logprobs must be in 1..1000, got %d", *topLogprobs)
	}
	var lacking string
	fs.Visit(func(f *flag.Flag) {
		if why := serverLacks(f.Name); why != "" && lacking == "" {
			lacking = fmt.Sprintf("--%s cannot be sent to a server: %s; use tracer run for it", f.Name, why)
		}
	})
	if lacking != "" {
		return usageErr("%s", lacking)
	}
	user, err := gen.settings()
	if err != nil {
		return usageErr("%v", err)
	}
	req := remote.Request{Text: *prompt, TopLogprobs: *topLogprobs, Step: *step}
	if *chatMsg != "" {
		if *system != "" {
			req.Messages = append(req.Messages, trace.Message{Role: "system", Content: *system})
		}
		req.Messages = append(req.Messages, trace.Message{Role: "user", Content: *chatMsg})
	}
	if *promptIDs != "" {
		rows, err := parseIDs(*promptIDs)
		if err != nil || len(rows) != 1 {
			return usageErr("--prompt-ids: want one prompt of ids separated by commas, got %q", *promptIDs)
		}
		req.IDs = rows[0]
	}
	var force []int
	if *forceIDs != "" {
		rows, err := parseIDs(*forceIDs)
		if err != nil || len(rows) != 1 {
			return usageErr("--force-ids: want ids separated by commas, got %q", *forceIDs)
		}
		if !*step {
			return usageErr("--force-ids needs --step: a plain completion cannot be told which token to take")
		}
		force = rows[0]
	}

	c, err := remote.Dial(ctx, remote.Config{URL: *server, Model: *serverModel, Engine: *serverEngine, Key: os.Getenv(*keyEnv), Timeout: *timeout})
	if err != nil {
		fmt.Fprintf(stderr, "tracer record: %s\n", hint(err))
		return exitError
	}
	info := engine.Info{Name: c.Model, Kind: trace.SourceServer, VocabSize: c.VocabSize, BOS: -1, PAD: -1}
	if info.VocabSize == 0 {
		info.VocabSize = 1 << 30 // unknown: ids are the server's to check
	}
	opts, notices, err := engine.Resolve(info, nil, user)
	if err != nil {
		return usageErr("%v", err)
	}
	for i, id := range force {
		if id < 0 || id >= info.VocabSize {
			return usageErr("--force-ids: id %d (step %d) is outside the server model's vocabulary (0..%d)", id, i, info.VocabSize-1)
		}
	}
	opts.ForceIDs = force
	req.Options, req.Notices = opts, notices
	t, err := c.Record(ctx, req)
	if t == nil {
		fmt.Fprintf(stderr, "tracer record: %s\n", hint(err))
		return exitError
	}
	// A broken-off answer still leaves a partial trace: keep it, then fail.
	if !saveTrace("tracer record", t, *out, *asJSON, stdout, stderr) {
		return exitError
	}
	if !*asJSON {
		fmt.Fprintln(stdout, t.Output.NewText)
	}
	if err != nil {
		msg := hint(err)
		if errors.Is(err, remote.ErrStreamCut) && *out != "" {
			msg += " in " + *out
		}
		fmt.Fprintf(stderr, "tracer record: %s\n", strings.TrimSpace(msg))
		return exitError
	}
	if !*asJSON {
		for _, n := range t.Notices {
			fmt.Fprintf(stderr, "tracer: note: %s\n", n)
		}
	}
	return exitOK
}
