package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"tracer/trace"
)

// Kind is the type of an option's value.
type Kind uint8

// The kinds of option values.
const (
	KindInt     Kind = iota // int
	KindUint                // uint64 (the seed)
	KindFloat               // float64
	KindBool                // bool
	KindString              // string, one of a few words
	KindInts                // []int: token ids
	KindStrings             // []string
)

// Option is one generation option, described once: every place that reads
// or shows options (Settings, Resolve, generation_config.json, the CLI's
// flags, the page's run form, the lessons' settings) walks Options.
type Option struct {
	// Name is the option's GenerationConfig name: its key in
	// generation_config.json, in a lesson's settings and in the trace's
	// options and sources.
	Name string
	Kind Kind
	// Default is the value when no layer sets it, of the option's Go type
	// (nil for lists: none).
	Default any
	// Config: the model's generation_config.json may set it. Every option
	// may come from the user (a flag, the page, a lesson).
	Config bool
	// Generation: a GenerationConfig option proper, which a serving engine
	// may also be asked for (tracer record takes these flags). The rest
	// are tracer's own: padding, recording and forcing.
	Generation bool
	// Flag is tracer run's flag (without dashes), "" for none; Usage its
	// help. Negated flags say the opposite of the option: --no-cache sets
	// use_cache to false.
	Flag    string
	Usage   string
	Negated bool
	// FlagAlone: a string option whose flag may stand alone, as a boolean
	// flag does (--record-attention means "step").
	FlagAlone bool
	// Page is the debugger's run-form field, "" when the page does not
	// offer the option; Aliases are short names its compare lines accept
	// ("T" for temperature).
	Page    string
	Aliases []string
	// Sampling: a knob that acts only when sampling, so that setting it in
	// a compare line turns sampling on.
	Sampling bool
	// Lesson: a lesson's run may set it among its options (a run's
	// padding side has a field of its own).
	Lesson bool
	// ListDefault: the trace's sources name the option even when the
	// default holds (the sampling knobs a learner looks up).
	ListDefault bool

	parse func(text string) (string, error)        // KindString: the canonical spelling of a typed value
	check func(o *trace.Options, info Info) string // what is wrong, after the option's name: "must be at least 1, got 0"; "" when fine
	layer func(s *Settings) any                    // the Settings field: **int, **float64, *[]int, ...
	field func(o *trace.Options) any               // the trace.Options field: *int, *float64, *[]int, ...
}

