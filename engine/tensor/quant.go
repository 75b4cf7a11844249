package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The quantized weight types of GGUF files, in ggml's block layouts. Each
// row of a quantized Matrix is a run of blocks; a block holds a fixed number
// of weights (32 or 256) in a fixed number of bytes, little-endian:
//
//	Q8_0 (32 weights, 34 bytes): f16 d, int8 q[32];           w = d·q
//	Q4_0 (32 weights, 18 bytes): f16 d, uint8 qs[16];         w[j] = d·((qs[j]&15)-8), w[j+16] = d·((qs[j]>>4)-8)
//	Q4_1 (32 weights, 20 bytes): f16 d, f16 m, uint8 qs[16];  w[j] = d·(qs[j]&15) + m, w[j+16] = d·(qs[j]>>4) + m
//	Q5_0 (32 weights, 22 bytes): f16 d, uint8 qh[4], uint8 qs[16]; Q4_0's nibbles with a fifth bit (bit j of qh for weight j), offset 16
//	Q5_1 (32 weights, 24 bytes): f16 d, f16 m, uint8 qh[4], uint8 qs[16]; Q5_0's five bits, no offset, plus m
//	IQ4_NL (32 weights, 18 bytes): f16 d, uint8 qs[16];       Q4_0's nibbles through the table iq4nlValues: w = d·iq4nlValues[nibble]
//	Q2_K (256 weights, 84 bytes): uint8 scales[16], uint8 qs[64], f16 d, f16 dmin
//	Q3_K (256 weights, 110 bytes): uint8 hmask[32], uint8 qs[64], uint8 scales[12], f16 d
//	Q4_K (256 weights, 144 bytes): f16 d, f16 dmin, uint8 scales[12], uint8 qs[128]
//	Q5_K (256 weights, 176 bytes): f16 d, f16 dmin, uint8 scales[12], uint8 qh[32], uint8 qs[128]
//	Q6_K (256 weights, 210 bytes): uint8 ql[128], uint8 qh[64], int8 scales[16], f16 d
//	IQ4_XS (256 weights, 136 bytes): f16 d, u16 scales_h, uint8 scales_l[4], uint8 qs[128]
//
// (dequantQ2K, dequantQ3K, dequantQ4K, dequantQ5K, dequantQ6K and
// dequantIQ4XS spell out the 256-weight layouts.)
// A product with quantized weights rounds its activations first, as
// llama.cpp's CPU backend does (each type's vec_dot_type), and sums integer
// products per block: Q8_0, Q4_0, Q5_0 and IQ4_NL weights take activations
// rounded to Q8_0 blocks (32 values, f16 scale amax/127, ties to even),
// Q4_1 and Q5_1 weights Q8_1 blocks (Q8_0's values and scale, plus s =
// d·Σq in binary16, which carries their min), the K-quants and IQ4_XS Q8_K
// blocks (256 values, float32 scale max/-127 where max is the value of
// largest magnitude). F16 weights marked by RoundF16 take activations
// rounded to binary16.
const (
	Q8_0   DType = 16 + iota // ggml Q8_0
	Q4_0                     // ggml Q4_0
	Q4_K                     // ggml Q4_K
	Q5_K                     // ggml Q5_K
	Q6_K                     // ggml Q6_K
	Q4_1                     // ggml Q4_1
	Q5_0                     // ggml Q5_0
	Q5_1                     // ggml Q5_1
	Q2_K                     // ggml Q2_K
	Q3_K                     // ggml Q3_K
	IQ4_NL                   // ggml IQ4_NL
	IQ4_XS                   // ggml IQ4_XS
)

// Block returns the weights per block and bytes per block of the dtype: 1
// and Size() for the float types.
func (d DType) Block() (elems, bytes int) {
	switch d {
	case Q8_0:
		return 32, 34
	case Q4_0:
		return 32, 18
	case Q4_K:
		return 256, 144
	case Q5_K:
		return 256, 176
	case Q6_K:
		return 256, 210
	case Q4_1:
		return 32, 20
	case Q5_0:
		return 32, 22
	case Q5_1:
		return 32, 24
	case Q2_K:
		return 256, 84
	case Q3_K:
		return 256, 110
	case IQ4_NL:
		return 32, 18
	case IQ4_XS:
		return 256, 136
	}
	return 1, d.Size()
}

// Quantized reports whether d is one of the block-quantized types.
func (d DType) Quantized() bool { return d >= Q8_0 && d <= IQ4_XS }

