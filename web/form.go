package web

import (
	"errors"
	"fmt"
	"math"
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

// runForm is the page's run form as its script sends it: every option as
// typed, "" leaving it to the model's generation config and transformers'
// defaults.
type runForm struct {
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
	CompareModel      string `json:"compare_model"` // compare: a second file of the same model; every line then runs on both (compare.go)
}

// input turns the prompt fields into the model's input.
func (f *runForm) input() (models.Input, error) {
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

// settings parses the option fields. maxNew caps max_new_tokens.
func (f *runForm) settings(maxNew int) (*engine.Settings, error) {
	s := &engine.Settings{}
	var err error
	if s.DoSample, err = optBool("do_sample", f.DoSample); err != nil {
		return nil, err
	}
	if s.UseCache, err = optBool("use_cache", f.UseCache); err != nil {
		return nil, err
	}
	for _, o := range []struct {
		name string
		text string
		dst  **float64
	}{
		{"temperature", f.Temperature, &s.Temperature}, {"top_p", f.TopP, &s.TopP},
		{"min_p", f.MinP, &s.MinP}, {"repetition_penalty", f.RepetitionPenalty, &s.RepetitionPenalty},
	} {
		if *o.dst, err = optFloat(o.name, o.text); err != nil {
			return nil, err
		}
	}
	for _, o := range []struct {
		name string
		text string
		dst  **int
	}{
		{"top_k", f.TopK, &s.TopK}, {"max_new_tokens", f.MaxNewTokens, &s.MaxNewTokens}, {"num_beams", f.NumBeams, &s.NumBeams},
	} {
		if *o.dst, err = optInt(o.name, o.text); err != nil {
			return nil, err
		}
	}
	if s.MaxNewTokens != nil && *s.MaxNewTokens > maxNew {
		return nil, fmt.Errorf("max_new_tokens %d is more than this server allows (%d)", *s.MaxNewTokens, maxNew)
	}
	if t := strings.TrimSpace(f.Seed); t != "" {
		seed, err := strconv.ParseUint(t, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seed: %q is not a whole number from 0 to 2^64-1", t)
		}
		s.Seed = &seed
	}
	switch f.Padding {
	case "", "left", "right":
	default:
		return nil, fmt.Errorf("padding %q: want left or right", f.Padding)
	}
	return s, nil
}

func optBool(name, text string) (*bool, error) {
	switch strings.TrimSpace(text) {
	case "":
		return nil, nil
	case "true", "on", "1":
		v := true
		return &v, nil
	case "false", "off", "0":
		v := false
		return &v, nil
	}
	return nil, fmt.Errorf("%s: %q is not true or false", name, text)
}

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
	form  runForm
}

// variants expands a compare form into its runs: each line of Variants
// overrides options of the base form. "greedy" turns sampling off; "T" is
// short for temperature; setting a sampling knob turns sampling on unless
// the line says do_sample. Every run shares the base form's seed.
func (f *runForm) variants() ([]variant, error) {
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
func (f *runForm) variantLines() ([]variant, error) {
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
			dst := v.form.field(name)
			if dst == nil {
				return nil, fmt.Errorf("compare line %q: unknown option %q (use temperature or T, top_k, top_p, min_p, repetition_penalty, do_sample, max_new_tokens, use_cache)", l, name)
			}
			*dst = val
			switch name {
			case "do_sample":
				doSampleSet = true
			case "T", "temperature", "top_k", "top_p", "min_p":
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

// field returns the form field a compare line may set, or nil.
func (f *runForm) field(name string) *string {
	switch name {
	case "T", "temperature":
		return &f.Temperature
	case "top_k":
		return &f.TopK
	case "top_p":
		return &f.TopP
	case "min_p":
		return &f.MinP
	case "repetition_penalty":
		return &f.RepetitionPenalty
	case "do_sample":
		return &f.DoSample
	case "max_new_tokens":
		return &f.MaxNewTokens
	case "use_cache":
		return &f.UseCache
	}
	return nil
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
