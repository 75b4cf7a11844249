package arch

import "fmt"

// qwen2Config checks a Qwen2 config.json and returns its sizes. Qwen2 is
// the Llama block stack (llama.go) with biases on the q, k and v
// projections, none on o_proj or the MLP, and usually an untied head; its
// tensors carry Llama's names. Defaults follow Qwen2Config: rms_norm_eps
// 1e-6, rope_theta 10000. Sliding-window attention is not implemented, so a
// config that turns it on is refused.
func qwen2Config(c *hfConfig, path string) (dims, float32, llamaHFOptions, error) {
	d, eps, opts, err := llamaFamilyConfig(c, path)
	if err != nil {
		return d, eps, opts, err
	}
	if c.UseSlidingWindow {
		return d, eps, opts, fmt.Errorf("arch: %s: use_sliding_window true not supported", path)
	}
	opts.bias = llamaBiases{qkv: true}
	return d, eps, opts, nil
}
