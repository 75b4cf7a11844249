package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"tracer/trace"
)

func cmdValidate(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("validate", "FILE (a trace .json, or an .html written by tracer export --html; - for standard input)", stderr)
	maxMiB := fs.Int64("max-size", trace.DefaultMaxSize>>20, "largest trace to accept, in MiB")
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "tracer validate: want exactly one FILE")
		fs.Usage()
		return exitUsage
	}
	name := fs.Arg(0)
	t, err := readTrace(name, stdin, *maxMiB<<20)
	if err != nil {
		fmt.Fprintf(stderr, "tracer validate: %s\n", hint(err))
		return exitError
	}
	fmt.Fprintf(stdout, "%s: valid %s trace: model %s, %d steps, stop reason %s\n", name, trace.Format, t.Model.Name, len(t.Steps), t.Output.StopReason)
	return exitOK
}

// readTrace reads the trace, at most maxBytes, in the file name, or in
// stdin when name is "-"; a trace's error names the file.
func readTrace(name string, stdin io.Reader, maxBytes int64) (*trace.Trace, error) {
	in := stdin
	if name != "-" {
		if err := regularFile(name); err != nil {
			return nil, err
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	t, err := trace.Read(in, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// regularFile refuses what is not a regular file (a FIFO would block the
// read, a device never end it) before anything opens it.
func regularFile(name string) error {
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is %s, not a file: give a trace file", name, fileKind(fi.Mode()))
	}
	return nil
}

// fileKind names what a path that is not a regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
