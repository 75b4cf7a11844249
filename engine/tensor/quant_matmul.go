package tensor

import (
	"encoding/binary"
	"math"
)

// qActs holds a product's activations rounded for its weight type, one
// set per row t of x.
type qActs struct {
	f      []float32 // (n, cols): activations rounded to binary16, for RoundF16 weights
	d      []float32 // (n, cols/block): the scale of each Q8_0, Q8_1 or Q8_K block
	s      []float32 // (n, cols/32): Q8_1 only, each block's s = d·Σq as ggml stores it (binary16), widened
	qs     []int8    // (n, cols): the rounded values
	bsums  []int32   // (n, cols/16): Q8_K sums of each 16 values
	s32    []int16   // (n, cols/32): Q8_K sums of each 32 values, for the Q4_K and Q5_K kernels
	xv     []byte    // (n, cols/32, 64): per Q8_0 block its values, then its eight lane offsets (int32), for the VNNI kernels
	rounds int       // roundings done, for tests that check MatMuls shares them
}

// quantJob computes the rows [lo, hi) of a product with quantized weights
// from activations already rounded: indices are weight rows.
type quantJob struct {
	dst []float32
	w   Matrix
	a   *qActs
	n   int
}

// needsRounding reports whether products with m round their activations.
func (m Matrix) needsRounding() bool { return m.roundF16 || m.DType.Quantized() }

// A rounding is how a product rounds its activations: two weights with
// the same rounding take the same rounded activations.
type rounding int

const (
	roundNone   rounding = iota // float32 activations as they are
	roundF16                    // binary16 (F16 weights marked RoundF16)
	roundQ8_0                   // Q8_0 blocks, VNNI offsets for Q8_0 weights
	roundQ8_0Q4                 // Q8_0 blocks, VNNI offsets for Q4_0 weights
	roundQ8K                    // Q8_K blocks (the K-quants, IQ4_XS)
	roundQ8_1                   // Q8_1 blocks (Q4_1, Q5_1)
)

// rounding returns how products with m round their activations.
func (m Matrix) rounding() rounding {
	switch {
	case m.roundF16:
		return roundF16
	case m.DType == Q8_0 || m.DType == Q5_0 || m.DType == IQ4_NL:
		return roundQ8_0 // Q5_0 and IQ4_NL read only the values and scales: they share Q8_0's
	case m.DType == Q4_0:
		return roundQ8_0Q4
	case m.DType == Q4_1 || m.DType == Q5_1:
		return roundQ8_1
	case m.DType.Quantized():
		return roundQ8K
	}
	return roundNone
}

// matMulRound is MatMul for weights whose products round their
// activations (quantized, or F16 marked by RoundF16). The rounding is
// done once per call, then the rows are split over the pool (p may be
// nil). For F16 weights it is the ordinary F16 product of the rounded
// activations. For quantized weights, the reference loop (matMulQuantRef):
//
//	for t := 0; t < n; t++ {
//		xq := x[t] rounded to Q8_0 (Q8_0, Q4_0, Q5_0, IQ4_NL weights), Q8_1 (Q4_1, Q5_1) or Q8_K blocks (K-quants, IQ4_XS)
//		for i := 0; i < W.Rows; i++ {
//			var s float32
//			for each block b of row i:
//				s += (scale of W's block b)·(scale of xq's block b)·Σ_j q_W[j]·q_x[j]  (integer sum)
//			dst[t][i] = s
//		}
//	}
//
// where K-quant blocks sum per sub-block with their 6-bit (Q6_K: 8-bit,
// Q2_K: 4-bit) scales and subtract dmin·Σ min·(sum of x's sub-block), and
// Q4_1 and Q5_1 blocks add their min times the Q8_1 block's s.
func (p *Pool) matMulRound(dst []float32, w Matrix, x []float32, n int) {
	p.matMulsRound(x[:n*w.Cols], Product{Dst: dst, W: w})
}

// A Product is one weight of MatMuls and the destination of its product.
type Product struct {
	Dst []float32 // (n, W.Rows)
	W   Matrix    // (out, in), as for MatMul
	// Warm is memory that a decode (one row of x) brings into the caches
	// while it streams W, a few lines a weight row, for what comes next
	// to find there (attention, the layer's keys and values): a hint,
	// taken by the AVX-512 kernels of float32 and 16-bit weights, for at
	// most 16 ranges (see warm.go).
	Warm [][]float32
}

