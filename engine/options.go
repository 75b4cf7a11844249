package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
// so do the user's flags; Resolve stacks transformers' defaults, the model's
// settings and the user's, in that order.
type Settings struct {
	MaxNewTokens       *int     `json:"max_new_tokens,omitempty"`
	MaxLength          *int     `json:"max_length,omitempty"`
	MinNewTokens       *int     `json:"min_new_tokens,omitempty"`
	DoSample           *bool    `json:"do_sample,omitempty"`
	Temperature        *float64 `json:"temperature,omitempty"`
	TopK               *int     `json:"top_k,omitempty"`
	TopP               *float64 `json:"top_p,omitempty"`
	MinP               *float64 `json:"min_p,omitempty"`
	RepetitionPenalty  *float64 `json:"repetition_penalty,omitempty"`
	NumBeams           *int     `json:"num_beams,omitempty"`
	LengthPenalty      *float64 `json:"length_penalty,omitempty"`
	EarlyStopping      *string  `json:"-"` // "false", "true" or "never"
	NumReturnSequences *int     `json:"num_return_sequences,omitempty"`
	EOSTokenID         []int    `json:"-"` // nil: not set; replaces, never extends
	PadTokenID         *int     `json:"pad_token_id,omitempty"`
	BOSTokenID         *int     `json:"bos_token_id,omitempty"`
	StopStrings        []string `json:"-"`
	Seed               *uint64  `json:"seed,omitempty"`
	UseCache           *bool    `json:"use_cache,omitempty"`
}