// quantName is the String of the quantized types.
func quantName(d DType) (string, bool) {
	names := map[DType]string{Q8_0: "q8_0", Q4_0: "q4_0", Q4_K: "q4_k", Q5_K: "q5_k", Q6_K: "q6_k",
		Q4_1: "q4_1", Q5_0: "q5_0", Q5_1: "q5_1", Q2_K: "q2_k", Q3_K: "q3_k", IQ4_NL: "iq4_nl", IQ4_XS: "iq4_xs"}
	s, ok := names[d]
	return s, ok
}

// ActRounding names how a product with the matrix rounds its activations,
// as a trace records it: "f32" (not at all), "f16", "q8_0", "q8_1" or
// "q8_k".
func (m Matrix) ActRounding() string {
	switch m.rounding() {
	case roundF16:
		return "f16"
	case roundQ8_0, roundQ8_0Q4:
		return "q8_0"
	case roundQ8_1:
		return "q8_1"
	case roundQ8K:
		return "q8_k"
	}
	return "f32"
}

// NewQuantMatrix wraps data, rows of cols weights in the blocks of a
// quantized dtype, without copying. cols must be a multiple of the block.
func NewQuantMatrix(data []byte, dtype DType, rows, cols int) (Matrix, error) {
	if !dtype.Quantized() {
		return Matrix{}, fmt.Errorf("tensor: %s is not a quantized type", dtype)
	}
	elems, bytes := dtype.Block()
	if rows <= 0 || cols <= 0 || cols%elems != 0 || rows > math.MaxInt/(cols/elems*bytes) {
		return Matrix{}, fmt.Errorf("tensor: bad shape (%d, %d) for %s: rows of whole %d-weight blocks", rows, cols, dtype, elems)
	}
	if want := rows * (cols / elems * bytes); len(data) != want {
		return Matrix{}, fmt.Errorf("tensor: %d bytes for a (%d, %d) %s matrix, want %d", len(data), rows, cols, dtype, want)
	}
	return Matrix{Rows: rows, Cols: cols, DType: dtype, q: data}, nil
}

// The packed layout of Q8_0, Q4_0 and Q5_0 matrices interleaves rows four by
// four, so that the VNNI kernels, which take four rows at a time, read
// the weights as one stream in order: the hardware prefetchers follow
// one stream well, and four rows read side by side from ggml's layout
// badly (quant_avx512_amd64.s). Each quad of rows, 4·rb bytes (rb the
// bytes of a row), holds
//
//	per whole group of eight blocks (32 blocks, 32·bs bytes):
//		the 8 f16 scales of row 0, then of rows 1, 2 and 3 (64 bytes);
//		for each block i < 8: row 0's values of block i, then rows 1, 2, 3's
//	per block left (the row's last blocks mod 8): rows 0..3's blocks, ggml's layout
//
// where bs is the block's bytes (34, 18) and a block's values are bs-2
// bytes. The rows after the last whole quad keep ggml's layout. Every
// weight keeps its bytes and the matrix its size: only their order
// changes.
//
// Q5_0 (bs 22) packs its groups' scales the same way, but a block's four
// rows' 20 bytes of values are split so that the VNNI kernel loads each
// part at once (q5PackedBlock):
//
//	per whole group of eight blocks (32·22 bytes):
//		the 8 f16 scales of rows 0..3 (64 bytes), as above;
//		for each block i < 8 (80 bytes): bits 0..15 of rows 0..3's qh
//		(8 bytes, a row's little-endian uint16 after another), bits
//		16..31 of them (8 bytes), rows 0..3's qs (64 bytes)
//	per block left (88 bytes): rows 0..3's scales (8 bytes), then the
//	block's 80 bytes of values as in a group
//
// so that the 64 bits of each half of qh are a mask of the bytes of the
// 64 bytes of qs whose low (first 8 bytes) or high (next 8) nibbles take
// a fifth bit.

// IQ4_NL (bs 18) packs as Q4_0 does. Q5_1 and Q4_1 pack as Q5_0 does,
// with their mins (quant_vnni1.go).

// PackedLayout reports whether products with dtype's weights are faster
// in the packed layout on this machine: Q8_0, Q4_0, Q5_0, Q5_1, Q4_1 and
// IQ4_NL where the VNNI kernels run. Only there does NewPackedQuantMatrix
// accept them.
func PackedLayout(dtype DType) bool {
	return useVNNI && packs(dtype)
}

// packs reports whether dtype has a packed layout.
func packs(dtype DType) bool {
	return dtype == Q8_0 || dtype == Q4_0 || dtype == Q5_0 || dtype == Q5_1 || dtype == Q4_1 || dtype == IQ4_NL
}

