package arch

import (
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"tracer/engine"
	"tracer/engine/tensor"
)

// Recording the forward pass (engine.Inside.Forward) at each row's last
// new token: the norm of the residual stream entering the model's layers
// and leaving each, what attention and the MLP add to it, each head's
// share of attention, the MLP neurons with the largest activations, and
// the bytes each part read.
//
// The blocks call keepForward at four points when the pass records it
// (p.fwd set): after attention's output projection (which also keeps the
// heads' outputs), after adding it to the stream, after the MLP's
// activation (whose most active neurons it picks there, in cache) and
// after its down projection; run hands the stream between layers to
// keepStream, and forwardAlone the final norm's output to keepFinal,
// which then computes the heads' shares of every layer, one job over the
// pool (keepLayers). Forward, asking nothing, only tests p.fwd.
//
// What it costs (BenchmarkRecordForward, SmolLM2-135M's shape, bf16, 10
// neurons, two threads): 2.5 to 4.5 % of a decode step, most of it
// reading the head factors back from memory, which the step's 270 MB of
// weights have pushed out of the caches. Computing each layer's shares
// right after its output projection, with the projection warming the
// factors (tensor.Product.Warm), measured 5.5 to 7 %; warming every
// layer's factors during the last layer's MLP, 3 to 6 %; copying the
// activations for the pool to pick the neurons from, 3 to 5 %.
//
// Head h's share is ‖W_h a_h‖, with W_h the headDim columns of the output
// projection W_o that head h's output a_h multiplies. Computed directly it
// would read W_o a second time at every step (7 % of a decode step's
// weights at SmolLM2-135M's shape). Instead, with the Cholesky factor R_h
// of W_hᵀW_h (headDim × headDim, upper triangular), ‖W_h a‖² = aᵀW_hᵀW_h a
// = ‖R_h a‖²: a product of headDim² per head, heads·headDim² per layer,
// 1/heads of W_o (forwardFactors), 5/8 of that at 64 dims as R_h is
// triangular (tensor.PackUpper). Taking the norm of R_h a, rather than
// the quadratic form aᵀ(W_hᵀW_h)a, keeps float32's error relative to the
// norm at about √headDim·ε times R_h's condition number, not its square.
// The factors are made once per model, the first time a pass asks, from
// W_o in float64: layers·heads·headDim²·hidden/2 multiply-adds, 0.1 to
// 0.3 s at SmolLM2-135M's shape on two cores (an 8B model's would take
// some seconds), and kept in float32, 2.7 MiB there.

// The stages of a layer keepForward records.
const (
	fwdAttn = iota // attention's output projection, bias included; the heads' outputs are in p.s.att
	fwdMid         // the stream after adding it
	fwdAct         // the MLP's activations, the down projection's input (T, ffn)
	fwdMLP         // the MLP's down projection, bias included
)

// The places of a layer's norms in a row's engine.Inside.Norms, after the
// embedding's at 0: 1 + 5·layer + one of these; the final norm's last.
const (
	normIn = iota
	normAttn
	normMid
	normMLP
	normOut
	normsPerLayer
)

// forwardFactors holds R_h for every layer and head: [layer] → heads
// factors of tensor.UpperLen(headDim) float32 each (tensor.PackUpper), made
// once per model from its weights, the first time a pass records the
// forward pass (headFactors).
type forwardFactors struct {
	mu sync.Mutex
	r  atomic.Pointer[[][]float32]
}

// headFactors returns the model's head factors, making them on the first
// call.
func (m *Model) headFactors() [][]float32 {
	if r := m.fwd.r.Load(); r != nil {
		return *r
	}
	m.fwd.mu.Lock()
	defer m.fwd.mu.Unlock()
	if r := m.fwd.r.Load(); r != nil {
		return *r
	}
	r := m.forwardFactors()
	m.fwd.r.Store(&r)
	return r
}

// beginForward prepares in's forward answers for the pass p: sizes, the
// bytes each part reads, and the head factors (made on the first call).
func (m *Model) beginForward(p *pass, in *engine.Inside) {
	d := m.d
	L := d.layers
	in.Neurons = min(in.Forward, d.ffn)
	resize(&in.Norms, p.rows*engine.ForwardNorms(L))
	resize(&in.HeadNorms, p.rows*L*d.heads)
	resize(&in.NeuronIDs, p.rows*L*in.Neurons)
	resize(&in.NeuronActs, p.rows*L*in.Neurons)
	resize(&in.AttnBytes, L)
	resize(&in.MLPBytes, L)
	c := m.cost
	kvLayer := m.info.KVBytesPerToken / int64(L) // keys and values of one position in one layer
	for l := range L {
		in.AttnBytes[l], in.MLPBytes[l] = c.attnBytes[l]+int64(p.past)*kvLayer, c.mlpBytes[l]
	}
	in.EmbedBytes, in.UnembedBytes = int64(p.n)*c.tokenBytes, c.headBytes
	p.fwd, p.fwdR = in, m.headFactors()
	grow(&p.s.headA, p.rows*L*d.qDim())
	grow(&p.s.headY, p.rows*L*d.qDim())
}

