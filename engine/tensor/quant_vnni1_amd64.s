//go:build amd64 && !purego

#include "textflag.h"
#include "quant_vnni_amd64.h"

// AVX-512 VNNI dot products of four Q5_1, Q4_1 or IQ4_NL weight rows in
// ggml's layout, read a quarter of the matrix apart as dotQuadsQ5_0VNNI
// reads Q5_0 rows (quant_avx512_amd64.s, whose scheme they follow: per
// block eight int32 lanes by VPDPBUSD, exact, then one FMA per lane with
// the block's d_w·d_x): for each row the bits of dotQ5_1, dotQ4_1 or
// dotIQ4NL (quant_more.go, the order of llama.cpp's AVX2
// ggml_vec_dot_q5_1_q8_1, ggml_vec_dot_q4_1_q8_1 and
// ggml_vec_dot_iq4_nl_q8_0).
//
// Q5_1 and Q4_1 weights are unsigned (0..31, 0..15), so VPDPBUSD takes
// them as they are against the Q8_1 activations' values (32 bytes a
// block, qActs.qs), each lane starting from 0. Their mins go apart, as
// llama.cpp sums them: summs = fma(m_w, s_x, summs) block after block,
// here the four rows' chains in the four lanes of X28 (MINS4), added to
// each row's hsum_float_8 at the end.
//
// IQ4_NL weights are table values (-127..113): VPSHUFB takes them, plus
// 128, from the nibbles (iq4Table), against the Q8_0 activations' VNNI
// layout with Q8_0 weights' lane offsets (-128·Σx: qActs.xv, shift 7), so
// the lanes are the exact integers. llama.cpp sums IQ4_NL blocks in
// pairs, the even blocks' lanes in one accumulator and the odd ones' in
// another, added lane by lane before hsum_float_8; a last odd block is
// one integer, fma(Σ, d_w·d_x, sum): Y4, Y9, Y14, Y15 hold the four rows'
// even accumulators, Y28..Y31 their odd ones, and ISUM1 does the last.
//
// Registers: SI, SI+R14, R9, R9+R14 the four rows (R14 = h·rb), AX the
// activations' values, DX their scales, DI (Q5_1, Q4_1) their sums s,
// R15 the blocks left, R10 dst, R11 4·h, R12 the first row of the next
// quad, R13 rb, BX the quads left. Y16..Y19 a group's scale products,
// Y20..Y27 the indices of blocks 0..7, Y6 0x0F, Y7 0x10 (Q5_1) or the
// table (IQ4_NL), Y8 the nibble shifts; Y0..Y3 a block's weights, then
// (their lanes summed) its scale products picked for the FMAs, which
// leaves Y28..Y31 free for the mins (Q5_1, Q4_1) or the odd blocks
// (IQ4_NL).
//
// The packed kernels (below: DOTQUADSP1, DOTQUADSP1X2, the IQ4_NL ones)
// and quantQ8_1Z, the Q8_1 rounding in AVX-512, follow.
//
// Plan 9 operand order: VPDPBUSD s, u, acc computes acc += Σ u·s (u
// unsigned, s signed bytes); VFMADD231PS b, a, acc computes acc += a·b;
// VPERMPS table, index, dst; VPSHUFB index, table, dst.

// iq4Table: iq4nlValues plus 128 (1, 24, 45, 63, 79, 93, 106, 118, 129,
// 141, 153, 166, 181, 197, 217, 241), in both 16-byte lanes.
DATA iq4Table<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA iq4Table<>+8(SB)/8, $0xf1d9c5b5a6998d81
DATA iq4Table<>+16(SB)/8, $0x766a5d4f3f2d1801
DATA iq4Table<>+24(SB)/8, $0xf1d9c5b5a6998d81
GLOBL iq4Table<>(SB), RODATA|NOPTR, $32

// V1SCALES8 leaves in ys the scale products d_w·d_x of the eight blocks
// of the row at r (BLOCK bytes a block, the f16 d first) against the
// activations' scales at DX.
#define V1SCALES8(BLOCK, r, ys) \
	ROWSCALES8(BLOCK, r, X0, X1, X2) \
	VCVTPH2PS X0, Y0 \
	VMULPS (DX), Y0, ys

// V1SCALE1 leaves in every lane of ys the scale product of the block
// whose d is at addr against the activations' scale at xoff(DX).
#define V1SCALE1(addr, xoff, ys) \
	VPBROADCASTW addr, X0 \
	VCVTPH2PS X0, X0 \
	VMULSS xoff(DX), X0, X0 \
	VBROADCASTSS X0, ys

// V1SCALES1 is V1SCALE1 for block i (BLOCK bytes) of the four rows, into
// Y16..Y19.
#define V1SCALES1(BLOCK, i) \
	V1SCALE1(i*BLOCK(SI), i*4, Y16) \
	V1SCALE1(i*BLOCK(SI)(R14*1), i*4, Y17) \
	V1SCALE1(i*BLOCK(R9), i*4, Y18) \
	V1SCALE1(i*BLOCK(R9)(R14*1), i*4, Y19)

// The weights of a block as unsigned bytes, weights 0..15 in the low
// half of y and 16..31 in the high one. WQ41: the 16 bytes of nibbles at
// addr. WQ51: the nibbles at 4+addr under the fifth bits of the 32-bit
// qh at addr (VPADDB of 0x10 under their mask). WNL: the table values
// of the nibbles at addr, plus 128.
#define WQ41(addr, y) \
	VBROADCASTI128 addr, y \
	VPSRLVW Y8, y, y \
	VPAND Y6, y, y

#define WQ51(addr, y) \
	KMOVD addr, K1 \
	VBROADCASTI128 4+addr, y \
	VPSRLVW Y8, y, y \
	VPAND Y6, y, y \
	VPADDB Y7, y, K1, y

#define WNL(addr, y) \
	VBROADCASTI128 addr, y \
	VPSRLVW Y8, y, y \
	VPAND Y6, y, y \
	VPSHUFB y, Y7, y

// The activations of block i, Y5 their values and Y10..Y13 where the
// four rows' lanes start: XQ8_1 from the Q8_1 values at AX (32 bytes a
// block), from 0; XV from the VNNI layout at AX (64 bytes a block), from
// the block's lane offsets.
#define XQ8_1(i) \
	VMOVDQU i*32(AX), Y5 \
	VPXOR Y10, Y10, Y10 \
	VPXOR Y11, Y11, Y11 \
	VPXOR Y12, Y12, Y12 \
	VPXOR Y13, Y13, Y13

#define XV(i) \
	VMOVDQU i*64(AX), Y5 \
	VMOVDQU i*64+32(AX), Y10 \
	VMOVDQA Y10, Y11 \
	VMOVDQA Y10, Y12 \
	VMOVDQA Y10, Y13

