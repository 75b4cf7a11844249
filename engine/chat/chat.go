// Package chat renders conversations into prompt text with a model's chat
// template, as transformers' apply_chat_template(messages, tokenize=False)
// does.
//
// A chat template is a Jinja program stored in tokenizer_config.json. It is
// run here by gonja (github.com/nikolalohinski/gonja/v2), set up to behave
// like the environment transformers compiles templates in: jinja2's
// ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the
// loopcontrols extension, the {% generation %} tag, transformers' tojson
// filter (json.dumps with ensure_ascii=False: ", " and ": " separators, keys
// in the order given), and the raise_exception and strftime_now globals.
// Where gonja's Jinja differs from Python's in ways real templates notice
// (negative indexes, string escapes, None, printing, dict order, string
// methods), the template is adjusted after parsing and the differing
// builtins are replaced; see rewrite.go and source.go.
//
// Templates are data from outside, so rendering is bounded: loop
// iterations, macro nesting, range() sizes, string sizes and output length
// are limited, a render times out, and a panic inside gonja comes back as an
// error. Memory is bounded by an output budget (Options.OutputBudget, see
// budget.go): every filter, method and operator that builds a string or a
// list charges its size to the render's budget before it allocates.
package chat

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// ErrNoChatTemplate reports a tokenizer without a chat template.
var ErrNoChatTemplate = errors.New("tokenizer_config.json has no chat_template: this model is not a chat model; give it a plain prompt")

// RaiseError is returned by Render when the template calls
// raise_exception(message), typically because the conversation breaks its
// rules (roles must alternate, no system message, ...).
type RaiseError struct {
	Message string
}

// Error returns the template's message after "chat template error: ".
func (e *RaiseError) Error() string { return "chat template error: " + e.Message }

// Options are apply_chat_template's arguments besides the conversation.
type Options struct {
	// AddGenerationPrompt ends the prompt with the tokens that start an
	// assistant turn.
	AddGenerationPrompt bool

	// Tools are the tool (function) schemas offered to the model, usually
	// {"type": "function", "function": {...}} objects. nil passes None;
	// use Object, json.RawMessage or DecodeJSON to keep key order.
	Tools []any

	// Documents are retrieval documents for RAG templates; nil passes None.
	Documents []any

	// Template picks one of several named templates ("default",
	// "tool_use", ...). Empty picks as transformers does: "tool_use" when
	// Tools is set and the model has one, else "default".
	Template string

	// Extra holds more template variables, like apply_chat_template's
	// **kwargs (for example "enable_thinking": false). They override the
	// special-token variables.
	Extra map[string]any

	// Now is the time strftime_now formats; zero means the clock.
	Now time.Time

	// OutputBudget bounds, in bytes, the strings and lists one render may
	// build, the rendered text included (a list item counts 16 bytes).
	// Every filter, method and operator checks it before it allocates, so
	// no template can exhaust memory; one that tries fails with an error
	// wrapping ErrOutputBudget. 0 means DefaultOutputBudget (4 MiB).
	OutputBudget int
}

// Template is a parsed chat template (or a set of named ones) with the
// tokenizer's special tokens. It is safe for concurrent use.
type Template struct {
	names    []string // in the order given; "" for an unnamed template
	compiled map[string]*exec.Template
	sources  map[string]string
	vars     map[string]any
}

// Parse compiles one chat template. vars are the variables every render
// sees besides the conversation, normally the special tokens
// ("bos_token": "<s>", ...).
func Parse(source string, vars map[string]any) (*Template, error) {
	return newTemplate([]namedSource{{"", source}}, vars)
}

type namedSource struct{ name, source string }

func newTemplate(sources []namedSource, vars map[string]any) (*Template, error) {
	t := &Template{
		compiled: map[string]*exec.Template{},
		sources:  map[string]string{},
		vars:     vars,
	}
	for _, s := range sources {
		tpl, err := compile(s.name, s.source)
		if err != nil {
			return nil, err
		}
		t.names = append(t.names, s.name)
		t.compiled[s.name] = tpl
		t.sources[s.name] = s.source
	}
	return t, nil
}

