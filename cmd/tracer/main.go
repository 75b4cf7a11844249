// Command tracer is a step-through debugger for text generation with causal
// language models: it runs generate() on the toy bigram table or a real model
// in pure Go, records every step as a trace, and replays traces in the browser.
//
// Usage:
//
//	tracer run      [flags]   generate and print the new text (or the trace with --json)
//	tracer serve    [flags]   the web UI on 127.0.0.1:8080
//	tracer record   --server URL [flags]  record from a serving engine
//	tracer validate FILE      check a trace file
//	tracer info     --model M describe a model
//	tracer pull     ORG/NAME  download a model into the Hugging Face cache
//	tracer models             list local models
//	tracer bench    [flags]   measure decode speed against the memory bandwidth
//	tracer version            print the version
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is tracer's version; the trace format has its own (trace.Format).
const version = "0.1.0"

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 64 // EX_USAGE
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C (or SIGTERM) cancels the command, which stops
	// cleanly where it can; the next one ends the process, whatever the
	// command is blocked on.
	go func() {
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, terminalWriter{os.Stdout}, terminalWriter{os.Stderr}))
}

// command is one subcommand.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"run", "generate from a model and print the new text, or the trace with --json", cmdRun},
		{"serve", "serve the step-through web UI", cmdServe},
		{"record", "record generation from a serving engine (llama.cpp, vLLM, SGLang, Ollama) as a trace", cmdRecord},
		{"validate", "check that a file is a valid tracer trace", cmdValidate},
		{"export", "write a trace as one self-contained HTML file (--html)", cmdExport},
		{"pull", "download a model from the Hugging Face Hub into its cache", cmdPull},
		{"models", "list the models in the Hugging Face cache and in --models folders", cmdModels},
		{"tokenize", "encode JSON Lines of text (or decode ids, or render chats) with a tokenizer", cmdTokenize},
		{"info", "describe a model: architecture, parameters, bytes of weights and KV cache", cmdInfo},
		{"bench", "measure prefill and decode speed against the machine's memory bandwidth", cmdBench},
		{"version", "print tracer's version", cmdVersion},
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "tracer: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "tracer: a step-through debugger for text generation with causal language models")
	fmt.Fprintln(w, "\nUsage: tracer <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'tracer <command> --help' for a command's flags.")
}

// newFlags returns a flag set for a subcommand that reports errors itself.
func newFlags(name, args string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("tracer "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: tracer %s %s\n\nFlags:\n", name, args)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, returning the exit status to use when parsing ends the
// command (help or a usage error), or -1 to go on. Help goes to stdout, usage
// errors to the flag set's output (stderr).
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) int {
	out := fs.Output()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		stdout.Write(buf.Bytes())
		return exitOK
	}
	out.Write(buf.Bytes())
	if err != nil {
		return exitUsage
	}
	return -1
}

// printJSON writes v to stdout as indented JSON for the --json of the
// command cmd, and says so on stderr when the write fails.
func printJSON(stdout, stderr io.Writer, cmd string, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "tracer %s: writing the JSON: %v\n", cmd, err)
		return exitError
	}
	return exitOK
}

func cmdVersion(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("version", "", stderr)
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	fmt.Fprintf(stdout, "tracer %s (trace format tracer/v1)\n", version)
	return exitOK
}
