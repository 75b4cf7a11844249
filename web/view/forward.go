package view

// ForwardView is one step's forward pass at the newest position, drawn as
// boxes from the token's embedding row to its logits: per layer the
// residual stream's norm entering it, what attention and the MLP add (with
// the heads and neurons that add most), each box with its shapes for this
// model and the bytes it read at this step.
type ForwardView struct {
	Token     string // the token the step fed at this position, as the page writes it
	Embedding ForwardBoxView
	Layers    []ForwardLayerView
	Final     ForwardBoxView // the final norm's output
	Unembed   ForwardBoxView // the unembedding: the logits
	Bytes     string         // what the boxes read together, this step
}

// ForwardBoxView is one box: what it computes, with which shapes, the
// bytes it read, and the norm of the vector it leaves (with a bar against
// the largest norm of the pass).
type ForwardBoxView struct {
	Shape string // "[1, 64] × [64, 128]"
	Bytes string // "16.0 KiB"
	Norm  string // "3.42"
	Width string // the bar, a CSS width
}

// ForwardLayerView is one layer: the stream entering it, what attention
// added, the stream between, what the MLP added, the stream leaving.
type ForwardLayerView struct {
	Layer           int // 0-based
	In, Mid, Out    string
	InW, MidW, OutW string // bars
	Attn, MLP       ForwardBoxView
	Heads           []ForwardPartView // the heads that added most, largest first
	Neurons         []ForwardPartView // the most active MLP neurons, by |activation|
}

// ForwardPartView is one head's share of attention or one neuron's
// activation.
type ForwardPartView struct {
	Label string // "h3", "#172"
	Value string // "0.42", "-2.31"
}