// LANES4 leaves in Y10..Y13 the int32 lanes of block i of four rows: the
// weights at a0..a3 by W, the activations by X.
#define LANES4(W, X, a0, a1, a2, a3, i) \
	X(i) \
	W(a0, Y0) \
	W(a1, Y1) \
	W(a2, Y2) \
	W(a3, Y3) \
	VPDPBUSD Y5, Y0, Y10 \
	VPDPBUSD Y5, Y1, Y11 \
	VPDPBUSD Y5, Y2, Y12 \
	VPDPBUSD Y5, Y3, Y13

// V1BLOCK adds block i of a group of four rows into acc0..acc3: the
// lanes of LANES4 as floats times the scale products, lane i of
// Y16..Y19 picked by the index yi (all lanes i).
#define V1BLOCK(W, X, a0, a1, a2, a3, i, yi, acc0, acc1, acc2, acc3) \
	LANES4(W, X, a0, a1, a2, a3, i) \
	VCVTDQ2PS Y10, Y10 \
	VCVTDQ2PS Y11, Y11 \
	VCVTDQ2PS Y12, Y12 \
	VCVTDQ2PS Y13, Y13 \
	VPERMPS Y16, yi, Y0 \
	VPERMPS Y17, yi, Y1 \
	VPERMPS Y18, yi, Y2 \
	VPERMPS Y19, yi, Y3 \
	VFMADD231PS Y0, Y10, acc0 \
	VFMADD231PS Y1, Y11, acc1 \
	VFMADD231PS Y2, Y12, acc2 \
	VFMADD231PS Y3, Y13, acc3

// V1BLOCKG is V1BLOCK for ggml's layout: block i's values at off of the
// rows at SI, SI+R14, R9 and R9+R14.
#define V1BLOCKG(W, X, off, i, yi, acc0, acc1, acc2, acc3) \
	V1BLOCK(W, X, off(SI), off(SI)(R14*1), off(R9), off(R9)(R14*1), i, yi, acc0, acc1, acc2, acc3)

// MINS4 adds block i's mins of the four rows (f16 at off of each) times
// the activations' s of the block (at i*4(DI)) into the four chains of
// X28, one FMA each.
#define MINS4(off, i) \
	VPBROADCASTW off(SI), X29 \
	VPINSRW $1, off(SI)(R14*1), X29, X29 \
	VPINSRW $2, off(R9), X29, X29 \
	VPINSRW $3, off(R9)(R14*1), X29, X29 \
	VCVTPH2PS X29, X29 \
	VFMADD231PS.BCST i*4(DI), X29, X28

// Where block i of a group keeps its values (Q5_1: its qh) and its min.
#define VALSQ51(i) i*24+4
#define MINQ51(i) i*24+2
#define VALSQ41(i) i*20+4
#define MINQ41(i) i*20+2
#define VALSNL(i) i*18+2

// The Q5_1 and Q4_1 kernels' block i of a group: its lanes and its mins.
#define BQ51(i, yi) \
	V1BLOCKG(WQ51, XQ8_1, VALSQ51(i), i, yi, Y4, Y9, Y14, Y15) \
	MINS4(MINQ51(i), i)

#define BQ41(i, yi) \
	V1BLOCKG(WQ41, XQ8_1, VALSQ41(i), i, yi, Y4, Y9, Y14, Y15) \
	MINS4(MINQ41(i), i)

// V1STORE writes the four rows' results X4, X9, X14, X15 to dst (R10,
// R10+4h, ...) and moves on to the next quad.
#define V1STORE \
	VMOVSS X4, (R10) \
	VMOVSS X9, (R10)(R11*1) \
	LEAQ (R10)(R11*2), R8 \
	VMOVSS X14, (R8) \
	VMOVSS X15, (R8)(R11*1) \
	ADDQ $4, R10 \
	ADDQ R13, R12 \
	DECQ BX \
	JNE quad

// V1SCALES8x4 gathers the scale products of the group of eight blocks at
// SI, SI+R14, R9, R9+R14 into Y16..Y19.
#define V1SCALES8x4(BLOCK) \
	V1SCALES8(BLOCK, SI, Y16) \
	LEAQ (SI)(R14*1), R8 \
	V1SCALES8(BLOCK, R8, Y17) \
	V1SCALES8(BLOCK, R9, Y18) \
	LEAQ (R9)(R14*1), R8 \
	V1SCALES8(BLOCK, R8, Y19)

// DOTQUADSM body (Q5_1, Q4_1): for p < quads and j < 4, dst[p+j·h] is
// the row at w+(p+j·h)·rb against the Q8_1 activations: xd the blocks'
// scales, xs their sums s, xq their values; n blocks a row, BLOCK bytes
// a block, B(i, yi) block i of a group. Groups of eight blocks, then the
// blocks left one at a time; then each row's hsum_float_8 plus its
// chain of mins. h may be 0: one row, computed four times.
// func(dst *float32, h int, w *byte, rb int, xd *float32, xs *float32, xq *int8, n int, quads int)
#define DOTQUADSM(BLOCK, B) \
	MOVQ dst+0(FP), R10 \
	MOVQ h+8(FP), R11 \
	MOVQ w+16(FP), R12 \
	MOVQ rb+24(FP), R13 \
	MOVQ quads+64(FP), BX \
	MOVQ R11, R14 \
	IMULQ R13, R14 \
	SHLQ $2, R11 \
	MOVL $0x0F0F0F0F, AX \
	VPBROADCASTD AX, Y6 \
	MOVL $0x10101010, AX \
	VPBROADCASTD AX, Y7 \
	VMOVDQU q4Shift<>(SB), Y8 \
	IDX8 \
	TESTQ BX, BX \
	JEQ end \
quad: \
	MOVQ R12, SI \
	LEAQ (SI)(R14*2), R9 \
	MOVQ xd+32(FP), DX \
	MOVQ xs+40(FP), DI \
	MOVQ xq+48(FP), AX \
	MOVQ n+56(FP), R15 \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y9, Y9, Y9 \
	VPXOR Y14, Y14, Y14 \
	VPXOR Y15, Y15, Y15 \
	VPXORD Y28, Y28, Y28 \
	CMPQ R15, $8 \
	JB loop1 \
loop8: \
	V1SCALES8x4(BLOCK) \
	B(0, Y20) \
	B(1, Y21) \
	B(2, Y22) \
	B(3, Y23) \
	B(4, Y24) \
	B(5, Y25) \
	B(6, Y26) \
	B(7, Y27) \
	ADDQ $(8*BLOCK), SI \
	ADDQ $(8*BLOCK), R9 \
	ADDQ $256, AX \
	ADDQ $32, DX \
	ADDQ $32, DI \
	SUBQ $8, R15 \
	CMPQ R15, $8 \
	JAE loop8 \
loop1: \
	TESTQ R15, R15 \
	JEQ done \
	V1SCALES1(BLOCK, 0) \
	B(0, Y20) \
	ADDQ $BLOCK, SI \
	ADDQ $BLOCK, R9 \
	ADDQ $32, AX \
	ADDQ $4, DX \
	ADDQ $4, DI \
	DECQ R15 \
	JMP loop1 \
