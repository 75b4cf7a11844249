package runs

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/trace"
)

// Limits on what the run form may ask for.
const (
	maxPrompts  = 16  // prompts in one batch
	maxVariants = 6   // runs in one comparison
	maxRecorded = 100 // candidates recorded per step
)

// Form is the page's run form as its script sends it: every option as
// typed, "" leaving it to the model's generation config and transformers'
// defaults.
type Form struct {
	Model             string `json:"model"`     // a name from the model list
	Input             string `json:"input"`     // "text" (default), "ids" or "chat"
	Prompt            string `json:"prompt"`    // one prompt per line; for chat, the user's message
	System            string `json:"system"`    // chat: the system prompt, optional
	DoSample          string `json:"do_sample"` // "", "true" or "false"
	Temperature       string `json:"temperature"`
	TopK              string `json:"top_k"`
	TopP              string `json:"top_p"`
	MinP              string `json:"min_p"`
	RepetitionPenalty string `json:"repetition_penalty"`
	Seed              string `json:"seed"`
	MaxNewTokens      string `json:"max_new_tokens"`
	NumBeams          string `json:"num_beams"`
	UseCache          string `json:"use_cache"`     // "", "true" or "false"
	Padding           string `json:"padding"`       // "left" (default) or "right"
	Variants          string `json:"variants"`      // compare: one line of overrides per run, "greedy" or "T=0.7 top_k=5"
	CompareModel      string `json:"compare_model"` // compare: a second file of the same model, or "=TYPE" its quantized copy; every line then runs on both (compare.go)
	Quantize          string `json:"quantize"`      // "" or a type the model's float matrices are quantized to as it loads (arch.Quantized)
}

// input turns the prompt fields into the model's input.
func (f *Form) input() (models.Input, error) {
	var lines []string
	for l := range strings.Lines(f.Prompt) {
		if l = strings.TrimRight(l, "\r\n"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > maxPrompts {
		return models.Input{}, fmt.Errorf("%d prompts: at most %d, one per line", len(lines), maxPrompts)
	}
	switch f.Input {
	case "", "text":
		return models.Input{Texts: lines}, nil
	case "ids":
		var in models.Input
		for i, l := range lines {
			var ids []int
			for _, w := range strings.FieldsFunc(l, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
				id, err := strconv.Atoi(w)
				if err != nil {
					return in, fmt.Errorf("prompt ids, line %d: %q is not a token id", i+1, w)
				}
				ids = append(ids, id)
			}
			in.IDs = append(in.IDs, ids)
		}
		return in, nil
	case "chat":
		if strings.TrimSpace(f.Prompt) == "" {
			return models.Input{}, errors.New("chat: write the user's message in the prompt box")
		}
		var msgs []trace.Message
		if s := strings.TrimSpace(f.System); s != "" {
			msgs = append(msgs, trace.Message{Role: "system", Content: s})
		}
		return models.Input{Messages: append(msgs, trace.Message{Role: "user", Content: f.Prompt})}, nil
	}
	return models.Input{}, fmt.Errorf("input %q: want text, ids or chat", f.Input)
}

// pageOwn are the run form's fields that are not generation options: the
// model, the prompt, the compare box and its second model. Every other
// field is the Page field of an option of engine.Options.
var pageOwn = []string{"model", "input", "prompt", "system", "variants", "compare_model", "quantize"}

// optionFields returns the form's option fields by name (the JSON name, as
// engine.Option.Page names it).
func (f *Form) optionFields() map[string]*string {
	out := map[string]*string{}
	v := reflect.ValueOf(f).Elem()
	for _, sf := range reflect.VisibleFields(v.Type()) {
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !slices.Contains(pageOwn, name) {
			out[name] = v.FieldByIndex(sf.Index).Addr().Interface().(*string)
		}
	}
	return out
}

// settings parses the option fields, every option engine.Options gives a
// page field, into the user's settings layer; "" leaves an option unset.
// maxNew caps max_new_tokens.
func (f *Form) settings(maxNew int) (*engine.Settings, error) {
	s := &engine.Settings{}
	fields := f.optionFields()
	for _, op := range engine.Options() {
		if p := fields[op.Page]; op.Page != "" && p != nil && strings.TrimSpace(*p) != "" {
			if err := op.Parse(s, *p); err != nil {
				return nil, err
			}
		}
	}
	if s.MaxNewTokens != nil && *s.MaxNewTokens > maxNew {
		return nil, fmt.Errorf("max_new_tokens %d is more than this server allows (%d)", *s.MaxNewTokens, maxNew)
	}
	return s, nil
}

// FormField names the run form's field that the error msg, refusing f
// before its run started, is about: the first of the form's option fields
// (max_new_tokens, top_k, …) or its prompt that msg names as a word; for a
// comparison, its compare box when msg is about a compare line or names an
// option a line sets. "" when msg names none.
func FormField(f Form, compare bool, msg string) string {
	if compare && strings.HasPrefix(msg, "compare ") {
		return "variants"
	}
	fields := f.optionFields()
	name := ""
	for i := 0; i < len(msg) && name == ""; i++ {
		if i > 0 && isWordByte(msg[i-1]) {
			continue
		}
		j := i
		for j < len(msg) && isWordByte(msg[j]) {
			j++
		}
		if w := msg[i:j]; w == "prompt" || fields[w] != nil {
			name = w
		}
	}
	if compare && fields[name] != nil {
		lines, _ := f.variantLines()
		for _, v := range lines {
			if *v.form.optionFields()[name] != *fields[name] {
				return "variants"
			}
		}
	}
	return name
}

// isWordByte reports whether c may be part of an option's name.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// optFloat parses an optional number field of another form (the
// breakpoints'): "" is nil.
func optFloat(name, text string) (*float64, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s: %q is not a number", name, text)
	}
	return &v, nil
}

// optInt parses an optional whole-number field of another form: "" is nil.
func optInt(name, text string) (*int, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, nil
	}
	v, err := strconv.Atoi(t)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a whole number", name, text)
	}
	return &v, nil
}