// MatMuls computes pr.Dst = x pr.Wᵀ for every product pr, as MatMul
// does, for weights that share one input x (n, in): the q, k and v
// projections of a normed hidden state, or gate and up. Products that
// round their activations (quantized weights, F16 ones marked RoundF16)
// round x once for a run of weights that round it the same way, instead
// of once each; every result is MatMul's, bit for bit. No Dst may overlap
// x.
func (p *Pool) MatMuls(x []float32, prods ...Product) {
	rounds := false
	for _, pr := range prods {
		checkMatMul("MatMuls", pr.Dst, pr.W.Rows, pr.W.Cols, x)
		rounds = rounds || pr.W.needsRounding()
	}
	if p != nil && !rounds && len(prods) > 1 && len(prods) <= maxJoined {
		p.joinedMatMuls(x, prods)
		return
	}
	for _, pr := range prods {
		if !pr.W.needsRounding() {
			p.matMul(pr.Dst, pr.W, x, pr.Warm)
		}
	}
	if rounds {
		p.matMulsRound(x, prods...)
	}
}

// joinedMatMuls runs products that round nothing, sharing x, as one job
// on the pool (see matMulsJob): one hand-off and one wait for all, and
// the last pieces of one product run beside the first of the next.
func (p *Pool) joinedMatMuls(x []float32, prods []Product) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j := &p.mms
	j.x, j.n = x, len(x)/prods[0].W.Cols
	blocks := 0
	for i := range j.prods {
		j.first[i] = blocks
		j.prods[i] = Product{}
		if i < len(prods) {
			j.prods[i] = prods[i]
			blocks += (prods[i].W.Rows + rowBlock - 1) / rowBlock
		}
	}
	j.first[maxJoined] = blocks
	p.parallel(blocks, grain(rowBlock*prods[0].W.Cols*j.n), j)
	*j = matMulsJob{}
}

// matMulsRound computes the products of prods whose weights round their
// activations, with the pool's rounded-activation buffers (p may be nil:
// a lone call allocates its own).
func (p *Pool) matMulsRound(x []float32, prods ...Product) {
	var a *qActs
	if p == nil {
		a = new(qActs)
	} else {
		p.mu.Lock()
		defer p.mu.Unlock()
		a = &p.qa
	}
	last := roundNone
	for _, pr := range prods {
		r := pr.W.rounding()
		if r == roundNone {
			continue
		}
		if r != last {
			a.round(pr.W, x)
			last = r
		}
		p.matMulRounded(a, pr.Dst, pr.W, len(x)/pr.W.Cols)
	}
}

// Roundings returns how many times p has rounded activations for
// products with quantized or RoundF16 weights: a model's tests count them
// to see that products sharing an input share its rounding (MatMuls).
func (p *Pool) Roundings() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.qa.rounds
}

// round rounds x (n, w.Cols) as products with w take it.
func (a *qActs) round(w Matrix, x []float32) {
	a.rounds++
	if w.roundF16 {
		growF(&a.f, len(x))
		roundToF16(a.f, x)
		return
	}
	a.quantize(w.DType, x, len(x)/w.Cols, w.Cols)
}

// roundToF16 writes each of x rounded to binary16 and widened back to dst
// (len(x)): F16ToF32(F32ToF16), in AVX where present.
func roundToF16(dst, x []float32) {
	n := 0
	if useAsm && len(x) >= 8 {
		n = len(x) / 8 * 8
		roundF16AVX(&dst[0], &x[0], n)
	}
	for i := n; i < len(x); i++ {
		dst[i] = F16ToF32(F32ToF16(x[i]))
	}
}

// matMulRounded is the product with w of the activations a holds, rounded
// for w (p.mu held when p is not nil).
func (p *Pool) matMulRounded(a *qActs, dst []float32, w Matrix, n int) {
	if w.roundF16 {
		f := a.f[:n*w.Cols]
		w.roundF16 = false
		if p == nil {
			matMulRows(dst, w, f, n, 0, w.Rows, nil)
			return
		}
		p.mm = matMulJob{dst: dst, x: f, w: w, n: n}
		p.parallel((w.Rows+rowBlock-1)/rowBlock, grain(rowBlock*w.Cols*n), &p.mm)
		p.mm = matMulJob{}
		return
	}
	if p == nil {
		job := quantJob{dst: dst, w: w, a: a, n: n}
		job.Run(0, w.Rows)
		return
	}
	p.qmm = quantJob{dst: dst, w: w, a: a, n: n}
	p.parallel(w.Rows, grain(w.Cols*n), &p.qmm)
	p.qmm = quantJob{}
}

