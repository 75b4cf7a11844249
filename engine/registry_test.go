package engine

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tracer/trace"
)

// sampleText is a valid value of an option as a flag or the page writes
// it, other than its default where the kind allows.
func sampleText(op Option) string {
	switch op.Kind {
	case KindInt, KindUint:
		return "3"
	case KindFloat:
		return "0.5"
	case KindBool:
		return "true"
	case KindInts:
		return "2"
	case KindStrings:
		return "."
	}
	return op.Default.(string)
}

// TestOptionsCoverSettingsAndTrace walks the registry: every Settings field
// and every trace.Options field (but Sources) belongs to exactly one
// option, of the option's name, and each option parses, writes and
// resolves its sample value.
func TestOptionsCoverSettingsAndTrace(t *testing.T) {
	var s Settings
	var o trace.Options
	layers := map[uintptr]string{}
	fields := map[uintptr]string{}
	for _, op := range Options() {
		t.Run(op.Name, func(t *testing.T) {
			if prev, ok := LookupOption(op.Name); !ok || prev.Name != op.Name {
				t.Fatalf("LookupOption(%q) = %q, %v; want the option itself", op.Name, prev.Name, ok)
			}
			l := reflect.ValueOf(op.layer(&s)).Pointer()
			f := reflect.ValueOf(op.field(&o)).Pointer()
			if other, ok := layers[l]; ok {
				t.Errorf("shares its Settings field with %s", other)
			}
			if other, ok := fields[f]; ok {
				t.Errorf("shares its trace.Options field with %s", other)
			}
			layers[l], fields[f] = op.Name, op.Name
			kinds := map[string]Kind{"**int": KindInt, "**uint64": KindUint, "**float64": KindFloat, "**bool": KindBool,
				"**string": KindString, "*[]int": KindInts, "*[]string": KindStrings}
			if k, ok := kinds[reflect.TypeOf(op.layer(&s)).String()]; !ok || k != op.Kind {
				t.Errorf("kind %d, but its Settings field is a %s", op.Kind, reflect.TypeOf(op.layer(&s)))
			}
			if got := jsonName(t, &o, f); got != op.Name {
				t.Errorf("its trace.Options field is named %q in JSON, want %q", got, op.Name)
			}

			var layer Settings
			if err := op.Parse(&layer, sampleText(op)); err != nil {
				t.Fatalf("Parse(%q): %v", sampleText(op), err)
			}
			text := op.Text(&layer)
			if !op.IsSet(&layer) || len(text) != 1 || text[0] != sampleText(op) {
				t.Errorf("after Parse(%q): set %v, text %q; want set, %q", sampleText(op), op.IsSet(&layer), text, sampleText(op))
			}
			var fromJSON Settings
			raw, _ := json.Marshal(sampleText(op))
			if op.Kind != KindString && op.Kind != KindStrings {
				raw = []byte(sampleText(op))
			}
			if err := op.SetJSON(&fromJSON, raw); err != nil || !reflect.DeepEqual(fromJSON, layer) {
				t.Errorf("SetJSON(%s): %+v, %v; want %+v as Parse gives", raw, fromJSON, err, layer)
			}
			var resolved trace.Options
			op.setDefault(&resolved)
			if !op.apply(&resolved, &layer) {
				t.Errorf("apply of a set layer reports nothing applied")
			}
			op.Clear(&layer)
			if op.IsSet(&layer) || !reflect.DeepEqual(layer, Settings{}) {
				t.Errorf("after Clear the layer still holds %+v", layer)
			}
		})
	}
	if got, want := len(layers), reflect.TypeFor[Settings]().NumField(); got != want {
		t.Errorf("the registry covers %d fields of Settings, want all %d", got, want)
	}
	if got, want := len(fields), reflect.TypeFor[trace.Options]().NumField()-1; got != want {
		t.Errorf("the registry covers %d fields of trace.Options, want all %d but Sources", got, want)
	}
}

