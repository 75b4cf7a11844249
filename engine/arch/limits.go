package arch

import "fmt"

// Limits on the sizes config.json may give, far above any released model
// (the widest vocabularies hold ~256k ids, the widest models ~30k hidden
// units and ~100k MLP units), so that products of sizes cannot overflow and
// a corrupt field is refused before anything is allocated from it. Within
// them the weights decide: every size must agree with the tensors actually
// present (checkWeights), before any size-derived buffer is allocated.
const (
	maxWidth     = 1 << 24 // vocab_size, hidden_size, intermediate_size, and heads·head_dim
	maxLayers    = 1 << 12 // num_hidden_layers, n_layer
	maxHeads     = 1 << 14 // num_attention_heads, num_key_value_heads, n_head
	maxHeadDim   = 1 << 14 // head_dim
	maxPositions = 1 << 30 // max_position_embeddings, n_positions
)

// limit is one config.json field and the most it may hold.
type limit struct {
	name string
	v    int
	max  int
}

// checkLimits refuses the first field above its limit, naming the file.
func checkLimits(path string, fields ...limit) error {
	for _, f := range fields {
		if f.v > f.max {
			return fmt.Errorf("arch: %s: %s %d exceeds tracer's limit of %d: the config is corrupt, or the model is far larger than any tracer can run", path, f.name, f.v, f.max)
		}
	}
	return nil
}

// checkWeights compares the sizes config.json gives with the shapes of the
// tensors present, before the loader allocates anything from them, and
// names the field that disagrees. A tensor that is missing or of another
// rank is left to the loader, which names it.
func (s hfSpec) checkWeights(ld *loader) error {
	d := s.d
	shape := func(name string) []int {
		t, ok := ld.ck.Tensor(name)
		if !ok || len(t.Shape) != 2 {
			return nil
		}
		return t.Shape
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("arch: %s: "+format+" (weights: %s)", append(append([]any{ld.config}, args...), ld.files)...)
	}
	// dim checks axis of a tensor against the field it comes from; want is
	// the whole shape the config implies.
	dim := func(name string, axis int, want []int, field string, value int) error {
		if sh := shape(name); sh != nil && sh[axis] != want[axis] {
			return bad("%s %d disagrees with the weights: tensor %q has shape %v, config.json says %v", field, value, name, sh, want)
		}
		return nil
	}
	layers := func(format string) error {
		for l := 0; l < d.layers; l++ {
			if _, ok := ld.ck.Tensor(fmt.Sprintf(format, l)); !ok {
				field := "num_hidden_layers"
				if s.arch == "gpt2" {
					field = "n_layer"
				}
				return bad("%s %d, but the weights hold only %d layers (%q is missing)", field, d.layers, l, fmt.Sprintf(format, l))
			}
		}
		return nil
	}
	var checks []func() error
	if s.arch == "gpt2" {
		pre := "transformer."
		if !ld.has(pre+"wte.weight") && ld.has("wte.weight") {
			pre = ""
		}
		checks = []func() error{
			func() error { return dim(pre+"wte.weight", 0, []int{d.vocab, d.hidden}, "vocab_size", d.vocab) },
			func() error { return dim(pre+"wte.weight", 1, []int{d.vocab, d.hidden}, "n_embd", d.hidden) },
			func() error { return dim(pre+"wpe.weight", 0, []int{d.maxPos, d.hidden}, "n_positions", d.maxPos) },
			func() error { return layers(pre + "h.%d.ln_1.weight") },
			func() error { return dim(pre+"h.0.mlp.c_fc.weight", 1, []int{d.hidden, d.ffn}, "n_inner", d.ffn) },
		}
	} else {
		q := "model.layers.0.self_attn.q_proj.weight"
		checks = []func() error{
			func() error {
				return dim("model.embed_tokens.weight", 0, []int{d.vocab, d.hidden}, "vocab_size", d.vocab)
			},
			func() error {
				return dim("model.embed_tokens.weight", 1, []int{d.vocab, d.hidden}, "hidden_size", d.hidden)
			},
			func() error { return layers("model.layers.%d.input_layernorm.weight") },
			func() error {
				sh := shape(q)
				switch {
				case sh == nil || sh[0] == d.qDim():
					return nil
				case s.llama.headDimSet && d.headDim != d.hidden/d.heads:
					return bad("head_dim %d is not hidden_size/num_attention_heads (%d), and tensor %q has shape %v, not [num_attention_heads·head_dim = %d, %d]: fix head_dim or leave it out",
						d.headDim, d.hidden/d.heads, q, sh, d.qDim(), d.hidden)
				}
				return bad("num_attention_heads %d × head_dim %d disagrees with the weights: tensor %q has shape %v, config.json says %v", d.heads, d.headDim, q, sh, []int{d.qDim(), d.hidden})
			},
			func() error {
				return dim("model.layers.0.self_attn.k_proj.weight", 0, []int{d.kvDim(), d.hidden}, "num_key_value_heads", d.kvHeads)
			},
			func() error {
				return dim("model.layers.0.mlp.gate_proj.weight", 0, []int{d.ffn, d.hidden}, "intermediate_size", d.ffn)
			},
		}
	}
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}