func (j *quantJob) Run(lo, hi int) {
	w := j.w
	if vnniQuads(w.DType) && (!w.blockSums || w.packed) { // the Go twins' bits (dotQ5_0, dotQ5_1, dotQ4_1, dotIQ4NL, dotQ4_0Blocks)
		j.runQuads(lo, hi)
		return
	}
	if _, ok := kKernels[w.DType]; ok && useAsm {
		j.runKAsm(lo, hi)
		return
	}
	j.rows(lo, hi)
}

// rows computes the rows [lo, hi) one at a time, in ggml's layout or, for
// a packed matrix, from rows that do not lie in a whole quad.
func (j *quantJob) rows(lo, hi int) {
	w, a := j.w, j.a
	in, out := w.Cols, w.Rows
	for i := lo; i < hi; i++ {
		row := w.quantRow(i)
		for t := 0; t < j.n; t++ {
			xq := a.qs[t*in : (t+1)*in]
			var s float32
			switch w.DType {
			case Q8_0, Q4_0:
				s = dotQ8Act(w, row, a.d[t*in/32:(t+1)*in/32], xq)
			case Q4_K:
				s = dotQ4K(row, a.d[t*in/256:(t+1)*in/256], xq, a.bsums[t*in/16:(t+1)*in/16])
			case Q5_K:
				s = dotQ5K(row, a.d[t*in/256:(t+1)*in/256], xq, a.bsums[t*in/16:(t+1)*in/16])
			case Q6_K:
				s = dotQ6K(row, a.d[t*in/256:(t+1)*in/256], xq)
			default:
				s = j.dotMore(row, t, xq)
			}
			j.dst[t*out+i] = s
		}
	}
}

// dotQ8Act is a row (its blocks in row) of the Q8_0 or Q4_0 matrix m
// against Q8_0 activations (scales xd, values xq): dotQ8_0, dotQ4_0 or
// dotQ4_0Blocks, in AVX2 where present.
func dotQ8Act(m Matrix, row []byte, xd []float32, xq []int8) float32 {
	switch {
	case m.DType == Q8_0 && useAsm:
		return dotQ8_0AVX2(&row[0], &xd[0], &xq[0], len(xd))
	case m.DType == Q8_0:
		return dotQ8_0(row, xd, xq)
	case m.blockSums && useAsm:
		return dotQ4_0BlocksAVX2(&row[0], &xd[0], &xq[0], len(xd))
	case m.blockSums:
		return dotQ4_0Blocks(row, xd, xq)
	case useAsm:
		return dotQ4_0AVX2(&row[0], &xd[0], &xq[0], len(xd))
	}
	return dotQ4_0(row, xd, xq)
}

// runQuads computes the rows [lo, hi) with the VNNI kernels four at a
// time (Q8_0, Q4_0, Q5_0, Q5_1, Q4_1, IQ4_NL). In ggml's layout the four
// rows are lo+k+j·q for j < 4 (q a quarter of the rows: adjacent rows
// read side by side are streams the prefetchers follow badly; measured
// on our AMD EPYC, 4 times slower from memory than rows a quarter of the
// matrix apart), then the at most three rows left one at a time. A
// packed matrix holds its rows four by four (quant.go): the quads that
// start in [lo, hi), the last possibly ending past hi, which then no
// other range computes, then the rows after the last quad. The bits are
// those of one row at a time.
func (j *quantJob) runQuads(lo, hi int) {
	if !j.w.packed {
		q := (hi - lo) / 4
		j.quads(lo, q, q)
		lo += 4 * q
	} else {
		first, end := (lo+3)/4, min((hi+3)/4, j.w.Rows/4)
		j.packedQuads(first, end)
		lo = max(lo, 4*end)
	}
	if j.w.blockSums { // rows outside a quad: their one-row kernel
		j.rows(lo, hi)
		return
	}
	for k := lo; k < hi; k++ {
		j.quads(k, 0, 1)
	}
}

// quads computes rows k+p+i·h for p < count and i < 4 in ggml's layout,
// for every row of x (h may be 0: one row, computed four times). With
// several rows of x (a prefill) it goes by chunks of quadRun quads, each
// chunk against every row of x while its weights are in cache.
func (j *quantJob) quads(k, h, count int) {
	if count == 0 {
		return
	}
	w, a := j.w, j.a
	out, rb, nb := w.Rows, w.rowBytes(), w.Cols/32
	kernel := dotQuadsQ8_0VNNI
	switch w.DType {
	case Q4_0:
		kernel = dotQuadsQ4_0VNNI
	case Q5_0:
		kernel = dotQuadsQ5_0VNNI
	case IQ4_NL:
		kernel = dotQuadsIQ4NLVNNI
	case Q4_1, Q5_1: // Q8_1 activations: quadsQ8_1
		j.quadsQ8_1(k, h, count)
		return
	}
	chunk := count
	if j.n > 1 {
		chunk = quadRun
	}
	for c := 0; c < count; c += chunk {
		m := min(chunk, count-c)
		for t := 0; t < j.n; t++ {
			xd, xv := a.d[t*nb:(t+1)*nb], a.xv[t*nb*64:(t+1)*nb*64]
			dst := j.dst[t*out+k+c : t*out+k+c+3*h+m]
			kernel(&dst[0], h, &w.q[(k+c)*rb], rb, &xd[0], &xv[0], nb, m)
		}
	}
}

