package arch

import (
	"errors"
	"fmt"
	"io"
	"math"

	"tracer/engine"
	"tracer/engine/tensor"
	"tracer/trace"
)

// dims are the sizes every architecture has.
type dims struct {
	vocab, hidden, layers   int
	heads, kvHeads, headDim int
	ffn                     int  // MLP inner size
	maxPos                  int  // positions the model was built for; 0 when unlimited
	learnedPos              bool // positions index a table (GPT-2): each must be < maxPos
	gpt2Mask                bool // GPT-2 adds its padding mask to a causal mask already at min: see attention.go
}

func (d dims) qDim() int  { return d.heads * d.headDim }
func (d dims) kvDim() int { return d.kvHeads * d.headDim }

// kvBytesPerToken is the KV cache size of one position: keys and values of
// every layer, float32.
func (d dims) kvBytesPerToken() int64 { return int64(d.layers) * 2 * int64(d.kvDim()) * 4 }

// network is the per-architecture part of a model: its embedding, its
// blocks, its final norm and its output head. The Model drives it.
type network interface {
	// embed writes the input vector of every token of the pass to p.s.x
	// (T, hidden) and prepares anything per token the blocks need (rotary
	// angles).
	embed(p *pass)
	// block runs layer l on the residual stream p.s.x (T, hidden) in place.
	block(p *pass, l int)
	// norm applies the final norm to one hidden vector: dst, x (hidden).
	norm(dst, x []float32)
	// head is the output projection (vocab, hidden), stored [out, in].
	head() tensor.Matrix
	// outProj is layer l's attention output projection W_o, which maps
	// the heads' outputs (heads·headDim) to the stream (hidden), and
	// whether it is stored [in, out] (GPT-2's Conv1D) rather than
	// [out, in].
	outProj(l int) (w tensor.Matrix, inOut bool)
}

// costModel holds the byte and FLOP counts Cost combines.
type costModel struct {
	fixedBytes int64 // weights every Forward reads once: the layers, the final norm and the whole head
	tokenBytes int64 // weights read per token fed: an embedding row (GPT-2: plus a position row)
	tokenMACs  int64 // multiply-adds per token in the layers' matrices
	headMACs   int64 // multiply-adds of the head for one position
	pairFLOPs  int64 // attention FLOPs per (query, key) pair, all layers: 4·heads·headDim·layers

	// fixedBytes in parts, for the forward pass's record (forward.go):
	// each layer's attention (its norm, q, k, v, output weights and
	// biases) and MLP (its norm, up/gate/fc, down, biases), and the
	// final norm with the whole head.
	attnBytes, mlpBytes []int64 // (layers)
	headBytes           int64
}

// addLayer counts one layer: the matrices and vectors of its attention
// and of its MLP, each vector element vec bytes.
func (c *costModel) addLayer(vec int64, attnMats, mlpMats []tensor.Matrix, attnVecs, mlpVecs [][]float32) {
	count := func(mats []tensor.Matrix, vecs [][]float32) int64 {
		var b int64
		for _, m := range mats {
			b += m.Bytes()
			c.tokenMACs += int64(m.Rows) * int64(m.Cols)
		}
		for _, v := range vecs {
			b += int64(len(v)) * vec
		}
		return b
	}
	attn, mlp := count(attnMats, attnVecs), count(mlpMats, mlpVecs)
	c.attnBytes, c.mlpBytes = append(c.attnBytes, attn), append(c.mlpBytes, mlp)
	c.fixedBytes += attn + mlp
}

// addHead counts the final norm (normBytes) and the output head.
func (c *costModel) addHead(head tensor.Matrix, normBytes int64) {
	c.headBytes = normBytes + head.Bytes()
	c.fixedBytes += c.headBytes
	c.headMACs = int64(head.Rows) * int64(head.Cols)
}

// Model is a loaded decoder-only transformer. It implements engine.Model and
// is safe for concurrent use by Forward calls on different caches.
type Model struct {
	info   engine.Info
	d      dims
	net    network
	cost   costModel
	pool   *tensor.Pool
	batch  *batcher       // gathers concurrent Forward calls into one pass (batch.go)
	closer io.Closer      // releases the mapped weights
	fwd    forwardFactors // made when a pass first records the forward pass (forward.go)
}