// Options lists every generation option, in the order of transformers'
// GenerationConfig documentation, then tracer's own.
func Options() []Option {
	return []Option{
		{Name: "max_new_tokens", Kind: KindInt, Default: -1, Config: true, Generation: true, Lesson: true, Page: "max_new_tokens",
			Flag: "max-new-tokens", Usage: "at most `N` new tokens (unset: the model's max_length, or transformers' default of 20 tokens in all)",
			layer: func(s *Settings) any { return &s.MaxNewTokens }, field: func(o *trace.Options) any { return &o.MaxNewTokens },
			check: func(o *trace.Options, _ Info) string {
				if o.MaxNewTokens < -1 || o.MaxNewTokens == 0 && o.Sources["max_new_tokens"] != "" {
					return fmt.Sprintf("must be at least 1, got %d", o.MaxNewTokens)
				}
				return ""
			}},
		{Name: "max_length", Kind: KindInt, Default: -1, Config: true, Generation: true, Lesson: true,
			Flag: "max-length", Usage: "at most `N` tokens in all, prompt included",
			layer: func(s *Settings) any { return &s.MaxLength }, field: func(o *trace.Options) any { return &o.MaxLength },
			check: func(o *trace.Options, _ Info) string {
				if o.MaxLength < -1 || o.MaxLength == 0 {
					return fmt.Sprintf("must be at least 1, got %d", o.MaxLength)
				}
				return ""
			}},
		{Name: "min_new_tokens", Kind: KindInt, Default: 0, Config: true, Generation: true, Lesson: true, ListDefault: true,
			Flag: "min-new-tokens", Usage: "suppress EOS until `N` new tokens",
			layer: func(s *Settings) any { return &s.MinNewTokens }, field: func(o *trace.Options) any { return &o.MinNewTokens },
			check: atLeast(func(o *trace.Options) int { return o.MinNewTokens }, 0, "must be 0 or more")},
		{Name: "do_sample", Kind: KindBool, Default: false, Config: true, Generation: true, Lesson: true, ListDefault: true, Page: "do_sample",
			Flag: "do-sample", Usage: "sample instead of greedy decoding",
			layer: func(s *Settings) any { return &s.DoSample }, field: func(o *trace.Options) any { return &o.DoSample }},
		{Name: "temperature", Kind: KindFloat, Sampling: true, Default: 1.0, Config: true, Generation: true, Lesson: true, ListDefault: true,
			Page: "temperature", Aliases: []string{"T"},
			Flag: "temperature", Usage: "divide logits by `T` before sampling",
			layer: func(s *Settings) any { return &s.Temperature }, field: func(o *trace.Options) any { return &o.Temperature },
			check: func(o *trace.Options, _ Info) string {
				if !finite(o.Temperature) || o.Temperature < 0 {
					return fmt.Sprintf("must be a positive number, got %v", o.Temperature)
				}
				return ""
			}},
		{Name: "top_k", Kind: KindInt, Sampling: true, Default: 50, Config: true, Generation: true, Lesson: true, ListDefault: true, Page: "top_k",
			Flag: "top-k", Usage: "keep the `k` most probable tokens when sampling (0: off)",
			layer: func(s *Settings) any { return &s.TopK }, field: func(o *trace.Options) any { return &o.TopK },
			check: atLeast(func(o *trace.Options) int { return o.TopK }, 0, "must be 0 (off) or more")},
		{Name: "top_p", Kind: KindFloat, Sampling: true, Default: 1.0, Config: true, Generation: true, Lesson: true, ListDefault: true, Page: "top_p",
			Flag: "top-p", Usage: "keep the most probable tokens whose mass exceeds `p` when sampling",
			layer: func(s *Settings) any { return &s.TopP }, field: func(o *trace.Options) any { return &o.TopP },
			check: func(o *trace.Options, _ Info) string {
				if !finite(o.TopP) || o.TopP <= 0 || o.TopP > 1 {
					return fmt.Sprintf("must be in (0, 1], got %v", o.TopP)
				}
				return ""
			}},
		{Name: "min_p", Kind: KindFloat, Sampling: true, Default: 0.0, Config: true, Generation: true, Lesson: true, ListDefault: true, Page: "min_p",
			Flag: "min-p", Usage: "drop tokens less probable than `p` times the top one (0: off)",
			layer: func(s *Settings) any { return &s.MinP }, field: func(o *trace.Options) any { return &o.MinP },
			check: func(o *trace.Options, _ Info) string {
				if !finite(o.MinP) || o.MinP < 0 || o.MinP > 1 {
					return fmt.Sprintf("must be in [0, 1], got %v", o.MinP)
				}
				return ""
			}},
		{Name: "repetition_penalty", Kind: KindFloat, Default: 1.0, Config: true, Generation: true, Lesson: true, ListDefault: true,
			Page: "repetition_penalty", Flag: "repetition-penalty", Usage: "penalise tokens already in the sequence by this `factor` (1: off)",
			layer: func(s *Settings) any { return &s.RepetitionPenalty }, field: func(o *trace.Options) any { return &o.RepetitionPenalty },
			check: func(o *trace.Options, _ Info) string {
				if !finite(o.RepetitionPenalty) || o.RepetitionPenalty <= 0 {
					return fmt.Sprintf("must be strictly positive, got %v", o.RepetitionPenalty)
				}
				return ""
			}},
		{Name: "num_beams", Kind: KindInt, Default: 1, Config: true, Generation: true, Lesson: true, ListDefault: true, Page: "num_beams",
			Flag: "num-beams", Usage: "beam search with `N` beams",
			layer: func(s *Settings) any { return &s.NumBeams }, field: func(o *trace.Options) any { return &o.NumBeams },
			check: atLeast(func(o *trace.Options) int { return o.NumBeams }, 1, "must be at least 1")},
		{Name: "length_penalty", Kind: KindFloat, Default: 1.0, Config: true, Generation: true, Lesson: true, ListDefault: true,
			Flag: "length-penalty", Usage: "beam search: score = sum of log-probs / length^`penalty`",
			layer: func(s *Settings) any { return &s.LengthPenalty }, field: func(o *trace.Options) any { return &o.LengthPenalty },
			check: func(o *trace.Options, _ Info) string {
				if !finite(o.LengthPenalty) {
					return fmt.Sprintf("must be a finite number, got %v", o.LengthPenalty)
				}
				return ""
			}},
		{Name: "early_stopping", Kind: KindString, Default: "false", Config: true, Generation: true, Lesson: true, ListDefault: true,
			Flag: "early-stopping", Usage: "beam search stopping `rule`: true, false or never", parse: ParseEarlyStopping,
			layer: func(s *Settings) any { return &s.EarlyStopping }, field: func(o *trace.Options) any { return &o.EarlyStopping },
			check: func(o *trace.Options, _ Info) string {
				if _, err := ParseEarlyStopping(o.EarlyStopping); err != nil {
					return fmt.Sprintf("must be true, false or never, got %q", o.EarlyStopping)
				}
				return ""
			}},
		{Name: "num_return_sequences", Kind: KindInt, Default: 1, Config: true, Generation: true, Lesson: true, ListDefault: true,
			Flag: "num-return-sequences", Usage: "`N` sequences to return per prompt",
			layer: func(s *Settings) any { return &s.NumReturnSequences }, field: func(o *trace.Options) any { return &o.NumReturnSequences },
			check: atLeast(func(o *trace.Options) int { return o.NumReturnSequences }, 1, "must be at least 1")},
		{Name: "eos_token_id", Kind: KindInts, Config: true, Generation: true, Lesson: true,
			Flag: "eos-id", Usage: "stop at token `id` (repeat for a list; replaces the model's)",
			layer: func(s *Settings) any { return &s.EOSTokenID }, field: func(o *trace.Options) any { return &o.EOSTokenID },
			check: func(o *trace.Options, info Info) string { return inVocab(o.EOSTokenID, false, info) }},
		{Name: "pad_token_id", Kind: KindInt, Default: -1, Config: true, Generation: true, Lesson: true,
			Flag: "pad-id", Usage: "pad token `id` (default: the model's, else the first EOS)",
			layer: func(s *Settings) any { return &s.PadTokenID }, field: func(o *trace.Options) any { return &o.PadTokenID },
			check: func(o *trace.Options, info Info) string {
				if o.PadTokenID >= info.VocabSize || o.PadTokenID < -1 {
					return fmt.Sprintf("%d is outside the vocabulary (0..%d)", o.PadTokenID, info.VocabSize-1)
				}
				return ""
			}},
		{Name: "stop_strings", Kind: KindStrings, Config: true, Generation: true, Lesson: true,
			Flag: "stop", Usage: "stop when the new text contains `text` (repeatable)",
			layer: func(s *Settings) any { return &s.StopStrings }, field: func(o *trace.Options) any { return &o.StopStrings },
			check: func(o *trace.Options, _ Info) string {
				for _, s := range o.StopStrings {
					if s == "" {
						return "must not hold an empty string"
					}
				}
				return ""
			}},
		{Name: "seed", Kind: KindUint, Default: uint64(0), Config: true, Generation: true, Lesson: true, Page: "seed",
			Flag: "seed", Usage: "`seed` of the random stream",
			layer: func(s *Settings) any { return &s.Seed }, field: func(o *trace.Options) any { return &o.Seed }},
		{Name: "use_cache", Kind: KindBool, Default: true, Config: true, Generation: true, Lesson: true, ListDefault: true, Page: "use_cache",
			Flag: "no-cache", Negated: true, Usage: "recompute the whole sequence every step (no KV cache)",
			layer: func(s *Settings) any { return &s.UseCache }, field: func(o *trace.Options) any { return &o.UseCache }},

		// tracer's own: how a batch is padded, what is recorded, what is forced.
		{Name: "padding", Kind: KindString, Default: "left", Page: "padding", // lessons: Run.Padding
			Flag: "padding", Usage: "batch padding `side`: left, or right to show its pitfall",
			layer: func(s *Settings) any { return &s.Padding }, field: func(o *trace.Options) any { return &o.Padding },
			check: func(o *trace.Options, _ Info) string {
				if o.Padding != "" && o.Padding != "left" && o.Padding != "right" {
					return fmt.Sprintf("must be left or right, got %q", o.Padding)
				}
				return ""
			}},
		{Name: "record_top", Kind: KindInt, Default: DefaultRecordTop,
			Flag: "record-top", Usage: "`N` candidates recorded per step",
			layer: func(s *Settings) any { return &s.RecordTop }, field: func(o *trace.Options) any { return &o.RecordTop },
			check: atLeast(func(o *trace.Options) int { return o.RecordTop }, 0, "must be 0 or more")},
		{Name: "full_logits", Kind: KindBool, Default: false,
			Flag: "full-logits", Usage: "record every logit of every step",
			layer: func(s *Settings) any { return &s.FullLogits }, field: func(o *trace.Options) any { return &o.FullLogits }},
		{Name: "record_attention", Kind: KindString, Default: "", parse: parseRecordAttention, FlagAlone: true,
			Flag: "record-attention", Usage: "record each step's attention per layer and head (=all: also the prompt's matrices at step 0)",
			layer: func(s *Settings) any { return &s.RecordAttention }, field: func(o *trace.Options) any { return &o.RecordAttention },
			check: func(o *trace.Options, _ Info) string {
				if o.RecordAttention != "" && o.RecordAttention != trace.RecordAttentionStep && o.RecordAttention != trace.RecordAttentionAll {
					return fmt.Sprintf("must be %q or %q (or empty: off), got %q", trace.RecordAttentionStep, trace.RecordAttentionAll, o.RecordAttention)
				}
				return ""
			}},
		{Name: "record_lens", Kind: KindInt, Default: 0,
			Flag: "record-lens", Usage: "record the top `K` tokens of every layer's logit lens at each step (0: off)",
			layer: func(s *Settings) any { return &s.RecordLens }, field: func(o *trace.Options) any { return &o.RecordLens },
			check: atLeast(func(o *trace.Options) int { return o.RecordLens }, 0, "must be 0 (off) or more")},
		{Name: "record_forward", Kind: KindInt, Default: 0,
			Flag: "record-forward", Usage: fmt.Sprintf("record each step's forward pass: the residual stream's norm layer by layer, the `K` heads that added most to attention and the K most active MLP neurons of every layer (0: off; 1 to %d)", MaxRecordForward),
			layer: func(s *Settings) any { return &s.RecordForward }, field: func(o *trace.Options) any { return &o.RecordForward },
			check: checkRecordForward},
		{Name: "force_ids", Kind: KindInts,
			Flag: "force-ids", Usage: "make step i choose the i-th of these `ids` (\"5,9,2\"), still recording the distributions",
			layer: func(s *Settings) any { return &s.ForceIDs }, field: func(o *trace.Options) any { return &o.ForceIDs },
			check: func(o *trace.Options, info Info) string { return inVocab(o.ForceIDs, true, info) }},
	}
}

