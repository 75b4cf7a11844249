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

// Weights of the block at off(SI) (first row, low half of Z0) and at
// off(SI)(R14) (second row, high half) as unsigned bytes: Q8_0 offset by
// 128, Q4_0 nibbles (weights 0..15, then 16..31, of each row).
#define WQ8(off) \
	VMOVDQU off+2(SI), Y0 \
	VINSERTI64X4 $1, off+2(SI)(R14*1), Z0, Z0 \
	VPXORD Z7, Z0, Z0

#define WQ4(off) \
	VBROADCASTI32X4 off+2(SI), Y0 \
	VBROADCASTI32X4 off+2(SI)(R14*1), Y3 \
	VINSERTI64X4 $1, Y3, Z0, Z0 \
	VPSRLVW Z8, Z0, Z0 \
	VPANDD Z6, Z0, Z0

// BLOCK2ROWS adds one block of both rows to Z4: the weights at off(SI)
// and off(SI)(R14), the activations' values and lane offsets at
// xoff(DI)(AX) and xoff+64(DI)(AX), their scale at doff(DX)(R15*4).
#define BLOCK2ROWS(W, off, xoff, doff) \
	W(off) \
	VMOVDQU64 xoff+64(DI)(AX*1), Z1 \
	VPDPBUSD xoff(DI)(AX*1), Z0, Z1 \
	VCVTDQ2PS Z1, Z1 \
	VPBROADCASTW off(SI), Y2 \
	VPBROADCASTW off(SI)(R14*1), K1, Y2 \
	VCVTPH2PS Y2, Z2 \
	VMULPS.BCST doff(DX)(R15*4), Z2, Z2 \
	VFMADD231PS Z1, Z2, Z4

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

// DOTPAIRS body: for p < pairs, dst[p] and dst[p+h] are the rows at
// w+p·rb and w+(p+h)·rb against the activations: xd the blocks' scales,
// xv per block its values twice then its lane offsets twice (128 bytes);
// n blocks a row. Two blocks per loop, one more for an odd n.
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
	MOVL $0xFF00, AX \
	KMOVW AX, K1 \
	TESTQ BX, BX \
	JEQ end \
pair: \
	MOVQ R12, SI \
	XORQ AX, AX \
	XORQ R15, R15 \
	VPXORD Z4, Z4, Z4 \
	LEAQ 1(R15), R8 \
	CMPQ R8, CX \
	JAE tail \
loop: \
	BLOCK2ROWS(W, 0, 0, 0) \
	BLOCK2ROWS(W, BLOCK, 128, 4) \
	ADDQ $(2*BLOCK), SI \
	ADDQ $256, AX \
	ADDQ $2, R15 \
	LEAQ 1(R15), R8 \
	CMPQ R8, CX \
	JB loop \
tail: \
	CMPQ R15, CX \
	JAE done \
	BLOCK2ROWS(W, 0, 0, 0) \
done: \
	VEXTRACTF64X4 $1, Z4, Y14 \
	SUM8(Y4, X4, X5) \
	SUM8(Y14, X14, X5) \
	VMOVSS X4, (R10) \
	VMOVSS X14, (R10)(R11*1) \
	ADDQ $4, R10 \
	ADDQ R13, R12 \
	DECQ BX \
	JNE pair \
end: \
	VZEROUPPER \
	RET

// func dotPairsQ8_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, pairs int)
TEXT ·dotPairsQ8_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z7
	DOTPAIRS(WQ8, 34)

// func dotPairsQ4_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, pairs int)
TEXT ·dotPairsQ4_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z6
	VMOVDQU64 q4Shift<>(SB), Z8
	DOTPAIRS(WQ4, 18)

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