// newModel assembles a Model; it owns closer from now on.
func newModel(info engine.Info, d dims, net network, cost costModel, closer io.Closer) *Model {
	return &Model{info: info, d: d, net: net, cost: cost, pool: tensor.NewPool(0), batch: newBatcher(), closer: closer}
}

// Info describes the model.
func (m *Model) Info() engine.Info {
	info := m.info
	info.EOS = append([]int(nil), m.info.EOS...)
	return info
}

// SetThreads sets how many goroutines the kernels of Forward run on (n <= 0:
// GOMAXPROCS), replacing the model's worker pool. It must not be called
// while a Forward runs.
func (m *Model) SetThreads(n int) {
	m.pool.Close()
	m.pool = tensor.NewPool(n)
}

// Threads returns how many goroutines the kernels of Forward run on.
func (m *Model) Threads() int { return m.pool.Workers() }

// Close stops the model's worker goroutines and unmaps its weights. The
// model and its caches must not be used afterwards.
func (m *Model) Close() error {
	m.pool.Close()
	if m.closer == nil {
		return nil
	}
	err := m.closer.Close()
	m.closer = nil
	return err
}

// NewCache returns an empty KV cache for rows sequences of up to capacity
// positions each.
func (m *Model) NewCache(rows, capacity int) (engine.Cache, error) {
	return newCache(m.d, rows, capacity)
}

// ErrCacheFull is returned (wrapped) by Forward when the new tokens do not
// fit in the cache's capacity.
var ErrCacheFull = errors.New("KV cache full")

// Forward feeds each row's new tokens, appends their keys and values to the
// cache and writes the logits of each row's last token to logits[row].
// Calls on different caches that overlap in time share one pass over the
// weights (batch.go), with the same logits as alone.
func (m *Model) Forward(c engine.Cache, b *engine.Batch, logits [][]float32) error {
	return m.forward(c, b, logits, nil)
}

// ForwardInside is Forward that also answers in's questions (see
// inside.go): the attention weights of the new tokens and every layer's
// logit lens at each row's last one. It implements engine.InsideModel.
func (m *Model) ForwardInside(c engine.Cache, b *engine.Batch, logits [][]float32, in *engine.Inside) error {
	if in == nil {
		return errors.New("arch: forward inside: nil Inside")
	}
	return m.forward(c, b, logits, in)
}

// forward is Forward, recording what in asks when it is not nil. A call
// that asks nothing goes to the batcher; one that looks inside runs alone.
func (m *Model) forward(c engine.Cache, b *engine.Batch, logits [][]float32, in *engine.Inside) error {
	p, err := m.begin(c, b)
	if err != nil {
		return err
	}
	if len(logits) != p.rows {
		return fmt.Errorf("arch: forward: %d logits rows for %d batch rows", len(logits), p.rows)
	}
	for r, l := range logits {
		if len(l) != m.d.vocab {
			return fmt.Errorf("arch: forward: logits row %d holds %d values, want the vocabulary size %d", r, len(l), m.d.vocab)
		}
	}
	if in == nil {
		return m.batch.forward(m, p, logits)
	}
	m.forwardAlone(p, logits, in)
	return nil
}

// forwardAlone runs the pass p of one Forward call on its cache's buffers.
func (m *Model) forwardAlone(p *pass, logits [][]float32, in *engine.Inside) {
	if in != nil {
		m.beginInside(p, in)
	}
	m.run(p, nil)
	out := m.lastLogits(p)
	if p.fwd != nil {
		p.keepFinal(p.s.last)
	}
	v := m.d.vocab
	for r := range logits {
		copy(logits[r], out[r*v:(r+1)*v])
	}
	if in != nil && in.Lens {
		m.lens(p, in)
	}
	p.c.n += p.n
	p.c.note = batchNote{calls: 1, tokens: p.T()}
}

// lastLogits applies the final norm and the head to each row's last
// position and returns the logits (rows, vocab), in the pass's scratch.
func (m *Model) lastLogits(p *pass) []float32 {
	h, v := m.d.hidden, m.d.vocab
	last := p.s.last[:p.rows*h]
	r := 0 // the row in the pass
	for _, c := range p.calls() {
		for cr := 0; cr < c.rows; cr++ {
			t := c.t0 + cr*c.n + c.n - 1
			m.net.norm(last[r*h:(r+1)*h], p.s.x[t*h:(t+1)*h])
			r++
		}
	}
	out := p.s.logits[:p.rows*v]
	m.pool.MatMul(out, m.net.head(), last)
	return out
}

