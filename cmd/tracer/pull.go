package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tracer/engine/hub"
)

func cmdPull(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("pull", "ORG/NAME[@REVISION] [--file NAME]", stderr)
	file := fs.String("file", "", "pull only this file (and the repository's tokenizer.bin, if any), e.g. a llama2.c checkpoint")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: tracer pull ORG/NAME[@REVISION] [--file NAME]\n\n"+
			"Downloads a model from the Hugging Face Hub into the cache transformers uses\n"+
			"(HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub) and prints its folder.\n"+
			"Reads HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE like huggingface_hub.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	pos, code := parseInterleaved(fs, args, stdout)
	if code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tracer pull: "+format+"\n", a...)
		return exitUsage
	}
	if len(pos) != 1 {
		return usageErr("want exactly one ORG/NAME[@REVISION], got %d arguments", len(pos))
	}
	opts, err := hub.FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "tracer pull: %s\n", hint(err))
		return exitError
	}
	opts.File = *file
	bar := newProgress(stderr)
	opts.Progress = bar.update
	opts.Waiting = func(file, lock string) {
		bar.flush()
		fmt.Fprintf(stderr, "tracer pull: waiting for another download of %s to finish (it holds %s)\n", file, lock)
	}
	snap, err := hub.Pull(ctx, pos[0], opts)
	bar.flush()
	if errors.Is(err, hub.ErrBadName) {
		return usageErr("%v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracer pull: %s\n", hint(err))
		return exitError
	}
	fmt.Fprintf(stderr, "tracer pull: %s at commit %.12s: %d files, %s downloaded\n", snap.Ref, snap.Commit, len(snap.Files), humanBytes(snap.Fetched))
	where := snap.Dir
	if *file != "" {
		where = filepath.Join(snap.Dir, filepath.FromSlash(*file))
	}
	fmt.Fprintln(stdout, where)
	return exitOK
}

// parseInterleaved parses flags that may come before or after the
// positional arguments ("pull ORG/NAME --file X"), returning the positional
// ones, and the exit status when parsing ends the command, or -1.
func parseInterleaved(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, int) {
	var pos []string
	for {
		if code := parse(fs, args, stdout); code >= 0 {
			return nil, code
		}
		if fs.NArg() == 0 {
			return pos, -1
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// progressBar draws download progress on stderr: a bar redrawn in place on
// a terminal, a line when each file starts and ends otherwise (logs, CI).
// newProgress returns a progress display on w: a bar on a terminal, plain
// lines otherwise.
func newProgress(w io.Writer) *progressBar {
	return &progressBar{w: w, tty: isTerminal(w), started: map[string]bool{}, finished: map[string]bool{}}
}

type progressBar struct {
	w                 io.Writer
	tty               bool
	started, finished map[string]bool
	last              time.Time
	drawn             bool // a bar is on the current line
}

// redrawEvery limits how often the bar is redrawn.
const redrawEvery = 100 * time.Millisecond

func (p *progressBar) update(file string, done, total int64) {
	if p.finished[file] {
		return
	}
	end := total >= 0 && done >= total
	if !p.started[file] {
		p.started[file] = true
		if !p.tty {
			verb := "downloading"
			if done > 0 && !end {
				verb = "resuming at " + humanBytes(done) + " of"
			}
			fmt.Fprintf(p.w, "tracer pull: %s %s (%s)\n", verb, file, sizeOrUnknown(total))
		}
	}
	if end {
		p.finished[file] = true
	}
	if !p.tty {
		if end {
			fmt.Fprintf(p.w, "tracer pull: done %s\n", file)
		}
		return
	}
	if !end && time.Since(p.last) < redrawEvery {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r%s\x1b[K", barLine(file, done, total)) // ESC[K clears the rest of the line
	p.drawn = true
	if end {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// flush ends a bar left mid-line (by an error or Ctrl-C).
func (p *progressBar) flush() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// barLine is one line of the terminal bar:
// "model.safetensors  [##########----------]  50%  135.0 MB / 270.0 MB".
func barLine(file string, done, total int64) string {
	const width = 24
	name := file
	if len(name) > 32 {
		name = "…" + name[len(name)-31:]
	}
	if total <= 0 {
		return fmt.Sprintf("%-32s  %s", name, humanBytes(done))
	}
	frac := min(float64(done)/float64(total), 1)
	n := int(frac * width)
	return fmt.Sprintf("%-32s  [%s%s] %3.0f%%  %s / %s ", name, strings.Repeat("#", n), strings.Repeat("-", width-n), 100*frac, humanBytes(done), humanBytes(total))
}

func sizeOrUnknown(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return humanBytes(n)
}

// isTerminal reports whether w is a terminal (a character device), where a
// redrawn bar makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
