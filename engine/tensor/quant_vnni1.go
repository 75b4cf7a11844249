package tensor

// The VNNI kernels of Q5_1, Q4_1 and IQ4_NL rows (quant_vnni1_amd64.s):
// the fallback types of Q5_K_M, Q4_K_M and IQ4_XS files whose rows are
// not a multiple of 256 (SmolLM2-135M, Qwen2.5-0.5B), and common
// downloads themselves. They take four rows at a time as the Q5_0
// kernels do (runQuads): in ggml's layout four rows a quarter of the
// matrix apart (quads), and in a packed layout (packedQuads; IQ4_NL's is
// Q4_0's, quant.go), and give the bits of the Go twins dotQ5_1, dotQ4_1
// and dotIQ4NL (llama.cpp's).
//
// The packed layout of Q5_1 and Q4_1 (bs 24 and 20 bytes a block) is
// Q5_0's (quant.go) with each block's four mins side by side, so that the
// kernels add the four rows' mins, one chain each, with one load and one
// FMA a block. Each quad of rows, 4·rb bytes, holds
//
//	per whole group of eight blocks (32·bs bytes):
//		the 8 f16 d of row 0, then of rows 1, 2 and 3 (64 bytes);
//		for each block i < 8, the f16 m of rows 0..3 (8 bytes);
//		for each block i < 8, the values of rows 0..3 (vs bytes): Q5_1
//		as Q5_0's (bits 0..15 of rows 0..3's qh, bits 16..31, rows
//		0..3's qs: 80 bytes), Q4_1 rows 0..3's qs (64 bytes)
//	per block left (4·bs bytes): rows 0..3's d (8 bytes), their m (8
//	bytes), the block's values as in a group
//
// and the rows after the last whole quad keep ggml's layout.

// vnniQuads reports whether quantJob.Run computes rows of dt with the
// VNNI kernels four at a time (runQuads): those with a packed layout.
func vnniQuads(dt DType) bool { return useVNNI && packs(dt) }

// q1PackedBlock returns where block b of row i of a packed Q5_1 or Q4_1
// matrix keeps its f16 d and m and its values: byte offsets in m.q. A
// Q5_1 block's bits 0..15 of qh are at vals, its bits 16..31 at vals+8,
// its qs at vals+16; a Q4_1 block's qs at vals. Row i must lie in a whole
// quad.
func (m Matrix) q1PackedBlock(i, b int) (d, mn, vals int) {
	_, bs := m.DType.Block()
	vs := 4*bs - 16 // a block's values, four rows
	rb, groups := m.rowBytes(), m.Cols/32/8
	quad, j := i/4*4*rb, i%4
	row := 16 * j
	if m.DType == Q5_1 {
		row = 2 * j
	}
	if g, k := b/8, b%8; g < groups {
		at := quad + g*32*bs
		return at + 16*j + 2*k, at + 64 + 8*k + 2*j, at + 128 + vs*k + row
	}
	at := quad + groups*32*bs + (b-8*groups)*4*bs
	return at + 2*j, at + 8 + 2*j, at + 16 + row
}

// packQ8_1Quad writes a quad of Q5_1 or Q4_1 rows of nb blocks, in
// (ggml's layout), to out in their packed layout.
func packQ8_1Quad(out, in []byte, dt DType, nb int) {
	_, bs := dt.Block()
	rb := nb * bs
	m := Matrix{Rows: 4, Cols: 32 * nb, DType: dt}
	for j := range 4 {
		for b := range nb {
			blk := in[j*rb+b*bs : j*rb+(b+1)*bs]
			d, mn, v := m.q1PackedBlock(j, b)
			copy(out[d:d+2], blk[0:2])
			copy(out[mn:mn+2], blk[2:4])
			if dt == Q5_1 {
				copy(out[v:v+2], blk[4:6])
				copy(out[v+8:v+10], blk[6:8])
				v += 16 + 14*j // qs: vals+16+16j, v already vals+2j
				copy(out[v:v+16], blk[8:24])
				continue
			}
			copy(out[v:v+16], blk[4:20])
		}
	}
}

// ggmlBlock1 puts block b of row i (in a whole quad) of a packed Q5_1 or
// Q4_1 matrix together in tmp, in ggml's layout.
func (m Matrix) ggmlBlock1(i, b int, tmp []byte) []byte {
	d, mn, v := m.q1PackedBlock(i, b)
	copy(tmp[0:2], m.q[d:])
	copy(tmp[2:4], m.q[mn:])
	if m.DType == Q5_1 {
		copy(tmp[4:6], m.q[v:])
		copy(tmp[6:8], m.q[v+8:])
		copy(tmp[8:24], m.q[v+16+14*(i%4):])
		return tmp[:24]
	}
	copy(tmp[4:20], m.q[v:])
	return tmp[:20]
}

// quadsQ8_1 is quads for Q5_1 and Q4_1 rows, whose kernels take the Q8_1
// activations' scales, sums and values.
func (j *quantJob) quadsQ8_1(k, h, count int) {
	w, a := j.w, j.a
	out, rb, nb := w.Rows, w.rowBytes(), w.Cols/32
	kernel := dotQuadsQ5_1VNNI
	if w.DType == Q4_1 {
		kernel = dotQuadsQ4_1VNNI
	}
	chunk := count
	if j.n > 1 {
		chunk = quadRun
	}
	for c := 0; c < count; c += chunk {
		m := min(chunk, count-c)
		for t := 0; t < j.n; t++ {
			xd, xs, xq := a.d[t*nb:(t+1)*nb], a.s[t*nb:(t+1)*nb], a.qs[t*nb*32:(t+1)*nb*32]
			dst := j.dst[t*out+k+c : t*out+k+c+3*h+m]
			kernel(&dst[0], h, &w.q[(k+c)*rb], rb, &xd[0], &xs[0], &xq[0], nb, m)
		}
	}
}

// packedQuadsQ8_1 is packedQuads for Q5_1 and Q4_1 rows.
func (j *quantJob) packedQuadsQ8_1(first, end int) {
	w, a := j.w, j.a
	out, rb, nb := w.Rows, w.rowBytes(), w.Cols/32
	kernel, kernel2 := dotQuadsPackedQ5_1VNNI, dotQuads2PackedQ5_1VNNI
	if w.DType == Q4_1 {
		kernel, kernel2 = dotQuadsPackedQ4_1VNNI, dotQuads2PackedQ4_1VNNI
	}
	if pairs := (end - first) / 2; j.n == 1 && pairs > 0 {
		dst := j.dst[4*first : 4*(first+2*pairs)]
		kernel2(&dst[0], &w.q[4*first*rb], &a.d[0], &a.s[0], &a.qs[0], nb, pairs)
		first += 2 * pairs
	}
	chunk := end - first
	if j.n > 1 {
		chunk = quadRun
	}
	for c := first; c < end; c += chunk {
		m := min(chunk, end-c)
		for t := 0; t < j.n; t++ {
			xd, xs, xq := a.d[t*nb:(t+1)*nb], a.s[t*nb:(t+1)*nb], a.qs[t*nb*32:(t+1)*nb*32]
			dst := j.dst[t*out+4*c : t*out+4*(c+m)]
			kernel(&dst[0], &w.q[4*c*rb], &xd[0], &xs[0], &xq[0], nb, m)
		}
	}
}
