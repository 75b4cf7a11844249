//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 VNNI dot products of two Q8_0 or Q4_0 weight rows with
// activations rounded to Q8_0 blocks: for each row the sum dotQ8_0AVX2 or
// dotQ4_0AVX2 (quant_amd64.s) computes, bit for bit.
//
// Per block of 32 the AVX2 kernels form eight int32 lanes, lane m the
// exact sum of the products of values 4m..4m+3, and accumulate them by
// acc[m] += float(lane m)·(d_w·d_x), one FMA per block; the eight lanes
// are added at the end. Here one zmm register holds the eight lanes of
// both rows (0..7 the first row, 8..15 the second), so one VPDPBUSD forms
// the integer lanes of a block of both rows and one FMA accumulates them.
// A row's accumulator is a chain of dependent FMAs, one per block; a
// single row would wait on the FMA latency (4 cycles per 34 bytes of
// Q8_0, slower than memory), two rows per FMA halve that wait.
//
// VPDPBUSD multiplies unsigned bytes by signed ones, so Q8_0 weights are
// offset by 128 (w XOR 0x80) and Q4_0 nibbles are left at 0..15 instead
// of -8..7. The offset times the sum of the four activations is removed by
// starting each lane from the block's lane offsets (in qActs.xv: -128·Σx
// or -8·Σx), so the lanes are the exact integers of the AVX2 kernels. The
// activations come twice per block (qActs.xv), once per row.
//
// Plan 9 operand order: VPDPBUSD s, u, acc computes acc += Σ u·s (u
// unsigned, s signed bytes); VFMADD231PS b, a, acc computes acc += a·b;
// VPBROADCASTW m, K1, y writes only the words K1 selects.

// Q4_0 shift counts: per 16-bit word, 0 in the 16-byte lanes 0 and 2 (the
// low nibbles, weights 0..15) and 4 in lanes 1 and 3 (the high nibbles,
// weights 16..31).
DATA q4Shift<>+0(SB)/8, $0
DATA q4Shift<>+8(SB)/8, $0
DATA q4Shift<>+16(SB)/8, $0x0004000400040004
DATA q4Shift<>+24(SB)/8, $0x0004000400040004
DATA q4Shift<>+32(SB)/8, $0
DATA q4Shift<>+40(SB)/8, $0
DATA q4Shift<>+48(SB)/8, $0x0004000400040004
DATA q4Shift<>+56(SB)/8, $0x0004000400040004
GLOBL q4Shift<>(SB), RODATA|NOPTR, $64

// permBase: the VPERMPS indices of block 0 of eight (lanes 0..7 pick
// lane 0, lanes 8..15 lane 8); block i's are these plus i.
DATA permBase<>+0(SB)/8, $0
DATA permBase<>+8(SB)/8, $0
DATA permBase<>+16(SB)/8, $0
DATA permBase<>+24(SB)/8, $0
DATA permBase<>+32(SB)/8, $0x0000000800000008
DATA permBase<>+40(SB)/8, $0x0000000800000008
DATA permBase<>+48(SB)/8, $0x0000000800000008
DATA permBase<>+56(SB)/8, $0x0000000800000008
GLOBL permBase<>(SB), RODATA|NOPTR, $64

// Weights of the block at off(r) (first row, low half of z) and at
// off(r)(R14) (second row, high half) as unsigned bytes: Q8_0 offset by
// 128, Q4_0 nibbles (weights 0..15, then 16..31, of each row); y is z's
// low half, t a spare ymm.
#define WQ8(r, off, y, z, t) \
	VMOVDQU off+2(r), y \
	VINSERTI64X4 $1, off+2(r)(R14*1), z, z \
	VPXORD Z7, z, z

#define WQ4(r, off, y, z, t) \
	VBROADCASTI32X4 off+2(r), y \
	VBROADCASTI32X4 off+2(r)(R14*1), t \
	VINSERTI64X4 $1, t, z, z \
	VPSRLVW Z8, z, z \
	VPANDD Z6, z, z

// BLOCK2ROWS adds one block of the rows at r and r+R14 to acc: the
// weights at off(r) and off(r)(R14), the activations' values and lane
// offsets at xoff(DI)(AX) and xoff+64(DI)(AX), their scale at
// doff(DX)(R15*4).
#define BLOCK2ROWS(W, r, off, xoff, doff, acc) \
	W(r, off, Y0, Z0, Y3) \
	VMOVDQU64 xoff+64(DI)(AX*1), Z1 \
	VPDPBUSD xoff(DI)(AX*1), Z0, Z1 \
	VCVTDQ2PS Z1, Z1 \
	VPBROADCASTW off(r), Y2 \
	VPBROADCASTW off(r)(R14*1), K1, Y2 \
	VCVTPH2PS Y2, Z2 \
	VMULPS.BCST doff(DX)(R15*4), Z2, Z2 \
	VFMADD231PS Z1, Z2, acc

