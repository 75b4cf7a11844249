package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestResolvePrecedence(t *testing.T) {
	info := Info{VocabSize: 100, EOS: []int{2}, PAD: -1}
	var model Settings
	if err := json.Unmarshal([]byte(`{"do_sample": true, "temperature": 0.7, "top_k": 20, "top_p": 0.8,
		"repetition_penalty": 1.1, "eos_token_id": [10, 11], "early_stopping": "never"}`), &model); err != nil {
		t.Fatal(err)
	}
	user := &Settings{DoSample: ptr(false), RepetitionPenalty: ptr(1.0), MaxNewTokens: ptr(5)}
	o, notices, err := Resolve(info, &model, user)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case o.DoSample || o.Sources["do_sample"] != SourceUser:
		t.Errorf("do_sample %v from %s: an explicit false must win over the file", o.DoSample, o.Sources["do_sample"])
	case o.RepetitionPenalty != 1 || o.Sources["repetition_penalty"] != SourceUser:
		t.Errorf("repetition_penalty %v from %s, want the user's 1.0", o.RepetitionPenalty, o.Sources["repetition_penalty"])
	case o.Temperature != 0.7 || o.TopK != 20 || o.Sources["top_k"] != SourceModel:
		t.Errorf("temperature %v top_k %v (%s), want the file's", o.Temperature, o.TopK, o.Sources["top_k"])
	case o.MinP != 0 || o.Sources["min_p"] != SourceDefault:
		t.Errorf("min_p %v (%s), want the default", o.MinP, o.Sources["min_p"])
	case len(o.EOSTokenID) != 2 || o.PadTokenID != 10 || o.EarlyStopping != "never":
		t.Errorf("eos %v pad %d early_stopping %q, want the file's list, pad = first EOS, never", o.EOSTokenID, o.PadTokenID, o.EarlyStopping)
	case len(notices) != 0:
		t.Errorf("notices %q, want none: max_new_tokens was set", notices)
	}
	o, notices, err = Resolve(info, nil, nil)
	if err != nil || o.MaxLength != DefaultMaxLength || o.MaxNewTokens != -1 || len(notices) != 1 || !strings.Contains(notices[0], "20") {
		t.Errorf("no length: max_length %d max_new_tokens %d notices %q err %v; want the default 20 with a notice", o.MaxLength, o.MaxNewTokens, notices, err)
	}
	if o.TopK != 50 {
		t.Errorf("top_k %d, want transformers' default 50", o.TopK)
	}
}

func TestResolveRejectsInvalidOptions(t *testing.T) {
	info := Info{VocabSize: 100, EOS: []int{2}, PAD: -1}
	for _, tc := range []struct {
		name string
		s    Settings
		want string
	}{
		{"top_p above 1", Settings{TopP: ptr(1.5)}, "top_p must be in (0, 1]"},
		{"top_p zero", Settings{TopP: ptr(0.0)}, "top_p must be in (0, 1]"},
		{"negative temperature", Settings{Temperature: ptr(-0.5)}, "temperature"},
		{"zero temperature sampling", Settings{Temperature: ptr(0.0), DoSample: ptr(true)}, "strictly positive"},
		{"no beams", Settings{NumBeams: ptr(0)}, "num_beams must be at least 1"},
		{"eos outside vocabulary", Settings{EOSTokenID: []int{100}}, "eos_token_id 100 is outside the vocabulary"},
		{"negative top_k", Settings{TopK: ptr(-1)}, "top_k"},
		{"min_p above 1", Settings{MinP: ptr(2.0)}, "min_p"},
		{"penalty zero", Settings{RepetitionPenalty: ptr(0.0)}, "repetition_penalty"},
		{"more sequences than beams", Settings{NumBeams: ptr(2), NumReturnSequences: ptr(3)}, "cannot exceed num_beams"},
		{"greedy with sequences", Settings{NumReturnSequences: ptr(2)}, "needs sampling"},
		{"zero new tokens", Settings{MaxNewTokens: ptr(0)}, "max_new_tokens must be at least 1"},
		{"pad outside vocabulary", Settings{PadTokenID: ptr(1000)}, "pad_token_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Resolve(info, nil, &tc.s)
			var oe *OptionError
			if !errors.As(err, &oe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an OptionError containing %q", err, tc.want)
			}
		})
	}
}

func TestGenerationConfigShapes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		eos  []int
		es   string
		stop []string
	}{
		{`{"eos_token_id": 2}`, []int{2}, "", nil},
		{`{"eos_token_id": [2, 3], "early_stopping": true, "stop_strings": "END"}`, []int{2, 3}, "true", []string{"END"}},
		{`{"eos_token_id": null, "early_stopping": "never", "stop_strings": ["a", "b"]}`, nil, "never", []string{"a", "b"}},
	} {
		var s Settings
		if err := json.Unmarshal([]byte(tc.in), &s); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		es := ""
		if s.EarlyStopping != nil {
			es = *s.EarlyStopping
		}
		if !equalInts(s.EOSTokenID, tc.eos) || es != tc.es || strings.Join(s.StopStrings, ",") != strings.Join(tc.stop, ",") {
			t.Errorf("%s: eos %v early_stopping %q stop %q", tc.in, s.EOSTokenID, es, s.StopStrings)
		}
	}
	var s Settings
	if err := json.Unmarshal([]byte(`{"eos_token_id": "two"}`), &s); err == nil {
		t.Error("a string eos_token_id was accepted")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