// variant is one run of a comparison: a label and the form it runs.
type variant struct {
	label string
	form  Form
}

// variants expands a compare form into its runs: each line of Variants
// overrides options of the base form. "greedy" turns sampling off; "T" is
// short for temperature; setting a sampling knob turns sampling on unless
// the line says do_sample. Every run shares the base form's seed.
func (f *Form) variants() ([]variant, error) {
	out, err := f.variantLines()
	if err != nil {
		return nil, err
	}
	switch {
	case len(out) < 2:
		return nil, errors.New("compare needs at least two lines of settings, e.g. greedy, T=0.7 and T=1.2")
	case len(out) > maxVariants:
		return nil, fmt.Errorf("compare takes at most %d runs, got %d", maxVariants, len(out))
	}
	return out, nil
}

// variantLines is variants without the limits on their number.
func (f *Form) variantLines() ([]variant, error) {
	var out []variant
	for l := range strings.Lines(f.Variants) {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		v := variant{label: l, form: *f}
		v.form.Variants, v.form.CompareModel = "", ""
		sampleKnob, doSampleSet := false, false
		for _, w := range strings.Fields(l) {
			if w == "greedy" {
				v.form.DoSample, doSampleSet = "false", true
				continue
			}
			name, val, ok := strings.Cut(w, "=")
			if !ok {
				return nil, fmt.Errorf("compare line %q: %q is not name=value (or \"greedy\")", l, w)
			}
			dst, op := v.form.field(name)
			if dst == nil {
				return nil, fmt.Errorf("compare line %q: unknown option %q (use %s)", l, name, compareNames())
			}
			*dst = val
			switch {
			case op.Name == "do_sample":
				doSampleSet = true
			case op.Sampling:
				sampleKnob = true
			}
		}
		if sampleKnob && !doSampleSet {
			v.form.DoSample = "true"
		}
		out = append(out, v)
	}
	return out, nil
}

// field returns the form field a compare line may set, by an option's
// name or alias, and its option; nil when it may not set it. The seed is
// the base form's for every run.
func (f *Form) field(name string) (*string, engine.Option) {
	op, ok := engine.LookupOption(name)
	if !ok || op.Page == "" || op.Name == "seed" {
		return nil, op
	}
	return f.optionFields()[op.Page], op
}

// compareNames lists the names a compare line may set.
func compareNames() string {
	var names []string
	for _, op := range engine.Options() {
		if op.Page != "" && op.Name != "seed" {
			names = append(names, strings.Join(append([]string{op.Name}, op.Aliases...), " or "))
		}
	}
	return strings.Join(names, ", ")
}

// describe labels a lone run by its decoding: "greedy", "sampled, seed 7".
func describe(o trace.Options) string {
	switch {
	case o.NumBeams > 1:
		return fmt.Sprintf("beam search, %d beams", o.NumBeams)
	case o.DoSample:
		return fmt.Sprintf("sampled, T=%g, seed %d", o.Temperature, o.Seed)
	}
	return "greedy"
}