// FindNaN implements engine.NaNFinder: it feeds b again on c truncated to
// past positions, checking the residual stream after the embedding and
// after every layer, then the logits, and reports the first stage whose
// output held a NaN or an infinity, and the first row that held it there.
// It costs one more forward pass, and runs only once a Forward's logits
// held a NaN, so the normal path checks nothing.
func (m *Model) FindNaN(c engine.Cache, b *engine.Batch, past int) (row int, where string, layer int, ok bool) {
	cache, isOurs := c.(*Cache)
	if !isOurs || cache == nil || past < 0 || past > cache.n {
		return 0, "", 0, false
	}
	cache.Truncate(past)
	p, err := m.begin(c, b)
	if err != nil {
		return 0, "", 0, false
	}
	stage := -1 // -1: the embedding, then each layer
	found := false
	m.run(p, func(x []float32) {
		if r := nonFiniteRow(x, p.rows); r >= 0 && !found {
			found, row = true, r
			where, layer = trace.NaNEmbedding, -1
			if stage >= 0 {
				where, layer = trace.NaNLayer, stage
			}
		}
		stage++
	})
	if !found {
		if r := nonFiniteRow(m.lastLogits(p), p.rows); r >= 0 {
			found, row, where, layer = true, r, trace.NaNHead, -1
		}
	}
	p.c.n += p.n
	return row, where, layer, found
}

// nonFiniteRow splits x into rows equal parts and returns the first that
// holds a NaN or an infinity, or -1.
func nonFiniteRow(x []float32, rows int) int {
	per := len(x) / rows
	for r := 0; r < rows; r++ {
		for _, v := range x[r*per : (r+1)*per] {
			if v != v || v > math.MaxFloat32 || v < -math.MaxFloat32 {
				return r
			}
		}
	}
	return -1
}

// Outputs are the per-position results of ForwardAll, the counterparts of
// transformers' output_hidden_states=True.
type Outputs struct {
	Logits [][][]float32 // [rows][n][vocab]: the logits of every new position

	// Hidden are transformers' hidden_states: [layers+1][rows][n][hidden],
	// [0] the embeddings (GPT-2: token plus position), [i] the output of
	// layer i-1, and the last entry after the final norm.
	Hidden [][][][]float32

	PreNorm [][][]float32 // [rows][n][hidden]: the last layer's output before the final norm
}

// ForwardAll is Forward returning the logits and hidden states of every new
// position, for tests and for looking inside the model. It allocates its
// results.
func (m *Model) ForwardAll(c engine.Cache, b *engine.Batch) (*Outputs, error) {
	p, err := m.begin(c, b)
	if err != nil {
		return nil, err
	}
	h, v := m.d.hidden, m.d.vocab
	split := func(x []float32, width int) [][][]float32 {
		out := make([][][]float32, p.rows)
		for r := range out {
			out[r] = make([][]float32, p.n)
			for i := range out[r] {
				t := r*p.n + i
				out[r][i] = append([]float32(nil), x[t*width:(t+1)*width]...)
			}
		}
		return out
	}
	o := &Outputs{}
	m.run(p, func(x []float32) { o.Hidden = append(o.Hidden, split(x, h)) })
	T := p.rows * p.n
	o.PreNorm = split(p.s.x[:T*h], h)
	normed := make([]float32, T*h)
	for t := 0; t < T; t++ {
		m.net.norm(normed[t*h:(t+1)*h], p.s.x[t*h:(t+1)*h])
	}
	o.Hidden[len(o.Hidden)-1] = split(normed, h)
	all := make([]float32, T*v)
	m.pool.MatMul(all, m.net.head(), normed)
	o.Logits = split(all, v)
	p.c.n += p.n
	return o, nil
}