// packedQuads computes the quads [first, end) of a packed matrix (rows
// 4·first to 4·end), for every row of x, by chunks as quads does. A
// decode (one row of x) reads the range's two halves side by side, in
// two streams (dotQuads2Packed*), an odd last quad alone.
func (j *quantJob) packedQuads(first, end int) {
	w, a := j.w, j.a
	out, rb, nb := w.Rows, w.rowBytes(), w.Cols/32
	kernel, kernel2 := dotQuadsPackedQ8_0VNNI, dotQuads2PackedQ8_0VNNI
	switch w.DType {
	case Q5_1, Q4_1: // Q8_1 activations
		j.packedQuadsQ8_1(first, end)
		return
	case IQ4_NL:
		kernel, kernel2 = dotQuadsPackedIQ4NLVNNI, dotQuads2PackedIQ4NLVNNI
	case Q4_0:
		kernel, kernel2 = dotQuadsPackedQ4_0VNNI, dotQuads2PackedQ4_0VNNI
		if w.blockSums {
			kernel, kernel2 = dotQuadsPackedQ4_0BVNNI, dotQuads2PackedQ4_0BVNNI
		}
	case Q5_0:
		kernel, kernel2 = dotQuadsPackedQ5_0VNNI, dotQuads2PackedQ5_0VNNI
	}
	if pairs := (end - first) / 2; j.n == 1 && pairs > 0 {
		dst := j.dst[4*first : 4*(first+2*pairs)]
		kernel2(&dst[0], &w.q[4*first*rb], &a.d[0], &a.xv[0], nb, pairs)
		first += 2 * pairs
	}
	chunk := end - first
	if j.n > 1 {
		chunk = quadRun
	}
	for c := first; c < end; c += chunk {
		m := min(chunk, end-c)
		for t := 0; t < j.n; t++ {
			xd, xv := a.d[t*nb:(t+1)*nb], a.xv[t*nb*64:(t+1)*nb*64]
			dst := j.dst[t*out+4*c : t*out+4*(c+m)]
			kernel(&dst[0], &w.q[4*c*rb], &xd[0], &xv[0], nb, m)
		}
	}
}

// quadRun is how many quads of rows a prefill takes against every row of
// x at a time: 32 quads of 1536 Q8_0 weights are 200 KB, in L2.
const quadRun = 32

// quantize rounds x (n, cols) for weights of dtype: Q8_0 blocks for Q8_0,
// Q4_0, Q5_0 and IQ4_NL (with the VNNI kernels' layout for Q8_0's, Q5_0's
// and IQ4_NL's the same as Q8_0's, so that they can share it), Q8_1 blocks
// for Q4_1 and Q5_1, Q8_K blocks for the K-quants and IQ4_XS.
func (a *qActs) quantize(dtype DType, x []float32, n, cols int) {
	growI8(&a.qs, len(x))
	switch dtype {
	case Q8_0, Q4_0, Q5_0, IQ4_NL:
		growF(&a.d, len(x)/32)
		if useVNNI && len(x) >= 32 {
			growXV(&a.xv, 2*len(x))
			shift := 7
			if dtype == Q4_0 {
				shift = 3
			}
			quantQ8_0Z(&x[0], &a.qs[0], &a.d[0], &a.xv[0], shift, len(x)/32)
			return
		}
		for b := 0; b < len(x)/32; b++ {
			a.d[b] = quantizeQ8_0(a.qs[32*b:32*b+32], x[32*b:32*b+32])
		}
		if useVNNI {
			a.vnni(dtype)
		}
		return
	case Q4_1, Q5_1:
		growF(&a.d, len(x)/32)
		growF(&a.s, len(x)/32)
		if useVNNI && len(x) >= 32 {
			quantQ8_1Z(&x[0], &a.qs[0], &a.d[0], &a.s[0], len(x)/32)
			return
		}
		for b := 0; b < len(x)/32; b++ {
			a.d[b], a.s[b] = quantizeQ8_1(a.qs[32*b:32*b+32], x[32*b:32*b+32])
		}
		return
	}
	growF(&a.d, len(x)/256)
	if cap(a.bsums) < len(x)/16 {
		a.bsums = make([]int32, len(x)/16)
	}
	a.bsums = a.bsums[:len(x)/16]
	for b := 0; b < len(x)/256; b++ {
		a.d[b] = quantizeQ8K(a.qs[256*b:256*b+256], a.bsums[16*b:16*b+16], x[256*b:256*b+256])
	}
	if cap(a.s32) < len(x)/32 {
		a.s32 = make([]int16, len(x)/32)
	}
	a.s32 = a.s32[:len(x)/32]
	for j := range a.s32 {
		a.s32[j] = int16(a.bsums[2*j] + a.bsums[2*j+1]) // |Σ| ≤ 32·128
	}
}