// SUM8 leaves the sum of acc's eight lanes in xacc, added as the AVX2
// kernels and ggml's hsum_float_8 add them: ((a0+a4)+(a2+a6)) +
// ((a1+a5)+(a3+a7)).
#define SUM8(acc, xacc, xt) \
	VEXTRACTF128 $1, acc, xt \
	VADDPS xt, xacc, xacc \
	VMOVHLPS xacc, xacc, xt \
	VADDPS xt, xacc, xacc \
	VMOVSHDUP xacc, xt \
	VADDSS xt, xacc, xacc

// ROWSCALES8 gathers into x the eight f16 scales of the row at r (blocks
// of BLOCK bytes, the scale first) by a tree of word, dword and qword
// unpacks of the 16 bytes at each block's start.
#define ROWSCALES8(BLOCK, r, x, t1, t2) \
	VMOVDQU (r), x \
	VPUNPCKLWD (BLOCK)(r), x, x \
	VMOVDQU (2*BLOCK)(r), t1 \
	VPUNPCKLWD (3*BLOCK)(r), t1, t1 \
	VPUNPCKLDQ t1, x, x \
	VMOVDQU (4*BLOCK)(r), t1 \
	VPUNPCKLWD (5*BLOCK)(r), t1, t1 \
	VMOVDQU (6*BLOCK)(r), t2 \
	VPUNPCKLWD (7*BLOCK)(r), t2, t2 \
	VPUNPCKLDQ t2, t1, t1 \
	VPUNPCKLQDQ t1, x, x

// SCALES8 leaves in zs the scale products d_w·d_x of the eight blocks at
// r (first row, lanes 0..7) and r+R14 (second row, lanes 8..15) against
// the activations' blocks R15..R15+7 (their d_x twice in Z11, loaded by
// the caller): the products BLOCK2ROWS forms one block at a time, eight
// at a time. Uses R8, X10, X11 (low half of Z11 is kept), X13.
#define SCALES8(BLOCK, r, zs, ys, xs) \
	ROWSCALES8(BLOCK, r, X10, X13, X14) \
	LEAQ (r)(R14*1), R8 \
	ROWSCALES8(BLOCK, R8, xs, X13, X14) \
	VINSERTI32X4 $1, xs, Y10, Y10 \
	VCVTPH2PS Y10, Z10 \
	VMULPS Z11, Z10, zs

// BLOCKS8 adds the block i (0..7) of the eight SCALES8 took of the rows
// at r and r+R14 to acc: as BLOCK2ROWS, the scale products picked from zs
// by Z16+i (lanes 0..7 lane i of zs, lanes 8..15 lane 8+i).
#define BLOCKS8(W, BLOCK, r, i, zi, zs, acc) \
	W(r, i*BLOCK, Y0, Z0, Y3) \
	VMOVDQU64 i*128+64(DI)(AX*1), Z1 \
	VPDPBUSD i*128(DI)(AX*1), Z0, Z1 \
	VCVTDQ2PS Z1, Z1 \
	VPERMPS zs, zi, Z2 \
	VFMADD231PS Z1, Z2, acc

// BLOCKS8Q is BLOCKS8 for both pairs of DOTQUADS (rows at SI and SI+R14
// into Z4, at R9 and R9+R14 into Z9, scale products in Z12 and Z24): the
// activations' values and lane offsets are loaded once for both.
#define BLOCKS8Q(W, BLOCK, i, zi) \
	W(SI, i*BLOCK, Y0, Z0, Y3) \
	W(R9, i*BLOCK, Y5, Z5, Y3) \
	VMOVDQU64 i*128(DI)(AX*1), Z13 \
	VMOVDQU64 i*128+64(DI)(AX*1), Z1 \
	VMOVDQA64 Z1, Z2 \
	VPDPBUSD Z13, Z0, Z1 \
	VPDPBUSD Z13, Z5, Z2 \
	VCVTDQ2PS Z1, Z1 \
	VCVTDQ2PS Z2, Z2 \
	VPERMPS Z12, zi, Z10 \
	VPERMPS Z24, zi, Z25 \
	VFMADD231PS Z1, Z10, Z4 \
	VFMADD231PS Z2, Z25, Z9

