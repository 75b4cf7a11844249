package main

import (
	"errors"
	"fmt"

	"tracer/engine"
	"tracer/engine/chat"
	"tracer/engine/hub"
	"tracer/engine/models"
	"tracer/engine/remote"
)

// hint returns err's message with what to do in the command line's words:
// the engine says what is wrong in its own terms ("model X has no tokenizer:
// give the prompt as token ids"), and the command line adds its flag
// ("(--prompt-ids)"), found with errors.Is and errors.As, never in the text.
func hint(err error) string {
	msg := err.Error()
	if h := flagHint(err); h != "" {
		return msg + " (" + h + ")"
	}
	return msg
}

// flagHint is the flag, or command, that does what err asks for; "" when
// err asks for nothing the command line has a flag for.
func flagHint(err error) string {
	var nc *hub.NotCachedError
	switch {
	case errors.Is(err, models.ErrNoTokenizer), errors.Is(err, remote.ErrNeedsIDs):
		return "--prompt-ids"
	case errors.Is(err, chat.ErrNoChatTemplate) && !errors.Is(err, remote.ErrStepChat), errors.Is(err, remote.ErrNeedsText):
		return "--prompt"
	case errors.As(err, &nc):
		cmd := "tracer pull " + nc.Ref
		if nc.File != "" {
			cmd += " --file " + nc.File
		}
		return cmd
	case errors.Is(err, hub.ErrNoConfig):
		return "--file NAME"
	case errors.Is(err, remote.ErrStepChat):
		return "without --step"
	case errors.Is(err, remote.ErrNeedsStepMode):
		return "--step"
	case errors.Is(err, remote.ErrChooseModel):
		return "--server-model"
	case errors.Is(err, remote.ErrUnknownModel):
		return "check --server-model"
	case errors.Is(err, remote.ErrTimeout):
		return "raise --timeout"
	case errors.Is(err, remote.ErrAuth):
		return "set the key in the variable named by --server-key-env, default OPENAI_API_KEY"
	}
	return ""
}

// optionFlagError words an option's refused flag value (text) as the
// command line gives it; other errors pass unchanged.
func optionFlagError(err error, text string) error {
	var oe *engine.OptionError
	if errors.As(err, &oe) && oe.Option == "record_attention" {
		return fmt.Errorf("want --record-attention (each step's new query) or --record-attention=all (also the prompt's matrices), got %q", text)
	}
	return err
}
