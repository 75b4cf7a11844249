package tensor

// The loops behind MatMul and MatMulT: pure Go (used everywhere without
// the assembly, and for shapes it does not take), and bounds-checked
// wrappers of the assembly kernels, which trust their arguments.

// wideRow is the row length from which dot products keep more lanes than
// eight: sixteen for float32 weights, thirty-two for 16-bit ones, so that
// a long row has independent FMA chains enough to stream at memory speed
// (two registers of lanes for float32, two to four for 16-bit weights,
// which carry half the bytes per term). Short rows keep the eight lanes
// of one register, nearer a plain loop's order, and lose no speed: the
// core overlaps their chains from one row to the next.
const wideRow = 256

// dotF32 returns Σ w[j]·x[j] over len(w) in sixteen lanes (len(w) ≥
// wideRow) or eight, lane l summing the terms j ≡ l (mod lanes) in order;
// see lanes for the final sum.
func dotF32(w, x []float32) float32 {
	x = x[:len(w)]
	var s [16]float32
	if len(w) >= wideRow {
		i := 0
		for ; i+16 <= len(w); i += 16 {
			ww := w[i : i+16 : i+16]
			xx := x[i : i+16 : i+16]
			for l := range s {
				s[l] += ww[l] * xx[l]
			}
		}
		for ; i < len(w); i++ {
			s[i&15] += w[i] * x[i]
		}
		return lanes(&s)
	}
	for i, v := range w {
		s[i&7] += v * x[i]
	}
	return lanes(&s)
}

// dotBF16 is dotF32 with bfloat16 weights widened as they are read, and
// thirty-two lanes for long rows (see lanes32).
func dotBF16(w []uint16, x []float32) float32 {
	x = x[:len(w)]
	if len(w) >= wideRow {
		var s [32]float32
		for i, v := range w {
			s[i&31] += BF16ToF32(v) * x[i]
		}
		return lanes32(&s)
	}
	var s [16]float32
	for i, v := range w {
		s[i&7] += BF16ToF32(v) * x[i]
	}
	return lanes(&s)
}

// dotF16 is dotF32 with binary16 weights widened as they are read, and
// thirty-two lanes for long rows (see lanes32).
func dotF16(w []uint16, x []float32) float32 {
	x = x[:len(w)]
	if len(w) >= wideRow {
		var s [32]float32
		for i, h := range w {
			s[i&31] += F16ToF32(h) * x[i]
		}
		return lanes32(&s)
	}
	var s [16]float32
	for i, h := range w {
		s[i&7] += F16ToF32(h) * x[i]
	}
	return lanes(&s)
}

// lanes adds sixteen partial sums (the last eight zero for short rows) as
// the assembly does: the two halves lane by lane, a[l] = s[l] + s[l+8],
// then ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)), the order of AVX2 horizontal
// adds. Adding +0 to a short row's lanes changes nothing.
func lanes(s *[16]float32) float32 {
	var a [8]float32
	for l := range a {
		a[l] = s[l] + s[l+8]
	}
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

// lanes32 adds the thirty-two partial sums of a long row of 16-bit
// weights, lane l holding the terms j ≡ l (mod 32) in order (a row of
// 16 mod 32 terms ends in lanes 0 to 15): first b[l] = s[l] + s[l+16],
// the two registers (AVX-512) or register pairs (AVX2) of lanes, then b
// as lanes adds sixteen.
func lanes32(s *[32]float32) float32 {
	var b [16]float32
	for l := range b {
		b[l] = s[l] + s[l+16]
	}
	return lanes(&b)
}

// axpyF32 computes d[k] += a·w[k].
func axpyF32(d []float32, a float32, w []float32) {
	w = w[:len(d)]
	for k := range d {
		d[k] += a * w[k]
	}
}

// axpyBF16 computes d[k] += a·w[k] for bfloat16 w.
func axpyBF16(d []float32, a float32, w []uint16) {
	w = w[:len(d)]
	for k := range d {
		d[k] += a * BF16ToF32(w[k])
	}
}

// axpyF16 computes d[k] += a·w[k] for binary16 w.
func axpyF16(d []float32, a float32, w []uint16) {
	w = w[:len(d)]
	for k := range d {
		d[k] += a * F16ToF32(w[k])
	}
}

// dotRows computes dst[r] = W[row+r]·x for r < len(dst), with the assembly
// kernel of sixteen lanes (thirty-two for 16-bit weights; Cols ≥ wideRow,
// a multiple of 16) or eight (a multiple of 8). The AVX-512 kernels also
// bring side's memory into the caches as they go (side may be nil; the
// other kernels leave it).
func (m Matrix) dotRows(dst []float32, row int, x []float32, side *sideLines) {
	k, rows := m.Cols, len(dst)
	if rows == 0 {
		return
	}
	x = x[:k]
	lo, hi := row*k, (row+rows)*k
	wide := k >= wideRow
	if wide && useAVX512 {
		m.dotRowsZ(dst, lo, hi, x, side)
		return
	}
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		if wide {
			dotRowsF32(&dst[0], &w[0], k, &x[0], k, rows)
		} else {
			dotRows8F32(&dst[0], &w[0], k, &x[0], k, rows)
		}
	case BF16:
		w := m.u16[lo:hi]
		if wide {
			dotRowsBF16(&dst[0], &w[0], k, &x[0], k, rows)
		} else {
			dotRows8BF16(&dst[0], &w[0], k, &x[0], k, rows)
		}
	case F16:
		w := m.u16[lo:hi]
		if wide {
			dotRowsF16(&dst[0], &w[0], k, &x[0], k, rows)
		} else {
			dotRows8F16(&dst[0], &w[0], k, &x[0], k, rows)
		}
	}
}

