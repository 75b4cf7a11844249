package remote

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"tracer/engine/chat"
	"tracer/trace"
)

// renderChat turns a chat into the text prompt the server's own chat
// endpoint would build, for step mode, which extends a text token by token.
// Only llama.cpp's server tells its chat template (GET /props); for the
// others the error (ErrStepChat) says to record the chat in plain mode.
func (c *Client) renderChat(ctx context.Context, msgs []trace.Message) (string, error) {
	if c.Engine != EngineLlamaCpp {
		return "", fmt.Errorf("remote: %w, and this server (%s) does not expose it (llama.cpp's does, at /props): %w; record the chat in plain mode", ErrStepChat, c.Engine, ErrNoChatTemplate)
	}
	var props struct {
		ChatTemplate string `json:"chat_template"`
		BOS          string `json:"bos_token"`
		EOS          string `json:"eos_token"`
	}
	if err := c.do(ctx, http.MethodGet, "/props", nil, &props); err != nil {
		return "", fmt.Errorf("remote: %w, read from /props: %w; or record the chat in plain mode", ErrStepChat, err)
	}
	if strings.TrimSpace(props.ChatTemplate) == "" {
		return "", fmt.Errorf("remote: %s/props gives no chat_template (%w): %w; record the chat in plain mode", c.URL(), ErrNoChatTemplate, ErrStepChat)
	}
	tpl, err := chat.Parse(props.ChatTemplate, map[string]any{"bos_token": props.BOS, "eos_token": props.EOS})
	if err != nil {
		return "", fmt.Errorf("remote: the server's chat template (/props): %w (%w); record the chat in plain mode", err, ErrStepChat)
	}
	in := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		in[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	text, err := tpl.Render(in, chat.Options{AddGenerationPrompt: true})
	if err != nil {
		return "", fmt.Errorf("remote: rendering the chat with the server's template (/props): %w", err)
	}
	return text, nil
}
