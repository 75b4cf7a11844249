// Package trace defines tracer's trace format: a versioned JSON record of one
// generate() run, step by step. A trace holds the model, the options used, the
// prompt, every step (candidates, sampling stages, the chosen token, KV-cache
// size and memory traffic) and the output.
//
// The format is documented in SCHEMA.md and described by schema.json. The
// package depends only on the standard library: traces are written by the
// engine and read by the CLI and the web UI, and reading always validates.
package trace

import (
	"math"
)

// Format is the value of the "format" field of every version 1 trace.
const Format = "tracer/v1"

// How a token was chosen (Chosen.By).
const (
	ByGreedy = "greedy"
	BySample = "sample"
	ByBeam   = "beam"
	ByForced = "forced"
)

// Why generation stopped (Output.StopReason and Row.StopReason).
const (
	StopEOS          = "eos"
	StopMaxNewTokens = "max_new_tokens"
	StopMaxLength    = "max_length"
	StopString       = "stop_string"
	StopNoRow        = "no_row"    // the toy's table has no row for the context
	StopCancelled    = "cancelled" // the caller stopped the run
	StopNaN          = "nan"       // a NaN (or +Inf) appeared in the logits or the scores: see Output.NaN
)

// StopReasons lists every stop reason, in the order the documentation gives
// them.
func StopReasons() []string {
	return []string{StopEOS, StopMaxNewTokens, StopMaxLength, StopString, StopNoRow, StopCancelled, StopNaN}
}

// Where a NaN was first found (NaN.Where).
const (
	NaNEmbedding = "embedding"  // the input embeddings already held it
	NaNLayer     = "layer"      // the output of layer NaN.Layer
	NaNHead      = "head"       // the final norm or the output projection
	NaNLogits    = "logits"     // the logits; the model cannot say where it began
	NaNStage     = "processors" // a logits processor produced it (NaN.Stage)
	NaNNoMass    = "no_mass"    // the processors left no token with positive probability
)

// Step phases.
const (
	PhasePrefill = "prefill" // the step that fed the whole prompt
	PhaseDecode  = "decode"  // a step that fed only the newest token
	PhaseFull    = "full"    // cache off: the step re-fed the whole sequence
)

// Trace is one generate() run.
type Trace struct {
	Format  string   `json:"format"`
	Model   Model    `json:"model"`
	Options Options  `json:"options"`
	Prompt  Prompt   `json:"prompt"`
	Notices []string `json:"notices,omitempty"` // pitfalls worth showing, e.g. the default length of 20
	Steps   []Step   `json:"steps"`
	Output  Output   `json:"output"`

	// Branches are runs that leave the trunk (or another branch) at some
	// step with another token; together with the trunk they form a tree.
	Branches []Branch `json:"branches,omitempty"`
}

// Branch continues its parent from step At with a token of the user's
// choosing. Its steps start at At (step At chose the new token, by
// "forced"); the steps before At are its parent's.
type Branch struct {
	ID     int    `json:"id"`     // 1, 2, ...; the trunk is 0
	Parent int    `json:"parent"` // the branch it leaves: 0 for the trunk
	At     int    `json:"at"`     // the parent's step where it picks another token
	Label  string `json:"label,omitempty"`
	Steps  []Step `json:"steps"`
	Output Output `json:"output"`
}

// Model describes the model that produced a trace.
type Model struct {
	Name         string `json:"name"`
	Kind         string `json:"kind"`         // "toy", "hf" (Hugging Face folder) or "llama2c"
	Architecture string `json:"architecture"` // e.g. "bigram", "gpt2", "llama", "qwen2"
	VocabSize    int    `json:"vocab_size"`

	Layers       int    `json:"layers,omitempty"`
	Hidden       int    `json:"hidden,omitempty"`
	Heads        int    `json:"heads,omitempty"`
	KVHeads      int    `json:"kv_heads,omitempty"`
	HeadDim      int    `json:"head_dim,omitempty"`
	Intermediate int    `json:"intermediate,omitempty"`
	Params       int64  `json:"params,omitempty"`
	DType        string `json:"dtype,omitempty"`        // stored dtype of the weights: "f32", "bf16", "f16"
	WeightBytes  int64  `json:"weight_bytes,omitempty"` // bytes of all weights at their stored dtype

	// GGUF models: the stored bytes per weight type ("q4_k": 847872, ...),
	// and how the inputs of the matrix products are rounded, as llama.cpp
	// does ("f16", "q8_0", "q8_1", "q8_k"; several when the file mixes types).
	// Absent for other models: float32 activations, one dtype.
	WeightTypes        map[string]int64 `json:"weight_types,omitempty"`
	ActivationRounding []string         `json:"activation_rounding,omitempty"`

	BOS int   `json:"bos_token_id"` // -1 when the model has none
	EOS []int `json:"eos_token_id"` // generation stops when a row emits any of these
	PAD int   `json:"pad_token_id"` // -1 when the model has none

	// Source says where a model's answers came from when it is not tracer's
	// own engine: a serving engine reached over HTTP (see source.go).
	Source *Source `json:"source,omitempty"`
}