// run embeds the pass's tokens and runs every block, calling hidden (when
// not nil) with the residual stream after the embedding and after each
// layer, and handing it to keepStream when the pass records the lens or
// the forward pass (inside.go).
func (m *Model) run(p *pass, hidden func(x []float32)) {
	m.net.embed(p)
	x := p.s.x[:p.T()*m.d.hidden]
	stream := p.lens || p.fwd != nil
	if hidden != nil {
		hidden(x)
	}
	if stream {
		p.keepStream(-1, x)
	}
	for l := 0; l < m.d.layers; l++ {
		m.net.block(p, l)
		if hidden != nil {
			hidden(x)
		}
		if stream {
			p.keepStream(l, x)
		}
	}
}

// Cost is the memory traffic and arithmetic of a Forward call feeding n new
// tokens to each of rows rows that already hold past positions:
//
//	WeightBytes  = (layer weights + final norm + whole head) + rows·n·(embedding row [+ GPT-2 position row])
//	KVReadBytes  = rows·past·KVBytesPerToken (attention reads every cached position once)
//	KVWriteBytes = rows·n·KVBytesPerToken
//	FLOPs        = 2·(layer matrix params)·rows·n + 2·(head params)·rows
//	             + 4·heads·headDim·layers·rows·(n·past + n(n+1)/2)
//	Intensity    = FLOPs / (WeightBytes + KVReadBytes + KVWriteBytes)
//
// Weights count at their stored dtype, a tied head in full besides the
// embedding rows. The head runs once per row (Forward only computes the
// last position's logits). Attention costs 2·headDim FLOPs for q·k and
// 2·headDim for weighting v per query head and (query, key) pair; new token
// i attends to past+i+1 keys. Biases, norms and activations are left out.
func (m *Model) Cost(rows, past, n int) trace.Traffic {
	if rows <= 0 || n <= 0 || past < 0 {
		return trace.Traffic{}
	}
	r, p, k := int64(rows), int64(past), int64(n)
	c := m.cost
	t := trace.Traffic{
		WeightBytes:  c.fixedBytes + r*k*c.tokenBytes,
		KVReadBytes:  r * p * m.info.KVBytesPerToken,
		KVWriteBytes: r * k * m.info.KVBytesPerToken,
		FLOPs:        2*c.tokenMACs*r*k + 2*c.headMACs*r + c.pairFLOPs*r*(k*p+k*(k+1)/2),
	}
	if bytes := t.WeightBytes + t.KVReadBytes + t.KVWriteBytes; bytes > 0 {
		t.Intensity = float64(t.FLOPs) / float64(bytes)
	}
	return t
}

// pass is the state of one Forward call, or of a batched pass serving
// several (group).
type pass struct {
	m             *Model
	c             *Cache
	b             *engine.Batch
	s             *scratch
	rows, n, past int // a batched pass: all rows; n and past are per call
	tokens        int // a batched pass: all calls' new tokens
	t0            int // a call in a batched pass: its first token there
	pool          *tensor.Pool
	inside        *engine.Inside // non-nil: attention weights are recorded there (inside.go)
	lens          bool           // each row's last position after each layer is kept for the lens (inside.go)
	fwd           *engine.Inside // non-nil: the forward pass is recorded there (forward.go)
	fwdR          [][]float32    // with fwd: the model's head factors (forward.go)
	group         []*pass        // a batched pass: its calls, in token order; nil for one call
	one           [1]*pass       // calls' backing for one call
}

// T is the number of tokens the pass feeds, all rows together.
func (p *pass) T() int {
	if p.group == nil {
		return p.rows * p.n
	}
	return p.tokens
}

// calls returns the Forward calls the pass serves: its group, or itself.
func (p *pass) calls() []*pass {
	if p.group != nil {
		return p.group
	}
	p.one[0] = p
	return p.one[:]
}