// xRegTerms is how many terms of x the AVX-512 decode kernels keep in
// registers for a whole call (dotRowsZX*: 26 zmm registers of sixteen),
// so that the first xRegTerms weights of every row are multiplied without
// reading x again. Rows of at least that length take them.
const xRegTerms = 416

// dotRowsZ is dotRows with the AVX-512 kernels (Cols ≥ wideRow, a
// multiple of 16) over the weight elements [lo, hi): rows r and h+r
// together in two streams (dotRows2Z*, h = half the rows), an odd last
// row alone (dotRowsZ*, dotRowsZX*). side's share of lines is per row, so
// it asks for twice as many a pass of two rows.
func (m Matrix) dotRowsZ(dst []float32, lo, hi int, x []float32, side *sideLines) {
	k, rows := m.Cols, len(dst)
	if pairs := rows / 2; pairs > 0 {
		if side != nil {
			side.per *= 2
		}
		mid := lo + 2*pairs*k
		switch m.DType {
		case F32:
			w := m.f32[lo:mid]
			dotRows2ZF32(&dst[0], &w[0], k, &x[0], k, pairs, side)
		case BF16:
			w := m.u16[lo:mid]
			dotRows2ZBF16(&dst[0], &w[0], k, &x[0], k, pairs, side)
		case F16:
			w := m.u16[lo:mid]
			dotRows2ZF16(&dst[0], &w[0], k, &x[0], k, pairs, side)
		}
		if rows%2 == 0 {
			return
		}
		dst, lo = dst[rows-1:], mid
	}
	xr := k >= xRegTerms
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		if xr {
			dotRowsZXF32(&dst[0], &w[0], k, &x[0], k, 1, side)
		} else {
			dotRowsZF32(&dst[0], &w[0], k, &x[0], k, 1, side)
		}
	case BF16:
		w := m.u16[lo:hi]
		if xr {
			dotRowsZXBF16(&dst[0], &w[0], k, &x[0], k, 1, side)
		} else {
			dotRowsZBF16(&dst[0], &w[0], k, &x[0], k, 1, side)
		}
	case F16:
		w := m.u16[lo:hi]
		if xr {
			dotRowsZXF16(&dst[0], &w[0], k, &x[0], k, 1, side)
		} else {
			dotRowsZF16(&dst[0], &w[0], k, &x[0], k, 1, side)
		}
	}
}

// zBlock is the tile of the AVX-512 prefill kernel: rows weight rows
// against groups of group rows of x, 24 accumulators either way. Float32
// weights take eight rows by three (dot8x3ZF32), 16-bit ones, which keep
// two accumulators per dot product, four by three (dot4x3Z*).
func (m Matrix) zBlock() (rows, group int) {
	if m.DType == F32 {
		return 8, 3
	}
	return 4, 3
}

