package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tracer/trace"
)

// binary is the tracer command built once for the tests that run it as a
// user would.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tracer-cli-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "tracer")
	args := []string{"build", "-o", binary}
	if len(buildTags) > 0 {
		args = append(args, "-tags", strings.Join(buildTags, ","))
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tracer runs the binary and returns its stdout, stderr and exit status.
func tracer(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func TestRunToyPrintsText(t *testing.T) {
	out, errOut, code := tracer(t, "", "run", "--model", "toy")
	if code != 0 || out != "I love chai\n" {
		t.Errorf("got %q (stderr %q, exit %d), want \"I love chai\\n\"", out, errOut, code)
	}
}

func TestRunToyJSON(t *testing.T) {
	out, errOut, code := tracer(t, "", "run", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	tr, err := trace.Decode([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		token string
		prob  float64
	}{{"I", 0.9}, {"love", 0.7}, {"chai", 0.6}, {"</s>", 0.8}}
	if len(tr.Steps) != len(want) {
		t.Fatalf("got %d steps, want %d", len(tr.Steps), len(want))
	}
	for i, w := range want {
		c := tr.Steps[i].Rows[0].Chosen
		if c.Token != w.token || c.Prob < w.prob-1e-6 || c.Prob > w.prob+1e-6 {
			t.Errorf("step %d chose %q p=%v, want %q p=%v", i, c.Token, c.Prob, w.token, w.prob)
		}
	}
	if tr.Output.StopReason != trace.StopEOS || tr.Output.NewText != "I love chai" {
		t.Errorf("output %q stop %q, want \"I love chai\" eos", tr.Output.NewText, tr.Output.StopReason)
	}
}

func TestRunWritesOutFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toy.json")
	if _, errOut, code := tracer(t, "", "run", "--out", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out, errOut, code := tracer(t, "", "validate", path)
	if code != 0 || !strings.Contains(out, "4 steps, stop reason eos") {
		t.Errorf("validate: %q %q exit %d", out, errOut, code)
	}
}

func TestValidateRejectsMalformedTraces(t *testing.T) {
	good, _, _ := tracer(t, "", "run", "--json")
	var m map[string]any
	if err := json.Unmarshal([]byte(good), &m); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(map[string]any)) string {
		var c map[string]any
		json.Unmarshal([]byte(good), &c)
		f(c)
		b, _ := json.Marshal(c)
		return string(b)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		args          []string
		want          string
	}{
		{"truncated", good[:len(good)/3], nil, "truncated JSON"},
		{"wrong format", edit(func(c map[string]any) { c["format"] = "other/v9" }), nil, "bad file format"},
		{"id outside vocabulary", edit(func(c map[string]any) { c["output"].(map[string]any)["new_ids"] = []int{2, 4, 6, 800} }), nil, "outside the vocabulary"},
		{"over the size limit", good + strings.Repeat(" ", 2<<20), []string{"--max-size", "1"}, "larger than the size limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			os.WriteFile(path, []byte(tc.content), 0o644)
			_, errOut, code := tracer(t, "", append(append([]string{"validate"}, tc.args...), path)...)
			if code == 0 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "panic") {
				t.Errorf("exit %d, stderr %q; want a non-zero exit and %q", code, errOut, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(errOut), "\n"); n > 0 {
				t.Errorf("stderr has %d lines, want one clear line: %q", n+1, errOut)
			}
		})
	}
}

func TestUsageErrorsExit64(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"run", "--no-such-flag"},
		{"run", "--top-p", "1.5"},
		{"run", "--temperature", "-1"},
		{"run", "--num-beams", "0"},
		{"run", "--eos-id", "99"},
		{"run", "--early-stopping", "maybe"},
		{"run", "--prompt-ids", "1,x"},
		{"validate"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, errOut, code := tracer(t, "", args...)
			if code != 64 || errOut == "" {
				t.Errorf("exit %d stderr %q, want exit 64 with a message", code, errOut)
			}
		})
	}
}

func TestHelpOnEveryCommand(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			out, _, code := tracer(t, "", c.name, "--help")
			if code != 0 || !strings.Contains(out, "Usage: tracer "+c.name) {
				t.Errorf("exit %d, stdout %q; want usage on stdout and exit 0", code, out)
			}
		})
	}
}

func TestRunToyTableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "table.json")
	os.WriteFile(path, []byte(`{"table": {"<s>": {"namaste": 0.8, "hello": 0.2}, "namaste": {"</s>": 1}}}`), 0o644)
	out, errOut, code := tracer(t, "", "run", "--model", path)
	if code != 0 || out != "namaste\n" {
		t.Errorf("got %q (stderr %q, exit %d), want \"namaste\\n\"", out, errOut, code)
	}
	os.WriteFile(path, []byte(`{"table": {"<s>": {"a": "lots"}}}`), 0o644)
	_, errOut, code = tracer(t, "", "run", "--model", path)
	if code == 0 || !strings.Contains(errOut, "positive probability") {
		t.Errorf("bad table: exit %d stderr %q, want an error naming the cell", code, errOut)
	}
}