// PackQuantRows writes src, whole rows of cols weights of dtype (Q8_0,
// Q4_0, Q5_0, Q5_1, Q4_1 or IQ4_NL) in ggml's layout, to dst in the
// packed layout. dst has src's length and is src itself or does not
// overlap it.
func PackQuantRows(dst, src []byte, dtype DType, cols int) error {
	if !packs(dtype) {
		return fmt.Errorf("tensor: only Q8_0, Q4_0, Q5_0, Q5_1, Q4_1 and IQ4_NL rows pack, not %s", dtype)
	}
	_, bs := dtype.Block()
	if cols <= 0 || cols%32 != 0 || len(src)%(cols/32*bs) != 0 || len(dst) != len(src) {
		return fmt.Errorf("tensor: %d bytes are not whole %s rows of %d weights", len(src), dtype, cols)
	}
	rb, vs, nb := cols/32*bs, bs-2, cols/32
	var tmp []byte
	if len(src) > 0 && &dst[0] == &src[0] {
		tmp = make([]byte, 4*rb)
	}
	q := 0
	for ; q+4*rb <= len(src); q += 4 * rb {
		in, out := src[q:q+4*rb], dst[q:q+4*rb]
		if tmp != nil {
			in = tmp
			copy(in, out)
		}
		switch dtype {
		case Q5_0:
			packQ5_0Quad(out, in, nb)
			continue
		case Q5_1, Q4_1:
			packQ8_1Quad(out, in, dtype, nb)
			continue
		}
		o := 0
		for g := 0; g+8 <= nb; g += 8 {
			for j := range 4 {
				for k := range 8 {
					blk := in[j*rb+(g+k)*bs:]
					out[o+16*j+2*k], out[o+16*j+2*k+1] = blk[0], blk[1]
					copy(out[o+64+(4*k+j)*vs:o+64+(4*k+j+1)*vs], blk[2:bs])
				}
			}
			o += 32 * bs
		}
		for b := nb / 8 * 8; b < nb; b++ {
			for j := range 4 {
				copy(out[o:o+bs], in[j*rb+b*bs:])
				o += bs
			}
		}
	}
	copy(dst[q:], src[q:])
	return nil
}

// packQ5_0Quad writes a quad of Q5_0 rows of nb blocks, in (ggml's
// layout), to out in Q5_0's packed layout.
func packQ5_0Quad(out, in []byte, nb int) {
	rb := nb * 22
	m := Matrix{Rows: 4, Cols: 32 * nb, DType: Q5_0}
	for j := range 4 {
		for b := range nb {
			blk := in[j*rb+b*22:]
			scale, lo, hi, qs := m.q5PackedBlock(j, b)
			copy(out[scale:scale+2], blk[0:2])
			copy(out[lo:lo+2], blk[2:4])
			copy(out[hi:hi+2], blk[4:6])
			copy(out[qs:qs+16], blk[6:22])
		}
	}
}

// q5PackedBlock returns where block b of row i of a packed Q5_0 matrix
// keeps its f16 scale, bits 0..15 and 16..31 of its qh (little-endian)
// and its 16 bytes of qs: byte offsets in m.q. Row i must lie in a whole
// quad.
func (m Matrix) q5PackedBlock(i, b int) (scale, lo, hi, qs int) {
	rb, groups := m.rowBytes(), m.Cols/32/8
	quad, j := i/4*4*rb, i%4
	if g, k := b/8, b%8; g < groups {
		at := quad + g*32*22
		v := at + 64 + 80*k
		return at + 16*j + 2*k, v + 2*j, v + 8 + 2*j, v + 16 + 16*j
	}
	at := quad + groups*32*22 + (b-8*groups)*88
	return at + 2*j, at + 8 + 2*j, at + 16 + 2*j, at + 24 + 16*j
}

// NewPackedQuantMatrix is NewQuantMatrix for data that PackQuantRows
// rewrote, on a machine where PackedLayout(dtype) holds.
func NewPackedQuantMatrix(data []byte, dtype DType, rows, cols int) (Matrix, error) {
	if !PackedLayout(dtype) {
		return Matrix{}, fmt.Errorf("tensor: %s rows are not packed on this machine (PackedLayout)", dtype)
	}
	m, err := NewQuantMatrix(data, dtype, rows, cols)
	m.packed = err == nil
	return m, err
}

// packedBlock returns where block b of row i of a packed Q8_0, Q4_0 or
// IQ4_NL matrix keeps its f16 scale and its values: byte offsets in m.q.
// Row i must lie in a whole quad.
func (m Matrix) packedBlock(i, b int) (scale, vals int) {
	_, bs := m.DType.Block()
	rb, groups := m.rowBytes(), m.Cols/32/8
	quad, j := i/4*4*rb, i%4
	if g, k := b/8, b%8; g < groups {
		at := quad + g*32*bs
		return at + 16*j + 2*k, at + 64 + (4*k+j)*(bs-2)
	}
	at := quad + groups*32*bs + ((b-8*groups)*4+j)*bs
	return at, at + 2
}