// dotZ computes dst[(3g+t)·ldd + r] = W[row+r]·x[3g+t] for g < groups, t
// < 3, r < the rows of m.zBlock(), with the AVX-512 kernel (Cols ≥
// wideRow, a multiple of 16). Float32 rows longer than longRow go in
// chunks of about kChunk terms, at most accGroups groups at a time, the
// lanes carried between chunks in acc (accGroups·384 floats, 48 KiB).
func (m Matrix) dotZ(dst []float32, ldd, row int, x []float32, groups int, acc []float32) {
	k := m.Cols
	rows, s := m.zBlock()
	dst, x = dst[:(s*groups-1)*ldd+rows], x[:s*groups*k]
	lo, hi := row*k, (row+rows)*k
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		if !m.chunked() {
			dot8x3ZF32(&dst[0], ldd, &w[0], k, &x[0], k, k, groups, nil, 0)
			return
		}
		chunks := (k + kChunk - 1) / kChunk
		kc := (k/chunks + 15) &^ 15
		acc = acc[:accGroups*384]
		for g0 := 0; g0 < groups; g0 += accGroups {
			g := min(accGroups, groups-g0)
			for c := 0; c < k; c += kc {
				mode := 0
				if c > 0 {
					mode |= 1 // go on from the lanes of the chunk before
				}
				if c+kc < k {
					mode |= 2 // leave the lanes for the next chunk
				}
				dot8x3ZF32(&dst[3*g0*ldd], ldd, &w[c], k, &x[3*g0*k+c], k, min(kc, k-c), g, &acc[0], mode)
			}
		}
	case BF16:
		w := m.u16[lo:hi]
		dot4x3ZBF16(&dst[0], ldd, &w[0], k, &x[0], k, k, groups)
	case F16:
		w := m.u16[lo:hi]
		dot4x3ZF16(&dst[0], ldd, &w[0], k, &x[0], k, k, groups)
	}
}

// chunked reports whether the prefill tile takes m's rows in chunks of
// about kChunk terms: float32 rows longer than longRow.
func (m Matrix) chunked() bool { return m.DType == F32 && m.Cols > longRow }

// A float32 weight row longer than longRow terms goes through the
// prefill tile in chunks of about kChunk terms, so that the tile's eight
// rows of a chunk (16 KiB) stay in L1 beside the rows of x streaming
// past; each chunk runs accGroups groups of x (or fewer) before the next
// takes them over. On Zen 5, SmolLM2-135M's MLP down projection (1536
// terms, so three chunks) ran 25 % faster so (106 -> 132-135 GFLOP/s);
// chunks of 768 terms gained 15 %, of 384 as much as 512, of 256 less;
// its 576-term rows in two chunks ran 20 % slower than whole (the lanes
// moved to and from acc cost more than L1 saves), hence longRow. With
// accGroups 32 (the 28 groups of its tile of x in one pass, so each chunk
// of the weights read once) it ran at 165 GFLOP/s, with 16 at 159-161,
// with 8 at 154, with 4 at 141.
const (
	longRow   = 768
	kChunk    = 512
	accGroups = 32
)

// wideBlock is the number of weight rows the AVX2 prefill kernel of long
// rows takes at once: two for float32 weights (dot2x3F32), one for 16-bit
// ones (dot1x3*, whose thirty-two lanes take four accumulators per dot
// product).
func (m Matrix) wideBlock() int {
	if m.DType == F32 {
		return 2
	}
	return 1
}

// dotWide3 computes dst[(3g+t)·ldd + r] = W[row+r]·x[3g+t] for g <
// groups, t < 3, r < m.wideBlock(), with the AVX2 kernel of long rows
// (Cols ≥ wideRow, a multiple of 16).
func (m Matrix) dotWide3(dst []float32, ldd, row int, x []float32, groups int) {
	k, b := m.Cols, m.wideBlock()
	dst, x = dst[:(3*groups-1)*ldd+b], x[:3*groups*k]
	lo, hi := row*k, (row+b)*k
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		dot2x3F32(&dst[0], ldd, &w[0], k, &x[0], k, k, groups)
	case BF16:
		w := m.u16[lo:hi]
		dot1x3BF16(&dst[0], ldd, &w[0], &x[0], k, k, groups)
	case F16:
		w := m.u16[lo:hi]
		dot1x3F16(&dst[0], ldd, &w[0], &x[0], k, k, groups)
	}
}

