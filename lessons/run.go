package lessons

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/toy"
)

// ModelKind is the model a run asks for.
type ModelKind string

// The model kinds.
const (
	// ModelToy is the lesson's bigram table (models.Open("toy")).
	ModelToy ModelKind = "toy"
	// ModelReal is whatever real model the learner has: a model folder, a
	// model in the Hugging Face cache, or llama2.c's stories260K. Real runs
	// are written so that any causal LM with a tokenizer can run them.
	ModelReal ModelKind = "real"
)

// Fits reports whether an opened model is of the kind.
func (k ModelKind) Fits(l *models.Loaded) bool {
	return l != nil && (toy.Of(l) != nil) == (k == ModelToy)
}

// Run is one generation a step drives: the model kind, the prompt and the
// generation settings, named as in transformers' GenerationConfig. Settings
// a run leaves out come from the model's generation_config.json, then from
// transformers' defaults, as with `tracer run`.
type Run struct {
	ID    string    `json:"id"`              // unique within the step: "cache-on"
	Label Text      `json:"label,omitempty"` // the column title of a comparison: "cache on"
	Model ModelKind `json:"model"`
	// Suggest names a real model that shows the step best (GPT-2 has no pad
	// token; Qwen2.5-Instruct's generation_config.json turns sampling on),
	// for the page to prefer when the learner has it.
	Suggest string `json:"suggest,omitempty"`

	// Prompts is the prompt text: none (the toy starts from its begin
	// marker), one, or several for a batch. A toy prompt is words of the
	// table separated by spaces.
	Prompts []string `json:"prompts,omitempty"`
	// Padding is "left" (the default) or "right" for a batch.
	Padding string `json:"padding,omitempty"`
	// Options are the generation options the run sets, in the order the
	// lesson lists them; Settings parses them for the engine.
	Options Options `json:"options,omitempty"`

	// Quantize runs the real model with its float weight matrices
	// quantized to this type as it loads ("q8_0", "q4_k": the page's
	// quantize menu, arch.Quantized); "" runs it as stored.
	Quantize string `json:"quantize,omitempty"`

	// ExpectStop is the stop reason the lesson's text promises
	// (trace.StopEOS, trace.StopMaxLength, ...); "" promises none.
	ExpectStop string `json:"expect_stop,omitempty"`
}

// Setting is one generation option of a run: its GenerationConfig name and
// its value as JSON ("20", "false", "0.7", "[2, 1]").
type Setting struct {
	Name  string
	Value string
}

// Options are a run's settings in the order the lesson lists them. In a
// lesson file they are a JSON object: {"max_new_tokens": 20, "do_sample": false}.
type Options []Setting

// Get returns the JSON value of the named setting, or "" when the run does
// not set it.
func (s Options) Get(name string) string {
	for _, o := range s {
		if o.Name == name {
			return o.Value
		}
	}
	return ""
}

