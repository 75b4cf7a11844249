//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracer/engine/hub/hubtest"
)

// hangGuard is how long a command that must not block may run before the
// test kills it and fails: a safety net so that a regression fails rather
// than hangs the test run, not a measure of speed.
const hangGuard = 60 * time.Second

// tracerReturns runs the binary like tracer does, killing it and failing
// the test if it has not finished within hangGuard.
func tracerReturns(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("tracer %s did not finish: it blocked (stderr %q)", strings.Join(args, " "), stderr.String())
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestModelsNeverOpensPipes: `tracer models --models DIR` with a named pipe
// where a model file should be finishes; the model's row says which file is
// a pipe, a piped checkpoint is skipped with a note, and the good model
// beside them is listed as usual.
func TestModelsNeverOpensPipes(t *testing.T) {
	for k, v := range map[string]string{"HF_HOME": t.TempDir(), "HF_HUB_CACHE": "", "HF_HUB_OFFLINE": "1"} {
		t.Setenv(k, v)
	}
	for _, tc := range []struct {
		name     string
		pipe     string // inside the model folder "m", or at the top for a .bin
		rowError string // the error of m's row; "" when m has no row
		note     string // on stderr
	}{
		{"config.json", "m/config.json", "m/config.json is a named pipe (FIFO), not a regular file", ""},
		{"weights", "m/model.safetensors", "m/model.safetensors is a named pipe (FIFO), not a regular file", ""},
		{"tokenizer", "m/tokenizer.json", "m/tokenizer.json is a named pipe (FIFO), not a regular file", ""},
		{"checkpoint", "stories.bin", "", "tracer models: note: skipped "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, folder := range []string{"good", "m"} {
				os.Mkdir(filepath.Join(dir, folder), 0o755)
				for name, b := range hubtest.TinyModel() {
					if folder+"/"+name != tc.pipe {
						os.WriteFile(filepath.Join(dir, folder, name), b, 0o644)
					}
				}
			}
			if !strings.HasPrefix(tc.pipe, "m/") {
				os.RemoveAll(filepath.Join(dir, "m"))
			}
			pipe := filepath.Join(dir, filepath.FromSlash(tc.pipe))
			if err := syscall.Mkfifo(pipe, 0o644); err != nil {
				t.Skipf("cannot make a named pipe here: %v", err)
			}
			out, errOut, code := tracerReturns(t, "models", "--json", "--models", dir)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q; want 0", code, errOut)
			}
			var rows []modelRow
			if err := json.Unmarshal([]byte(out), &rows); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			byName := map[string]modelRow{}
			for _, r := range rows {
				byName[filepath.Base(r.Name)] = r
			}
			if g := byName["good"]; g.Error != "" || g.Params != 16448 {
				t.Errorf("the good model: %+v, want it described", g)
			}
			m, ok := byName["m"]
			switch {
			case tc.rowError == "" && ok:
				t.Errorf("got a row %+v, want none", m)
			case tc.rowError != "" && !strings.Contains(m.Error, filepath.FromSlash(tc.rowError)):
				t.Errorf("row of m: error %q, want it to say %q", m.Error, tc.rowError)
			}
			if !strings.Contains(errOut, tc.note) || tc.note != "" && !strings.Contains(errOut, pipe+" is a named pipe") {
				t.Errorf("stderr %q, want %q naming %s", errOut, tc.note, pipe)
			}
		})
	}
}

// TestModelsTableShowsPipe: the table names the piped file in the row.
func TestModelsTableShowsPipe(t *testing.T) {
	for k, v := range map[string]string{"HF_HOME": t.TempDir(), "HF_HUB_CACHE": "", "HF_HUB_OFFLINE": "1"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	for name, b := range hubtest.TinyModel() {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	os.Remove(filepath.Join(dir, "tokenizer.json"))
	if err := syscall.Mkfifo(filepath.Join(dir, "tokenizer.json"), 0o644); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	out, errOut, code := tracerReturns(t, "models", "--models", dir)
	if want := "? (" + filepath.Join(dir, "tokenizer.json") + " is a named pipe (FIFO)"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want a row saying %q", code, out, errOut, want)
	}
}

func TestHumanUnits(t *testing.T) {
	tests := []struct {
		name        string
		n           int64
		bytes, pars string
	}{
		{"zero", 0, "0 B", "-"},
		{"under a thousand", 920, "920 B", "920"},
		{"thousands", 16_400, "16.4 kB", "16.4K"},
		{"millions", 134_515_008, "134.5 MB", "134.5M"},
		{"billions", 1_100_048_384, "1.1 GB", "1.1B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := humanBytes(tt.n); got != tt.bytes {
				t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.bytes)
			}
			if got := humanParams(tt.n); got != tt.pars {
				t.Errorf("humanParams(%d) = %q, want %q", tt.n, got, tt.pars)
			}
		})
	}
}
