package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"tracer/engine/hub"
)

// modelRow is one model of `tracer models`; its JSON form is --json's.
type modelRow struct {
	Name         string   `json:"name"`   // what to give --model
	Source       string   `json:"source"` // "hf-cache" or "folder"
	Path         string   `json:"path"`
	File         string   `json:"file,omitempty"`      // the checkpoint, in a cached snapshot without config.json
	Revisions    []string `json:"revisions,omitempty"` // the refs (branches, tags) at this commit
	Commit       string   `json:"commit,omitempty"`
	Format       string   `json:"format,omitempty"` // "safetensors" or "llama2.c"
	Architecture string   `json:"architecture,omitempty"`
	Params       int64    `json:"params"`
	DType        string   `json:"dtype,omitempty"`
	SizeBytes    int64    `json:"size_bytes"`
	Tokenizer    bool     `json:"tokenizer"`
	ChatTemplate bool     `json:"chat_template"`
	Error        string   `json:"error,omitempty"` // why the model could not be described

	err error // Error's error, for errors.Is
}

func cmdModels(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("models", "[--models DIR]... [--json]", stderr)
	var dirs stringList
	fs.Var(&dirs, "models", "also list the model folders and llama2.c .bin files in this folder (repeatable)")
	asJSON := fs.Bool("json", false, "print a JSON array instead of a table")
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracer models: unexpected argument %q (give folders with --models DIR)\n", fs.Arg(0))
		return exitUsage
	}
	var rows []modelRow
	cacheDir := ""
	if opts, err := hub.FromEnv(os.Getenv); err != nil {
		fmt.Fprintf(stderr, "tracer models: note: %v\n", err)
	} else {
		cacheDir = opts.CacheDir
		cached, err := hub.List(cacheDir)
		if err != nil {
			fmt.Fprintf(stderr, "tracer models: the Hugging Face cache %s: %v\n", cacheDir, err)
			return exitError
		}
		for _, m := range cached {
			rows = append(rows, cachedRows(m)...)
		}
	}
	note := func(format string, a ...any) {
		fmt.Fprintf(stderr, "tracer models: note: "+format+"\n", a...)
	}
	for _, dir := range dirs {
		found, err := scanFolder(dir, note)
		if err != nil {
			fmt.Fprintf(stderr, "tracer models: --models %s: %v\n", dir, err)
			return exitError
		}
		rows = append(rows, found...)
	}
	if *asJSON {
		if rows == nil {
			rows = []modelRow{}
		}
		return printJSON(stdout, stderr, "models", rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(stderr, "tracer models: no models in the Hugging Face cache (%s) or the --models folders: get one with tracer pull ORG/NAME\n", cacheDir)
		return exitOK
	}
	printTable(stdout, rows)
	return exitOK
}

// describe makes a row for the model at path (a folder or a .bin file).
func describe(name, path, source string) modelRow {
	r := modelRow{Name: name, Source: source, Path: path}
	d, err := hub.Describe(path)
	if err != nil {
		r.Error, r.err = err.Error(), err
	}
	r.Format, r.Architecture, r.Params, r.DType = d.Format, d.Architecture, d.Params, d.DType
	r.Tokenizer, r.ChatTemplate = d.Tokenizer, d.ChatTemplate
	return r
}

// cachedRows describes a snapshot of the cache: one model, or for a
// repository of llama2.c checkpoints pulled with --file, each checkpoint.
func cachedRows(m hub.CachedModel) []modelRow {
	var rows []modelRow
	if !isModelFolder(m.Dir) {
		for _, f := range m.Files {
			if isCheckpointName(f) {
				r := describe(m.Spec(), filepath.Join(m.Dir, filepath.FromSlash(f)), "hf-cache")
				r.File = f
				rows = append(rows, r)
			}
		}
	}
	if len(rows) == 0 {
		rows = []modelRow{describe(m.Spec(), m.Dir, "hf-cache")}
	}
	for i := range rows {
		rows[i].Revisions, rows[i].Commit, rows[i].SizeBytes = m.Revisions, m.Commit, m.Size
	}
	return rows
}

// isCheckpointName reports whether a file may be a llama2.c checkpoint.
func isCheckpointName(name string) bool {
	base := filepath.Base(name)
	return strings.HasSuffix(base, ".bin") && !strings.HasPrefix(base, "tokenizer")
}

// scanFolder finds the models in dir: dir itself when it holds a
// config.json, else its subfolders that do and its llama2.c .bin files.
// A named pipe, socket or device is never opened (that can block): as a
// model folder's file it makes the row's error, in place of a checkpoint it
// is skipped with a note.
func scanFolder(dir string, note func(format string, a ...any)) ([]modelRow, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("not a folder")
	}
	if isModelFolder(dir) {
		return []modelRow{folderRow(dir)}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rows []modelRow
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case isModelFolder(path):
			rows = append(rows, folderRow(path))
		case !e.IsDir() && isCheckpointName(e.Name()):
			// Only llama2.c checkpoints: other .bin files fail Describe.
			r := folderRow(path)
			switch {
			case r.Error == "":
				rows = append(rows, r)
			case errors.Is(r.err, hub.ErrNotRegular):
				note("skipped %v", r.err)
			}
		}
	}
	return rows, nil
}

// isModelFolder reports whether dir holds a config.json. One that is not a
// regular file still counts, so that Describe names the problem in the row.
func isModelFolder(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "config.json"))
	return err == nil && !fi.IsDir()
}

func folderRow(path string) modelRow {
	r := describe(path, path, "folder")
	r.SizeBytes = diskSize(path)
	return r
}

// diskSize adds up the sizes of the files at path, following symlinks.
func diskSize(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func printTable(w io.Writer, rows []modelRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tARCHITECTURE\tPARAMS\tDTYPE\tSIZE\tTOKENIZER\tCHAT TEMPLATE")
	for _, r := range rows {
		arch, params, dtype := orDash(r.Architecture), humanParams(r.Params), orDash(r.DType)
		if r.Error != "" {
			arch = "? (" + firstLine(r.Error) + ")"
		}
		name := r.Name
		if r.File != "" {
			name += " (" + r.File + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, arch, params, dtype, humanBytes(r.SizeBytes), yesNo(r.Tokenizer), yesNo(r.ChatTemplate))
	}
	tw.Flush()
}

// humanBytes writes n bytes in decimal units, as the Hub shows sizes.
func humanBytes(n int64) string {
	return thousands(n, [4]string{" B", " kB", " MB", " GB"})
}

// humanParams writes a parameter count as model names do: 920, 16.4K,
// 134.5M, 1.1B.
func humanParams(n int64) string {
	if n <= 0 {
		return "-"
	}
	return thousands(n, [4]string{"", "K", "M", "B"})
}

// thousands writes n whole below 1000, otherwise with one decimal in
// thousands, millions or billions; units are the suffixes of the four.
func thousands(n int64, units [4]string) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d%s", n, units[0])
	case n < 1000_000:
		return fmt.Sprintf("%.1f%s", float64(n)/1e3, units[1])
	case n < 1000_000_000:
		return fmt.Sprintf("%.1f%s", float64(n)/1e6, units[2])
	}
	return fmt.Sprintf("%.1f%s", float64(n)/1e9, units[3])
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
