package arch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"tracer/engine"
)

// hfConfig is what tracer reads of a config.json. Pointers mark fields
// whose absence means a default.
type hfConfig struct {
	ModelType         string          `json:"model_type"`
	Architectures     []string        `json:"architectures"`
	VocabSize         int             `json:"vocab_size"`
	TieWordEmbeddings *bool           `json:"tie_word_embeddings"`
	BOS               json.RawMessage `json:"bos_token_id"`
	EOS               json.RawMessage `json:"eos_token_id"`
	PAD               json.RawMessage `json:"pad_token_id"`

	// GPT-2
	NEmbd                      int      `json:"n_embd"`
	NLayer                     int      `json:"n_layer"`
	NHead                      int      `json:"n_head"`
	NPositions                 int      `json:"n_positions"`
	NInner                     *int     `json:"n_inner"`
	LayerNormEpsilon           *float64 `json:"layer_norm_epsilon"`
	ActivationFunction         *string  `json:"activation_function"`
	ScaleAttnWeights           *bool    `json:"scale_attn_weights"`
	ScaleAttnByInverseLayerIdx bool     `json:"scale_attn_by_inverse_layer_idx"`

	// Llama, Qwen2
	HiddenSize            int             `json:"hidden_size"`
	NumHiddenLayers       int             `json:"num_hidden_layers"`
	NumAttentionHeads     int             `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim"`
	IntermediateSize      int             `json:"intermediate_size"`
	MaxPositionEmbeddings *int            `json:"max_position_embeddings"`
	RMSNormEps            *float64        `json:"rms_norm_eps"`
	RopeTheta             *float64        `json:"rope_theta"`
	RopeScaling           json.RawMessage `json:"rope_scaling"`
	HiddenAct             *string         `json:"hidden_act"`
	AttentionBias         bool            `json:"attention_bias"`
	MLPBias               bool            `json:"mlp_bias"`
	UseSlidingWindow      bool            `json:"use_sliding_window"`
}

// specialTokens are the bos/eos/pad entries of config.json or
// generation_config.json, still raw: absent, null, an id or a list of ids.
type specialTokens struct {
	BOS json.RawMessage `json:"bos_token_id"`
	EOS json.RawMessage `json:"eos_token_id"`
	PAD json.RawMessage `json:"pad_token_id"`
}

// readConfig reads dir/config.json.
func readConfig(dir string) (*hfConfig, string, error) {
	path := filepath.Join(dir, "config.json")
	js, err := os.ReadFile(path)
	if err != nil {
		return nil, path, fmt.Errorf("arch: %w", err)
	}
	var c hfConfig
	if err := json.Unmarshal(js, &c); err != nil {
		return nil, path, fmt.Errorf("arch: %s: %w", path, err)
	}
	return &c, path, nil
}

// architecture names the implementation a config asks for: model_type
// first, else the first entry of architectures.
func (c *hfConfig) architecture(path string) (string, error) {
	switch c.ModelType {
	case "gpt2", "llama", "qwen2":
		return c.ModelType, nil
	case "":
		byClass := map[string]string{"GPT2LMHeadModel": "gpt2", "LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2"}
		if len(c.Architectures) > 0 {
			if a, ok := byClass[c.Architectures[0]]; ok {
				return a, nil
			}
			return "", fmt.Errorf("arch: %s: architecture %q not supported (want GPT2LMHeadModel, LlamaForCausalLM or Qwen2ForCausalLM)", path, c.Architectures[0])
		}
		return "", fmt.Errorf("arch: %s: neither model_type nor architectures says what the model is", path)
	}
	return "", fmt.Errorf("arch: %s: architecture %q (model_type %q) not supported (want gpt2, llama or qwen2)", path, first(c.Architectures), c.ModelType)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// specials fills info's BOS, EOS and PAD from config.json, each overridden
// by generation_config.json where that file has the key (transformers'
// generate() reads the generation config). A list for bos or pad keeps its
// first id; -1 means none.
func specials(info *engine.Info, dir string, c *hfConfig) error {
	toks := specialTokens{BOS: c.BOS, EOS: c.EOS, PAD: c.PAD}
	path := filepath.Join(dir, "generation_config.json")
	js, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("arch: %w", err)
	default:
		var g specialTokens
		if err := json.Unmarshal(js, &g); err != nil {
			return fmt.Errorf("arch: %s: %w", path, err)
		}
		if g.BOS != nil {
			toks.BOS = g.BOS
		}
		if g.EOS != nil {
			toks.EOS = g.EOS
		}
		if g.PAD != nil {
			toks.PAD = g.PAD
		}
	}
	one := func(name string, raw json.RawMessage) (int, error) {
		ids, err := engine.TokenIDs(raw)
		if err != nil {
			return -1, fmt.Errorf("arch: %s: %s: %w", dir, name, err)
		}
		if len(ids) == 0 {
			return -1, nil
		}
		return ids[0], nil
	}
	if info.BOS, err = one("bos_token_id", toks.BOS); err != nil {
		return err
	}
	if info.PAD, err = one("pad_token_id", toks.PAD); err != nil {
		return err
	}
	eos, err := engine.TokenIDs(toks.EOS)
	if err != nil {
		return fmt.Errorf("arch: %s: eos_token_id: %w", dir, err)
	}
	info.EOS = eos
	if info.EOS == nil {
		info.EOS = []int{}
	}
	return nil
}