// resize makes *buf n long, reusing its storage when it is large enough.
func resize[T any](buf *[]T, n int) {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
}

// lastToken is the index in the pass of row r's last new token.
func (p *pass) lastToken(r int) int { return r*p.n + p.n - 1 }

// rowNorms is row r's part of the pass's Inside.Norms.
func (p *pass) rowNorms(r int) []float64 {
	n := engine.ForwardNorms(p.m.d.layers)
	return p.fwd.Norms[r*n : (r+1)*n]
}

// keepStreamNorms records the stream x (T, hidden) entering the first
// layer (layer -1: the embedding's output) or leaving layer layer.
func (p *pass) keepStreamNorms(layer int, x []float32) {
	h, L := p.m.d.hidden, p.m.d.layers
	for r := 0; r < p.rows; r++ {
		t := p.lastToken(r)
		v := norm(x[t*h : (t+1)*h])
		ns := p.rowNorms(r)
		if layer < 0 {
			ns[0] = v
		} else {
			ns[1+normsPerLayer*layer+normOut] = v
		}
		if layer+1 < L {
			ns[1+normsPerLayer*(layer+1)+normIn] = v
		}
	}
}

// keepForward records stage of layer l from v, a (T, width) buffer of the
// pass.
func (p *pass) keepForward(stage, l int, v []float32) {
	d := p.m.d
	for r := 0; r < p.rows; r++ {
		t := p.lastToken(r)
		ns := p.rowNorms(r)[1+normsPerLayer*l:]
		switch stage {
		case fwdAttn:
			ns[normAttn] = norm(v[t*d.hidden : (t+1)*d.hidden])
			at := (r*d.layers + l) * d.qDim()
			copy(p.s.headA[at:at+d.qDim()], p.s.att[t*d.qDim():(t+1)*d.qDim()])
		case fwdMid:
			ns[normMid] = norm(v[t*d.hidden : (t+1)*d.hidden])
		case fwdMLP:
			ns[normMLP] = norm(v[t*d.hidden : (t+1)*d.hidden])
		case fwdAct: // picked here, while the activations are in cache
			k := p.fwd.Neurons
			at := (r*d.layers + l) * k
			topAbs(p.fwd.NeuronIDs[at:at+k], p.fwd.NeuronActs[at:at+k], v[t*d.ffn:(t+1)*d.ffn])
		}
	}
}

// keepLayers records, once the pass is done, each head's share ‖R_h a_h‖
// from the heads' outputs keepForward kept, for every (row, layer): one
// job over the pool for all of them, so that the work is split between
// the threads and the factors (2.7 MiB at SmolLM2-135M's shape) stream
// from memory in order, rather than a serial tail after each layer.
func (p *pass) keepLayers() {
	d := p.m.d
	p.s.layer = layersJob{p: p}
	p.pool.Parallel(p.rows*d.layers, 1, &p.s.layer)
	p.s.layer = layersJob{}
}

// layersJob records the heads' shares of a range of (row, layer) units.
type layersJob struct {
	p *pass
}

func (j *layersJob) Run(lo, hi int) {
	p, d := j.p, j.p.m.d
	hd, H, L := d.headDim, d.heads, d.layers
	n := tensor.UpperLen(hd)
	for u := lo; u < hi; u++ {
		l := u % L
		for h := range H {
			at := (u*H + h) * hd // the head's output a_h
			y := p.s.headY[at : at+hd]
			tensor.MulUpper(y, p.fwdR[l][h*n:(h+1)*n], p.s.headA[at:at+hd])
			p.fwd.HeadNorms[u*H+h] = norm(y)
		}
	}
}

// keepFinal records the final norm's output of each row, last (rows,
// hidden), and then the heads' shares of every layer (keepLayers).
func (p *pass) keepFinal(last []float32) {
	h := p.m.d.hidden
	for r := 0; r < p.rows; r++ {
		ns := p.rowNorms(r)
		ns[len(ns)-1] = norm(last[r*h : (r+1)*h])
	}
	p.keepLayers()
}

// norm is the L2 norm of x: the square root of its sum of squares in
// float64 (tensor.SumSquares), rounded to float32 where it fits.
func norm(x []float32) float64 {
	r := math.Sqrt(tensor.SumSquares(x))
	if r <= math.MaxFloat32 {
		r = float64(float32(r))
	}
	return r
}

