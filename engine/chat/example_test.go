package chat_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"tracer/engine/chat"
)

func ExampleTemplate_Render() {
	// A ChatML template, as in SmolLM2's tokenizer_config.json.
	tmpl, err := chat.Parse(`{% for message in messages %}`+
		`{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}`+
		`{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`,
		map[string]any{"eos_token": "<|im_end|>"})
	if err != nil {
		log.Fatal(err)
	}
	prompt, err := tmpl.Render([]chat.Message{
		{Role: "system", Content: "You are terse."},
		{Role: "user", Content: "What is 2+2?"},
	}, chat.Options{AddGenerationPrompt: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(prompt)
	// Output:
	// <|im_start|>system
	// You are terse.<|im_end|>
	// <|im_start|>user
	// What is 2+2?<|im_end|>
	// <|im_start|>assistant
}

func ExampleTemplate_Render_tools() {
	tmpl, err := chat.Parse(`{% for tool in tools %}{{ tool | tojson }}{% endfor %}`, nil)
	if err != nil {
		log.Fatal(err)
	}
	// Decoding into json.RawMessage (or chat.Object) keeps the key order,
	// which tojson prints.
	var tools []json.RawMessage
	if err := json.Unmarshal([]byte(`[{"type": "function", "function": {"name": "now", "parameters": {}}}]`), &tools); err != nil {
		log.Fatal(err)
	}
	prompt, err := tmpl.Render(nil, chat.Options{Tools: []any{tools[0]}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(prompt)
	// Output:
	// {"type": "function", "function": {"name": "now", "parameters": {}}}
}

func ExampleOptions_outputBudget() {
	// Templates come with model files: a server bounds what one may build.
	tmpl, err := chat.Parse(`{{ 'ab' * 1000000 }}`, nil)
	if err != nil {
		log.Fatal(err)
	}
	_, err = tmpl.Render(nil, chat.Options{OutputBudget: 1 << 20})
	fmt.Println(errors.Is(err, chat.ErrOutputBudget))
	fmt.Println(err)
	// Output:
	// true
	// chat: render chat template: output budget of 1 MiB exceeded in operator *: it would build 2000000 more bytes after 0 (the caller sets the budget with Options.OutputBudget)
}