// LookupOption returns the option of a GenerationConfig name or alias.
func LookupOption(name string) (Option, bool) {
	for _, o := range Options() {
		if o.Name == name {
			return o, true
		}
		for _, a := range o.Aliases {
			if a == name {
				return o, true
			}
		}
	}
	return Option{}, false
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// atLeast checks an int option against its least value; msg says so.
func atLeast(get func(*trace.Options) int, least int, msg string) func(*trace.Options, Info) string {
	return func(o *trace.Options, _ Info) string {
		if v := get(o); v < least {
			return fmt.Sprintf("%s, got %d", msg, v)
		}
		return ""
	}
}

// checkRecordForward checks record_forward: 0 (off), or the heads and
// neurons kept per layer, at most MaxRecordForward and at most the model's
// MLP width (when the model has one); a model with fewer heads keeps them
// all.
func checkRecordForward(o *trace.Options, info Info) string {
	switch k := o.RecordForward; {
	case k < 0:
		return fmt.Sprintf("must be 0 (off) or more, got %d", k)
	case k > MaxRecordForward:
		return fmt.Sprintf("must be at most %d (the heads and MLP neurons kept per layer), got %d: ask for fewer", MaxRecordForward, k)
	case info.Intermediate > 0 && k > info.Intermediate:
		return fmt.Sprintf("must be at most the model's MLP width of %d neurons per layer, got %d: ask for fewer", info.Intermediate, k)
	}
	return ""
}

// inVocab checks a list of token ids against the vocabulary; step says
// whether the list is one id per step.
func inVocab(ids []int, step bool, info Info) string {
	for i, id := range ids {
		if id < 0 || id >= info.VocabSize {
			at := ""
			if step {
				at = fmt.Sprintf(" (step %d)", i)
			}
			return fmt.Sprintf("%d%s is outside the vocabulary (0..%d)", id, at, info.VocabSize-1)
		}
	}
	return ""
}

// parseRecordAttention reads record_attention's value: true or
// "step" records each step's new query, "all" also the prompt's matrices,
// false nothing.
func parseRecordAttention(text string) (string, error) {
	switch text {
	case "true", "step":
		return trace.RecordAttentionStep, nil
	case "all":
		return trace.RecordAttentionAll, nil
	case "false", "":
		return "", nil
	}
	return "", &OptionError{Option: "record_attention", Msg: fmt.Sprintf(`want "step" (each step's new query), "all" (also the prompt's matrices) or "false", got %q`, text)}
}

// IsSet reports whether the settings layer sets the option: its field
// (a pointer, or a list) is not nil.
func (op Option) IsSet(s *Settings) bool {
	return s != nil && !reflect.ValueOf(op.layer(s)).Elem().IsNil()
}

// Clear unsets the option in a settings layer.
func (op Option) Clear(s *Settings) {
	reflect.ValueOf(op.layer(s)).Elem().SetZero()
}

// Parse sets the option in a settings layer from its text, as a flag or the
// page's form writes it: "0.7", "true", "5,9,2". A list option appends the
// values to what the layer holds, so a repeated flag builds a list; a
// string list takes the text whole (a stop string may hold a comma). The
// error names the option and says what it wants.
func (op Option) Parse(s *Settings, text string) error {
	t := strings.TrimSpace(text)
	switch p := op.layer(s).(type) {
	case **int:
		v, err := strconv.Atoi(t)
		if err != nil {
			return fmt.Errorf("%s: %q is not a whole number", op.Name, text)
		}
		*p = &v
	case **uint64:
		v, err := strconv.ParseUint(t, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not a whole number from 0 to 2^64-1", op.Name, text)
		}
		*p = &v
	case **float64:
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || !finite(v) {
			return fmt.Errorf("%s: %q is not a number", op.Name, text)
		}
		*p = &v
	case **bool:
		v, err := parseBool(t)
		if err != nil {
			return fmt.Errorf("%s: %q is not true or false", op.Name, text)
		}
		*p = &v
	case **string:
		v := t
		if op.parse != nil {
			var err error
			if v, err = op.parse(t); err != nil {
				return err
			}
		}
		*p = &v
	case *[]int:
		list := append([]int{}, *p...)
		for _, f := range strings.Split(t, ",") {
			id, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return fmt.Errorf("%s: %q is not a token id (write ids separated by commas: 5,9,2)", op.Name, strings.TrimSpace(f))
			}
			list = append(list, id)
		}
		*p = list
	case *[]string:
		*p = append(append([]string{}, *p...), text)
	}
	return nil
}