// PERMIDX fills Z16..Z23 with BLOCKS8's lane indices and K1 with the
// mask of BLOCK2ROWS's second broadcast.
#define PERMIDX \
	MOVL $0xFF00, AX \
	KMOVW AX, K1 \
	VMOVDQU64 permBase<>(SB), Z16 \
	MOVL $1, AX \
	VPBROADCASTD AX, Z15 \
	VPADDD Z15, Z16, Z17 \
	VPADDD Z15, Z17, Z18 \
	VPADDD Z15, Z18, Z19 \
	VPADDD Z15, Z19, Z20 \
	VPADDD Z15, Z20, Z21 \
	VPADDD Z15, Z21, Z22 \
	VPADDD Z15, Z22, Z23

// EIGHT is the body of the eight-block loops: the scale products of the
// row pair at r into zs, then its eight blocks into acc.
#define EIGHT(W, BLOCK, r, zs, ys, xs, acc) \
	SCALES8(BLOCK, r, zs, ys, xs) \
	BLOCKS8(W, BLOCK, r, 0, Z16, zs, acc) \
	BLOCKS8(W, BLOCK, r, 1, Z17, zs, acc) \
	BLOCKS8(W, BLOCK, r, 2, Z18, zs, acc) \
	BLOCKS8(W, BLOCK, r, 3, Z19, zs, acc) \
	BLOCKS8(W, BLOCK, r, 4, Z20, zs, acc) \
	BLOCKS8(W, BLOCK, r, 5, Z21, zs, acc) \
	BLOCKS8(W, BLOCK, r, 6, Z22, zs, acc) \
	BLOCKS8(W, BLOCK, r, 7, Z23, zs, acc)

// STOREPAIR writes the two sums of acc (first row lanes 0..7, second
// 8..15) to (R10) and (R10)(R11).
#define STOREPAIR(acc, yacc, xacc) \
	VEXTRACTF64X4 $1, acc, Y14 \
	SUM8(yacc, xacc, X5) \
	SUM8(Y14, X14, X5) \
	VMOVSS xacc, (R10) \
	VMOVSS X14, (R10)(R11*1)

// DOTPAIRS body: for p < pairs, dst[p] and dst[p+h] are the rows at
// w+p·rb and w+(p+h)·rb against the activations: xd the blocks' scales,
// xv per block its values twice then its lane offsets twice (128 bytes);
// n blocks a row. Eight blocks per loop with their scales taken at once
// (SCALES8), then one block per loop.
// func(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, pairs int)
#define DOTPAIRS(W, BLOCK) \
	MOVQ dst+0(FP), R10 \
	MOVQ h+8(FP), R11 \
	MOVQ w+16(FP), R12 \
	MOVQ rb+24(FP), R13 \
	MOVQ xd+32(FP), DX \
	MOVQ xv+40(FP), DI \
	MOVQ n+48(FP), CX \
	MOVQ pairs+56(FP), BX \
	MOVQ R11, R14 \
	IMULQ R13, R14 \
	SHLQ $2, R11 \
	PERMIDX \
	TESTQ BX, BX \
	JEQ end \
pair: \
	MOVQ R12, SI \
	XORQ AX, AX \
	XORQ R15, R15 \
	VPXORD Z4, Z4, Z4 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JA loop1 \
loop8: \
	VBROADCASTF32X8 (DX)(R15*4), Z11 \
	EIGHT(W, BLOCK, SI, Z12, Y12, X12, Z4) \
	ADDQ $(8*BLOCK), SI \
	ADDQ $1024, AX \
	ADDQ $8, R15 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JBE loop8 \
loop1: \
	CMPQ R15, CX \
	JAE done \
	BLOCK2ROWS(W, SI, 0, 0, 0, Z4) \
	ADDQ $BLOCK, SI \
	ADDQ $128, AX \
	INCQ R15 \
	JMP loop1 \
done: \
	STOREPAIR(Z4, Y4, X4) \
	ADDQ $4, R10 \
	ADDQ R13, R12 \
	DECQ BX \
	JNE pair \
end: \
	VZEROUPPER \
	RET

// DOTQUADS body: for p < quads, dst[p+j·h] for j < 4 is the row at
// w+(p+j·h)·rb against the activations, as DOTPAIRS: two pairs of rows
// (p and p+h in Z4, p+2h and p+3h in Z9) share the activations' loads and
// the d_x broadcast, and their two FMA chains interleave, so neither
// waits on the other's FMA latency.
// func(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)
#define DOTQUADS(W, BLOCK) \
	MOVQ dst+0(FP), R10 \
	MOVQ h+8(FP), R11 \
	MOVQ w+16(FP), R12 \
	MOVQ rb+24(FP), R13 \
	MOVQ xd+32(FP), DX \
	MOVQ xv+40(FP), DI \
	MOVQ n+48(FP), CX \
	MOVQ quads+56(FP), BX \
	MOVQ R11, R14 \
	IMULQ R13, R14 \
	SHLQ $2, R11 \
	PERMIDX \
	TESTQ BX, BX \
	JEQ end \