// topAbs writes to ids and acts the len(ids) entries of v with the
// largest |v[i]|, by descending |v[i]|, ties by lower index; a NaN ranks
// below every number. len(v) must be at least len(ids). It compares the
// bits of |v[i]| as integers, which order as the numbers do (NaN's, above
// infinity's, are mapped below zero's), and once ids is full it skips, 32
// at a time (tensor.SkipAbsAtMost), the entries not above the smallest
// kept: most of an MLP's neurons. (One float32 comparison a neuron cost
// 2 ns, a third of what recording a decode step cost at SmolLM2-135M's
// shape.)
func topAbs(ids []int, acts []float32, v []float32) {
	k := len(ids)
	if k == 0 {
		return
	}
	const abs, inf = 1<<31 - 1, 0x7f800000
	bits := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
	keys := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(acts))), k) // the kept entries' keys while selecting
	n := 0                                                                    // entries kept, by descending key
	thr := int32(-2)                                                          // below every key until ids is full
	for i := 0; i < len(v); {
		if n == k {
			t := float32(-1) // a NaN is kept: every number is above it
			if thr >= 0 {
				t = math.Float32frombits(uint32(thr))
			}
			i += tensor.SkipAbsAtMost(v[i:], t)
		}
		for end := min(i+32, len(v)); i < end; i++ {
			b := int32(bits[i] & abs)
			if b > inf {
				b = -1 // NaN
			}
			if b <= thr {
				continue // below the smallest kept, or equal (a higher index ranks below)
			}
			j := min(n, k-1)
			for j > 0 && b > keys[j-1] {
				ids[j], keys[j] = ids[j-1], keys[j-1]
				j--
			}
			ids[j], keys[j] = i, b
			n = min(n+1, k)
			if n == k {
				thr = keys[k-1]
			}
		}
	}
	for j, i := range ids {
		acts[j] = v[i]
	}
}

// forwardFactors computes R_h for every layer and head (see the top of
// the file), the layers spread over the model's pool.
func (m *Model) forwardFactors() [][]float32 {
	job := &factorJob{m: m, out: make([][]float32, m.d.layers)}
	m.pool.Parallel(m.d.layers, 1, job)
	return job.out
}

// factorJob computes the head factors of a range of layers.
type factorJob struct {
	m   *Model
	out [][]float32
}

func (j *factorJob) Run(lo, hi int) {
	for l := lo; l < hi; l++ {
		j.out[l] = j.m.layerFactors(l)
	}
}

// layerFactors returns layer l's head factors (heads,
// tensor.UpperLen(headDim)): for head h, R_h packed by tensor.PackUpper, with R_h upper triangular and
// R_hᵀR_h = W_hᵀW_h, the Gram matrix of W_o's columns h·headDim …
// (h+1)·headDim-1 summed in float64 over the hidden outputs, factored in
// float64 and rounded to float32.
func (m *Model) layerFactors(l int) []float32 {
	d := m.d
	hd, hidden, qd := d.headDim, d.hidden, d.qDim()
	w, inOut := m.net.outProj(l)
	// cols (qd, hidden): column j of W_o, the weights of input j on each
	// output.
	cols := make([]float32, qd*hidden)
	if inOut { // stored (qd, hidden): a row is a column
		for j := range qd {
			w.Row(cols[j*hidden:(j+1)*hidden], j)
		}
	} else { // stored (hidden, qd)
		row := make([]float32, qd)
		for i := range hidden {
			w.Row(row, i)
			for j, v := range row {
				cols[j*hidden+i] = v
			}
		}
	}
	n := tensor.UpperLen(hd)
	out := make([]float32, d.heads*n)
	g := make([]float64, hd*hd)
	for h := range d.heads {
		c := cols[h*hd*hidden : (h+1)*hd*hidden]
		finite := true
		for a := range hd {
			for b := a; b < hd; b++ {
				v := dot64(c[a*hidden:(a+1)*hidden], c[b*hidden:(b+1)*hidden])
				g[a*hd+b] = v
				finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
			}
		}
		if finite { // else a broken weight: the head's factor stays 0
			cholesky(g, hd)
			tensor.PackUpper(out[h*n:(h+1)*n], g, hd)
		}
	}
	return out
}

// dot64 is Σ x[i]·y[i] in float64.
func dot64(x, y []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i]) * float64(y[i])
		s1 += float64(x[i+1]) * float64(y[i+1])
		s2 += float64(x[i+2]) * float64(y[i+2])
		s3 += float64(x[i+3]) * float64(y[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i]) * float64(y[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// cholesky overwrites the upper triangle g (n, n) of the symmetric
// positive semidefinite G, finite, with the upper triangular R for which
// RᵀR = G (the entries below the diagonal it leaves alone). A pivot that
// is not positive, or below 1e-12 of its diagonal entry (a column of W_h
// that the earlier ones span, up to rounding), gets a zero row, so that a
// head with dependent or zero columns still gets RᵀR = G up to rounding.
func cholesky(g []float64, n int) {
	for j := range n {
		d0 := g[j*n+j]
		s := d0
		for k := range j {
			s -= g[k*n+j] * g[k*n+j]
		}
		if !(s > 1e-12*d0) {
			for c := j; c < n; c++ {
				g[j*n+c] = 0
			}
			continue
		}
		r := math.Sqrt(s)
		g[j*n+j] = r
		for c := j + 1; c < n; c++ {
			t := g[j*n+c]
			for k := range j {
				t -= g[k*n+j] * g[k*n+c]
			}
			g[j*n+c] = t / r
		}
	}
}