done: \
	SUMS4 \
	VADDSS X28, X4, X4 \
	VMOVSHDUP X28, X29 \
	VADDSS X29, X9, X9 \
	VPERMILPS $2, X28, X29 \
	VADDSS X29, X14, X14 \
	VPERMILPS $3, X28, X29 \
	VADDSS X29, X15, X15 \
	V1STORE \
end: \
	VZEROUPPER \
	RET

// The IQ4_NL kernel's block i of a group, into the even (Y4, Y9, Y14,
// Y15) or odd (Y28..Y31) accumulators.
#define BNLE(i, yi) \
	V1BLOCKG(WNL, XV, VALSNL(i), i, yi, Y4, Y9, Y14, Y15)

#define BNLO(i, yi) \
	V1BLOCKG(WNL, XV, VALSNL(i), i, yi, Y28, Y29, Y30, Y31)

// ISUM1 adds the row's last odd block into its sum xs: the integer sum
// of its eight lanes y (x the low half) as a float, times the block's
// scale product (d at addr against the activations' scale at DX), plus
// xs in one FMA.
#define ISUM1(y, x, addr, xs) \
	VEXTRACTI128 $1, y, X0 \
	VPADDD X0, x, x \
	VPSHUFD $0x4e, x, X0 \
	VPADDD X0, x, x \
	VPSHUFD $0xb1, x, X0 \
	VPADDD X0, x, x \
	VCVTDQ2PS x, x \
	VPBROADCASTW addr, X0 \
	VCVTPH2PS X0, X0 \
	VMULSS (DX), X0, X0 \
	VFMADD231SS X0, x, xs

// The packed layout of Q5_1 and Q4_1 (quant_vnni1.go) interleaves rows
// four by four as Q5_0's does: per group of eight blocks the four rows'
// eight d (64 bytes), then their mins block by block (block i's four m,
// 8 bytes, at 64+8i), then block by block the four rows' values (Q5_1:
// Q5_0's 80 bytes, qh's low halves, high halves, qs; Q4_1: the qs, 64
// bytes, at 128+VS·i); per block left the four d, the four m, the
// values. The kernels go as dotQuadsPackedQ5_0VNNI and
// dotQuads2PackedQ5_0VNNI do (quant_avx512_amd64.s: a 16-byte lane a
// row, each row's lanes 0..3 in Z4 and 4..7 in Z9; two streams for a
// decode), the lanes from 0 against the Q8_1 values, and the four rows'
// chains of mins in X30 (stream B: X31), one FMA a block: its four m are
// one load.
//
// Registers: SI the quad (stream B: R14), DX the activations' scales, R13
// their sums s, DI their values, AX the values' offset (32 bytes a
// block), R15 the block, CX the blocks a row, BX the quads (pairs) left,
// R10 dst (stream B: R11). Z6 0x0F, Z16..Z23 the indices of blocks 0..7
// (permQ4), Z12 and Z24 a group's scale products of rows 0, 1 and 2, 3
// (stream B: Z28, Z29).

#define PFQ1 4096

// The weights of a packed block of four rows whose values are at
// off(base), as unsigned bytes, a 16-byte lane a row: z0 the low
// nibbles (weights 0..15), z1 the high ones (16..31). Q51VALS: Q5_0's
// 80 bytes, the fifth bits added under the masks of the two halves of qh
// (klo, khi); Q41VALS: the 64 bytes of nibbles.
#define Q51VALS(off, base, z0, z1, klo, khi) \
	KMOVQ off(base), klo \
	KMOVQ off+8(base), khi \
	VMOVDQU64 off+16(base), z0 \
	VPSRLW $4, z0, z1 \
	VPANDD Z6, z0, z0 \
	VPANDD Z6, z1, z1 \
	VPADDB q5Bit<>(SB), z0, klo, z0 \
	VPADDB q5Bit<>(SB), z1, khi, z1

#define Q41VALS(off, base, z0, z1, klo, khi) \
	VMOVDQU64 off(base), z0 \
	VPSRLW $4, z0, z1 \
	VPANDD Z6, z0, z0 \
	VPANDD Z6, z1, z1

// P1LANES leaves in Z2 and Z3, as floats, the four rows' lanes 0..3 and
// 4..7 of block i (+ R15) from the weights in Z0 and Z1 against the Q8_1
// values (x0..15 and x16..31 four times over).
#define P1LANES(i) \
	VBROADCASTI32X4 i*32(DI)(AX*1), Z13 \
	VBROADCASTI32X4 i*32+16(DI)(AX*1), Z14 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPDPBUSD Z13, Z0, Z2 \
	VPDPBUSD Z14, Z1, Z3 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3

// P1MINS adds the four rows' mins of block i (+ R15), f16 at off(base),
// times the block's s into the chains of xc.
#define P1MINS(off, base, i, xc) \
	VCVTPH2PS off(base), X11 \
	VFMADD231PS.BCST i*4(R13)(R15*4), X11, xc

// BP1 is block i of a packed group at SI (values VS bytes a block), its
// scale products picked from Z12 and Z24 by zi.
#define BP1(VALS, VS, i, zi) \
	VALS(128+i*VS, SI, Z0, Z1, K4, K5) \
	P1LANES(i) \
	VMOVDQA64 zi, Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	VFMADD231PS Z2, Z10, Z4 \
	VFMADD231PS Z3, Z10, Z9 \
	P1MINS(64+i*8, SI, i, X30)

// BP1X2 is BP1 for quad A at SI and quad B at R14 (into Z26, Z27 and
// X31, its scale products in Z28, Z29), the activations' loads shared.
#define BP1X2(VALS, VS, i, zi) \
	PREFETCHT0 PFQ1+128+i*VS(SI) \
	PREFETCHT0 PFQ1+191+i*VS(SI) \
	PREFETCHT0 PFQ1+128+i*VS(R14) \
	PREFETCHT0 PFQ1+191+i*VS(R14) \
	VALS(128+i*VS, SI, Z0, Z1, K4, K5) \
	VALS(128+i*VS, R14, Z5, Z8, K6, K7) \
	VBROADCASTI32X4 i*32(DI)(AX*1), Z13 \
	VBROADCASTI32X4 i*32+16(DI)(AX*1), Z14 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z15, Z15, Z15 \
	VPDPBUSD Z13, Z0, Z2 \
	VPDPBUSD Z14, Z1, Z3 \
	VPDPBUSD Z13, Z5, Z7 \
	VPDPBUSD Z14, Z8, Z15 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VCVTDQ2PS Z7, Z7 \
	VCVTDQ2PS Z15, Z15 \
	VMOVDQA64 zi, Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	VMOVDQA64 zi, Z25 \
	VPERMI2PS Z29, Z28, Z25 \
	VFMADD231PS Z2, Z10, Z4 \
	VFMADD231PS Z3, Z10, Z9 \
	VFMADD231PS Z7, Z25, Z26 \
	VFMADD231PS Z15, Z25, Z27 \
	P1MINS(64+i*8, SI, i, X30) \
	P1MINS(64+i*8, R14, i, X31)

