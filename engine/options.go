package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"tracer/trace"
)

// DefaultMaxLength is transformers' max_length when neither max_new_tokens
// nor max_length is given: generation stops once the sequence, prompt
// included, holds 20 tokens.
const DefaultMaxLength = 20

// DefaultRecordTop is how many candidates each step records unless told.
const DefaultRecordTop = 20

// Settings are generation options as a layer of configuration: nil means
// "not set here". A model's generation_config.json parses into Settings, and
// so do the user's flags, the page's form and a lesson's run; Resolve
// stacks transformers' defaults, the model's settings and the user's, in
// that order. Options describes each field: its name, kind, default, check
// and where it may be set.
type Settings struct {
	MaxNewTokens       *int
	MaxLength          *int
	MinNewTokens       *int
	DoSample           *bool
	Temperature        *float64
	TopK               *int
	TopP               *float64
	MinP               *float64
	RepetitionPenalty  *float64
	NumBeams           *int
	LengthPenalty      *float64
	EarlyStopping      *string // "false", "true" or "never"
	NumReturnSequences *int
	EOSTokenID         []int // nil: not set; replaces, never extends
	PadTokenID         *int
	StopStrings        []string
	Seed               *uint64
	UseCache           *bool

	// tracer's own: never read from generation_config.json.
	Padding         *string // "left" or "right", batches only
	RecordTop       *int
	FullLogits      *bool
	RecordAttention *string // "", "step" or "all"
	RecordLens      *int
	RecordForward   *int
	ForceIDs        []int // step i chooses ForceIDs[i]
}

// UnmarshalJSON reads generation_config.json: every option Options marks
// Config, by its GenerationConfig name; other keys are ignored. eos_token_id
// is an id or a list, early_stopping a bool or "never", and stop_strings a
// string or a list.
func (s *Settings) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*s = Settings{}
	for _, op := range Options() {
		if v, ok := raw[op.Name]; ok && op.Config {
			if err := op.SetJSON(s, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// TokenIDs parses a token-id entry of config.json or generation_config.json:
// absent or null is none, else an id or a list of ids.
func TokenIDs(raw json.RawMessage) ([]int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one int
	if err := json.Unmarshal(raw, &one); err == nil {
		return []int{one}, nil
	}
	var list []int
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("want an id or a list of ids, got %s", raw)
	}
	return list, nil
}

// ReadGenerationConfig reads a generation_config.json. A missing file is not
// an error: it returns nil settings.
func ReadGenerationConfig(path string) (*Settings, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("engine: %s: %w", path, err)
	}
	return &s, nil
}

// Where an option's value came from (trace.Options.Sources).
const (
	SourceDefault = "default"
	SourceModel   = "generation_config"
	SourceUser    = "user"
)

// Resolve stacks transformers' defaults, the model's settings (its
// generation_config.json, may be nil) and the user's settings, validates the
// result against the model, and records where every value came from. The
// model's own special tokens fill eos_token_id and pad_token_id when no layer
// sets them; pad falls back to the first EOS id, as transformers does.
// Options that may not come from the model (Option.Config false) are taken
// from the user's layer only.
func Resolve(info Info, model, user *Settings) (trace.Options, []string, error) {
	o := trace.Options{Sources: map[string]string{}}
	for _, op := range Options() {
		op.setDefault(&o)
		if op.Config && op.apply(&o, model) {
			o.Sources[op.Name] = SourceModel
		}
		if op.apply(&o, user) {
			o.Sources[op.Name] = SourceUser
		}
	}
	if o.EOSTokenID == nil && len(info.EOS) > 0 {
		o.EOSTokenID = append([]int{}, info.EOS...)
		o.Sources["eos_token_id"] = SourceModel
	}
	if _, ok := o.Sources["pad_token_id"]; !ok {
		switch {
		case info.PAD >= 0:
			o.PadTokenID = info.PAD
			o.Sources["pad_token_id"] = SourceModel
		case len(o.EOSTokenID) > 0:
			// Generate says so when a pad is actually used.
			o.PadTokenID = o.EOSTokenID[0]
			o.Sources["pad_token_id"] = SourceDefault
		}
	}
	var notices []string
	if o.MaxNewTokens < 0 && o.MaxLength < 0 {
		o.MaxLength = DefaultMaxLength
		o.Sources["max_length"] = SourceDefault
		notices = append(notices, fmt.Sprintf("neither max_new_tokens nor max_length was set: generation stops at transformers' default max_length of %d tokens, prompt included; set max_new_tokens", DefaultMaxLength))
	}
	for _, op := range Options() {
		if _, ok := o.Sources[op.Name]; !ok && op.ListDefault {
			o.Sources[op.Name] = SourceDefault
		}
	}
	return o, notices, Validate(o, info)
}

// OptionError is an invalid option or combination of options. Option is
// the GenerationConfig name of the option at fault, "" for a combination;
// Msg says what is wrong with it ("must be at least 1, got 0"), so that a
// command line or a page can name the option its own way.
type OptionError struct {
	Option string
	Msg    string
}

func (e *OptionError) Error() string {
	if e.Option == "" {
		return "invalid option: " + e.Msg
	}
	return "invalid option: " + e.Option + " " + e.Msg
}

// Validate checks every option against its range (Option's check) and
// rejects combinations transformers rejects, with a message that names the
// option and the accepted range. Resolve calls it; options changed after
// Resolve must pass it again before Generate.
func Validate(o trace.Options, info Info) error {
	for _, op := range Options() {
		if op.check != nil {
			if msg := op.check(&o, info); msg != "" {
				return &OptionError{Option: op.Name, Msg: msg}
			}
		}
	}
	bad := func(format string, args ...any) error {
		return &OptionError{Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case o.DoSample && o.Temperature == 0:
		return bad("temperature must be strictly positive when sampling (use do_sample=false for greedy decoding)")
	case o.NumBeams == 1 && !o.DoSample && o.NumReturnSequences > 1:
		return bad("num_return_sequences %d needs sampling or num_beams >= %d: greedy decoding returns one sequence", o.NumReturnSequences, o.NumReturnSequences)
	case o.NumBeams > 1 && o.NumReturnSequences > o.NumBeams:
		return bad("num_return_sequences (%d) cannot exceed num_beams (%d)", o.NumReturnSequences, o.NumBeams)
	case o.NumBeams > 1 && o.DoSample:
		return bad("beam search with sampling (num_beams > 1 and do_sample) is not supported; set do_sample=false")
	}
	return nil
}

// ParseEarlyStopping reads the early_stopping flag: true, false or never.
func ParseEarlyStopping(s string) (string, error) {
	if s == "never" {
		return s, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return "", fmt.Errorf("early_stopping must be true, false or never, got %q", s)
	}
	return strconv.FormatBool(b), nil
}