// ggmlBlock returns block b of row i in ggml's layout: in place, or for a
// packed matrix put together in tmp (the block's bytes) where it is not.
func (m Matrix) ggmlBlock(i, b int, tmp []byte) []byte {
	_, bs := m.DType.Block()
	if !m.packed || i >= m.Rows/4*4 {
		return m.quantRow(i)[b*bs : (b+1)*bs]
	}
	if m.DType == Q5_1 || m.DType == Q4_1 {
		return m.ggmlBlock1(i, b, tmp)
	}
	if m.DType == Q5_0 {
		scale, lo, hi, qs := m.q5PackedBlock(i, b)
		copy(tmp[0:2], m.q[scale:])
		copy(tmp[2:4], m.q[lo:])
		copy(tmp[4:6], m.q[hi:])
		copy(tmp[6:22], m.q[qs:])
		return tmp[:22]
	}
	scale, vals := m.packedBlock(i, b)
	copy(tmp[:2], m.q[scale:])
	copy(tmp[2:bs], m.q[vals:])
	return tmp[:bs]
}

// RoundF16 returns m (an F16 matrix) marked so that products with it round
// their activations to binary16 first, as llama.cpp does for F16 weights.
func (m Matrix) RoundF16() Matrix {
	if m.DType == F16 {
		m.roundF16 = true
	}
	return m
}

// SumBlocks returns m (a Q4_0 matrix) marked so that its products add
// each block's 32 integer products into one sum and fuse it with the
// scales by one multiply-add a block, acc = fma(float(Σ), d_w·d_x, acc),
// as llama.cpp's CPU backend does for the Q4_0 matrices it repacks (those
// of a multiple of 8 rows, on x86 with AVX2: ggml_gemv_q4_0_8x8_q8_0 and
// ggml_gemm_q4_0_8x8_q8_0). Unmarked, a Q4_0 product sums eight lanes a
// block as ggml_vec_dot_q4_0_q8_0 does (dotQ4_0). The two orders differ
// in the last bits of about one output in five.
func (m Matrix) SumBlocks() Matrix {
	if m.DType == Q4_0 {
		m.blockSums = true
	}
	return m
}

// BlockSums reports whether m is marked SumBlocks.
func (m Matrix) BlockSums() bool { return m.blockSums }

// rowBytes is the byte length of one quantized row.
func (m Matrix) rowBytes() int {
	elems, bytes := m.DType.Block()
	return m.Cols / elems * bytes
}

// quantRow returns the blocks of row i in ggml's layout: not for the rows
// of a packed matrix's quads (ggmlBlock takes a block out of any row).
func (m Matrix) quantRow(i int) []byte {
	rb := m.rowBytes()
	return m.q[i*rb : (i+1)*rb]
}

// dequantRow writes row i as float32: dst (Cols).
func (m Matrix) dequantRow(dst []float32, i int) {
	elems, _ := m.DType.Block()
	var tmp [256]byte
	for b := 0; b < m.Cols/elems; b++ {
		blk, out := m.ggmlBlock(i, b, tmp[:]), dst[b*elems:(b+1)*elems]
		switch m.DType {
		case Q8_0:
			dequantQ8_0(out, blk)
		case Q4_0:
			dequantQ4_0(out, blk)
		case Q4_K:
			dequantQ4K(out, blk)
		case Q5_K:
			dequantQ5K(out, blk)
		case Q6_K:
			dequantQ6K(out, blk)
		case Q4_1:
			dequantQ4_1(out, blk)
		case Q5_0:
			dequantQ5_0(out, blk)
		case Q5_1:
			dequantQ5_1(out, blk)
		case Q2_K:
			dequantQ2K(out, blk)
		case Q3_K:
			dequantQ3K(out, blk)
		case IQ4_NL:
			dequantIQ4NL(out, blk)
		case IQ4_XS:
			dequantIQ4XS(out, blk)
		}
	}
}

// quantAt returns weight (i, j) of a quantized matrix.
func (m Matrix) quantAt(i, j int) float32 {
	elems, _ := m.DType.Block()
	var out [256]float32
	b := j / elems
	var tmp [256]byte
	sub := Matrix{Rows: 1, Cols: elems, DType: m.DType, q: m.ggmlBlock(i, b, tmp[:])}
	sub.dequantRow(out[:elems], 0)
	return out[j%elems]
}