#define BP51(i, zi) BP1(Q51VALS, 80, i, zi)
#define BP41(i, zi) BP1(Q41VALS, 64, i, zi)
#define BP51X2(i, zi) BP1X2(Q51VALS, 80, i, zi)
#define BP41X2(i, zi) BP1X2(Q41VALS, 64, i, zi)

// TAILP1 is a block left of the quad at SI: the four rows' d (spread a
// row a 16-byte lane), their m, their values from 16.
#define TAILP1(VALS) \
	VCVTPH2PS (SI), X12 \
	VMOVDQU64 tail5Idx<>(SB), Z10 \
	VPERMPS Z12, Z10, Z12 \
	VMULPS.BCST (DX)(R15*4), Z12, Z12 \
	VALS(16, SI, Z0, Z1, K4, K5) \
	P1LANES(0) \
	VFMADD231PS Z2, Z12, Z4 \
	VFMADD231PS Z3, Z12, Z9 \
	P1MINS(8, SI, 0, X30)

#define TAIL51 TAILP1(Q51VALS)
#define TAIL41 TAILP1(Q41VALS)

// GATHERP1 writes the four rows' results to R10: each row's eight lanes
// gathered from Z4 and Z9, hsum_float_8, plus its chain of mins (X30).
#define GATHERP1 \
	VMOVDQU64 rowsQ4lo<>(SB), Z14 \
	VPERMI2PS Z9, Z4, Z14 \
	VMOVDQU64 rowsQ4hi<>(SB), Z15 \
	VPERMI2PS Z9, Z4, Z15 \
	VEXTRACTF64X4 $1, Z14, Y4 \
	VEXTRACTF64X4 $1, Z15, Y9 \
	SUMS4 \
	VADDSS X30, X14, X14 \
	VMOVSHDUP X30, X11 \
	VADDSS X11, X4, X4 \
	VPERMILPS $2, X30, X11 \
	VADDSS X11, X15, X15 \
	VPERMILPS $3, X30, X11 \
	VADDSS X11, X9, X9 \
	VMOVSS X14, (R10) \
	VMOVSS X4, 4(R10) \
	VMOVSS X15, 8(R10) \
	VMOVSS X9, 12(R10)

// PACKEDP1ARGS loads the packed kernels' first six arguments, Z6 and the
// indices Z16..Z23.
#define PACKEDP1ARGS \
	MOVQ dst+0(FP), R10 \
	MOVQ w+8(FP), SI \
	MOVQ xd+16(FP), DX \
	MOVQ xs+24(FP), R13 \
	MOVQ xq+32(FP), DI \
	MOVQ n+40(FP), CX \
	MOVL $0x0F0F0F0F, AX \
	VPBROADCASTD AX, Z6 \
	VMOVDQU64 permQ4<>(SB), Z16 \
	MOVL $1, AX \
	VPBROADCASTD AX, Z15 \
	VPADDD Z15, Z16, Z17 \
	VPADDD Z15, Z17, Z18 \
	VPADDD Z15, Z18, Z19 \
	VPADDD Z15, Z19, Z20 \
	VPADDD Z15, Z20, Z21 \
	VPADDD Z15, Z21, Z22 \
	VPADDD Z15, Z22, Z23

// P1TAILS runs TAIL for each block left of a quad (R15 on to n), from
// lbl, going on at out.
#define P1TAILS(TAIL, BLOCK, lbl, out) \
lbl: \
	CMPQ R15, CX \
	JAE out \
	TAIL \
	ADDQ $(4*BLOCK), SI \
	ADDQ $32, AX \
	INCQ R15 \
	JMP lbl \
out:

// P1SCALES leaves in za and zb the scale products of a packed group's
// rows 0, 1 and 2, 3 at base (their d against the activations' eight
// scales, broadcast in Z11).
#define P1SCALES(base, za, zb) \
	VCVTPH2PS (base), za \
	VMULPS Z11, za, za \
	VCVTPH2PS 32(base), zb \
	VMULPS Z11, zb, zb

// DOTQUADSP1 body: dst[4p+j] for p < quads and j < 4 is row j of the
// p-th packed quad of Q5_1 or Q4_1 rows (4·n blocks of BLOCK bytes from
// w) against the Q8_1 activations (xd, xs, xq as dotQuadsQ5_1VNNI takes
// them): groups of eight blocks (BP), then the blocks left (TAIL).
// func(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, quads int)
#define DOTQUADSP1(BLOCK, BP, TAIL) \
	PACKEDP1ARGS \
	MOVQ quads+48(FP), BX \
	TESTQ BX, BX \
	JEQ end \
quad: \
	XORQ AX, AX \
	XORQ R15, R15 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z30, Z30, Z30 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JA loop1 \
loop8: \
	VBROADCASTF32X8 (DX)(R15*4), Z11 \
	P1SCALES(SI, Z12, Z24) \
	BP(0, Z16) \
	BP(1, Z17) \
	BP(2, Z18) \
	BP(3, Z19) \
	BP(4, Z20) \
	BP(5, Z21) \
	BP(6, Z22) \
	BP(7, Z23) \
	ADDQ $(32*BLOCK), SI \
	ADDQ $256, AX \
	ADDQ $8, R15 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JBE loop8 \
	P1TAILS(TAIL, BLOCK, loop1, done) \
	GATHERP1 \
	ADDQ $16, R10 \
	DECQ BX \
	JNE quad \
end: \
	VZEROUPPER \
	RET

// DOTQUADSP1X2 body: DOTQUADSP1 over 2·pairs quads in two streams, as
// DOTQUADSP2 (quant_avx512_amd64.s): quads p (A, at SI, outputs at R10)
// and pairs+p (B, at R14, outputs at R11) together, their groups
// interleaved; then A's blocks left, B's (R15 kept in R12, A's pointer
// in R9 while SI walks B; AX is 32·R15). The same bits as one quad at a
// time.
// func(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, pairs int)
#define DOTQUADSP1X2(BLOCK, BP2, TAIL) \
	PACKEDP1ARGS \
	MOVQ pairs+48(FP), BX \
	TESTQ BX, BX \
	JEQ end \
	MOVQ CX, R14 \
	IMULQ $(4*BLOCK), R14 \
	IMULQ BX, R14 \
	ADDQ SI, R14 \
	LEAQ (R10)(BX*8), R11 \
	LEAQ (R11)(BX*8), R11 \
pair: \
	XORQ AX, AX \
	XORQ R15, R15 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27 \
	VPXORD Z30, Z30, Z30 \
	VPXORD Z31, Z31, Z31 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JA tails \
