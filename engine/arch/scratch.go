package arch

// scratch holds the buffers of Forward calls on one cache. They only grow,
// so a run allocates during its first (prefill) step and not afterwards.
// Each network uses the ones it needs.
type scratch struct {
	x    []float32 // (T, hidden): the residual stream, T = rows·n tokens
	xn   []float32 // (T, hidden): the normed input of a sublayer
	proj []float32 // (T, hidden): a sublayer's output before it is added to x
	q    []float32 // (T, heads·headDim): queries
	k, v []float32 // (T, kvHeads·headDim): new keys and values
	att  []float32 // (T, heads·headDim): attention output, heads concatenated
	qkv  []float32 // (T, 3·hidden): GPT-2's fused q|k|v projection
	gate []float32 // (T, ffn): MLP gate projection (Llama) / activation (GPT-2)
	up   []float32 // (T, ffn): MLP up projection
	cos  []float32 // (T, headDim/2): rotary cosines of each token's position
	sin  []float32 // (T, headDim/2): rotary sines

	scores []float32 // (rows·kvHeads·blocks, attnUnitLen): attention weights (and prefill tiles) of one (row, kv head, block of new tokens)
	last   []float32 // (rows, hidden): final-normed last position of each row
	logits []float32 // (rows, vocab)
	lensX  []float32 // (rows, layers, hidden): each layer's output at each row's last token, when the lens is asked
	lensN  []float32 // (rows, layers, hidden): lensX after the final norm
	headA  []float32 // (rows, layers, heads·headDim): the heads' outputs at each row's last token, when the forward pass is recorded
	headY  []float32 // (rows, layers, heads·headDim): each head's factor times its output

	warmK, warmV [][]float32 // (kvHeads) a decode step's cached keys and values of one layer (pass.warmKV)

	attn  attnJob     // the attention job handed to the pool
	store storeJob    // the job storing new keys and values in the cache
	tok   tokenJob    // the per-token job of a llama block
	ggml  ggmlAttnJob // a GGUF decode step's attention in ggml's order (gguf_attention.go)
	layer layersJob   // the heads and neurons of a recorded forward pass (forward.go)

	stores, attns jobList // a batched pass's stores and attention, every call's jobs in one (batch.go)
}

// size makes every buffer big enough for rows·n tokens over kvLen cache
// slots of a cache of capacity slots.
func (s *scratch) size(d dims, rows, n, capacity int) {
	s.sizeBatch(d, rows*n, rows)
	blocks, _ := attnBlocks(n)
	grow(&s.scores, rows*d.kvHeads*blocks*attnUnitLen(d, capacity))
	if cap(s.warmK) < d.kvHeads {
		s.warmK, s.warmV = make([][]float32, 0, d.kvHeads), make([][]float32, 0, d.kvHeads)
	}
}

// sizeBatch makes the buffers of T tokens in rows rows big enough: all a
// batched pass uses (batch.go), whose attention runs on each call's own.
func (s *scratch) sizeBatch(d dims, T, rows int) {
	grow(&s.x, T*d.hidden)
	grow(&s.xn, T*d.hidden)
	grow(&s.proj, T*d.hidden)
	grow(&s.q, T*d.qDim())
	grow(&s.k, T*d.kvDim())
	grow(&s.v, T*d.kvDim())
	grow(&s.att, T*d.qDim())
	grow(&s.gate, T*d.ffn)
	grow(&s.up, T*d.ffn)
	grow(&s.cos, T*d.headDim/2)
	grow(&s.sin, T*d.headDim/2)
	grow(&s.last, rows*d.hidden)
	grow(&s.logits, rows*d.vocab)
}

// grow makes *buf at least n long, reallocating when its capacity is short.
func grow(buf *[]float32, n int) {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:cap(*buf)]
}