// Options are the generation options in force, named as in transformers'
// GenerationConfig. Sources says where each value came from.
type Options struct {
	MaxNewTokens       int      `json:"max_new_tokens"` // -1: not set
	MaxLength          int      `json:"max_length"`     // counts the prompt; -1: not set
	MinNewTokens       int      `json:"min_new_tokens"`
	DoSample           bool     `json:"do_sample"`
	Temperature        float64  `json:"temperature"`
	TopK               int      `json:"top_k"`
	TopP               float64  `json:"top_p"`
	MinP               float64  `json:"min_p"` // 0 is off
	RepetitionPenalty  float64  `json:"repetition_penalty"`
	NumBeams           int      `json:"num_beams"`
	LengthPenalty      float64  `json:"length_penalty"`
	EarlyStopping      string   `json:"early_stopping"` // "false", "true" or "never"
	NumReturnSequences int      `json:"num_return_sequences"`
	EOSTokenID         []int    `json:"eos_token_id"`
	PadTokenID         int      `json:"pad_token_id"` // -1: none
	StopStrings        []string `json:"stop_strings,omitempty"`
	Seed               uint64   `json:"seed"`
	UseCache           bool     `json:"use_cache"`
	Padding            string   `json:"padding,omitempty"` // "left" or "right", batches only
	RecordTop          int      `json:"record_top"`        // candidates recorded per step
	FullLogits         bool     `json:"full_logits,omitempty"`
	ForceIDs           []int    `json:"force_ids,omitempty"` // step i chooses ForceIDs[i]

	// What is recorded inside the model (StepRow.Inside): RecordAttention
	// is "" (off), RecordAttentionStep or RecordAttentionAll; RecordLens
	// the top entries of every layer's logit lens per step, 0 for off;
	// RecordForward, when more than 0, the forward pass of every step
	// (Inside.Forward) with that many of each layer's most active MLP
	// neurons.
	RecordAttention string `json:"record_attention,omitempty"`
	RecordLens      int    `json:"record_lens,omitempty"`
	RecordForward   int    `json:"record_forward,omitempty"`

	// Sources maps an option's JSON name to where its value came from:
	// "default" (transformers' defaults), "generation_config" (the model's
	// generation_config.json), "model" (the model itself) or "user".
	Sources map[string]string `json:"sources,omitempty"`
}

// Prompt is what generation started from. A batch lists one Row per prompt.
type Prompt struct {
	Text     string    `json:"text,omitempty"`
	Messages []Message `json:"messages,omitempty"` // chat input, rendered into Text by the template
	IDs      []int     `json:"ids"`
	Tokens   []string  `json:"tokens,omitempty"`
	Texts    []string  `json:"texts,omitempty"` // batches: the text of each prompt
	Rows     []Row     `json:"rows,omitempty"`  // batches: each prompt padded, with its attention mask
}

// Message is one chat turn.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Row is one prompt of a batch after padding.
type Row struct {
	IDs           []int `json:"ids"`            // padded
	AttentionMask []int `json:"attention_mask"` // 1 = real token, 0 = pad
}

// Step is one forward pass and the choice made from it.
type Step struct {
	Index     int       `json:"index"`
	Phase     string    `json:"phase,omitempty"` // PhasePrefill, PhaseDecode or PhaseFull
	Rows      []StepRow `json:"rows"`
	Beams     *BeamStep `json:"beams,omitempty"`
	KV        *KV       `json:"kv,omitempty"`
	Traffic   *Traffic  `json:"traffic,omitempty"`
	ElapsedNS int64     `json:"elapsed_ns,omitempty"`
}