loop8: \
	PREFETCHT0 PFQ1(SI) \
	PREFETCHT0 PFQ1+64(SI) \
	PREFETCHT0 PFQ1(R14) \
	PREFETCHT0 PFQ1+64(R14) \
	VBROADCASTF32X8 (DX)(R15*4), Z11 \
	P1SCALES(SI, Z12, Z24) \
	P1SCALES(R14, Z28, Z29) \
	BP2(0, Z16) \
	BP2(1, Z17) \
	BP2(2, Z18) \
	BP2(3, Z19) \
	BP2(4, Z20) \
	BP2(5, Z21) \
	BP2(6, Z22) \
	BP2(7, Z23) \
	ADDQ $(32*BLOCK), SI \
	ADDQ $(32*BLOCK), R14 \
	ADDQ $256, AX \
	ADDQ $8, R15 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JBE loop8 \
tails: \
	MOVQ R15, R12 \
	P1TAILS(TAIL, BLOCK, loopa, donea) \
	GATHERP1 \
	MOVQ SI, R9 \
	MOVQ R14, SI \
	MOVQ R12, R15 \
	MOVQ R12, AX \
	SHLQ $5, AX \
	VMOVAPS Z26, Z4 \
	VMOVAPS Z27, Z9 \
	VMOVAPS Z31, Z30 \
	P1TAILS(TAIL, BLOCK, loopb, doneb) \
	XCHGQ R10, R11 \
	GATHERP1 \
	XCHGQ R10, R11 \
	MOVQ SI, R14 \
	MOVQ R9, SI \
	ADDQ $16, R10 \
	ADDQ $16, R11 \
	DECQ BX \
	JNE pair \
end: \
	VZEROUPPER \
	RET

// IQ4_NL packs as Q4_0 does (quant.go): per group of eight blocks the
// four rows' eight d, then block by block the four rows' 16 bytes of
// nibbles; per block left the four rows' ggml blocks. The packed kernels
// go as dotQuadsPackedQ4_0VNNI and dotQuads2PackedQ4_0VNNI (a 16-byte lane
// a row, lanes 0..3 and 4..7 apart), the weights through the table
// (VPSHUFB, Z7) against the Q8_0 activations' VNNI layout, with
// llama.cpp's even and odd accumulators: the even blocks' in Z4 and Z9,
// the odd ones' in Z16 and Z17 (stream B: Z26, Z27 and Z18, Z19); the
// blocks left by pairs, a last odd one as one integer per row (NLLAST).
// The scale products' VPERMI2PS indices of block i come from idxNL (64
// bytes a block), which leaves registers for the odd accumulators.

// idxNL: for block i of a group, the VPERMI2PS indices into the scale
// tables of rows 0, 1 (0..15) and 2, 3 (16..31), a row a 16-byte lane.
DATA idxNL<>+0(SB)/8, $0x0000000000000000
DATA idxNL<>+8(SB)/8, $0x0000000000000000
DATA idxNL<>+16(SB)/8, $0x0000000800000008
DATA idxNL<>+24(SB)/8, $0x0000000800000008
DATA idxNL<>+32(SB)/8, $0x0000001000000010
DATA idxNL<>+40(SB)/8, $0x0000001000000010
DATA idxNL<>+48(SB)/8, $0x0000001800000018
DATA idxNL<>+56(SB)/8, $0x0000001800000018
DATA idxNL<>+64(SB)/8, $0x0000000100000001
DATA idxNL<>+72(SB)/8, $0x0000000100000001
DATA idxNL<>+80(SB)/8, $0x0000000900000009
DATA idxNL<>+88(SB)/8, $0x0000000900000009
DATA idxNL<>+96(SB)/8, $0x0000001100000011
DATA idxNL<>+104(SB)/8, $0x0000001100000011
DATA idxNL<>+112(SB)/8, $0x0000001900000019
DATA idxNL<>+120(SB)/8, $0x0000001900000019
DATA idxNL<>+128(SB)/8, $0x0000000200000002
DATA idxNL<>+136(SB)/8, $0x0000000200000002
DATA idxNL<>+144(SB)/8, $0x0000000a0000000a
DATA idxNL<>+152(SB)/8, $0x0000000a0000000a
DATA idxNL<>+160(SB)/8, $0x0000001200000012
DATA idxNL<>+168(SB)/8, $0x0000001200000012
DATA idxNL<>+176(SB)/8, $0x0000001a0000001a
DATA idxNL<>+184(SB)/8, $0x0000001a0000001a
DATA idxNL<>+192(SB)/8, $0x0000000300000003
DATA idxNL<>+200(SB)/8, $0x0000000300000003
DATA idxNL<>+208(SB)/8, $0x0000000b0000000b
DATA idxNL<>+216(SB)/8, $0x0000000b0000000b
DATA idxNL<>+224(SB)/8, $0x0000001300000013
DATA idxNL<>+232(SB)/8, $0x0000001300000013
DATA idxNL<>+240(SB)/8, $0x0000001b0000001b
DATA idxNL<>+248(SB)/8, $0x0000001b0000001b
DATA idxNL<>+256(SB)/8, $0x0000000400000004
DATA idxNL<>+264(SB)/8, $0x0000000400000004
DATA idxNL<>+272(SB)/8, $0x0000000c0000000c
DATA idxNL<>+280(SB)/8, $0x0000000c0000000c
DATA idxNL<>+288(SB)/8, $0x0000001400000014
DATA idxNL<>+296(SB)/8, $0x0000001400000014
DATA idxNL<>+304(SB)/8, $0x0000001c0000001c
DATA idxNL<>+312(SB)/8, $0x0000001c0000001c
DATA idxNL<>+320(SB)/8, $0x0000000500000005
DATA idxNL<>+328(SB)/8, $0x0000000500000005
DATA idxNL<>+336(SB)/8, $0x0000000d0000000d
DATA idxNL<>+344(SB)/8, $0x0000000d0000000d
DATA idxNL<>+352(SB)/8, $0x0000001500000015
DATA idxNL<>+360(SB)/8, $0x0000001500000015
DATA idxNL<>+368(SB)/8, $0x0000001d0000001d
DATA idxNL<>+376(SB)/8, $0x0000001d0000001d
DATA idxNL<>+384(SB)/8, $0x0000000600000006
DATA idxNL<>+392(SB)/8, $0x0000000600000006
DATA idxNL<>+400(SB)/8, $0x0000000e0000000e
DATA idxNL<>+408(SB)/8, $0x0000000e0000000e
DATA idxNL<>+416(SB)/8, $0x0000001600000016
DATA idxNL<>+424(SB)/8, $0x0000001600000016
DATA idxNL<>+432(SB)/8, $0x0000001e0000001e
DATA idxNL<>+440(SB)/8, $0x0000001e0000001e
DATA idxNL<>+448(SB)/8, $0x0000000700000007
DATA idxNL<>+456(SB)/8, $0x0000000700000007
DATA idxNL<>+464(SB)/8, $0x0000000f0000000f
DATA idxNL<>+472(SB)/8, $0x0000000f0000000f
DATA idxNL<>+480(SB)/8, $0x0000001700000017
DATA idxNL<>+488(SB)/8, $0x0000001700000017
DATA idxNL<>+496(SB)/8, $0x0000001f0000001f
DATA idxNL<>+504(SB)/8, $0x0000001f0000001f
GLOBL idxNL<>(SB), RODATA|NOPTR, $512