quad: \
	MOVQ R12, SI \
	LEAQ (SI)(R14*2), R9 \
	XORQ AX, AX \
	XORQ R15, R15 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z9, Z9, Z9 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JA loop1 \
loop8: \
	VBROADCASTF32X8 (DX)(R15*4), Z11 \
	SCALES8(BLOCK, SI, Z12, Y12, X12) \
	SCALES8(BLOCK, R9, Z24, Y15, X15) \
	BLOCKS8Q(W, BLOCK, 0, Z16) \
	BLOCKS8Q(W, BLOCK, 1, Z17) \
	BLOCKS8Q(W, BLOCK, 2, Z18) \
	BLOCKS8Q(W, BLOCK, 3, Z19) \
	BLOCKS8Q(W, BLOCK, 4, Z20) \
	BLOCKS8Q(W, BLOCK, 5, Z21) \
	BLOCKS8Q(W, BLOCK, 6, Z22) \
	BLOCKS8Q(W, BLOCK, 7, Z23) \
	ADDQ $(8*BLOCK), SI \
	ADDQ $(8*BLOCK), R9 \
	ADDQ $1024, AX \
	ADDQ $8, R15 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JBE loop8 \
loop1: \
	CMPQ R15, CX \
	JAE done \
	BLOCK2ROWS(W, SI, 0, 0, 0, Z4) \
	BLOCK2ROWS(W, R9, 0, 0, 0, Z9) \
	ADDQ $BLOCK, SI \
	ADDQ $BLOCK, R9 \
	ADDQ $128, AX \
	INCQ R15 \
	JMP loop1 \
done: \
	STOREPAIR(Z4, Y4, X4) \
	LEAQ (R10)(R11*2), R8 \
	VEXTRACTF64X4 $1, Z9, Y14 \
	SUM8(Y9, X9, X5) \
	SUM8(Y14, X14, X5) \
	VMOVSS X9, (R8) \
	VMOVSS X14, (R8)(R11*1) \
	ADDQ $4, R10 \
	ADDQ R13, R12 \
	DECQ BX \
	JNE quad \
end: \
	VZEROUPPER \
	RET

// func dotPairsQ8_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, pairs int)
TEXT ·dotPairsQ8_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z7
	DOTPAIRS(WQ8, 34)

// func dotQuadsQ8_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsQ8_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z7
	DOTQUADS(WQ8, 34)

// func dotPairsQ4_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, pairs int)
TEXT ·dotPairsQ4_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z6
	VMOVDQU64 q4Shift<>(SB), Z8
	DOTPAIRS(WQ4, 18)

// func dotQuadsQ4_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsQ4_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z6
	VMOVDQU64 q4Shift<>(SB), Z8
	DOTQUADS(WQ4, 18)

// func quantQ8_0Z(x *float32, qs *int8, d *float32, xv *byte, shift int, blocks int)
// quantizeQ8_0 of blocks of 32 values at x, in AVX-512: qs the rounded
// values, d the scales (widened from binary16), and xv the VNNI layout
// (qActs.vnni, lane offsets shifted by shift: 7 for Q8_0 weights, 3 for
// Q4_0). The same bits as quantizeQ8_0 and vnni for finite x: |x| by
// masking the sign, the block maximum, d = amax/127 and id = 127/amax (0
// for an all-zero block) in float32, x·id rounded to nearest even
// (VCVTPS2DQ), d rounded to binary16 and back (VCVTPS2PH, nearest even).
TEXT ·quantQ8_0Z(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ qs+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ xv+24(FP), R8
	MOVQ shift+32(FP), CX
	MOVQ blocks+40(FP), BX
	VMOVQ CX, X9                     // the shift count
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z7              // |·| mask
	MOVL $0x01010101, AX
	VPBROADCASTD AX, Y6              // ones, unsigned bytes
	MOVL $0x42fe0000, AX
	VMOVD AX, X8                     // 127
	VXORPS X11, X11, X11             // 0
	TESTQ BX, BX
	JEQ qdone
qloop:
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
	VCVTPS2PH $0, X4, X4
	VCVTPH2PS X4, X4
	VMOVSS X4, (DX)
	VMOVDQU Y0, (R8)
	VMOVDQU Y0, 32(R8)
	VPXOR Y12, Y12, Y12
	VPDPBUSD Y0, Y6, Y12             // the sums of each four values
	VPSLLD X9, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPSUBD Y12, Y13, Y12             // minus them, shifted
	VMOVDQU Y12, 64(R8)
	VMOVDQU Y12, 96(R8)
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $4, DX
	ADDQ $128, R8
	DECQ BX
	JNE qloop
qdone:
	VZEROUPPER
	RET