// StepRow is what happened to one row (one sequence of the batch, or one beam)
// at a step.
type StepRow struct {
	Row       int   `json:"row"`
	InputIDs  []int `json:"input_ids"`           // what the model was fed for this row at this step
	Positions []int `json:"positions,omitempty"` // their position ids
	Context   int   `json:"context"`             // tokens the row holds before this step's choice
	Finished  bool  `json:"finished,omitempty"`  // the row had already stopped: its token is a pad

	// Candidates are the leading raw candidates by probability: Logit is the
	// raw logit, Prob its softmax over the whole vocabulary.
	Candidates []Candidate `json:"candidates"`
	Logits     Logits      `json:"logits,omitempty"` // every raw logit, with --full-logits
	Entropy    float64     `json:"entropy"`          // of the raw distribution, in nats

	Stages []Stage `json:"stages,omitempty"` // each processor in order, as it left the scores
	Final  *Final  `json:"final,omitempty"`  // the distribution the token was chosen from
	Draw   *Draw   `json:"draw,omitempty"`   // the uniform draw, when sampled
	Chosen Chosen  `json:"chosen"`

	// Inside is what the forward pass showed inside the model for this
	// row, when options.record_attention, record_lens or record_forward
	// asked.
	Inside *Inside `json:"inside,omitempty"`

	// Server notes what a serving engine left out of this step.
	Server *ServerStep `json:"server,omitempty"`
}

// What Options.RecordAttention records.
const (
	RecordAttentionStep = "step" // each step: the new query's attention over the cached positions
	RecordAttentionAll  = "all"  // also the whole prompt's attention matrices at step 0
)

// Inside is what one step showed inside the model for one row: attention
// probabilities per layer and query head, the logit lens of every layer
// and the forward pass layer by layer, at the row's newest position (the
// query whose logits the step chose from). Each part is present only when
// recorded.
type Inside struct {
	// Attention is [layer][head] → (keys): the newest position's softmax
	// attention weights over every position the row holds, itself
	// included (keys = StepRow.Context). Padding keys are exactly 0. With
	// grouped-query attention every query head has its own list.
	Attention [][]Weights `json:"attention,omitempty"`

	// PromptAttention is [layer][head][query] → (keys), at step 0 only
	// with record_attention "all": the attention of every position fed
	// (the prompt) over all of them; keys after the query are 0.
	PromptAttention [][][]Weights `json:"prompt_attention,omitempty"`

	// Lens is [layer] → the top entries of lm_head(final_norm(h)) for the
	// output h of each layer, 0 … layers-1, by descending logit, ties by
	// lower id: Logit is the lens logit, Prob its softmax over the whole
	// vocabulary. The last layer's lens is the model's own logits.
	Lens [][]Candidate `json:"lens,omitempty"`

	// Forward is the forward pass at the newest position, with
	// record_forward: how the residual stream grows layer by layer.
	Forward *Forward `json:"forward,omitempty"`
}

// Forward is one step's forward pass at a row's newest position: how the
// residual stream h (a vector of model.hidden numbers) grows layer by
// layer, what each attention head and the most active MLP neurons add,
// and the bytes each part read. Norms are L2 norms of the float32 vectors
// the engine computed, at float32's precision (the squares summed in
// float32: within about 1e-6 of the exact norm, relative), and written as
// the shortest decimal that reads back to the same float32.
//
// Bytes count the weights at their stored dtype, each read once per step,
// as Step.Traffic does: for a step that fed n tokens to a row after past
// cached positions, EmbedBytes + UnembedBytes + Σ layers (AttnBytes +
// MLPBytes) = traffic.weight_bytes + traffic.kv_read_bytes of the same
// step run for that row alone. A batch reads its weights once for all its
// rows, so its traffic is less than the rows' sums.
type Forward struct {
	// Embedding is ‖h_0‖: the token's embedding row (GPT-2: plus its
	// position's row), the stream entering layer 0.
	Embedding float64        `json:"embedding"`
	Layers    []ForwardLayer `json:"layers"` // [layer], 0 … model.layers-1
	// Final is ‖final_norm(h_L)‖: the vector the output head multiplies
	// into the logits.
	Final float64 `json:"final"`

	// EmbedBytes are the embedding rows of the tokens fed at this step
	// (GPT-2: and their position rows): n rows, one at a decode step.
	EmbedBytes int64 `json:"embed_bytes"`
	// UnembedBytes are the final norm and the whole output head (a tied
	// head is counted again besides the embedding rows).
	UnembedBytes int64 `json:"unembed_bytes"`
}