// parseBool reads a boolean as flags and forms write it.
func parseBool(t string) (bool, error) {
	switch strings.ToLower(t) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return strconv.ParseBool(t)
}

// SetJSON sets the option in a settings layer from a JSON value, as
// generation_config.json and lessons write it. null leaves it unset. An id
// list may be one id; a string list one string; a word (early_stopping) a
// JSON boolean.
func (op Option) SetJSON(s *Settings, raw json.RawMessage) error {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var err error
	switch p := op.layer(s).(type) {
	case **int:
		err = json.Unmarshal(raw, p)
	case **uint64:
		err = json.Unmarshal(raw, p)
	case **float64:
		err = json.Unmarshal(raw, p)
	case **bool:
		err = json.Unmarshal(raw, p)
	case **string:
		var v string
		if json.Unmarshal(raw, &v) != nil {
			if string(raw) != "true" && string(raw) != "false" {
				return fmt.Errorf("%s: %s is not one of its words", op.Name, raw)
			}
			v = string(raw)
		}
		if op.parse != nil {
			if v, err = op.parse(v); err != nil {
				return err
			}
		}
		*p = &v
	case *[]int:
		var ids []int
		if ids, err = TokenIDs(raw); err == nil {
			*p = ids
		}
	case *[]string:
		var one string
		if json.Unmarshal(raw, &one) == nil {
			*p = []string{one}
		} else if json.Unmarshal(raw, p) != nil {
			return fmt.Errorf("%s: want a string or a list of strings, got %s", op.Name, raw)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op.Name, err)
	}
	return nil
}