// attention runs attention (attend, or attendGGML for a GGUF file) on
// the new keys and values k, v and queries q, writing out (T, ·). A
// batched pass runs each call's on its own cache, q, k, v and out sliced to
// the call's tokens, all calls together: one job stores every call's keys
// and values, another runs every call's units (batch.go's jobList), so
// that a pass of 40 decode steps hands the pool two jobs a layer, not 80.
func (p *pass) attention(l int, q, k, v, out []float32, ggml bool) {
	if p.group == nil {
		if !ggml || !p.attendGGML(l, q, k, v, out) {
			p.attend(l, q, k, v, out)
		}
		return
	}
	qd, kvd := p.m.d.qDim(), p.m.d.kvDim()
	stores, attns := &p.s.stores, &p.s.attns
	stores.reset()
	attns.reset()
	grain := 1 << 30
	for _, c := range p.group {
		lo, hi := c.t0, c.t0+c.T()
		cq, co := q[lo*qd:hi*qd], out[lo*qd:hi*qd]
		c.s.store = storeJob{p: c, l: l, k: k[lo*kvd : hi*kvd], v: v[lo*kvd : hi*kvd]}
		stores.add(&c.s.store, c.T())
		var units, g int
		if ggml && c.ggmlAttends() {
			units, g = c.attendGGMLJob(l, cq, co)
			attns.add(&c.s.ggml, units)
		} else {
			units, g = c.attendJob(l, cq, co)
			attns.add(&c.s.attn, units)
		}
		grain = min(grain, g)
	}
	p.pool.Parallel(stores.units(), 8, stores)
	p.pool.Parallel(attns.units(), grain, attns)
	for _, c := range p.group {
		c.s.store, c.s.attn, c.s.ggml = storeJob{}, attnJob{}, ggmlAttnJob{}
	}
}

// begin checks a Forward call's cache and batch and prepares its scratch.
func (m *Model) begin(c engine.Cache, b *engine.Batch) (*pass, error) {
	cache, ok := c.(*Cache)
	if !ok || cache == nil {
		return nil, fmt.Errorf("arch: forward: cache is a %T, not one made by this model's NewCache", c)
	}
	if cache.layers != m.d.layers || cache.kvHeads != m.d.kvHeads || cache.headDim != m.d.headDim {
		return nil, fmt.Errorf("arch: forward: cache made for another model (%d layers × %d kv heads × %d dims, want %d × %d × %d)",
			cache.layers, cache.kvHeads, cache.headDim, m.d.layers, m.d.kvHeads, m.d.headDim)
	}
	if err := m.checkBatch(cache, b); err != nil {
		return nil, err
	}
	p := &cache.pass
	n := len(b.Tokens[0])
	*p = pass{m: m, c: cache, b: b, s: &cache.s, rows: cache.rows, n: n, past: cache.n, pool: m.pool}
	p.s.size(m.d, p.rows, p.n, cache.capacity)
	return p, nil
}

// checkBatch validates a batch against the cache: one row per cache row,
// every row the same number n ≥ 1 of tokens and positions, a mask of
// past+n slots, known token ids and usable positions.
func (m *Model) checkBatch(c *Cache, b *engine.Batch) error {
	if b == nil {
		return errors.New("arch: forward: nil batch")
	}
	if len(b.Tokens) != c.rows || len(b.Positions) != c.rows || len(b.Mask) != c.rows {
		return fmt.Errorf("arch: forward: batch has %d token rows, %d position rows and %d mask rows for a cache of %d rows",
			len(b.Tokens), len(b.Positions), len(b.Mask), c.rows)
	}
	n := len(b.Tokens[0])
	if n == 0 {
		return errors.New("arch: forward: no new tokens")
	}
	if c.n+n > c.capacity {
		return fmt.Errorf("arch: forward: %d cached + %d new positions exceed the capacity of %d: %w", c.n, n, c.capacity, ErrCacheFull)
	}
	for r := range b.Tokens {
		if len(b.Tokens[r]) != n || len(b.Positions[r]) != n {
			return fmt.Errorf("arch: forward: row %d has %d tokens and %d positions, row 0 has %d tokens", r, len(b.Tokens[r]), len(b.Positions[r]), n)
		}
		if len(b.Mask[r]) != c.n+n {
			return fmt.Errorf("arch: forward: row %d mask has %d slots, want %d (%d cached + %d new)", r, len(b.Mask[r]), c.n+n, c.n, n)
		}
		for i, tok := range b.Tokens[r] {
			if tok < 0 || tok >= m.d.vocab {
				return fmt.Errorf("arch: forward: row %d token %d is id %d, outside the vocabulary [0, %d)", r, i, tok, m.d.vocab)
			}
			pos := b.Positions[r][i]
			if pos < 0 || (m.d.learnedPos && pos >= m.d.maxPos) {
				return fmt.Errorf("arch: forward: row %d token %d has position %d, outside [0, %d)", r, i, pos, m.d.maxPos)
			}
		}
	}
	return nil
}