// ForwardLayer is one decoder layer of a Forward. Both architectures tracer
// runs are pre-norm: the stream enters attention through a norm, attention
// adds to it, the sum enters the MLP through a second norm, and the MLP
// adds to it.
type ForwardLayer struct {
	In   float64 `json:"in"`   // ‖h‖ entering the layer (layer 0: Forward.Embedding; layer l: layer l-1's Out)
	Attn float64 `json:"attn"` // ‖what attention adds‖: its output projection's result, bias included
	Mid  float64 `json:"mid"`  // ‖h + attn‖: the stream entering the MLP (before its norm)
	MLP  float64 `json:"mlp"`  // ‖what the MLP adds‖: its down projection's result, bias included
	Out  float64 `json:"out"`  // ‖h + attn + mlp‖: the stream leaving the layer

	// Heads are the record_forward query heads with the largest share of
	// Attn, by descending share, ties by lower index: head h's share is
	// ‖W_o[:, columns of h] · head h's output‖, bias excluded. The shares
	// add as vectors, not as norms, to what attention adds.
	Heads []Head `json:"heads"`
	// Neurons are the record_forward MLP neurons with the largest
	// |activation|, by descending |activation|, ties by lower index. A
	// neuron's activation is its entry of the down projection's input:
	// silu(gate)·up (Llama, Qwen2) or gelu(fc) (GPT-2).
	Neurons []Neuron `json:"neurons"`

	// AttnBytes are what the layer's attention read: its norm, q, k, v
	// and output weights and biases, and the keys and values of the
	// cached positions it attended to (this step's own are written:
	// traffic.kv_write_bytes). MLPBytes: its norm, up (and gate) and down
	// weights and biases.
	AttnBytes int64 `json:"attn_bytes"`
	MLPBytes  int64 `json:"mlp_bytes"`
}

// Head is one attention head of a layer and its share of what attention
// added at the newest position.
type Head struct {
	Index int     `json:"index"` // 0 … model.heads-1
	Share float64 `json:"share"` // ‖W_o[:, columns of head] · the head's output‖, at float32's precision
}

// Neuron is one MLP neuron of a layer and its activation at the newest
// position.
type Neuron struct {
	Index int     `json:"index"` // 0 … model.intermediate-1
	Act   float32 `json:"act"`
}

// Weights is a list of float32 probabilities, written compactly: each as
// the shortest decimal that reads back to the same float32, a non-finite
// one (a broken model's NaN) as null.
type Weights []float32

// MarshalJSON writes the weights compactly, non-finite values as null.
func (w Weights) MarshalJSON() ([]byte, error) { return appendFloat32s(nil, w), nil }

// UnmarshalJSON reads null as NaN, which Validate rejects.
func (w *Weights) UnmarshalJSON(data []byte) error {
	return readFloat32s(data, (*[]float32)(w), float32(math.NaN()))
}

// Candidate is one token with its score.
type Candidate struct {
	ID    int     `json:"id"`
	Token string  `json:"token"`
	Logit float32 `json:"logit"`
	Prob  float64 `json:"prob"`

	// Bytes are the token's bytes when a server gives them (its text may
	// be only part of a UTF-8 character). Logit is NaN, written null, when
	// only the probability is known (see source.go).
	Bytes []int `json:"bytes,omitempty"`
}

// Stage is the state of the scores after one processor of the pipeline.
type Stage struct {
	Name   string             `json:"name"`             // e.g. "repetition_penalty", "temperature", "top_k"
	Params map[string]float64 `json:"params,omitempty"` // e.g. {"k": 50}
	Kept   int                `json:"kept"`             // tokens not removed (-inf)
	Top    []Candidate        `json:"top"`              // leading candidates after the stage; Logit is the processed score
}

// Final is the distribution the token was chosen from, after every processor:
// kept tokens by descending probability, up to Options.RecordTop.
type Final struct {
	KeptCount int       `json:"kept_count"`
	IDs       []int     `json:"ids"`
	Probs     []float64 `json:"probs"`
}

// Draw is where a sampled step's uniform number fell.
type Draw struct {
	U         float64 `json:"u"`          // the uniform draw in [0, 1)
	CumBefore float64 `json:"cum_before"` // cumulative probability before the chosen token
	CumAfter  float64 `json:"cum_after"`  // ... and after it: CumBefore <= U < CumAfter
}

