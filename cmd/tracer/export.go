package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tracer/trace"
	"tracer/web"
	"tracer/web/export"
)

// cmdExport writes traces as one self-contained HTML file that steps
// through them as the page does, offline. Several traces are shown side
// by side, as the page's comparison.
func cmdExport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("export", "--html TRACE.json... (- for standard input) [-o FILE.html]", stderr)
	html := fs.Bool("html", false, "write a self-contained HTML file (the only format so far)")
	out := fs.String("o", "", "write to `FILE` instead of standard output")
	lang := fs.String("lang", "en", "the file's language: en or hi")
	noCharts := fs.Bool("no-charts", false, "leave out the charts (a smaller file)")
	maxMiB := fs.Int64("max-size", trace.DefaultMaxSize>>20, "largest trace to accept, in MiB")
	maxBranches := fs.Int("max-branches", web.DefaultMaxBranches, "the most branches a trace may have (every branch's positions draw the whole tree, so the work grows with branches × positions)")
	// Flags may follow the files: tracer export --html run.json -o run.html.
	var files []string
	for {
		if code := parse(fs, args, stdout); code >= 0 {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case !*html:
		fmt.Fprintln(stderr, "tracer export: say which format: --html (the only one so far)")
		fs.Usage()
		return exitUsage
	case len(files) == 0:
		fmt.Fprintln(stderr, "tracer export: want a TRACE.json (- for standard input)")
		fs.Usage()
		return exitUsage
	case *lang != "en" && *lang != "hi":
		fmt.Fprintf(stderr, "tracer export: --lang %q: want en or hi\n", *lang)
		return exitUsage
	}
	if i := slices.Index(files, "-"); i >= 0 && slices.Contains(files[i+1:], "-") {
		fmt.Fprintln(stderr, "tracer export: standard input (-) can be read only once: name it once")
		return exitUsage
	}
	var runs []export.Run
	for _, name := range files {
		t, err := readTrace(name, stdin, *maxMiB<<20)
		if err != nil {
			fmt.Fprintf(stderr, "tracer export: %s\n", hint(err))
			return exitError
		}
		if n := len(t.Branches); n > *maxBranches {
			fmt.Fprintf(stderr, "tracer export: %s has %d branches, more than --max-branches %d: give a larger --max-branches to export it (the work and the file grow with branches × positions)\n", name, n, *maxBranches)
			return exitError
		}
		runs = append(runs, export.Run{Trace: t, Label: label(name)})
	}
	var b bytes.Buffer
	o := export.Options{Lang: *lang, NoCharts: *noCharts, Source: strings.Join(labels(runs), ", ")}
	if err := export.HTML(ctx, &b, runs, o); err != nil {
		fmt.Fprintf(stderr, "tracer export: %s\n", hint(err))
		return exitError
	}
	if *out == "" {
		if _, err := stdout.Write(b.Bytes()); err != nil {
			fmt.Fprintf(stderr, "tracer export: write standard output: %v\n", err)
			return exitError
		}
		return exitOK
	}
	if err := writeFileAtomic(*out, b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "tracer export: %s\n", hint(err))
		return exitError
	}
	return exitOK
}

// label names a run after its file: "run.json" is "run".
func label(name string) string {
	if name == "-" {
		return "standard input"
	}
	return strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
}

func labels(runs []export.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Label)
	}
	return out
}

// writeFileAtomic writes data to a temporary file beside name and renames
// it, so a failed write never leaves half a file in name's place.
func writeFileAtomic(name string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