// UnmarshalJSON reads generation_config.json, whose eos_token_id is an int
// or a list, early_stopping a bool or "never", and stop_strings a string or a
// list.
func (s *Settings) UnmarshalJSON(data []byte) error {
	type plain Settings
	var raw struct {
		plain
		EOS           json.RawMessage `json:"eos_token_id"`
		EarlyStopping json.RawMessage `json:"early_stopping"`
		StopStrings   json.RawMessage `json:"stop_strings"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*s = Settings(raw.plain)
	if ids, err := TokenIDs(raw.EOS); err != nil {
		return fmt.Errorf("eos_token_id: %w", err)
	} else if ids != nil {
		s.EOSTokenID = ids
	}
	switch es := string(raw.EarlyStopping); es {
	case "", "null":
	case "true", "false":
		s.EarlyStopping = &es
	case `"never"`:
		v := "never"
		s.EarlyStopping = &v
	default:
		return fmt.Errorf("early_stopping: %s is not true, false or \"never\"", es)
	}
	if len(raw.StopStrings) > 0 && string(raw.StopStrings) != "null" {
		var one string
		if json.Unmarshal(raw.StopStrings, &one) == nil {
			s.StopStrings = []string{one}
		} else if err := json.Unmarshal(raw.StopStrings, &s.StopStrings); err != nil {
			return fmt.Errorf("stop_strings: want a string or a list of strings")
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
func Resolve(info Info, model, user *Settings) (trace.Options, []string, error) {
	o := trace.Options{
		MinNewTokens: 0, Temperature: 1, TopK: 50, TopP: 1, RepetitionPenalty: 1,
		NumBeams: 1, LengthPenalty: 1, EarlyStopping: "false", NumReturnSequences: 1,
		PadTokenID: -1, UseCache: true, RecordTop: DefaultRecordTop,
		Sources: map[string]string{},
	}
	var notices []string
	maxNew, maxLen := -1, -1
	for _, layer := range []struct {
		s      *Settings
		source string
	}{{model, SourceModel}, {user, SourceUser}} {
		s := layer.s
		if s == nil {
			continue
		}
		set := func(name string) { o.Sources[name] = layer.source }
		if s.MaxNewTokens != nil {
			maxNew = *s.MaxNewTokens
			set("max_new_tokens")
		}
		if s.MaxLength != nil {
			maxLen = *s.MaxLength
			set("max_length")
		}
		setInt(&o.MinNewTokens, s.MinNewTokens, "min_new_tokens", set)
		setBool(&o.DoSample, s.DoSample, "do_sample", set)
		setFloat(&o.Temperature, s.Temperature, "temperature", set)
		setInt(&o.TopK, s.TopK, "top_k", set)
		setFloat(&o.TopP, s.TopP, "top_p", set)
		setFloat(&o.MinP, s.MinP, "min_p", set)
		setFloat(&o.RepetitionPenalty, s.RepetitionPenalty, "repetition_penalty", set)
		setInt(&o.NumBeams, s.NumBeams, "num_beams", set)
		setFloat(&o.LengthPenalty, s.LengthPenalty, "length_penalty", set)
		if s.EarlyStopping != nil {
			o.EarlyStopping = *s.EarlyStopping
			set("early_stopping")
		}
		setInt(&o.NumReturnSequences, s.NumReturnSequences, "num_return_sequences", set)
		if s.EOSTokenID != nil {
			o.EOSTokenID = append([]int{}, s.EOSTokenID...)
			set("eos_token_id")
		}
		setInt(&o.PadTokenID, s.PadTokenID, "pad_token_id", set)
		if s.StopStrings != nil {
			o.StopStrings = append([]string{}, s.StopStrings...)
			set("stop_strings")
		}
		if s.Seed != nil {
			o.Seed = *s.Seed
			set("seed")
		}
		setBool(&o.UseCache, s.UseCache, "use_cache", set)
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
	o.MaxNewTokens, o.MaxLength = maxNew, maxLen
	if maxNew < 0 && maxLen < 0 {
		o.MaxLength = DefaultMaxLength
		o.Sources["max_length"] = SourceDefault
		notices = append(notices, fmt.Sprintf("neither max_new_tokens nor max_length was set: generation stops at transformers' default max_length of %d tokens, prompt included; set max_new_tokens", DefaultMaxLength))
	}
	for name := range o.Sources {
		if o.Sources[name] == "" {
			delete(o.Sources, name)
		}
	}
	for _, name := range []string{"min_new_tokens", "do_sample", "temperature", "top_k", "top_p", "min_p",
		"repetition_penalty", "num_beams", "length_penalty", "early_stopping", "num_return_sequences", "use_cache"} {
		if _, ok := o.Sources[name]; !ok {
			o.Sources[name] = SourceDefault
		}
	}
	return o, notices, Validate(o, info)
}

func setInt(dst *int, v *int, name string, set func(string)) {
	if v != nil {
		*dst = *v
		set(name)
	}
}

func setFloat(dst *float64, v *float64, name string, set func(string)) {
	if v != nil {
		*dst = *v
		set(name)
	}
}

func setBool(dst *bool, v *bool, name string, set func(string)) {
	if v != nil {
		*dst = *v
		set(name)
	}
}

// OptionError is an invalid option or combination of options.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return "invalid option: " + e.Msg }

// Validate rejects option combinations transformers rejects, with a message
// that names the option and the accepted range.
func Validate(o trace.Options, info Info) error {
	bad := func(format string, args ...any) error {
		return &OptionError{fmt.Sprintf(format, args...)}
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case o.MaxNewTokens < -1 || o.MaxNewTokens == 0 && o.Sources["max_new_tokens"] != "":
		return bad("max_new_tokens must be at least 1, got %d", o.MaxNewTokens)
	case o.MaxLength < -1 || o.MaxLength == 0:
		return bad("max_length must be at least 1, got %d", o.MaxLength)
	case o.MinNewTokens < 0:
		return bad("min_new_tokens must be 0 or more, got %d", o.MinNewTokens)
	case !finite(o.Temperature) || o.Temperature < 0:
		return bad("temperature must be a positive number, got %v", o.Temperature)
	case o.DoSample && o.Temperature == 0:
		return bad("temperature must be strictly positive when sampling (use do_sample=false for greedy decoding)")
	case o.TopK < 0:
		return bad("top_k must be 0 (off) or more, got %d", o.TopK)
	case !finite(o.TopP) || o.TopP <= 0 || o.TopP > 1:
		return bad("top_p must be in (0, 1], got %v", o.TopP)
	case !finite(o.MinP) || o.MinP < 0 || o.MinP > 1:
		return bad("min_p must be in [0, 1], got %v", o.MinP)
	case !finite(o.RepetitionPenalty) || o.RepetitionPenalty <= 0:
		return bad("repetition_penalty must be strictly positive, got %v", o.RepetitionPenalty)
	case o.NumBeams < 1:
		return bad("num_beams must be at least 1, got %d", o.NumBeams)
	case !finite(o.LengthPenalty):
		return bad("length_penalty must be a finite number, got %v", o.LengthPenalty)
	case o.EarlyStopping != "false" && o.EarlyStopping != "true" && o.EarlyStopping != "never":
		return bad("early_stopping must be true, false or never, got %q", o.EarlyStopping)
	case o.NumReturnSequences < 1:
		return bad("num_return_sequences must be at least 1, got %d", o.NumReturnSequences)
	case o.NumBeams == 1 && !o.DoSample && o.NumReturnSequences > 1:
		return bad("num_return_sequences %d needs sampling or num_beams >= %d: greedy decoding returns one sequence", o.NumReturnSequences, o.NumReturnSequences)
	case o.NumBeams > 1 && o.NumReturnSequences > o.NumBeams:
		return bad("num_return_sequences (%d) cannot exceed num_beams (%d)", o.NumReturnSequences, o.NumBeams)
	case o.NumBeams > 1 && o.DoSample:
		return bad("beam search with sampling (num_beams > 1 and do_sample) is not supported; set do_sample=false")
	case o.RecordTop < 0:
		return bad("record_top must be 0 or more, got %d", o.RecordTop)
	case o.RecordAttention != "" && o.RecordAttention != trace.RecordAttentionStep && o.RecordAttention != trace.RecordAttentionAll:
		return bad("record_attention must be %q or %q (or empty: off), got %q", trace.RecordAttentionStep, trace.RecordAttentionAll, o.RecordAttention)
	case o.RecordLens < 0:
		return bad("record_lens must be 0 (off) or more, got %d", o.RecordLens)
	}
	for _, id := range o.EOSTokenID {
		if id < 0 || id >= info.VocabSize {
			return bad("eos_token_id %d is outside the vocabulary (0..%d)", id, info.VocabSize-1)
		}
	}
	if o.PadTokenID >= info.VocabSize || o.PadTokenID < -1 {
		return bad("pad_token_id %d is outside the vocabulary (0..%d)", o.PadTokenID, info.VocabSize-1)
	}
	for i, id := range o.ForceIDs {
		if id < 0 || id >= info.VocabSize {
			return bad("force id %d (step %d) is outside the vocabulary (0..%d)", id, i, info.VocabSize-1)
		}
	}
	for _, s := range o.StopStrings {
		if s == "" {
			return bad("stop strings must not be empty")
		}
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