// compile prepares, parses and instruments one template.
func compile(name, source string) (tpl *exec.Template, err error) {
	label := "chat template"
	if name != "" {
		label = fmt.Sprintf("chat template %q", name)
	}
	defer func() {
		if r := recover(); r != nil {
			tpl, err = nil, fmt.Errorf("chat: parse %s: the template failed: panic: %v", label, r)
		}
	}()
	prepared, err := prepareSource(source)
	if err != nil {
		return nil, fmt.Errorf("chat: parse %s: %w", label, err)
	}
	env, err := newEnvironment()
	if err != nil {
		return nil, fmt.Errorf("chat: set up template environment: %w", err)
	}
	const id = "chat_template"
	tpl, err = exec.NewTemplate(id, newConfig(), sourceLoader{id, prepared}, env)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // gonja's wrapper quotes the whole source
		}
		return nil, fmt.Errorf("chat: parse %s: %w", label, err)
	}
	if err := instrument(tpl.Root()); err != nil {
		return nil, fmt.Errorf("chat: parse %s: %w", label, err)
	}
	return tpl, nil
}

// Names lists the template names, "" for a single unnamed template.
func (t *Template) Names() []string { return slices.Clone(t.names) }

// Source returns the Jinja text of the named template ("" for an unnamed
// one).
func (t *Template) Source(name string) (string, bool) {
	s, ok := t.sources[name]
	return s, ok
}

// pick chooses the template for opts, as apply_chat_template does.
func (t *Template) pick(opts Options) (string, error) {
	if opts.Template != "" {
		if _, ok := t.compiled[opts.Template]; !ok {
			return "", fmt.Errorf("chat: no chat template named %q (have %q)", opts.Template, t.names)
		}
		return opts.Template, nil
	}
	if len(t.names) == 1 {
		return t.names[0], nil
	}
	if _, ok := t.compiled["tool_use"]; ok && opts.Tools != nil {
		return "tool_use", nil
	}
	if _, ok := t.compiled["default"]; ok {
		return "default", nil
	}
	return "", fmt.Errorf("chat: the model has several chat templates (%q) and none named default; choose one", t.names)
}

// Render runs the template on a conversation and returns the prompt text.
func (t *Template) Render(messages []Message, opts Options) (string, error) {
	name, err := t.pick(opts)
	if err != nil {
		return "", err
	}
	data, err := t.variables(messages, opts)
	if err != nil {
		return "", err
	}
	if opts.OutputBudget < 0 {
		return "", fmt.Errorf("chat: Options.OutputBudget is %d; use 0 for the default of %s, or a positive number of bytes", opts.OutputBudget, byteSize(DefaultOutputBudget))
	}
	state := newRenderState(opts.Now, opts.OutputBudget)
	data[stateKey] = state
	text, err := execute(t.compiled[name], data, state)
	switch {
	case state.exceeded != nil:
		return "", fmt.Errorf("chat: render chat template: %w", state.exceeded)
	case state.raised != nil:
		return "", state.raised
	case err != nil:
		return "", fmt.Errorf("chat: render chat template: %w", err)
	}
	return text, nil
}

// execute runs a compiled template, turning a panic inside gonja into an
// error.
func execute(tpl *exec.Template, data map[string]any, state *renderState) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("the template failed: panic: %v", r)
		}
	}()
	var buf strings.Builder
	if err := tpl.Execute(&limitedWriter{w: &buf, max: maxOutputBytes, state: state}, exec.NewContext(data)); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// variables builds what the template reads: messages, tools, documents,
// add_generation_prompt, the special tokens and opts.Extra.
func (t *Template) variables(messages []Message, opts Options) (map[string]any, error) {
	data := map[string]any{}
	for k, v := range t.vars {
		c, err := templateValue(v)
		if err != nil {
			return nil, fmt.Errorf("chat: variable %s: %w", k, err)
		}
		data[k] = c
	}
	for k, v := range opts.Extra {
		switch k {
		case "messages", "tools", "documents", "add_generation_prompt":
			return nil, fmt.Errorf("chat: Extra cannot set %s; use the argument", k)
		}
		c, err := templateValue(v)
		if err != nil {
			return nil, fmt.Errorf("chat: variable %s: %w", k, err)
		}
		data[k] = c
	}
	list := make([]any, len(messages))
	for i, m := range messages {
		c, err := templateValue(m)
		if err != nil {
			return nil, fmt.Errorf("chat: message %d: %w", i, err)
		}
		list[i] = c
	}
	data["messages"] = list
	for name, items := range map[string][]any{"tools": opts.Tools, "documents": opts.Documents} {
		data[name] = noneValue
		if items != nil {
			c, err := templateValue(items)
			if err != nil {
				return nil, fmt.Errorf("chat: %s: %w", name, err)
			}
			data[name] = c
		}
	}
	data["add_generation_prompt"] = opts.AddGenerationPrompt
	return data, nil
}