// vnni lays out the Q8_0 activations for the VNNI kernels, 64 bytes a
// block: its 32 values, then its eight lane offsets as little-endian
// int32, lane m's offset minus the sum
// of values 4m..4m+3 times 128 for Q8_0 weights (the kernels offset them
// by 128) or 8 for Q4_0 (the kernels take the nibbles without their -8).
func (a *qActs) vnni(dtype DType) {
	shift := 7 // Q8_0 weights, and Q5_0 and IQ4_NL ones, which share their rounding
	if dtype == Q4_0 {
		shift = 3
	}
	blocks := len(a.qs) / 32
	growXV(&a.xv, 64*blocks)
	for b := range blocks {
		q, v := a.qs[32*b:32*b+32], a.xv[64*b:64*b+64]
		for j, x := range q {
			v[j] = byte(x)
		}
		for m := range 8 {
			off := -(int32(q[4*m]) + int32(q[4*m+1]) + int32(q[4*m+2]) + int32(q[4*m+3])) << shift
			binary.LittleEndian.PutUint32(v[32+4*m:], uint32(off))
		}
	}
}

// quantizeQ8_0 rounds a block of 32 values as ggml's quantize_row_q8_0
// (its AVX2 form): amax = max |x|, q = round-to-even(x·(127/amax)), scale
// amax/127 stored as binary16. It returns the scale as widened from
// binary16.
func quantizeQ8_0(q []int8, x []float32) float32 {
	var amax float32
	for _, v := range x[:32] {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	const shift = 0x1.8p23 // float32 sums with it are whole numbers, rounded ties to even
	q = q[:32]
	for j, v := range x[:32] {
		// |v·id| ≤ 127: adding and taking away 1.5·2^23 in float32 is
		// math.RoundToEven of it, without the call. Where id overflowed
		// (subnormal x) the value is ±Inf, which becomes -128 as in
		// ggml's AVX2 code (VCVTPS2DQ's "integer indefinite", saturated).
		r := float32(float32(v*id)+shift) - shift
		if !(r >= -128 && r <= 127) {
			r = -128
		}
		q[j] = int8(r)
	}
	return F16ToF32(F32ToF16(d))
}

// quantizeQ8K rounds a block of 256 values as ggml's quantize_row_q8_K:
// max is the value of largest magnitude (the first of equals), iscale =
// -127/max, q = min(127, round-to-even(iscale·x)), scale 1/iscale in
// float32; bsums are the sums of each 16 q.
func quantizeQ8K(q []int8, bsums []int32, x []float32) float32 {
	var amax, mx float32
	for _, v := range x[:256] {
		if av := float32(math.Abs(float64(v))); av > amax {
			amax, mx = av, v
		}
	}
	if amax == 0 {
		clear(q[:256])
		clear(bsums[:16])
		return 0
	}
	iscale := -127 / mx
	for j, v := range x[:256] {
		q[j] = int8(min(127, math.RoundToEven(float64(iscale*v))))
	}
	for g := range 16 {
		var s int32
		for _, v := range q[16*g : 16*g+16] {
			s += int32(v)
		}
		bsums[g] = s
	}
	return 1 / iscale
}

// dotQ8_0 is the Q8_0 row w against Q8_0 activations (scales xd, values
// xq), summed in the order of the AVX2 and VNNI kernels: eight lanes, lane
// m holding the exact integer sum of the products of values 4m..4m+3 of
// each block, accumulated by one fused multiply-add per block, then the
// lanes added as ggml's hsum_float_8, ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7))
// (llama.cpp's ggml_vec_dot_q8_0_q8_0 and tinyBLAS compute these sums so):
//
//	for each block b:
//		for m := range 8:
//			acc[m] = FMA32(d_w[b]·xd[b], Σ_{j=4m}^{4m+3} w[b][j]·xq[b][j], acc[m])
func dotQ8_0(w []byte, xd []float32, xq []int8) float32 {
	var acc [8]float32
	for b, dx := range xd {
		blk, q := w[34*b:34*b+34], xq[32*b:32*b+32]
		d := f16At(blk) * dx
		for m := range acc {
			var sum int32
			for j := 4 * m; j < 4*m+4; j++ {
				sum += int32(int8(blk[2+j])) * int32(q[j])
			}
			acc[m] = FMA32(d, float32(sum), acc[m])
		}
	}
	return HSum8(&acc)
}

// dotQ4_0 is the Q4_0 row w against Q8_0 activations, in dotQ8_0's order
// (lanes 0..3 the low nibbles, weights 0..15; lanes 4..7 the high ones).
func dotQ4_0(w []byte, xd []float32, xq []int8) float32 {
	var acc [8]float32
	for b, dx := range xd {
		blk, q := w[18*b:18*b+18], xq[32*b:32*b+32]
		d := f16At(blk) * dx
		for m := range acc {
			var sum int32
			for j := 4 * m; j < 4*m+4; j++ {
				v := blk[2+j%16]
				if j >= 16 {
					v >>= 4
				}
				sum += int32(int(v&15)-8) * int32(q[j])
			}
			acc[m] = FMA32(d, float32(sum), acc[m])
		}
	}
	return HSum8(&acc)
}

// dotQ4_0Blocks is the Q4_0 row w against Q8_0 activations in the order
// of llama.cpp's repacked Q4_0 kernels (SumBlocks): each block's 32
// products summed exactly, then one fused multiply-add a block,
//
//	for each block b:
//		acc = FMA32(float(Σ_j (q_w[b][j]-8)·xq[b][j]), d_w[b]·xd[b], acc)
func dotQ4_0Blocks(w []byte, xd []float32, xq []int8) float32 {
	var acc float32
	for b, dx := range xd {
		blk, q := w[18*b:18*b+18], xq[32*b:32*b+32]
		var sum int32
		for j, v := range blk[2:18] {
			sum += (int32(v&15)-8)*int32(q[j]) + (int32(v>>4)-8)*int32(q[j+16])
		}
		acc = FMA32(float32(sum), f16At(blk)*dx, acc)
	}
	return acc
}

// FMA32 is a·b + c rounded once to float32, as a float32 fused
// multiply-add instruction (VFMADD231PS) computes it. It rounds the float64
// fused multiply-add, which is the single correct rounding unless that
// result lies exactly halfway between two float32s (or in float32's
// subnormal range); then the product, exact in float64, is added with
// the sum rounded "to odd" (an inexact result keeps an odd last bit),
// which makes the final rounding to float32 the correct one.
func FMA32(a, b, c float32) float32 {
	r := math.FMA(float64(a), float64(b), float64(c))
	const low = 1<<29 - 1 // the float64 bits below float32's precision
	if bits := math.Float64bits(r); bits&low != 1<<28 && math.Abs(r) >= 0x1p-126 || r != r || math.IsInf(r, 0) {
		return float32(r)
	}
	p, z := float64(a)*float64(b), float64(c)
	s := p + z
	bv := s - p
	if e := (p - (s - bv)) + (z - bv); e != 0 { // s's rounding error
		bits := math.Float64bits(s)
		if bits&1 == 0 {
			if (e > 0) == (s > 0) {
				bits++
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}

// dotQ4K is the Q4_K row w against Q8_K activations in the order of
// llama.cpp's AVX2 ggml_vec_dot_q4_K_q8_K: per block eight int32 lanes,
// lane m the sum over the four 32-byte runs p of qs of sc[2p]·Σ (low
// nibble)·x and sc[2p+1]·Σ (high nibble)·x over bytes 4m..4m+3 (x the
// activations of sub-blocks 2p and 2p+1), and four min lanes (q4KMins);
//
//	acc[m] = fma32(d_x·d_w, lane m, acc[m])
//	accm[k] = fma32(-d_x·dmin_w, min lane k, accm[k])
//
// the result HSum8(acc) + ((accm0+accm2) + (accm1+accm3)).
func dotQ4K(w []byte, xd []float32, xq []int8, bsums []int32) float32 {
	var acc [8]float32
	var accm [4]float32
	for b, dx := range xd {
		blk, q8 := w[144*b:144*b+144], xq[256*b:256*b+256]
		scales, qs := blk[4:16], blk[16:144]
		var lanes [8]int32
		for p := range 4 {
			sc1, _ := scaleMinK4(2*p, scales)
			sc2, _ := scaleMinK4(2*p+1, scales)
			q := qs[32*p : 32*p+32]
			for i, v := range q {
				lanes[i/4] += int32(sc1)*int32(v&15)*int32(q8[64*p+i]) + int32(sc2)*int32(v>>4)*int32(q8[64*p+32+i])
			}
		}
		ml := q4KMins(scales, bsums[16*b:16*b+16])
		d, dmin := dx*f16At(blk), -dx*f16At(blk[2:])
		for m, v := range lanes {
			acc[m] = FMA32(d, float32(v), acc[m])
		}
		for k, v := range ml {
			accm[k] = FMA32(dmin, float32(v), accm[k])
		}
	}
	return HSum8(&acc) + ((accm[0] + accm[2]) + (accm[1] + accm[3]))
}

// q4KMins are a Q4_K block's four min lanes as ggml forms them: lane k =
// m[2k]·S[2k] + m[2k+1]·S[2k+1], m the 6-bit mins and S[j] the sum of the
// activations of sub-block j (bs: the block's sums of 16).
func q4KMins(scales []byte, bs []int32) [4]int32 {
	var ml [4]int32
	for k := range ml {
		_, mA := scaleMinK4(2*k, scales)
		_, mB := scaleMinK4(2*k+1, scales)
		ml[k] = int32(mA)*(bs[4*k]+bs[4*k+1]) + int32(mB)*(bs[4*k+2]+bs[4*k+3])
	}
	return ml
}

// HSum8 adds eight lanes as ggml's hsum_float_8 (and tinyBLAS's hsum,
// and ggml_vec_soft_max_f32's AVX2 code) add them:
// ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).
func HSum8(a *[8]float32) float32 {
	r0, r1, r2, r3 := a[0]+a[4], a[1]+a[5], a[2]+a[6], a[3]+a[7]
	return (r0 + r2) + (r1 + r3)
}

// dotQ5K is the Q5_K row w against Q8_K activations in the order of
// llama.cpp's AVX2 ggml_vec_dot_q5_K_q8_K: dotQ4K's eight lanes with
// five-bit values (the fifth bit of value l of sub-block j is bit j of
// qh[l]), acc[m] = fma32(d_x·d_w, lane m, acc[m]); the mins as one
// integer per block, Σ_j m_j·S_j (S_j the activations' sum over
// sub-block j), accumulated as summs = fma32(-d_x·dmin_w, Σ, summs); the
// result hsum_float_8(acc) + summs.
func dotQ5K(w []byte, xd []float32, xq []int8, bsums []int32) float32 {
	var acc [8]float32
	var summs float32
	for b, dx := range xd {
		blk, q8, bs := w[176*b:176*b+176], xq[256*b:256*b+256], bsums[16*b:16*b+16]
		scales, qh, qs := blk[4:16], blk[16:48], blk[48:176]
		var lanes [8]int32
		var mins int32
		for p := range 4 {
			sc1, m1 := scaleMinK4(2*p, scales)
			sc2, m2 := scaleMinK4(2*p+1, scales)
			q := qs[32*p : 32*p+32]
			for l, v := range q {
				lo := v&15 | (qh[l]>>(2*p)&1)<<4
				hi := v>>4 | (qh[l]>>(2*p+1)&1)<<4
				lanes[l/4] += int32(sc1)*int32(lo)*int32(q8[64*p+l]) + int32(sc2)*int32(hi)*int32(q8[64*p+32+l])
			}
			mins += int32(m1)*(bs[4*p]+bs[4*p+1]) + int32(m2)*(bs[4*p+2]+bs[4*p+3])
		}
		d, dmin := dx*f16At(blk), -dx*f16At(blk[2:])
		for m, v := range lanes {
			acc[m] = FMA32(d, float32(v), acc[m])
		}
		summs = FMA32(dmin, float32(mins), summs)
	}
	return HSum8(&acc) + summs
}

// dotQ6K is the Q6_K row w against Q8_K activations in the order of
// llama.cpp's AVX2 ggml_vec_dot_q6_K_q8_K (GGUF users compare against it;
// one flipped rounding of a later Q8_K input can move a probability by
// 1e-2): per block eight int32 lanes, lane m the sum over the block's
// eight chunks of 32 values (chunk c = 32 weights of one half: ql low
// nibbles 0..31, 32..63, high nibbles 0..31, 32..63) of the chunk's
// sub-block scale times Σ (q-32)·x over the chunk's values 4m..4m+3;
// acc[m] = fma32(d_x·d_w, lane m, acc[m]); the result
// ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).
func dotQ6K(w []byte, xd []float32, xq []int8) float32 {
	var acc [8]float32
	for b, dx := range xd {
		blk, q8 := w[210*b:210*b+210], xq[256*b:256*b+256]
		ql, qh, sc := blk[0:128], blk[128:192], blk[192:208]
		var lanes [8]int32
		for h := range 2 {
			l6, h6, x := ql[64*h:], qh[32*h:], q8[128*h:]
			for c := range 4 { // chunks: values 32c..32c+31 of the half
				for i := range 32 {
					lo := l6[32*(c%2)+i]
					if c >= 2 {
						lo >>= 4
					}
					q := int32(lo&15|(h6[i]>>(2*c)&3)<<4) - 32
					s := int32(int8(sc[8*h+2*c+i/16]))
					lanes[i/4] += s * q * int32(x[32*c+i])
				}
			}
		}
		d := dx * f16At(blk[208:])
		for m, v := range lanes {
			acc[m] = FMA32(d, float32(v), acc[m])
		}
	}
	return HSum8(&acc)
}

func growF(buf *[]float32, n int) {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
}

func growXV(buf *[]byte, n int) {
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	*buf = (*buf)[:n]
}

func growI8(buf *[]int8, n int) {
	if cap(*buf) < n {
		*buf = make([]int8, n)
	}
	*buf = (*buf)[:n]
}

// kRun is how many bytes of K-quant rows the AVX2 kernels take against
// every row of x at a time: the rows stay in L2 from one row of x to the
// next.
const kRun = 64 << 10

// kKernel computes dst[r] for r < rows: the rows at w+r·rb (rb bytes
// apart, in ggml's layout) against row t of the rounded activations a,
// in values a row.
type kKernel func(dst *float32, w *byte, rb, rows int, a *qActs, t, in int)

// kKernels are the assembly kernels of the K-quants and IQ4_XS rows
// (Q8_K activations): [0] AVX2, [1] AVX-512, which gives the same bits.
var kKernels = map[DType][2]kKernel{
	Q2_K:   {withBsums(dotQ2KAVX2), withBsums(dotQ2KAVX512)},
	Q3_K:   {withQ8K(dotQ3KAVX2), withQ8K(dotQ3KAVX512)},
	Q4_K:   {withS32(dotQ4KAVX2), withS32(dotQ4KAVX512)},
	Q5_K:   {withS32(dotQ5KAVX2), withS32(dotQ5KAVX512)},
	Q6_K:   {withQ8K(dotQ6KAVX2), withQ8K(dotQ6KAVX512)},
	IQ4_XS: {withQ8K(dotIQ4XSAVX2), withQ8K(dotIQ4XSAVX512)},
}

// withQ8K, withS32 and withBsums pass a kernel row t's scales and values
// and, for Q4_K and Q5_K, its sums of each 32 values, for Q2_K those of
// each 16.
func withQ8K(f func(dst *float32, w *byte, rb, rows int, xd *float32, xq *int8, n int)) kKernel {
	return func(dst *float32, w *byte, rb, rows int, a *qActs, t, in int) {
		f(dst, w, rb, rows, &a.d[t*in/256], &a.qs[t*in], in/256)
	}
}

func withS32(f func(dst *float32, w *byte, rb, rows int, s32 *int16, xd *float32, xq *int8, n int)) kKernel {
	return func(dst *float32, w *byte, rb, rows int, a *qActs, t, in int) {
		f(dst, w, rb, rows, &a.s32[t*in/32], &a.d[t*in/256], &a.qs[t*in], in/256)
	}
}

func withBsums(f func(dst *float32, w *byte, rb, rows int, bsums *int32, xd *float32, xq *int8, n int)) kKernel {
	return func(dst *float32, w *byte, rb, rows int, a *qActs, t, in int) {
		f(dst, w, rb, rows, &a.bsums[t*in/16], &a.d[t*in/256], &a.qs[t*in], in/256)
	}
}

// runKAsm computes the K-quant and IQ4_XS rows [lo, hi) with their
// assembly kernels (kKernels: AVX-512 where present), by runs of rows
// against every row of x.
func (j *quantJob) runKAsm(lo, hi int) {
	w, a := j.w, j.a
	in, out, rb := w.Cols, w.Rows, w.rowBytes()
	k := kKernels[w.DType][0]
	if useAVX512 {
		k = kKernels[w.DType][1]
	}
	run := max(1, kRun/rb)
	for r := lo; r < hi; r += run {
		e := min(r+run, hi)
		for t := 0; t < j.n; t++ {
			k(&j.dst[t*out+r], &w.q[r*rb], rb, e-r, a, t, in)
		}
	}
}
