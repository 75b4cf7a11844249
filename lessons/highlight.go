package lessons

import (
	"fmt"
	"strings"

	"tracer/engine"
)

// Need is what a highlight needs from a step's runs to have something to
// point at: a step highlighting "kv" needs a real run, since the toy keeps
// no keys and values.
type Need uint8

// The needs; a highlight may have several.
const (
	NeedToy     Need = 1 << iota // a toy run (table, listing)
	NeedReal                     // a real run (KV cache, traffic)
	NeedBatch                    // a run of several prompts
	NeedSingle                   // a run of one prompt (prompt.ids, output.ids)
	NeedSampled                  // a run that sets do_sample true
	NeedMoment                   // At is moment:N or each-moment
)

// HighlightName is one name of the closed set a step's Highlight draws from.
// A name ending in ":" takes a suffix: "code-line:pick", "stage:top_k",
// "option:max_new_tokens".
type HighlightName struct {
	Name  string
	About string // the element it points at
	Needs Need
}

// HighlightNames returns the names a step may highlight, so a page can
// check that it renders each of them.
func HighlightNames() []HighlightName {
	return []HighlightName{
		// The toy's walkthrough.
		{"table", "the toy's bigram table", NeedToy},
		{"table-row", "the row of the table being read: the newest token's", NeedToy},
		{"table-cell", "the cell chosen in that row: the next token", NeedToy},
		{"code-line:", "the line of tracer's Python listing with this role (start, check, lookup, pick, append, print, table, setup)", NeedToy},
		{"token-list", "the token list as the listing holds it", NeedToy},
		{"annotation", "the walkthrough's explanation of the moment", NeedToy | NeedMoment},

		// The prompt and what the model was fed.
		{"prompt.ids", "the prompt's token ids (a single prompt)", NeedSingle},
		{"prompt.rows", "each prompt of a batch, padded", NeedBatch},
		{"prompt.attention_mask", "each padded row's attention mask", NeedBatch},
		{"input_ids", "the tokens fed to the model at the step: the whole prompt, one token, or everything again", 0},
		{"phase", "the step's phase: prefill, decode, or full (cache off)", 0},

		// One step's scores and choice.
		{"logits", "the raw scores over the whole vocabulary", 0},
		{"candidates", "the leading candidates and their probabilities", 0},
		{"stage:", "the distribution after one processor (temperature, top_k, top_p, min_p, repetition_penalty, min_new_tokens)", 0},
		{"final", "the distribution the token was chosen from", 0},
		{"draw", "where the uniform random number fell", NeedSampled},
		{"chosen", "the token the step appended", 0},

		// Options and messages.
		{"options", "the resolved generation options", 0},
		{"options.sources", "where each option's value came from: default, generation_config or user", 0},
		{"option:", "one option by its GenerationConfig name, with its source", 0},
		{"notices", "the trace's notices: the pitfalls the run ran into", 0},

		// Cost.
		{"model", "the model's description: parameters, dtype, bytes of weights", 0},
		{"kv", "the KV cache after the step: positions and bytes", NeedReal},
		{"traffic.flops", "the step's arithmetic, in FLOPs", NeedReal},
		{"traffic.bytes", "the bytes the step moved: weights, and keys and values read and written", NeedReal},
		{"traffic.intensity", "FLOPs per byte moved", NeedReal},
		{"elapsed", "the wall time of the step", 0},
		{"bandwidth", "bytes moved per second, the bandwidth the step achieved", NeedReal},

		// The output.
		{"output.ids", "prompt ids followed by the new ids (a single prompt)", NeedSingle},
		{"output.new_ids", "the new ids only: the output with the prompt sliced off", NeedSingle},
		{"output.text", "the whole sequence decoded, special tokens skipped", NeedSingle},
		{"output.new_text", "the new ids decoded, special tokens skipped", NeedSingle},
		{"output.sequences", "every row of a batch as generate() returns it, pads included", NeedBatch},
		{"output.new_texts", "each row's new text", NeedBatch},
		{"output.stop_reason", "why generation stopped", 0},

		// Inside the forward pass (the page's attention and lens panels).
		{"attention", "the newest token's attention over the context, per layer and head, with the grid of heads to pick from", NeedReal},
		{"lens", "the logit lens: every layer's top tokens, the chosen one from the first layer where it is top-1", NeedReal},
		{"forward", "the forward pass as boxes: the embedding row, each layer's attention and MLP adding to the stream, the final norm and the unembedding, with shapes and bytes", NeedReal},
	}
}

// lookupHighlight returns the entry of a highlight name and checks its
// suffix.
func lookupHighlight(name string) (HighlightName, error) {
	for _, h := range HighlightNames() {
		prefix, takesSuffix := strings.CutSuffix(h.Name, ":")
		switch {
		case !takesSuffix && name == h.Name:
			return h, nil
		case takesSuffix && strings.HasPrefix(name, h.Name):
			suffix := name[len(h.Name):]
			if err := checkSuffix(prefix, suffix); err != nil {
				return h, fmt.Errorf("highlight %q: %w", name, err)
			}
			return h, nil
		}
	}
	return HighlightName{}, fmt.Errorf("highlight %q is not one the page knows (see lessons.HighlightNames)", name)
}

// checkSuffix checks the part after "code-line:", "stage:" or "option:".
func checkSuffix(prefix, suffix string) error {
	switch prefix {
	case "code-line":
		switch Role(suffix) {
		case RoleTable, RoleSetup, RoleStart, RoleCheck, RoleLookup, RolePick, RoleAppend, RolePrint:
			return nil
		}
		return fmt.Errorf("no line of the listing has role %q", suffix)
	case "stage":
		switch suffix {
		case "repetition_penalty", "min_new_tokens", "temperature", "top_k", "top_p", "min_p":
			return nil
		}
		return fmt.Errorf("no processor is called %q", suffix)
	case "option":
		if op, ok := engine.LookupOption(suffix); ok && op.Name == suffix {
			return nil
		}
		return fmt.Errorf("%q is not a generation option", suffix)
	}
	return nil
}

// stageOption is the option a stage needs set before it runs at all: a
// temperature of 1 or a top_p of 1 changes nothing, and transformers (and
// tracer) leave such a processor out. top_k runs by default (50).
func stageOption(name string) string {
	switch name {
	case "temperature", "top_p", "min_p", "repetition_penalty", "min_new_tokens":
		return name
	}
	return ""
}