// Settings parses the options, and the padding side, into the layer
// engine.Resolve takes: only what the run sets is non-nil. A lesson may
// set every option engine.Options marks Lesson, by its GenerationConfig
// name; unknown names and ill-typed values are errors (Load has already
// rejected them in the embedded lessons).
func (r *Run) Settings() (*engine.Settings, error) {
	s, err := r.Options.engine()
	if err != nil {
		return nil, err
	}
	if r.Padding != "" {
		op, _ := engine.LookupOption("padding")
		if err := op.Parse(s, r.Padding); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s Options) engine() (*engine.Settings, error) {
	var es engine.Settings
	for _, o := range s {
		op, ok := lessonOption(o.Name)
		if !ok {
			return nil, fmt.Errorf("setting %q is not a generation option tracer knows (want a GenerationConfig name such as max_new_tokens)", o.Name)
		}
		if err := op.SetJSON(&es, json.RawMessage(o.Value)); err != nil {
			return nil, fmt.Errorf("setting %w", err)
		}
	}
	return &es, nil
}

// lessonOption returns the option a lesson's setting names, by its
// GenerationConfig name, when a lesson may set it.
func lessonOption(name string) (engine.Option, bool) {
	op, ok := engine.LookupOption(name)
	return op, ok && op.Name == name && op.Lesson
}

// MarshalJSON writes the settings as one JSON object, in order.
func (s Options) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, o := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(o.Name)
		b.Write(name)
		b.WriteByte(':')
		if err := json.Compact(&b, []byte(o.Value)); err != nil {
			return nil, fmt.Errorf("setting %s: %w", o.Name, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object of settings, keeping their order.
func (s *Options) UnmarshalJSON(data []byte) error {
	members, err := orderedMembers(data)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	out := make(Options, len(members))
	for i, m := range members {
		var v bytes.Buffer
		if err := json.Compact(&v, m.value); err != nil {
			return fmt.Errorf("settings: %s: %w", m.key, err)
		}
		out[i] = Setting{Name: m.key, Value: v.String()}
	}
	*s = out
	return nil
}

// orderedMembers reads a JSON object's members in order, rejecting a name
// that appears twice.
func orderedMembers(data []byte) ([]struct {
	key   string
	value json.RawMessage
}, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object, got %.40s", data)
	}
	var out []struct {
		key   string
		value json.RawMessage
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string) // object keys are always strings
		if seen[key] {
			return nil, fmt.Errorf("%q appears twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, struct {
			key   string
			value json.RawMessage
		}{key, v})
	}
	return out, nil
}

// Input is the run's prompt as models.Loaded.Request takes it. A run
// without a prompt starts from the model's BOS token.
func (r *Run) Input() models.Input {
	if len(r.Prompts) == 0 {
		return models.Input{}
	}
	return models.Input{Texts: append([]string(nil), r.Prompts...)}
}

// Request turns the run into a generation request on an opened model:
// the model's settings under the run's (the padding side among them), the
// prompt encoded, recording on. Hand it to engine.Generate.
func (r *Run) Request(l *models.Loaded) (engine.Request, error) {
	if l == nil {
		return engine.Request{}, fmt.Errorf("lessons: run %q: no model", r.ID)
	}
	if !r.Model.Fits(l) {
		return engine.Request{}, fmt.Errorf("lessons: run %q wants a %s model, got %s", r.ID, r.Model, l.Spec)
	}
	user, err := r.Settings()
	if err != nil {
		return engine.Request{}, fmt.Errorf("lessons: run %q: %w", r.ID, err)
	}
	req, err := l.Request(r.Input(), user)
	if err != nil {
		return engine.Request{}, fmt.Errorf("lessons: run %q: %w", r.ID, err)
	}
	req.Record = true
	return req, nil
}

// padding returns the batch padding side, left unless the run says right.
func (r *Run) padding() string {
	if r.Padding == "" {
		return "left"
	}
	return r.Padding
}

// Command writes the run as a `tracer run` command line on the named
// model. An empty model means the toy for a toy run, and the suggested
// model (or MODEL) for a real one.
func (r *Run) Command(model string) string {
	args := []string{"tracer", "run"}
	switch {
	case model != "" && model != "toy":
		args = append(args, "--model", shellQuote(model))
	case model == "" && r.Model == ModelReal && r.Suggest != "":
		args = append(args, "--model", shellQuote(r.Suggest))
	case model == "" && r.Model == ModelReal:
		args = append(args, "--model", "MODEL")
	}
	for _, p := range r.Prompts {
		args = append(args, "--prompt", shellQuote(p))
	}
	if len(r.Prompts) > 1 && r.padding() != "left" {
		args = append(args, "--padding", r.padding())
	}
	for _, o := range r.Options {
		args = append(args, flagArgs(o)...)
	}
	return strings.Join(args, " ")
}

// flagArgs writes one setting as `tracer run` flags: a boolean flag alone
// when it says true, a list as one flag per value.
func flagArgs(o Setting) []string {
	op, ok := lessonOption(o.Name)
	if !ok || op.Flag == "" {
		return nil // Load rejects such a setting
	}
	var s engine.Settings
	if op.SetJSON(&s, json.RawMessage(o.Value)) != nil {
		return []string{"--" + op.Flag, shellQuote(unquote(json.RawMessage(o.Value)))}
	}
	flag := "--" + op.Flag
	var out []string
	for _, v := range op.Text(&s) {
		switch {
		case op.Kind == engine.KindBool && v == strconv.FormatBool(!op.Negated):
			out = append(out, flag)
		case op.Kind == engine.KindBool:
			out = append(out, flag+"="+strconv.FormatBool(op.Negated))
		default:
			out = append(out, flag, shellQuote(v))
		}
	}
	return out
}

// unquote returns a JSON string's text, or any other JSON value as written.
func unquote(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