func f16At(b []byte) float32 { return F16ToF32(binary.LittleEndian.Uint16(b)) }

// dequantQ8_0: out[j] = d·q[j].
func dequantQ8_0(out []float32, blk []byte) {
	d := f16At(blk)
	for j := range 32 {
		out[j] = d * float32(int8(blk[2+j]))
	}
}

// dequantQ4_0: low nibbles are weights 0..15, high nibbles 16..31, both
// offset by 8.
func dequantQ4_0(out []float32, blk []byte) {
	d := f16At(blk)
	for j := range 16 {
		q := blk[2+j]
		out[j] = d * float32(int(q&15)-8)
		out[j+16] = d * float32(int(q>>4)-8)
	}
}

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j (of 8) from a
// K-quant's 12 scale bytes: sub-blocks 0..3 keep theirs in the low 6 bits
// of bytes j and j+4; 4..7 in the nibbles of byte j+4, with their top two
// bits in the high bits of bytes j-4 and j.
func scaleMinK4(j int, s []byte) (sc, mn uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&15 | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// dequantQ4K: 8 sub-blocks of 32 weights, w = d·sc·q - dmin·m with q a
// nibble; each 32 bytes of qs hold two sub-blocks, the first in the low
// nibbles.
func dequantQ4K(out []float32, blk []byte) {
	d, dmin := f16At(blk), f16At(blk[2:])
	scales, qs := blk[4:16], blk[16:144]
	for p := range 4 { // pairs of sub-blocks
		sc1, m1 := scaleMinK4(2*p, scales)
		sc2, m2 := scaleMinK4(2*p+1, scales)
		d1, o1 := d*float32(sc1), dmin*float32(m1)
		d2, o2 := d*float32(sc2), dmin*float32(m2)
		q := qs[32*p : 32*p+32]
		for l := range 32 {
			out[64*p+l] = d1*float32(q[l]&15) - o1
			out[64*p+32+l] = d2*float32(q[l]>>4) - o2
		}
	}
}

// dequantQ5K is dequantQ4K with a fifth bit per weight: for sub-block pair
// p, bit 2p of qh[l] tops the low-nibble weight l and bit 2p+1 the
// high-nibble one.
func dequantQ5K(out []float32, blk []byte) {
	d, dmin := f16At(blk), f16At(blk[2:])
	scales, qh, qs := blk[4:16], blk[16:48], blk[48:176]
	for p := range 4 {
		sc1, m1 := scaleMinK4(2*p, scales)
		sc2, m2 := scaleMinK4(2*p+1, scales)
		d1, o1 := d*float32(sc1), dmin*float32(m1)
		d2, o2 := d*float32(sc2), dmin*float32(m2)
		q := qs[32*p : 32*p+32]
		for l := range 32 {
			lo := q[l]&15 | (qh[l]>>(2*p)&1)<<4
			hi := q[l]>>4 | (qh[l]>>(2*p+1)&1)<<4
			out[64*p+l] = d1*float32(lo) - o1
			out[64*p+32+l] = d2*float32(hi) - o2
		}
	}
}

// dequantQ6K: 16 sub-blocks of 16 weights, w = d·scale·(q-32) with q six
// bits: in each half of 128 weights, ql's 64 bytes hold the low nibbles
// (weights l and l+32 in the low nibbles of ql[l] and ql[l+32], l+64 and
// l+96 in their high nibbles) and qh's 32 bytes the top two bits (qh[l]
// bits 0-1, 2-3, 4-5, 6-7 for l, l+32, l+64, l+96).
func dequantQ6K(out []float32, blk []byte) {
	ql, qh, sc := blk[0:128], blk[128:192], blk[192:208]
	d := f16At(blk[208:])
	for h := range 2 {
		l6, h6, s6, o := ql[64*h:], qh[32*h:], sc[8*h:], out[128*h:]
		for l := range 32 {
			is := l / 16
			q1 := int(l6[l]&15|(h6[l]&3)<<4) - 32
			q2 := int(l6[l+32]&15|(h6[l]>>2&3)<<4) - 32
			q3 := int(l6[l]>>4|(h6[l]>>4&3)<<4) - 32
			q4 := int(l6[l+32]>>4|(h6[l]>>6&3)<<4) - 32
			o[l] = d * float32(int8(s6[is])) * float32(q1)
			o[l+32] = d * float32(int8(s6[is+2])) * float32(q2)
			o[l+64] = d * float32(int8(s6[is+4])) * float32(q3)
			o[l+96] = d * float32(int8(s6[is+6])) * float32(q4)
		}
	}
}
