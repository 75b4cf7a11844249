package engine

import (
	"fmt"

	"tracer/engine/tokenizer"
	"tracer/trace"
)

// padPrompts lays the prompts out as rows of one length, padded on the left
// (the right way for decoder-only models) or on the right (the pitfall the
// lessons show), with their attention masks. When sampling returns several
// sequences, every prompt is repeated num_return_sequences times, as
// transformers expands its input.
func padPrompts(prompts [][]int, o trace.Options) ([][]int, [][]bool, error) {
	if o.DoSample && o.NumReturnSequences > 1 {
		var expanded [][]int
		for _, p := range prompts {
			for range o.NumReturnSequences {
				expanded = append(expanded, p)
			}
		}
		prompts = expanded
	}
	width := 0
	for _, p := range prompts {
		width = max(width, len(p))
	}
	ragged := false
	for _, p := range prompts {
		ragged = ragged || len(p) != width
	}
	if ragged && o.PadTokenID < 0 {
		return nil, nil, fmt.Errorf("engine: prompts of different lengths need a pad token, and the model has neither a pad nor an EOS token: set pad_token_id")
	}
	right := o.Padding == "right"
	rows := make([][]int, len(prompts))
	mask := make([][]bool, len(prompts))
	for i, p := range prompts {
		pad := width - len(p)
		row := make([]int, 0, width)
		m := make([]bool, 0, width)
		if !right {
			for range pad {
				row, m = append(row, o.PadTokenID), append(m, false)
			}
		}
		for _, id := range p {
			row, m = append(row, id), append(m, true)
		}
		if right {
			for range pad {
				row, m = append(row, o.PadTokenID), append(m, false)
			}
		}
		rows[i], mask[i] = row, m
	}
	return rows, mask, nil
}

// fillPrompt records the prompt ids (and, for a batch, every padded row).
func fillPrompt(p *trace.Prompt, rows [][]int, mask [][]bool, tok tokenizer.Tokenizer) {
	if len(rows) == 1 {
		p.IDs = append([]int{}, rows[0]...)
		if tok != nil {
			p.Tokens = make([]string, len(p.IDs))
			for i, id := range p.IDs {
				p.Tokens[i] = tok.Token(id)
			}
		}
		return
	}
	p.Rows = make([]trace.Row, len(rows))
	for i := range rows {
		am := make([]int, len(mask[i]))
		for j, m := range mask[i] {
			if m {
				am[j] = 1
			}
		}
		p.Rows[i] = trace.Row{IDs: append([]int{}, rows[i]...), AttentionMask: am}
	}
}