// dot4x3 computes dst[(3g+t)·ldd + 4b + r] = W[row+4b+r]·x[3g+t] for b <
// blocks, g < groups, t < 3, r < 4, with the eight-lane assembly kernel
// (Cols < wideRow, a multiple of 8) in one call.
func (m Matrix) dot4x3(dst []float32, ldd, row int, x []float32, groups, blocks int) {
	k := m.Cols
	dst, x = dst[:(3*groups-1)*ldd+4*blocks], x[:3*groups*k]
	lo, hi := row*k, (row+4*blocks)*k
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		dot4x3x8F32(&dst[0], ldd, &w[0], k, &x[0], k, k, groups, blocks)
	case BF16:
		w := m.u16[lo:hi]
		dot4x3x8BF16(&dst[0], ldd, &w[0], k, &x[0], k, k, groups, blocks)
	case F16:
		w := m.u16[lo:hi]
		dot4x3x8F16(&dst[0], ldd, &w[0], k, &x[0], k, k, groups, blocks)
	}
}

// axpyRows adds a[i] times row row+i of W, columns col..col+len(d)-1, to
// d for each i in order (len d a positive multiple of 8), with the
// assembly kernel.
func (m Matrix) axpyRows(d, a []float32, row, col int) {
	ld, rows := m.Cols, len(a)
	if rows == 0 {
		return
	}
	lo, hi := row*ld+col, (row+rows-1)*ld+col+len(d)
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		axpyRowsF32(&d[0], &a[0], &w[0], ld, rows, len(d))
	case BF16:
		w := m.u16[lo:hi]
		axpyRowsBF16(&d[0], &a[0], &w[0], ld, rows, len(d))
	case F16:
		w := m.u16[lo:hi]
		axpyRowsF16(&d[0], &a[0], &w[0], ld, rows, len(d))
	}
}

// panel1Z computes dst[c] = Σ_i x[i]·W[i][col+c] for c < 64, with the
// AVX-512 kernel; x is Rows long.
func (m Matrix) panel1Z(dst []float32, x []float32, col int) {
	in, ld := m.Rows, m.Cols
	dst, x = dst[:64], x[:in]
	lo, hi := col, (in-1)*ld+col+64
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		panel1x64ZF32(&dst[0], &x[0], &w[0], ld, in)
	case BF16:
		w := m.u16[lo:hi]
		panel1x64ZBF16(&dst[0], &x[0], &w[0], ld, in)
	case F16:
		w := m.u16[lo:hi]
		panel1x64ZF16(&dst[0], &x[0], &w[0], ld, in)
	}
}

// panel3Z computes dst[t·ldd + c] = Σ_i x[t][i]·W[i][col+c] for t < 3,
// c < 64, with the AVX-512 kernel; x rows are Rows long.
func (m Matrix) panel3Z(dst []float32, ldd int, x []float32, col int) {
	in, ld := m.Rows, m.Cols
	dst, x = dst[:2*ldd+64], x[:3*in]
	lo, hi := col, (in-1)*ld+col+64
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		panel3x64ZF32(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	case BF16:
		w := m.u16[lo:hi]
		panel3x64ZBF16(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	case F16:
		w := m.u16[lo:hi]
		panel3x64ZF16(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	}
}

// panel computes the tile dst[t·ldd + c] = Σ_i x[t][i]·W[i][col+c] for
// t < 6, c < 16, with the assembly kernel; x rows are Rows long.
func (m Matrix) panel(dst []float32, ldd int, x []float32, col int) {
	in, ld := m.Rows, m.Cols
	dst, x = dst[:5*ldd+16], x[:6*in]
	lo, hi := col, (in-1)*ld+col+16
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		panel6x16F32(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	case BF16:
		w := m.u16[lo:hi]
		panel6x16BF16(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	case F16:
		w := m.u16[lo:hi]
		panel6x16F16(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	}
}

// panelZ computes the tile dst[t·ldd + c] = Σ_i x[t][i]·W[i][col+c] for
// t < 6, c < 64, with the AVX-512 kernel; x rows are Rows long.
func (m Matrix) panelZ(dst []float32, ldd int, x []float32, col int) {
	in, ld := m.Rows, m.Cols
	dst, x = dst[:5*ldd+64], x[:6*in]
	lo, hi := col, (in-1)*ld+col+64
	switch m.DType {
	case F32:
		w := m.f32[lo:hi]
		panel6x64ZF32(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	case BF16:
		w := m.u16[lo:hi]
		panel6x64ZBF16(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	case F16:
		w := m.u16[lo:hi]
		panel6x64ZF16(&dst[0], ldd, &x[0], in, &w[0], ld, in)
	}
}
