// Package arch implements the decoder-only transformers tracer runs on the
// CPU: GPT-2, Llama, Qwen2 and Karpathy's llama2.c checkpoints, each in one
// file that maps the checkpoint's tensors to blocks with a forward pass.
// Logits match Hugging Face transformers 4.44 (eager attention, float32)
// within 1e-4 (5e-5 at worst on the reference goldens), and llama2.c's run.c
// within 1e-5.
//
// OpenHF loads a Hugging Face folder (config.json, generation_config.json,
// model.safetensors or its shards); OpenLlama2c loads a llama2.c .bin file;
// NewRandom builds a model of a known shape with random weights in memory,
// for benchmarks. All return a *Model, which implements engine.Model. Weights stay in their
// memory-mapped file at their stored dtype (F32, BF16 or F16) and are
// widened to float32 as the kernels read them; activations, the KV cache and
// logits are float32. A mapped file must not be rewritten while its model
// is open (truncating it would crash the process, as with any mapping).
//
// What is shared lives in model.go (batch checks, the forward pass over the
// layers, the output head, the traffic model), cache.go (the KV cache) and
// attention.go (causal attention over the cache with transformers'
// additive masking, one pair of matrix products per group of query heads
// sharing a kv head) and batch.go (Forward calls on different caches that
// overlap in time served by one pass over the weights, with the same bits
// as alone). A Model runs its kernels on a tensor.Pool of SetThreads
// goroutines; a forward pass allocates nothing once its cache's scratch
// has grown to the longest pass. WriteRandomHF writes NewRandom's model as
// a Hugging Face folder.
package arch