// NLVALS leaves in z0 and z1 the table values (plus 128) of the low and
// high nibbles of a block of four rows, 64 bytes at addr (Z6 0x0F, Z7 the
// table in each 16-byte lane).
#define NLVALS(addr, z0, z1) \
	VMOVDQU64 addr, z0 \
	VPSRLW $4, z0, z1 \
	VPANDD Z6, z0, z0 \
	VPANDD Z6, z1, z1 \
	VPSHUFB z0, Z7, z0 \
	VPSHUFB z1, Z7, z1

// NLLANES leaves in Z2 and Z3 the four rows' int32 lanes 0..3 and 4..7
// of the block whose weights NLVALS left in Z0 and Z1, against the
// activations' block i (values and lane offsets at i*64(DI)(AX)).
#define NLLANES(i) \
	VBROADCASTI32X4 i*64(DI)(AX*1), Z13 \
	VBROADCASTI32X4 i*64+16(DI)(AX*1), Z14 \
	VBROADCASTI32X4 i*64+32(DI)(AX*1), Z2 \
	VBROADCASTI32X4 i*64+48(DI)(AX*1), Z3 \
	VPDPBUSD Z13, Z0, Z2 \
	VPDPBUSD Z14, Z1, Z3

// BPNL is block i of a packed group at SI into the accumulators alo and
// ahi, its scale products picked from Z12 and Z24.
#define BPNL(i, alo, ahi) \
	NLVALS(64+i*64(SI), Z0, Z1) \
	NLLANES(i) \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VMOVDQU64 idxNL<>+i*64(SB), Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	VFMADD231PS Z2, Z10, alo \
	VFMADD231PS Z3, Z10, ahi

// BPNLX2 is BPNL for quad A at SI and quad B at R14 (into blo, bhi, its
// scale products in Z28, Z29), the activations' loads shared.
#define BPNLX2(i, alo, ahi, blo, bhi) \
	PREFETCHT0 PFQ1+64+i*64(SI) \
	PREFETCHT0 PFQ1+64+i*64(R14) \
	NLVALS(64+i*64(SI), Z0, Z1) \
	NLVALS(64+i*64(R14), Z5, Z8) \
	VBROADCASTI32X4 i*64(DI)(AX*1), Z13 \
	VBROADCASTI32X4 i*64+16(DI)(AX*1), Z14 \
	VBROADCASTI32X4 i*64+32(DI)(AX*1), Z2 \
	VBROADCASTI32X4 i*64+48(DI)(AX*1), Z3 \
	VMOVDQA64 Z2, Z15 \
	VMOVDQA64 Z3, Z20 \
	VPDPBUSD Z13, Z0, Z2 \
	VPDPBUSD Z14, Z1, Z3 \
	VPDPBUSD Z13, Z5, Z15 \
	VPDPBUSD Z14, Z8, Z20 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VCVTDQ2PS Z15, Z15 \
	VCVTDQ2PS Z20, Z20 \
	VMOVDQU64 idxNL<>+i*64(SB), Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	VMOVDQU64 idxNL<>+i*64(SB), Z25 \
	VPERMI2PS Z29, Z28, Z25 \
	VFMADD231PS Z2, Z10, alo \
	VFMADD231PS Z3, Z10, ahi \
	VFMADD231PS Z15, Z25, blo \
	VFMADD231PS Z20, Z25, bhi

#define BPNLGROUP(BP) \
	BP(0, Z4, Z9) \
	BP(1, Z16, Z17) \
	BP(2, Z4, Z9) \
	BP(3, Z16, Z17) \
	BP(4, Z4, Z9) \
	BP(5, Z16, Z17) \
	BP(6, Z4, Z9) \
	BP(7, Z16, Z17)

#define BPNLX2E(i, alo, ahi) BPNLX2(i, alo, ahi, Z26, Z27)
#define BPNLX2O(i, alo, ahi) BPNLX2(i, alo, ahi, Z18, Z19)

// TAILNL is a block left of the quad at SI (four ggml blocks) into alo
// and ahi: the four d spread a row a 16-byte lane (K1..K3), the nibbles
// a row a 16-byte lane.
#define TAILNL(alo, ahi) \
	TAIL4LOAD \
	VPSRLW $4, Z0, Z1 \
	VPANDD Z6, Z0, Z0 \
	VPANDD Z6, Z1, Z1 \
	VPSHUFB Z0, Z7, Z0 \
	VPSHUFB Z1, Z7, Z1 \
	NLLANES(0) \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VFMADD231PS Z2, Z12, alo \
	VFMADD231PS Z3, Z12, ahi

// NLTAILS runs the blocks left of a quad (R15 on to n) two by two, the
// first into the even accumulators and the second into the odd ones,
// from lbl, going on at out with at most one block left.
#define NLTAILS(lbl, out) \
lbl: \
	LEAQ 2(R15), R8 \
	CMPQ R8, CX \
	JA out \
	TAILNL(Z4, Z9) \
	ADDQ $72, SI \
	ADDQ $64, AX \
	INCQ R15 \
	TAILNL(Z16, Z17) \
	ADDQ $72, SI \
	ADDQ $64, AX \
	INCQ R15 \
	JMP lbl \
out:

// NLROW adds row j's part of the last odd block (its lanes' sum, as a
// float, in lane 4j of Z2) times its scale product into xs.
#define NLROW(j, xs) \
	VPBROADCASTW 18*j(SI), X10 \
	VCVTPH2PS X10, X10 \
	VMULSS (DX)(R15*4), X10, X10 \
	VEXTRACTF32X4 $j, Z2, X3 \
	VFMADD231SS X10, X3, xs

