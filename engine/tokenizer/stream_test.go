package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// streamAll pushes ids one by one and records each step.
func streamAll(tok Tokenizer, ids []int, skip bool) (texts []string, pendings []string, flushed string) {
	s := NewStream(tok, skip)
	for _, id := range ids {
		text, pending := s.Push(id)
		texts = append(texts, text)
		pendings = append(pendings, string(pending))
	}
	return texts, pendings, s.Flush()
}

func TestStream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tok     func(t *testing.T) Tokenizer
		text    string
		skip    bool
		special bool // encode with added special tokens
		steps   []string
	}{
		{
			// ĠðŁĺ (space + 3 emoji bytes) then Ģ (the 4th byte).
			name: "gpt2-emoji", tok: func(t *testing.T) Tokenizer { return load(t, "tokenizers", "gpt2") },
			text: "Hi 😀!", steps: []string{"Hi", "", " 😀", "!"},
		},
		{
			name: "gpt2-hindi", tok: func(t *testing.T) Tokenizer { return load(t, "tokenizers", "gpt2") },
			text: "जाँच", steps: []string{"", "ज", "ा", "", "ँ", "", "च"},
		},
		{
			// <0xF0> <0x9F> <0x98> <0x80>: a byte-fallback run completes at its last byte.
			name: "llama-sp-byte-fallback", tok: func(t *testing.T) Tokenizer { return load(t, "tokenizers", "llama-sp") },
			text: "a 😀 b", special: true, skip: true,
			steps: []string{"<s>", " a", " ", "", "", "", "😀", " b"},
		},
		{
			name: "tinyllama-skip-bos", tok: tinyLlama,
			text: "你好", special: true, skip: true,
			steps: []string{"", "", "你", "好"},
		},
		{
			name: "qwen-special", tok: func(t *testing.T) Tokenizer { return load(t, "tokenizers", "qwen2.5-0.5b-instruct") },
			text: "<|im_start|>user\n👍🏽<|im_end|>", skip: true,
			steps: []string{"", "user", "\n", "👍", "🏽", ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := tc.tok(t)
			ids, err := tok.Encode(tc.text, tc.special)
			if err != nil {
				t.Fatal(err)
			}
			texts, pendings, flushed := streamAll(tok, ids, tc.skip)
			if !slices.Equal(texts, tc.steps) {
				t.Errorf("ids %v: steps %q, want %q (pending %q)", ids, texts, tc.steps, pendings)
			}
			if flushed != "" {
				t.Errorf("Flush() = %q, want empty", flushed)
			}
			want, _ := tok.Decode(ids, tc.skip)
			if got := strings.Join(texts, ""); got != want {
				t.Errorf("joined steps %q, want Decode %q", got, want)
			}
		})
	}
}

func TestStreamPendingAndFlush(t *testing.T) {
	tok := load(t, "tokenizers", "llama-sp")
	s := NewStream(tok, true)
	for _, id := range []int{1, 243, 162} { // <s> <0xF0> <0x9F>
		s.Push(id)
	}
	text, pending := s.Push(155) // <0x98>
	if text != "" || string(pending) != "\xF0\x9F\x98" {
		t.Errorf("Push = %q, %q; want nothing and the three bytes pending", text, pending)
	}
	if got := s.Flush(); got != "\uFFFD\uFFFD\uFFFD" {
		t.Errorf("Flush() = %q, want three U+FFFD (as Decode writes the broken run)", got)
	}
	// After Flush the stream starts a new text.
	if text, _ := s.Push(15043); text != "Hello" {
		t.Errorf("Push after Flush = %q, want %q", text, "Hello")
	}
	if text, pending := s.Push(-5); text != "" || pending != nil {
		t.Errorf("Push(-5) = %q, %q; want it ignored", text, pending)
	}
}

func TestStreamLlama2C(t *testing.T) {
	tok := load(t, "models", "stories260K", "tok512.bin")
	ids, err := tok.Encode("Lily saw 你", true)
	if err != nil {
		t.Fatal(err)
	}
	texts, _, flushed := streamAll(tok, ids, true)
	if got := strings.Join(texts, "") + flushed; got != "Lily saw 你" {
		t.Errorf("stream = %q (steps %q)", got, texts)
	}
	if last := texts[len(texts)-1]; last != "你" {
		t.Errorf("last step %q, want the whole character", last)
	}
}

// TestConcurrentEncode uses one tokenizer from several goroutines (run with
// -race): the word cache is shared.
func TestConcurrentEncode(t *testing.T) {
	tok := load(t, "tokenizers", "gpt2")
	want, err := tok.Encode(strings.Repeat("Once upon a time, 42 cats said hi. ", 20), false)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			text := strings.Repeat("Once upon a time, 42 cats said hi. ", 20)
			for range 20 {
				got, err := tok.Encode(text, false)
				if err == nil && !slices.Equal(got, want) {
					err = fmt.Errorf("goroutine %d: got %v", g, got)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
