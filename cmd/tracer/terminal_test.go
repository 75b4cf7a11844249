package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostile is text that would clear the screen, retitle the window and hide
// itself if a terminal received it raw.
const hostile = "evil\x1b[2J\x1b]0;pwned\x07\r\u009b31m\x7f"

// rawControl reports whether s holds a control character a terminal acts on.
func rawControl(s string) bool {
	return strings.ContainsAny(s, "\x1b\x07\r\x7f\u009b")
}

func TestValidateEscapesUntrustedNames(t *testing.T) {
	good, _, _ := tracer(t, "", "run", "--json")
	var c map[string]any
	if err := json.Unmarshal([]byte(good), &c); err != nil {
		t.Fatal(err)
	}
	c["model"].(map[string]any)["name"] = hostile
	b, _ := json.Marshal(c)
	path := filepath.Join(t.TempDir(), "hostile.json")
	os.WriteFile(path, b, 0o644)
	out, errOut, code := tracer(t, "", "validate", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if rawControl(out) || !strings.Contains(out, `evil\u001b[2J`) {
		t.Errorf("validate printed %q; want the model name with its control characters escaped", out)
	}
}

func TestRunEscapesControlCharactersButKeepsJSON(t *testing.T) {
	table := map[string]any{
		"name": "hostile", "bos": "<s>", "eos": "</s>", "max_length": 4,
		"table": map[string]any{"<s>": map[string]float64{hostile: 1}, hostile: map[string]float64{"</s>": 1}},
	}
	b, _ := json.Marshal(table)
	path := filepath.Join(t.TempDir(), "table.json")
	os.WriteFile(path, b, 0o644)

	out, errOut, code := tracer(t, "", "run", "--model", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if rawControl(out) || !strings.Contains(out, `\u001b[2J`) {
		t.Errorf("run printed %q; want the token's control characters escaped", out)
	}
	js, errOut, code := tracer(t, "", "run", "--model", path, "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var tr struct {
		Output struct {
			NewText string `json:"new_text"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(js), &tr); err != nil {
		t.Fatalf("--json output is not JSON after escaping: %v", err)
	}
	if !strings.Contains(tr.Output.NewText, hostile) {
		t.Errorf("--json new_text %q, want it to hold the token %q unchanged", tr.Output.NewText, hostile)
	}
}

func TestTerminalWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\n\twith tab", "plain text\n\twith tab"},
		{"हिन्दी", "हिन्दी"},
		{"a\x1bb", `a\u001bb`},
		{"\u0085x\u00a0", `\u0085x` + "\u00a0"},
		{"\x00\x7f", `\u0000\u007f`},
	} {
		var buf bytes.Buffer
		n, err := terminalWriter{&buf}.Write([]byte(tc.in))
		if err != nil || n != len(tc.in) || buf.String() != tc.want {
			t.Errorf("Write(%q) = %d, %v, wrote %q; want %d, nil, %q", tc.in, n, err, buf.String(), len(tc.in), tc.want)
		}
	}
}