// GATHERNL writes the four rows' results to R10: the even and odd
// accumulators added lane by lane, each row's eight lanes gathered,
// hsum_float_8; then, if a block is left (R15 < n), its four rows' lanes
// summed as integers, each times its scale product added by one FMA.
#define GATHERNL(lbl) \
	VADDPS Z16, Z4, Z4 \
	VADDPS Z17, Z9, Z9 \
	VMOVDQU64 rowsQ4lo<>(SB), Z14 \
	VPERMI2PS Z9, Z4, Z14 \
	VMOVDQU64 rowsQ4hi<>(SB), Z15 \
	VPERMI2PS Z9, Z4, Z15 \
	VEXTRACTF64X4 $1, Z14, Y4 \
	VEXTRACTF64X4 $1, Z15, Y9 \
	SUMS4 \
	CMPQ R15, CX \
	JAE lbl \
	VMOVDQU 2(SI), X0 \
	VINSERTI32X4 $1, 20(SI), Z0, Z0 \
	VINSERTI32X4 $2, 38(SI), Z0, Z0 \
	VINSERTI32X4 $3, 56(SI), Z0, Z0 \
	VPSRLW $4, Z0, Z1 \
	VPANDD Z6, Z0, Z0 \
	VPANDD Z6, Z1, Z1 \
	VPSHUFB Z0, Z7, Z0 \
	VPSHUFB Z1, Z7, Z1 \
	VBROADCASTI32X4 (DI)(AX*1), Z12 \
	VBROADCASTI32X4 16(DI)(AX*1), Z13 \
	VBROADCASTI32X4 32(DI)(AX*1), Z2 \
	VBROADCASTI32X4 48(DI)(AX*1), Z3 \
	VPDPBUSD Z12, Z0, Z2 \
	VPDPBUSD Z13, Z1, Z3 \
	VPADDD Z3, Z2, Z2 \
	VPSHUFD $0x4e, Z2, Z3 \
	VPADDD Z3, Z2, Z2 \
	VPSHUFD $0xb1, Z2, Z3 \
	VPADDD Z3, Z2, Z2 \
	VCVTDQ2PS Z2, Z2 \
	NLROW(0, X14) \
	NLROW(1, X4) \
	NLROW(2, X15) \
	NLROW(3, X9) \
	ADDQ $72, SI \
	ADDQ $64, AX \
lbl: \
	VMOVSS X14, (R10) \
	VMOVSS X4, 4(R10) \
	VMOVSS X15, 8(R10) \
	VMOVSS X9, 12(R10)

// NLARGS loads the packed IQ4_NL kernels' first five arguments (dst in
// R10, w in SI, xd in DX, xv in DI, n in CX) and their constants.
#define NLARGS \
	MOVQ dst+0(FP), R10 \
	MOVQ w+8(FP), SI \
	MOVQ xd+16(FP), DX \
	MOVQ xv+24(FP), DI \
	MOVQ n+32(FP), CX \
	MOVL $0x0F0F0F0F, AX \
	VPBROADCASTD AX, Z6 \
	VBROADCASTI32X4 iq4Table<>(SB), Z7 \
	MOVL $0x00F0, AX \
	KMOVW AX, K1 \
	MOVL $0x0F00, AX \
	KMOVW AX, K2 \
	MOVL $0xF000, AX \
	KMOVW AX, K3

// func dotQuadsQ5_1VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xs *float32, xq *int8, n int, quads int)
TEXT ·dotQuadsQ5_1VNNI(SB), NOSPLIT, $0-72
	DOTQUADSM(24, BQ51)

// func dotQuadsQ4_1VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xs *float32, xq *int8, n int, quads int)
TEXT ·dotQuadsQ4_1VNNI(SB), NOSPLIT, $0-72
	DOTQUADSM(20, BQ41)

// func dotQuadsIQ4NLVNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)
// For p < quads and j < 4, dst[p+j·h] is the IQ4_NL row at w+(p+j·h)·rb
// against the Q8_0 activations (xd their scales, xv their VNNI layout);
// n blocks a row. Groups of eight blocks, then pairs of blocks, even
// and odd accumulators as llama.cpp's; their sums added lane by lane,
// hsum_float_8, then a last odd block as one integer (ISUM1).
TEXT ·dotQuadsIQ4NLVNNI(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), R10
	MOVQ h+8(FP), R11
	MOVQ w+16(FP), R12
	MOVQ rb+24(FP), R13
	MOVQ quads+56(FP), BX
	MOVQ R11, R14
	IMULQ R13, R14
	SHLQ $2, R11
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Y6
	VMOVDQU iq4Table<>(SB), Y7
	VMOVDQU q4Shift<>(SB), Y8
	IDX8
	TESTQ BX, BX
	JEQ end

quad:
	MOVQ R12, SI
	LEAQ (SI)(R14*2), R9
	MOVQ xd+32(FP), DX
	MOVQ xv+40(FP), AX
	MOVQ n+48(FP), R15
	VPXOR Y4, Y4, Y4
	VPXOR Y9, Y9, Y9
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15
	VPXORD Y28, Y28, Y28
	VPXORD Y29, Y29, Y29
	VPXORD Y30, Y30, Y30
	VPXORD Y31, Y31, Y31
	CMPQ R15, $8
	JB loop2

loop8:
	V1SCALES8x4(18)
	BNLE(0, Y20)
	BNLO(1, Y21)
	BNLE(2, Y22)
	BNLO(3, Y23)
	BNLE(4, Y24)
	BNLO(5, Y25)
	BNLE(6, Y26)
	BNLO(7, Y27)
	ADDQ $(8*18), SI
	ADDQ $(8*18), R9
	ADDQ $512, AX
	ADDQ $32, DX
	SUBQ $8, R15
	CMPQ R15, $8
	JAE loop8

loop2:
	CMPQ R15, $2
	JB sums
	V1SCALES1(18, 0)
	BNLE(0, Y20)
	V1SCALES1(18, 1)
	BNLO(1, Y20)
	ADDQ $36, SI
	ADDQ $36, R9
	ADDQ $128, AX
	ADDQ $8, DX
	SUBQ $2, R15
	JMP loop2

sums:
	VADDPS Y28, Y4, Y4
	VADDPS Y29, Y9, Y9
	VADDPS Y30, Y14, Y14
	VADDPS Y31, Y15, Y15
	SUMS4
	TESTQ R15, R15
	JEQ store
	LANES4(WNL, XV, 2(SI), 2(SI)(R14*1), 2(R9), 2(R9)(R14*1), 0)
	ISUM1(Y10, X10, (SI), X4)
	ISUM1(Y11, X11, (SI)(R14*1), X9)
	ISUM1(Y12, X12, (R9), X14)
	ISUM1(Y13, X13, (R9)(R14*1), X15)

store:
	V1STORE

end:
	VZEROUPPER
	RET

// func dotQuadsPackedQ5_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, quads int)
TEXT ·dotQuadsPackedQ5_1VNNI(SB), NOSPLIT, $0-56
	DOTQUADSP1(24, BP51, TAIL51)

// func dotQuadsPackedQ4_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, quads int)
TEXT ·dotQuadsPackedQ4_1VNNI(SB), NOSPLIT, $0-56
	DOTQUADSP1(20, BP41, TAIL41)

// func dotQuads2PackedQ5_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, pairs int)
TEXT ·dotQuads2PackedQ5_1VNNI(SB), NOSPLIT, $0-56
	DOTQUADSP1X2(24, BP51X2, TAIL51)

// func dotQuads2PackedQ4_1VNNI(dst *float32, w *byte, xd *float32, xs *float32, xq *int8, n int, pairs int)
TEXT ·dotQuads2PackedQ4_1VNNI(SB), NOSPLIT, $0-56
	DOTQUADSP1X2(20, BP41X2, TAIL41)