// Text returns the option's value in a settings layer as Parse reads it,
// one string per value of a list; nil when the layer does not set it.
func (op Option) Text(s *Settings) []string {
	if !op.IsSet(s) {
		return nil
	}
	switch p := op.layer(s).(type) {
	case **int:
		return []string{strconv.Itoa(**p)}
	case **uint64:
		return []string{strconv.FormatUint(**p, 10)}
	case **float64:
		return []string{strconv.FormatFloat(**p, 'g', -1, 64)}
	case **bool:
		return []string{strconv.FormatBool(**p)}
	case **string:
		return []string{**p}
	case *[]int:
		out := []string{}
		for _, id := range *p {
			out = append(out, strconv.Itoa(id))
		}
		return out
	case *[]string:
		return append([]string{}, *p...)
	}
	return nil
}

// DefaultText is the option's default as a flag writes it; "" when the
// default is off, zero, empty or "not set" (-1).
func (op Option) DefaultText() string {
	switch op.Default {
	case nil, false, "", -1, 0, 0.0, uint64(0):
		return ""
	}
	return fmt.Sprint(op.Default)
}

// setDefault puts the option's default into resolved options; a list
// option starts empty (nil).
func (op Option) setDefault(o *trace.Options) {
	f := reflect.ValueOf(op.field(o)).Elem()
	if f.Kind() == reflect.Slice {
		f.SetZero()
		return
	}
	f.Set(reflect.ValueOf(op.Default))
}

// apply copies the layer's value, when it sets one, into resolved options
// (a list as a copy of its own) and reports whether it did.
func (op Option) apply(o *trace.Options, s *Settings) bool {
	if !op.IsSet(s) {
		return false
	}
	f, l := reflect.ValueOf(op.field(o)).Elem(), reflect.ValueOf(op.layer(s)).Elem()
	if l.Kind() == reflect.Slice {
		f.Set(reflect.AppendSlice(reflect.MakeSlice(l.Type(), 0, l.Len()), l))
	} else {
		f.Set(l.Elem())
	}
	return true
}
