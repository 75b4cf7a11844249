package engine

import "tracer/trace"

// Model computes next-token logits for a batch of rows. The toy bigram table
// and every real architecture implement it; the generation loop sees nothing
// else.
//
// Rows are independent sequences that share one length: a batch padded on the
// left or right, the beams of a beam search, or a single prompt (one row).
type Model interface {
	// Info describes the model.
	Info() Info

	// NewCache returns an empty cache for rows sequences of up to capacity
	// positions each.
	NewCache(rows, capacity int) (Cache, error)

	// Forward feeds each row's new tokens, appends their keys and values to
	// the cache, and writes the next-token logits of each row's last new
	// token to logits[row] (len Info().VocabSize each). A model with no
	// prediction for a row returns a *StopError.
	Forward(c Cache, b *Batch, logits [][]float32) error

	// Cost is the memory traffic and arithmetic of one Forward call that
	// feeds n new tokens to each of rows rows holding past positions: weight
	// bytes at their stored dtype (the embedding table contributes one row
	// per token, the output head all of it), KV bytes read and written, and
	// FLOPs. A model without such a cost (the toy) returns the zero value.
	Cost(rows, past, n int) trace.Traffic
}

// Batch is the input of one Forward call.
type Batch struct {
	Tokens    [][]int  // [rows][n]: the new tokens of each row; every row feeds n tokens
	Positions [][]int  // [rows][n]: their position ids (rotary angle or learned-position row)
	Mask      [][]bool // [rows][past+n]: every cache slot after the append; false = padding, never attended
}

// Cache holds what a model keeps of earlier positions: for transformers the
// keys and values of every layer, for the toy just the context. It is
// rectangular: every row holds Len() positions.
type Cache interface {
	Len() int // positions held per row
	Rows() int

	// LayerBytes returns the bytes held by each layer's keys and values, all rows
	// together (nil for the toy).
	LayerBytes() []int64

	// Reorder makes row i a copy of row src[i], for every row (beam search).
	Reorder(src []int)

	// Truncate keeps the first n positions of every row.
	Truncate(n int)

	// Clone returns an independent copy (a branch reuses its parent's prefix).
	Clone() Cache
}

// BatchReporter is a Cache that knows the forward pass its last Forward
// call ran in. A model that serves concurrent calls in one pass (arch)
// reports how many calls it served and how many tokens it fed, all
// together; 1 call when the last one ran alone.
type BatchReporter interface {
	LastBatch() (calls, tokens int)
}

// Info describes a model for the trace and the traffic model.
type Info struct {
	Name         string // e.g. the folder name
	Kind         string // "toy", "hf", "llama2c" or "gguf"
	Architecture string // "bigram", "gpt2", "llama", "qwen2", "llama2c"
	VocabSize    int
	MaxPositions int // 0 when unlimited

	Layers, Hidden, Heads, KVHeads, HeadDim, Intermediate int
	Params                                                int64
	DType                                                 string // stored dtype of the weights: "f32", "bf16", "f16"
	WeightBytes                                           int64  // all weights at their stored dtype
	KVBytesPerToken                                       int64  // keys and values of one position, all layers, in bytes

	WeightTypes        map[string]int64 // GGUF: stored bytes per weight type ("q4_k"); nil otherwise
	ActivationRounding []string         // GGUF: how matmul inputs are rounded ("f16", "q8_0", "q8_1", "q8_k"); nil for float32

	BOS int   // -1 when none
	EOS []int // may be empty
	PAD int   // -1 when none
}

// StopError is returned by Forward when a model has no next-token
// distribution for a row (the toy's table has no row for the last token).
// The loop ends the run with Reason as its stop reason.
type StopError struct {
	Reason string // a trace stop reason, e.g. trace.StopNoRow
	Msg    string
}

func (e *StopError) Error() string { return e.Msg }

// TraceModel converts an Info to the trace's description of the model.
func (i Info) TraceModel() trace.Model {
	return trace.Model{
		Name: i.Name, Kind: i.Kind, Architecture: i.Architecture, VocabSize: i.VocabSize,
		Layers: i.Layers, Hidden: i.Hidden, Heads: i.Heads, KVHeads: i.KVHeads,
		HeadDim: i.HeadDim, Intermediate: i.Intermediate, Params: i.Params,
		DType: i.DType, WeightBytes: i.WeightBytes,
		WeightTypes: i.WeightTypes, ActivationRounding: i.ActivationRounding,
		BOS: i.BOS, EOS: append([]int{}, i.EOS...), PAD: i.PAD,
	}
}