// func dotQuadsPackedIQ4NLVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)
// dst[4p+j] for p < quads and j < 4: row j of the p-th packed quad of
// IQ4_NL rows (dotIQ4NL's bits).
TEXT ·dotQuadsPackedIQ4NLVNNI(SB), NOSPLIT, $0-48
	NLARGS
	MOVQ quads+40(FP), BX
	TESTQ BX, BX
	JEQ end

quad:
	XORQ AX, AX
	XORQ R15, R15
	VPXORD Z4, Z4, Z4
	VPXORD Z9, Z9, Z9
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	LEAQ 8(R15), R8
	CMPQ R8, CX
	JA tails

loop8:
	VBROADCASTF32X8 (DX)(R15*4), Z11
	P1SCALES(SI, Z12, Z24)
	BPNLGROUP(BPNL)
	ADDQ $(32*18), SI
	ADDQ $512, AX
	ADDQ $8, R15
	LEAQ 8(R15), R8
	CMPQ R8, CX
	JBE loop8

tails:
	NLTAILS(loop2, last)
	GATHERNL(store)
	ADDQ $16, R10
	DECQ BX
	JNE quad

end:
	VZEROUPPER
	RET

// func dotQuads2PackedIQ4NLVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)
// dotQuadsPackedIQ4NLVNNI over 2·pairs quads in two streams, as
// DOTQUADSP1X2: quads p (A, at SI) and pairs+p (B, at R14) together, then
// A's blocks left, B's (R15 kept in R12, A's pointer in R9 while SI walks
// B; AX is 64·R15). The same bits.
TEXT ·dotQuads2PackedIQ4NLVNNI(SB), NOSPLIT, $0-48
	NLARGS
	MOVQ pairs+40(FP), BX
	TESTQ BX, BX
	JEQ end
	MOVQ CX, R14
	IMULQ $(4*18), R14
	IMULQ BX, R14
	ADDQ SI, R14
	LEAQ (R10)(BX*8), R11
	LEAQ (R11)(BX*8), R11

pair:
	XORQ AX, AX
	XORQ R15, R15
	VPXORD Z4, Z4, Z4
	VPXORD Z9, Z9, Z9
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	LEAQ 8(R15), R8
	CMPQ R8, CX
	JA tails

loop8:
	PREFETCHT0 PFQ1(SI)
	PREFETCHT0 PFQ1(R14)
	VBROADCASTF32X8 (DX)(R15*4), Z11
	P1SCALES(SI, Z12, Z24)
	P1SCALES(R14, Z28, Z29)
	BPNLX2E(0, Z4, Z9)
	BPNLX2O(1, Z16, Z17)
	BPNLX2E(2, Z4, Z9)
	BPNLX2O(3, Z16, Z17)
	BPNLX2E(4, Z4, Z9)
	BPNLX2O(5, Z16, Z17)
	BPNLX2E(6, Z4, Z9)
	BPNLX2O(7, Z16, Z17)
	ADDQ $(32*18), SI
	ADDQ $(32*18), R14
	ADDQ $512, AX
	ADDQ $8, R15
	LEAQ 8(R15), R8
	CMPQ R8, CX
	JBE loop8

tails:
	MOVQ R15, R12
	NLTAILS(loopa, lasta)
	GATHERNL(storea)
	MOVQ SI, R9
	MOVQ R14, SI
	MOVQ R12, R15
	MOVQ R12, AX
	SHLQ $6, AX
	VMOVAPS Z26, Z4
	VMOVAPS Z27, Z9
	VMOVAPS Z18, Z16
	VMOVAPS Z19, Z17
	NLTAILS(loopb, lastb)
	XCHGQ R10, R11
	GATHERNL(storeb)
	XCHGQ R10, R11
	MOVQ SI, R14
	MOVQ R9, SI
	ADDQ $16, R10
	ADDQ $16, R11
	DECQ BX
	JNE pair

end:
	VZEROUPPER
	RET

// func quantQ8_1Z(x *float32, qs *int8, d *float32, s *float32, blocks int)
// quantizeQ8_1 of blocks of 32 values at x, in AVX-512: qs the rounded
// values, d the scales and s the sums d·Σq (both widened from binary16).
// The same bits as quantizeQ8_1 for finite x: amax by masking the sign,
// d = amax/127 and id = 127/amax (0 for an all-zero block) in float32,
// x·id rounded to nearest even (VCVTPS2DQ; ±Inf and NaN saturate to -128
// as in ggml's AVX2 code), Σq exact (VPDPBUSD against ones), (amax/127)·Σq
// rounded to float32, then d and s rounded to binary16 (VCVTPS2PH,
// nearest even).
TEXT ·quantQ8_1Z(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ qs+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ s+24(FP), R8
	MOVQ blocks+32(FP), BX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z7              // |·| mask
	MOVL $0x01010101, AX
	VPBROADCASTD AX, Y6              // ones, unsigned bytes
	MOVL $0x42fe0000, AX
	VMOVD AX, X8                     // 127
	VXORPS X11, X11, X11             // 0
	TESTQ BX, BX
	JEQ done

loop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VANDPS Z7, Z0, Z2
	VANDPS Z7, Z1, Z3
	VMAXPS Z3, Z2, Z2
	VEXTRACTF64X4 $1, Z2, Y3
	VMAXPS Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VMAXPS X3, X2, X2
	VPERMILPS $0x4e, X2, X3
	VMAXPS X3, X2, X2
	VMOVSHDUP X2, X3
	VMAXPS X3, X2, X2                // amax in lane 0
	VDIVSS X8, X2, X4                // d = amax / 127
	VDIVSS X2, X8, X10               // 127 / amax
	VCMPSS $4, X11, X2, X12          // amax != 0
	VANDPS X12, X10, X10             // id, 0 for an all-zero block
	VBROADCASTSS X10, Z10
	VMULPS Z10, Z0, Z0
	VMULPS Z10, Z1, Z1
	VCVTPS2DQ Z0, Z0
	VCVTPS2DQ Z1, Z1
	VPMOVSDB Z0, X0
	VPMOVSDB Z1, X1
	VINSERTI128 $1, X1, Y0, Y0       // the 32 rounded values
	VMOVDQU Y0, (DI)
	VPXOR Y12, Y12, Y12
	VPDPBUSD Y0, Y6, Y12             // the sums of each four values
	VEXTRACTI128 $1, Y12, X13
	VPADDD X13, X12, X12
	VPSHUFD $0x4e, X12, X13
	VPADDD X13, X12, X12
	VPSHUFD $0xb1, X12, X13
	VPADDD X13, X12, X12             // Σq
	VCVTDQ2PS X12, X12
	VMULSS X12, X4, X12              // (amax/127)·Σq
	VCVTPS2PH $0, X12, X12
	VCVTPH2PS X12, X12
	VMOVSS X12, (R8)
	VCVTPS2PH $0, X4, X4
	VCVTPH2PS X4, X4
	VMOVSS X4, (DX)
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $4, DX
	ADDQ $4, R8
	DECQ BX
	JNE loop

done:
	VZEROUPPER
	RET