// Chosen is the token a step appended to a row.
type Chosen struct {
	ID    int     `json:"id"`
	Token string  `json:"token"`
	Prob  float64 `json:"prob"` // in the final distribution
	Rank  int     `json:"rank"` // 1 = most probable in the final distribution
	By    string  `json:"by"`   // ByGreedy, BySample, ByBeam or ByForced
}

// BeamStep records beam search at one step.
type BeamStep struct {
	ScoresIn []float32    `json:"scores_in"` // running score of each beam entering the step
	Source   []int        `json:"source"`    // the beam each new beam extends
	Tokens   []int        `json:"tokens"`    // the token each new beam appends
	Scores   []float32    `json:"scores"`    // running scores after the step
	Finished []Hypothesis `json:"finished,omitempty"`
	Done     bool         `json:"done"`
}

// Hypothesis is a finished beam.
type Hypothesis struct {
	Tokens       []int   `json:"tokens"` // generated tokens, without the EOS
	SumLogprobs  float32 `json:"sum_logprobs"`
	GeneratedLen int     `json:"generated_len"`
	Score        float64 `json:"score"`
	Kept         bool    `json:"kept"`
}

// KV is the KV cache after a step.
type KV struct {
	Positions     int     `json:"positions"`       // positions held per row
	Bytes         int64   `json:"bytes"`           // total, all layers and rows
	BytesPerLayer []int64 `json:"bytes_per_layer"` // keys and values of each layer
}

// Traffic is what a step cost: bytes moved to and from memory and arithmetic.
type Traffic struct {
	WeightBytes  int64   `json:"weight_bytes"`   // weights read, at their stored dtype
	KVReadBytes  int64   `json:"kv_read_bytes"`  // cached keys and values read by attention
	KVWriteBytes int64   `json:"kv_write_bytes"` // new keys and values written
	FLOPs        int64   `json:"flops"`
	Intensity    float64 `json:"intensity"` // FLOPs per byte moved

	// The forward pass this step ran in, when it served other runs too
	// (the server batches the steps of runs on one model): how many runs
	// and how many tokens it fed, all together. The weights above were
	// read once for all of them. Absent when the step ran alone.
	BatchRuns   int `json:"batch_runs,omitempty"`
	BatchTokens int `json:"batch_tokens,omitempty"`
}

// Output is the result of a run.
type Output struct {
	Sequences       [][]int   `json:"sequences,omitempty"` // every row, prompt + new, pads included
	SequencesScores []float32 `json:"sequences_scores,omitempty"`
	IDs             []int     `json:"ids"`      // single prompt: prompt + new ids
	NewIDs          []int     `json:"new_ids"`  // single prompt: new ids only
	Text            string    `json:"text"`     // decoded IDs, special tokens skipped
	NewText         string    `json:"new_text"` // decoded NewIDs, special tokens skipped
	StopReason      string    `json:"stop_reason"`
	NewTexts        []string  `json:"new_texts,omitempty"`        // batches: each row's new text
	RowStops        []string  `json:"row_stop_reasons,omitempty"` // batches: why each row stopped
	NaN             *NaN      `json:"nan,omitempty"`              // stop reason "nan": where it was found
}

// NaN says where a run that stopped with StopNaN met its first NaN (or +Inf,
// which softmax cannot handle either). The step that met it is not recorded:
// Steps end before Step.
type NaN struct {
	Step  int    `json:"step"`            // the step whose forward pass or processors produced it
	Row   int    `json:"row"`             // the first row (or beam) that held it
	Where string `json:"where"`           // NaNEmbedding, NaNLayer, NaNHead, NaNLogits, NaNStage or NaNNoMass
	Layer int    `json:"layer"`           // Where == NaNLayer: the first layer (0-based) whose output held it; else -1
	Stage string `json:"stage,omitempty"` // Where == NaNStage: the processor, e.g. "temperature"
}

// Logits is a full row of logits. Removed or impossible tokens (-inf, as the
// toy's unlisted words) are written as null, since JSON has no infinity.
type Logits []float32

// MarshalJSON writes non-finite values as null.
func (l Logits) MarshalJSON() ([]byte, error) { return appendFloat32s(nil, l), nil }

// UnmarshalJSON reads null as -inf.
func (l *Logits) UnmarshalJSON(data []byte) error {
	return readFloat32s(data, (*[]float32)(l), float32(math.Inf(-1)))
}
