// Package models opens a model by name, the way every tracer command and the
// web UI name one: a Hugging Face model folder, a llama2.c checkpoint
// (*.bin), a GGUF file (*.gguf), an Ollama model (ollama:NAME[:TAG]), or a
// kind registered from outside engine: package toy registers "toy" (the
// lesson's bigram table) and toy table files (*.json).
// It returns the model with its tokenizer and generation settings, and turns
// a user's input (text, ids or a chat) into a generation request.
package models

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/chat"
	"tracer/engine/hub"
	"tracer/engine/tokenizer"
	"tracer/trace"
)

// ErrNoTokenizer marks a text prompt given to a model without a tokenizer,
// which reads only token ids.
var ErrNoTokenizer = errors.New("no tokenizer")

// Loaded is an opened model.
type Loaded struct {
	Spec      string
	Model     engine.Model
	Tokenizer tokenizer.Tokenizer // nil when the model comes without one
	Config    *engine.Settings    // the model's generation_config.json; may be nil
	Chat      *chat.Template      // the chat template; nil when the model has none
	// StartFromBOS makes an empty text prompt start from the BOS token, as
	// the toy's walkthrough begins at <s>.
	StartFromBOS bool
}

// Locate turns a model name into something Open accepts: "toy", files and
// folders as they are, and a Hugging Face name (ORG/NAME[@REVISION]) into
// its snapshot folder in the Hugging Face cache, downloaded when missing
// unless opts.Offline.
func Locate(ctx context.Context, spec string, opts hub.Options) (string, error) {
	if spec == "" {
		spec = "toy"
	}
	if _, ok := kindFor(spec); ok || strings.HasPrefix(spec, OllamaPrefix) {
		return spec, nil
	}
	if _, err := os.Stat(spec); err == nil || !isHubName(spec) {
		return spec, nil
	}
	return hub.Resolve(ctx, spec, opts)
}

// Open opens the model named by spec. The options go to the loaders of
// model files (arch.Mapped: no copy of the weights, for a look at the
// model); the toy and toy tables take none.
func Open(spec string, opts ...arch.OpenOption) (*Loaded, error) {
	if spec == "" {
		spec = "toy"
	}
	if k, ok := kindFor(spec); ok {
		return k.Open(spec)
	}
	if strings.HasPrefix(spec, OllamaPrefix) {
		blob, err := OllamaBlob(spec)
		if err != nil {
			return nil, err
		}
		return openGGUF(spec, blob, opts)
	}
	st, err := os.Stat(spec)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("model %q: no such file or folder (give \"toy\", a toy table .json, a Hugging Face model folder, a llama2.c .bin, a .gguf file or ollama:NAME[:TAG])", spec)
	}
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", spec, err)
	}
	switch {
	case st.IsDir():
		return openHF(spec, opts)
	case strings.EqualFold(filepath.Ext(spec), ".gguf") || isGGUF(spec):
		return openGGUF(spec, spec, opts)
	default:
		return openLlama2c(spec, opts)
	}
}

// Input is what the user asked to continue.
type Input struct {
	Texts    []string        // text prompts (one, or a batch)
	IDs      [][]int         // id prompts (one, or a batch)
	Messages []trace.Message // a chat; rendered by the model's chat template
}

// Request resolves the options (the model's settings under the user's) and
// encodes the input into a generation request.
func (l *Loaded) Request(in Input, user *engine.Settings) (engine.Request, error) {
	info := l.Model.Info()
	opts, notices, err := engine.Resolve(info, l.Config, user)
	if err != nil {
		return engine.Request{}, err
	}
	req := engine.Request{Model: l.Model, Tokenizer: l.Tokenizer, Options: opts, Notices: notices}
	switch {
	case len(in.Messages) > 0:
		if l.Chat == nil || l.Tokenizer == nil {
			return req, fmt.Errorf("model %s has no chat template: it is not a chat model; give a plain prompt", l.Spec)
		}
		msgs := make([]chat.Message, len(in.Messages))
		for i, m := range in.Messages {
			msgs[i] = chat.Message{Role: m.Role, Content: m.Content}
		}
		text, err := l.Chat.Render(msgs, chat.Options{AddGenerationPrompt: true})
		if err != nil {
			return req, err
		}
		// The template already holds the special tokens it wants.
		ids, err := l.Tokenizer.Encode(text, false)
		if err != nil {
			return req, err
		}
		req.Prompts = [][]int{ids}
		req.Prompt.Messages, req.Prompt.Text = in.Messages, text
	case len(in.Texts) > 0:
		if l.Tokenizer == nil {
			return req, fmt.Errorf("model %s has %w: give the prompt as token ids", l.Spec, ErrNoTokenizer)
		}
		for _, text := range in.Texts {
			ids, err := l.Tokenizer.Encode(text, true)
			if err != nil {
				return req, err
			}
			if l.StartFromBOS && len(ids) == 0 {
				ids = []int{info.BOS}
			}
			req.Prompts = append(req.Prompts, ids)
		}
		if len(in.Texts) == 1 {
			req.Prompt.Text = in.Texts[0]
		} else {
			req.Prompt.Texts = in.Texts
		}
	case len(in.IDs) > 0:
		req.Prompts = in.IDs
	default:
		if info.BOS < 0 {
			return req, fmt.Errorf("model %s has no BOS token to start from: give a prompt", l.Spec)
		}
		req.Prompts = [][]int{{info.BOS}}
	}
	return req, nil
}
