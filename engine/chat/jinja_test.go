package chat

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// jinjaCase is one template rendered by Python's jinja2 in transformers'
// environment (testdata/gen_jinja_cases.py).
type jinjaCase struct {
	Name     string          `json:"name"`
	Template string          `json:"template"`
	Vars     json.RawMessage `json:"vars"`
	Output   *string         `json:"output"`
	Error    string          `json:"error"`
}

// jinjaDeviations are cases where this package knowingly differs from
// jinja2, with the reason: the render must fail with an error containing
// errorText, or give output.
var jinjaDeviations = map[string]struct{ reason, errorText, output string }{
	"set/tuple": {reason: "tuple unpacking in set is not supported", errorText: "tuple unpacking"},
	// gonja resolves d.name to the item only; Jinja finds dict methods
	// first, so d.items is a (defined) bound method.
	"more/attr_vs_item": {reason: "attribute lookup does not find dict methods", output: "False|5"},
}

func loadJinjaCases(t testing.TB) []jinjaCase {
	t.Helper()
	data, err := os.ReadFile("testdata/jinja_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Now   string      `json:"now"`
		Cases []jinjaCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("testdata/jinja_cases.json: %v", err)
	}
	return file.Cases
}

// jinjaCaseNow is the time gen_jinja_cases.py gives strftime_now.
var jinjaCaseNow = time.Date(2024, time.July, 5, 14, 3, 9, 0, time.Local)

// renderJinjaCase renders a case the way the generator calls jinja2.
func renderJinjaCase(c jinjaCase) (string, error) {
	v, err := DecodeJSON(c.Vars)
	if err != nil {
		return "", err
	}
	opts := Options{Extra: map[string]any{}, Now: jinjaCaseNow}
	var messages []Message
	for _, m := range v.(Object) {
		switch m.Key {
		case "messages":
			raw, _ := json.Marshal(m.Value)
			if err := json.Unmarshal(raw, &messages); err != nil {
				return "", err
			}
		case "tools":
			opts.Tools = m.Value.([]any)
		case "add_generation_prompt":
			opts.AddGenerationPrompt = m.Value.(bool)
		default:
			opts.Extra[m.Key] = m.Value
		}
	}
	tmpl, err := Parse(c.Template, nil)
	if err != nil {
		return "", err
	}
	return tmpl.Render(messages, opts)
}

func TestJinjaCompatibility(t *testing.T) {
	for _, c := range loadJinjaCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			got, err := renderJinjaCase(c)
			if dev, ok := jinjaDeviations[c.Name]; ok {
				switch {
				case dev.errorText != "" && (err == nil || !strings.Contains(err.Error(), dev.errorText)):
					t.Errorf("%s: got %q, %v; want an error containing %q", dev.reason, got, err, dev.errorText)
				case dev.errorText == "" && (err != nil || got != dev.output):
					t.Errorf("%s: got %q, %v; want %q", dev.reason, got, err, dev.output)
				}
				return
			}
			switch {
			case c.Output == nil && err == nil:
				t.Errorf("got %q, want an error like jinja2's %q", got, c.Error)
			case c.Output == nil:
				if msg, ok := strings.CutPrefix(c.Error, "TemplateError: "); ok && !strings.Contains(err.Error(), msg) {
					t.Errorf("error %q lacks raise_exception's message %q", err, msg)
				}
			case err != nil:
				t.Errorf("template %q: %v\nwant %q", c.Template, err, *c.Output)
			case got != *c.Output:
				t.Errorf("template %q\n got %q\nwant %q", c.Template, got, *c.Output)
			}
		})
	}
}
