package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"tracer/engine/chat"
	"tracer/engine/tokenizer"
)

// maxTokenizeLine is the longest input line tokenize reads.
const maxTokenizeLine = 16 << 20

func cmdTokenize(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("tokenize", "--tokenizer PATH < lines.jsonl", stderr)
	path := fs.String("tokenizer", "", "a model folder, a tokenizer.json, or a llama2.c tokenizer .bin")
	noSpecial := fs.Bool("no-special", false, "encode without the special tokens the tokenizer adds (e.g. BOS)")
	decode := fs.Bool("decode", false, `read id arrays and write {"text": ...}`)
	skipSpecial := fs.Bool("skip-special", false, "with --decode: drop special tokens")
	chatMode := fs.Bool("chat", false, `read {"messages": [...], "tools": [...], "add_generation_prompt": true} and write {"text", "ids"}`)
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "tracer tokenize: want --tokenizer PATH and no arguments (input is JSON Lines on stdin)")
		return exitUsage
	}
	if *decode && *chatMode {
		fmt.Fprintln(stderr, "tracer tokenize: give --decode or --chat, not both")
		return exitUsage
	}
	tok, err := tokenizer.Load(*path)
	if err != nil {
		fmt.Fprintf(stderr, "tracer tokenize: %s\n", hint(err))
		return exitError
	}
	var each func(line []byte) (any, error)
	switch {
	case *decode:
		each = func(line []byte) (any, error) {
			var ids []int
			if err := json.Unmarshal(line, &ids); err != nil {
				return nil, fmt.Errorf("want a JSON array of token ids: %w", err)
			}
			text, err := tok.Decode(ids, *skipSpecial)
			return struct {
				Text string `json:"text"`
			}{text}, err
		}
	case *chatMode:
		render, err := chatRenderer(*path, tok)
		if err != nil {
			fmt.Fprintf(stderr, "tracer tokenize: %s\n", hint(err))
			return exitError
		}
		each = render
	default:
		each = func(line []byte) (any, error) {
			var text string
			if err := json.Unmarshal(line, &text); err != nil {
				return nil, fmt.Errorf("want a JSON string: %w", err)
			}
			ids, err := tok.Encode(text, !*noSpecial)
			if err != nil {
				return nil, err
			}
			tokens := make([]string, len(ids))
			for i, id := range ids {
				tokens[i] = tok.Token(id)
			}
			return struct {
				IDs    []int    `json:"ids"`
				Tokens []string `json:"tokens"`
			}{ids, tokens}, nil
		}
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), maxTokenizeLine)
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		v, err := each(line)
		if err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "tracer tokenize: line %d: %v\n", n, err)
			return exitError
		}
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "tracer tokenize: %s\n", hint(err))
			return exitError
		}
	}
	if err := sc.Err(); err != nil {
		out.Flush()
		fmt.Fprintf(stderr, "tracer tokenize: reading stdin: %v\n", err)
		return exitError
	}
	return exitOK
}

// chatRenderer renders one conversation a line with the chat template of the
// tokenizer's folder, and encodes the text without added special tokens (the
// template already holds the ones it wants).
func chatRenderer(path string, tok tokenizer.Tokenizer) (func([]byte) (any, error), error) {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	tmpl, err := chat.Load(dir)
	if err != nil {
		return nil, err
	}
	return func(line []byte) (any, error) {
		var in struct {
			Messages            []chat.Message    `json:"messages"`
			Tools               []json.RawMessage `json:"tools"`
			AddGenerationPrompt bool              `json:"add_generation_prompt"`
		}
		if err := json.Unmarshal(line, &in); err != nil {
			return nil, fmt.Errorf(`want {"messages": [{"role": ..., "content": ...}], ...}: %w`, err)
		}
		opts := chat.Options{AddGenerationPrompt: in.AddGenerationPrompt}
		for _, raw := range in.Tools {
			tool, err := chat.DecodeJSON(raw)
			if err != nil {
				return nil, fmt.Errorf("tools: %w", err)
			}
			opts.Tools = append(opts.Tools, tool)
		}
		text, err := tmpl.Render(in.Messages, opts)
		if err != nil {
			return nil, err
		}
		ids, err := tok.Encode(text, false)
		return struct {
			Text string `json:"text"`
			IDs  []int  `json:"ids"`
		}{text, ids}, err
	}, nil
}