// jsonName returns the JSON name of the field of o at address p.
func jsonName(t *testing.T, o *trace.Options, p uintptr) string {
	t.Helper()
	v := reflect.ValueOf(o).Elem()
	for _, sf := range reflect.VisibleFields(v.Type()) {
		if v.FieldByIndex(sf.Index).Addr().Pointer() == p {
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

// TestOptionSurfaces checks what the registry says of where options come
// from: flags and page fields are unique, and tracer's own options never
// come from generation_config.json.
func TestOptionSurfaces(t *testing.T) {
	var flags, pages, names []string
	for _, op := range Options() {
		for _, n := range append([]string{op.Name}, op.Aliases...) {
			if slices.Contains(names, n) {
				t.Errorf("name %q is used twice", n)
			}
			names = append(names, n)
		}
		if op.Flag != "" {
			if slices.Contains(flags, op.Flag) {
				t.Errorf("flag --%s is used twice", op.Flag)
			}
			flags = append(flags, op.Flag)
		}
		if op.Page != "" {
			if slices.Contains(pages, op.Page) {
				t.Errorf("page field %q is used twice", op.Page)
			}
			pages = append(pages, op.Page)
		}
		if op.Config && !op.Generation {
			t.Errorf("%s: comes from generation_config.json but is not a GenerationConfig option", op.Name)
		}
		if op.Flag != "" && op.Usage == "" {
			t.Errorf("%s: flag --%s has no help", op.Name, op.Flag)
		}
	}
}

// TestResolveTracerOptions checks that padding, recording and forcing come
// through Resolve like every option: with the user's source, checked, and
// never from the model's generation_config.json.
func TestResolveTracerOptions(t *testing.T) {
	info := Info{VocabSize: 10, EOS: []int{2}, PAD: -1}
	var model Settings
	if err := json.Unmarshal([]byte(`{"padding": "right", "record_top": 3, "force_ids": [1], "max_new_tokens": 4}`), &model); err != nil {
		t.Fatal(err)
	}
	o, _, err := Resolve(info, &model, nil)
	switch {
	case err != nil:
		t.Fatal(err)
	case o.Padding != "left" || o.RecordTop != DefaultRecordTop || o.ForceIDs != nil || o.MaxNewTokens != 4:
		t.Errorf("from generation_config.json: padding %q record_top %d force_ids %v max_new_tokens %d; want only max_new_tokens (4) taken", o.Padding, o.RecordTop, o.ForceIDs, o.MaxNewTokens)
	}
	user := &Settings{Padding: ptr("right"), RecordTop: ptr(3), FullLogits: ptr(true), ForceIDs: []int{1, 3}, RecordLens: ptr(2), RecordAttention: ptr("all")}
	o, _, err = Resolve(info, nil, user)
	if err != nil {
		t.Fatal(err)
	}
	if o.Padding != "right" || o.RecordTop != 3 || !o.FullLogits || !slices.Equal(o.ForceIDs, []int{1, 3}) || o.RecordLens != 2 || o.RecordAttention != "all" {
		t.Errorf("got %+v, want the user's padding, recording and forced ids", o)
	}
	for _, name := range []string{"padding", "record_top", "full_logits", "force_ids", "record_lens", "record_attention"} {
		if o.Sources[name] != SourceUser {
			t.Errorf("source of %s is %q, want user", name, o.Sources[name])
		}
	}
	for _, tc := range []struct {
		name   string
		user   Settings
		option string
		want   string
	}{
		{"padding", Settings{Padding: ptr("middle")}, "padding", `padding must be left or right, got "middle"`},
		{"forced id outside", Settings{ForceIDs: []int{1, 10}}, "force_ids", "force_ids 10 (step 1) is outside the vocabulary (0..9)"},
		{"record_top", Settings{RecordTop: ptr(-1)}, "record_top", "record_top must be 0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Resolve(info, nil, &tc.user)
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Option != tc.option || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an option error on %s saying %q", err, tc.option, tc.want)
			}
		})
	}
}

// FuzzOptionParse: any text for any option either is refused, leaving the
// layer as it was, or sets the option so that its Text parses back to the
// same layer; resolving the layer never panics.
func FuzzOptionParse(f *testing.F) {
	for _, seed := range [][2]string{
		{"top_k", "50"}, {"T", " 0.7"}, {"eos_token_id", "2, 3"}, {"early_stopping", "never"},
		{"seed", "18446744073709551615"}, {"use_cache", "off"}, {"record_attention", "all"},
		{"stop_strings", "a,b"}, {"temperature", "1e400"}, {"force_ids", "1,,2"}, {"padding", "middle"},
		{"max_new_tokens", "-5"}, {"top_p", "NaN"}, {"do_sample", "maybe"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, name, text string) {
		op, ok := LookupOption(name)
		if !ok {
			return
		}
		var s Settings
		if err := op.Parse(&s, text); err != nil {
			if !reflect.DeepEqual(s, Settings{}) {
				t.Fatalf("%s %q: refused (%v) but left %+v", name, text, err, s)
			}
			return
		}
		if !op.IsSet(&s) {
			t.Fatalf("%s %q: accepted but not set", name, text)
		}
		var again Settings
		for _, v := range op.Text(&s) {
			if err := op.Parse(&again, v); err != nil {
				t.Fatalf("%s %q: its text %q does not parse: %v", name, text, v, err)
			}
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("%s %q: text %q parses to %+v, want %+v", name, text, op.Text(&s), again, s)
		}
		if _, _, err := Resolve(Info{VocabSize: 100, EOS: []int{2}, PAD: -1}, nil, &s); err != nil {
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("%s %q: resolving gave %v, want an option error", name, text, err)
			}
		}
	})
}
