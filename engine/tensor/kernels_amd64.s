//go:build amd64 && !purego

#include "textflag.h"


// AVX2 + FMA kernels of kernels_amd64.go.
//
// A dot product over a long row (256 terms or more) of float32 weights
// keeps sixteen lanes in two ymm accumulators, lo and hi: lane l sums the
// terms j ≡ l (mod 16) in order, one FMA each; at the end a = lo + hi lane
// by lane. A long row of 16-bit weights (bfloat16, binary16) keeps
// thirty-two lanes in four accumulators s0..s3 (lanes 0-7, 8-15, 16-23,
// 24-31): lane l sums the terms j ≡ l (mod 32) in order, a row of 16 mod
// 32 terms ending with its last sixteen in s0 and s1; at the end
// lo = s0 + s2 and hi = s1 + s3, then a = lo + hi. A short row keeps eight
// lanes in one accumulator a. Either way the eight lanes of a are added
// as ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)) by VHADDPS trees, so a result
// does not depend on which kernel computed it. Independent FMA chains let
// one row at a time run at memory speed: two chains carry 16 bytes of
// float32 weights a cycle, but only 8 of 16-bit weights, too few, hence
// four for those. Decode reads the weights as one sequential stream,
// which the hardware prefetchers follow far better than interleaved rows
// (on Zen 4, two interleaved rows stream at half the speed of one). Short
// rows keep the order of eight lanes, nearer a plain loop's, and their
// chains overlap from row to row.
//
// Every axpy sums its terms in the order of the weight rows, one FMA each,
// so the decode kernel (axpyRows) and the prefill panel agree too.
//
// Weights are widened in registers: float32 as is, bfloat16 by zero
// extension and a 16-bit left shift, binary16 by VCVTPH2PS (F16C).
//
// Plan 9 operand order: VFMADD231PS b, a, acc computes acc += a·b.

// ZERO12 clears the accumulators Y0..Y11 of a prefill tile.
#define ZERO12 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11

// Load 8 weights at element index AX plus off elements of the row at base
// into dst.
#define LW_F32(off, base, dst) VMOVUPS (off*4)(base)(AX*4), dst
#define LW_BF16(off, base, dst) VPMOVZXWD (off*2)(base)(AX*2), dst; VPSLLD $16, dst, dst
#define LW_F16(off, base, dst) VCVTPH2PS (off*2)(base)(AX*2), dst

// acc += x · (8 weights at element index AX plus off of the row at base);
// tmp is scratch.
#define FMAW_F32(off, base, x, acc, tmp) VFMADD231PS (off*4)(base)(AX*4), x, acc
#define FMAW_BF16(off, base, x, acc, tmp) LW_BF16(off, base, tmp); VFMADD231PS tmp, x, acc
#define FMAW_F16(off, base, x, acc, tmp) LW_F16(off, base, tmp); VFMADD231PS tmp, x, acc

// Load 8 weights at byte offset off of base into dst.
#define LWO_F32(off, base, dst) VMOVUPS off(base), dst
#define LWO_BF16(off, base, dst) VPMOVZXWD off(base), dst; VPSLLD $16, dst, dst
#define LWO_F16(off, base, dst) VCVTPH2PS off(base), dst

// acc += x · (8 weights at byte offset off of base); tmp is scratch.
#define FMAO_F32(off, base, x, acc, tmp) VFMADD231PS off(base), x, acc
#define FMAO_BF16(off, base, x, acc, tmp) LWO_BF16(off, base, tmp); VFMADD231PS tmp, x, acc
#define FMAO_F16(off, base, x, acc, tmp) LWO_F16(off, base, tmp); VFMADD231PS tmp, x, acc

// SUM1 leaves in the low float of xa the sum of the eight lanes of a:
// ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)).
#define SUM1(a, xa, xt) \
	VHADDPS a, a, a \
	VHADDPS a, a, a \
	VEXTRACTF128 $1, a, xt \
	VADDSS xt, xa, xa

// SUM2 leaves in the low two floats of xa the lane sums of a and b, as
// SUM1 adds them. It clobbers b and xt.
#define SUM2(a, b, xa, xt) \
	VHADDPS b, a, a \
	VHADDPS a, a, a \
	VEXTRACTF128 $1, a, xt \
	VADDPS xt, xa, xa

// REDUCE4 leaves in xa the lane sums of a, b, c, d, as SUM1 adds them:
// xa = [Σa, Σb, Σc, Σd]. It clobbers a, c and xc.
#define REDUCE4(a, b, c, d, xa, xc) \
	VHADDPS b, a, a \
	VHADDPS d, c, c \
	VHADDPS c, a, a \
	VEXTRACTF128 $1, a, xc \
	VADDPS xc, xa, xa

// DOTROWS body: dst[r] = w[r]·x for r < rows in sixteen lanes (float32
// weights); k a positive multiple of 16.
// func(dst *float32, w *T, ldw int, x *float32, k int, rows int)
#define DOTROWS(FMAW, SHIFT) \
	MOVQ dst+0(FP), DI \
	MOVQ w+8(FP), SI \
	MOVQ ldw+16(FP), R9 \
	SHLQ $SHIFT, R9 \
	MOVQ x+24(FP), DX \
	MOVQ k+32(FP), CX \
	MOVQ rows+40(FP), BX \
row: \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	XORQ AX, AX \
loop: \
	VMOVUPS (DX)(AX*4), Y4 \
	VMOVUPS 32(DX)(AX*4), Y5 \
	FMAW(0, SI, Y4, Y0, Y6) \
	FMAW(8, SI, Y5, Y1, Y7) \
	ADDQ $16, AX \
	CMPQ AX, CX \
	JB loop \
	VADDPS Y1, Y0, Y0 \
	SUM1(Y0, X0, X1) \
	MOVSS X0, (DI) \
	ADDQ $4, DI \
	ADDQ R9, SI \
	DECQ BX \
	JNZ row \
	VZEROUPPER \
	RET

// DOTROWS32 body: DOTROWS for 16-bit weights in thirty-two lanes, four
// accumulators Y0..Y3; k a positive multiple of 16 (a last block of
// sixteen goes to Y0 and Y1).
// func(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)
#define DOTROWS32(FMAW) \
	MOVQ dst+0(FP), DI \
	MOVQ w+8(FP), SI \
	MOVQ ldw+16(FP), R9 \
	SHLQ $1, R9 \
	MOVQ x+24(FP), DX \
	MOVQ k+32(FP), CX \
	MOVQ CX, R10 \
	ANDQ $~31, R10 \
	MOVQ rows+40(FP), BX \
row: \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	XORQ AX, AX \
loop: \
	VMOVUPS (DX)(AX*4), Y4 \
	VMOVUPS 32(DX)(AX*4), Y5 \
	VMOVUPS 64(DX)(AX*4), Y6 \
	VMOVUPS 96(DX)(AX*4), Y7 \
	FMAW(0, SI, Y4, Y0, Y8) \
	FMAW(8, SI, Y5, Y1, Y9) \
	FMAW(16, SI, Y6, Y2, Y10) \
	FMAW(24, SI, Y7, Y3, Y11) \
	ADDQ $32, AX \
	CMPQ AX, R10 \
	JB loop \
	CMPQ AX, CX \
	JAE sum \
	VMOVUPS (DX)(AX*4), Y4 \
	VMOVUPS 32(DX)(AX*4), Y5 \
	FMAW(0, SI, Y4, Y0, Y8) \
	FMAW(8, SI, Y5, Y1, Y9) \
sum: \
	VADDPS Y2, Y0, Y0 \
	VADDPS Y3, Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	SUM1(Y0, X0, X1) \
	MOVSS X0, (DI) \
	ADDQ $4, DI \
	ADDQ R9, SI \
	DECQ BX \
	JNZ row \
	VZEROUPPER \
	RET

// FMA3X computes a0 += w·x[t0], a1 += w·x[t1], a2 += w·x[t2] for the 8
// elements of x at element index AX plus off of the rows at DX, R10, R11.
#define FMA3X(off, w, a0, a1, a2) \
	VFMADD231PS (off*4)(DX)(AX*4), w, a0 \
	VFMADD231PS (off*4)(R10)(AX*4), w, a1 \
	VFMADD231PS (off*4)(R11)(AX*4), w, a2

// DOT1X3_32 body: one row of 16-bit weights against groups·3 rows of x in
// the thirty-two lanes of DOTROWS32; for g < groups, t < 3:
// dst[(3g+t)·ldd] = w·x[3g+t]. The accumulator of lanes 8c..8c+7 and x
// row t is Y(3c+t); each weight load serves three rows of x, read by the
// FMAs from memory. k a positive multiple of 16.
// func(dst *float32, ldd int, w *uint16, x *float32, ldx int, k int, groups int)
#define DOT1X3_32(LW) \
	MOVQ dst+0(FP), DI \
	MOVQ ldd+8(FP), R8 \
	SHLQ $2, R8 \
	MOVQ w+16(FP), SI \
	MOVQ x+24(FP), DX \
	MOVQ ldx+32(FP), R9 \
	SHLQ $2, R9 \
	MOVQ k+40(FP), CX \
	MOVQ CX, R12 \
	ANDQ $~31, R12 \
	MOVQ groups+48(FP), BX \
group: \
	LEAQ (DX)(R9*1), R10 \
	LEAQ (DX)(R9*2), R11 \
	ZERO12 \
	XORQ AX, AX \
loop: \
	LW(0, SI, Y12) \
	FMA3X(0, Y12, Y0, Y1, Y2) \
	LW(8, SI, Y13) \
	FMA3X(8, Y13, Y3, Y4, Y5) \
	LW(16, SI, Y14) \
	FMA3X(16, Y14, Y6, Y7, Y8) \
	LW(24, SI, Y15) \
	FMA3X(24, Y15, Y9, Y10, Y11) \
	ADDQ $32, AX \
	CMPQ AX, R12 \
	JB loop \
	CMPQ AX, CX \
	JAE sum \
	LW(0, SI, Y12) \
	FMA3X(0, Y12, Y0, Y1, Y2) \
	LW(8, SI, Y13) \
	FMA3X(8, Y13, Y3, Y4, Y5) \
sum: \
	VADDPS Y6, Y0, Y0 \
	VADDPS Y9, Y3, Y3 \
	VADDPS Y3, Y0, Y0 \
	SUM1(Y0, X0, X12) \
	MOVSS X0, (DI) \
	VADDPS Y7, Y1, Y1 \
	VADDPS Y10, Y4, Y4 \
	VADDPS Y4, Y1, Y1 \
	SUM1(Y1, X1, X13) \
	MOVSS X1, (DI)(R8*1) \
	VADDPS Y8, Y2, Y2 \
	VADDPS Y11, Y5, Y5 \
	VADDPS Y5, Y2, Y2 \
	SUM1(Y2, X2, X14) \
	MOVSS X2, (DI)(R8*2) \
	LEAQ (DI)(R8*2), DI \
	ADDQ R8, DI \
	LEAQ (DX)(R9*2), DX \
	ADDQ R9, DX \
	DECQ BX \
	JNZ group \
	VZEROUPPER \
	RET

// DOT2X3 body: two rows of float32 weights against groups·3 rows of x;
// for g < groups, t < 3, r < 2: dst[(3g+t)·ldd + r] = w[r]·x[3g+t]. Each
// step loads the weights once for three rows of x.
// func(dst *float32, ldd int, w *T, ldw int, x *float32, ldx int, k int, groups int)
#define DOT2X3(LW, SHIFT) \
	MOVQ dst+0(FP), DI \
	MOVQ ldd+8(FP), R8 \
	SHLQ $2, R8 \
	MOVQ w+16(FP), SI \
	MOVQ ldw+24(FP), R9 \
	SHLQ $SHIFT, R9 \
	LEAQ (SI)(R9*1), R12 \
	MOVQ x+32(FP), DX \
	MOVQ ldx+40(FP), R9 \
	SHLQ $2, R9 \
	MOVQ k+48(FP), CX \
	MOVQ groups+56(FP), BX \
group: \
	LEAQ (DX)(R9*1), R10 \
	LEAQ (DX)(R9*2), R11 \
	ZERO12 \
	XORQ AX, AX \
loop: \
	VMOVUPS (DX)(AX*4), Y12 \
	VMOVUPS (R10)(AX*4), Y13 \
	VMOVUPS (R11)(AX*4), Y14 \
	LW(0, SI, Y15) \
	VFMADD231PS Y15, Y12, Y0 \
	VFMADD231PS Y15, Y13, Y2 \
	VFMADD231PS Y15, Y14, Y4 \
	LW(0, R12, Y15) \
	VFMADD231PS Y15, Y12, Y6 \
	VFMADD231PS Y15, Y13, Y8 \
	VFMADD231PS Y15, Y14, Y10 \
	VMOVUPS 32(DX)(AX*4), Y12 \
	VMOVUPS 32(R10)(AX*4), Y13 \
	VMOVUPS 32(R11)(AX*4), Y14 \
	LW(8, SI, Y15) \
	VFMADD231PS Y15, Y12, Y1 \
	VFMADD231PS Y15, Y13, Y3 \
	VFMADD231PS Y15, Y14, Y5 \
	LW(8, R12, Y15) \
	VFMADD231PS Y15, Y12, Y7 \
	VFMADD231PS Y15, Y13, Y9 \
	VFMADD231PS Y15, Y14, Y11 \
	ADDQ $16, AX \
	CMPQ AX, CX \
	JB loop \
	VADDPS Y1, Y0, Y0 \
	VADDPS Y3, Y2, Y2 \
	VADDPS Y5, Y4, Y4 \
	VADDPS Y7, Y6, Y6 \
	VADDPS Y9, Y8, Y8 \
	VADDPS Y11, Y10, Y10 \
	SUM2(Y0, Y6, X0, X1) \
	MOVSD X0, (DI) \
	SUM2(Y2, Y8, X2, X3) \
	MOVSD X2, (DI)(R8*1) \
	SUM2(Y4, Y10, X4, X5) \
	MOVSD X4, (DI)(R8*2) \
	LEAQ (DI)(R8*2), DI \
	ADDQ R8, DI \
	LEAQ (DX)(R9*2), DX \
	ADDQ R9, DX \
	DECQ BX \
	JNZ group \
	VZEROUPPER \
	RET

// DOTROWS8 body: DOTROWS with eight lanes in one accumulator per row, for
// short rows (k a positive multiple of 8), whose FMA chains the core
// overlaps from one row to the next.
// func(dst *float32, w *T, ldw int, x *float32, k int, rows int)
#define DOTROWS8(FMAW, SHIFT) \
	MOVQ dst+0(FP), DI \
	MOVQ w+8(FP), SI \
	MOVQ ldw+16(FP), R9 \
	SHLQ $SHIFT, R9 \
	MOVQ x+24(FP), DX \
	MOVQ k+32(FP), CX \
	MOVQ rows+40(FP), BX \
row: \
	VXORPS Y0, Y0, Y0 \
	XORQ AX, AX \
loop: \
	VMOVUPS (DX)(AX*4), Y4 \
	FMAW(0, SI, Y4, Y0, Y6) \
	ADDQ $8, AX \
	CMPQ AX, CX \
	JB loop \
	SUM1(Y0, X0, X1) \
	MOVSS X0, (DI) \
	ADDQ $4, DI \
	ADDQ R9, SI \
	DECQ BX \
	JNZ row \
	VZEROUPPER \
	RET

// DOT4X3_8 body: DOT2X3 with eight lanes, blocks of four weight rows by
// three rows of x: dst[(3g+t)·ldd + 4b + r] = w[4b + r]·x[3g+t] for b <
// blocks, g < groups, t < 3, r < 4 (one call for a whole product, such as
// a decode step's attention scores over every cached key).
// func(dst *float32, ldd int, w *T, ldw int, x *float32, ldx int, k int, groups int, blocks int)
#define DOT4X3_8(LW, SHIFT) \
	MOVQ dst+0(FP), R15 \
	MOVQ ldd+8(FP), R8 \
	SHLQ $2, R8 \
	MOVQ w+16(FP), SI \
	MOVQ ldw+24(FP), AX \
	SHLQ $SHIFT, AX \
	LEAQ (SI)(AX*1), R12 \
	LEAQ (SI)(AX*2), R13 \
	LEAQ (R12)(AX*2), R14 \
	MOVQ ldx+40(FP), R9 \
	SHLQ $2, R9 \
	MOVQ k+48(FP), CX \
block: \
	MOVQ R15, DI \
	MOVQ x+32(FP), DX \
	MOVQ groups+56(FP), BX \
group: \
	LEAQ (DX)(R9*1), R10 \
	LEAQ (DX)(R9*2), R11 \
	ZERO12 \
	XORQ AX, AX \
loop: \
	VMOVUPS (DX)(AX*4), Y12 \
	VMOVUPS (R10)(AX*4), Y13 \
	VMOVUPS (R11)(AX*4), Y14 \
	LW(0, SI, Y15) \
	VFMADD231PS Y15, Y12, Y0 \
	VFMADD231PS Y15, Y13, Y1 \
	VFMADD231PS Y15, Y14, Y2 \
	LW(0, R12, Y15) \
	VFMADD231PS Y15, Y12, Y3 \
	VFMADD231PS Y15, Y13, Y4 \
	VFMADD231PS Y15, Y14, Y5 \
	LW(0, R13, Y15) \
	VFMADD231PS Y15, Y12, Y6 \
	VFMADD231PS Y15, Y13, Y7 \
	VFMADD231PS Y15, Y14, Y8 \
	LW(0, R14, Y15) \
	VFMADD231PS Y15, Y12, Y9 \
	VFMADD231PS Y15, Y13, Y10 \
	VFMADD231PS Y15, Y14, Y11 \
	ADDQ $8, AX \
	CMPQ AX, CX \
	JB loop \
	REDUCE4(Y0, Y3, Y6, Y9, X0, X6) \
	VMOVUPS X0, (DI) \
	REDUCE4(Y1, Y4, Y7, Y10, X1, X7) \
	VMOVUPS X1, (DI)(R8*1) \
	REDUCE4(Y2, Y5, Y8, Y11, X2, X8) \
	VMOVUPS X2, (DI)(R8*2) \
	LEAQ (DI)(R8*2), DI \
	ADDQ R8, DI \
	LEAQ (DX)(R9*2), DX \
	ADDQ R9, DX \
	DECQ BX \
	JNZ group \
	MOVQ R12, AX \
	SUBQ SI, AX \
	LEAQ (R14)(AX*1), SI \
	LEAQ (SI)(AX*1), R12 \
	LEAQ (SI)(AX*2), R13 \
	LEAQ (R12)(AX*2), R14 \
	ADDQ $16, R15 \
	DECQ blocks+64(FP) \
	JNZ block \
	VZEROUPPER \
	RET

// AXPYROWS body: for i < rows, in order: dst[o] += a[i]·w[i·ldw + o] for
// o < m (a positive multiple of 8), one FMA each. The weight rows are read
// one after another; dst stays in cache.
// func(dst *float32, a *float32, w *T, ldw int, rows int, m int)
#define AXPYROWS(FMAO, STEP, SHIFT) \
	MOVQ dst+0(FP), DI \
	MOVQ a+8(FP), DX \
	MOVQ w+16(FP), SI \
	MOVQ ldw+24(FP), R9 \
	SHLQ $SHIFT, R9 \
	MOVQ rows+32(FP), BX \
	MOVQ m+40(FP), CX \
	SHLQ $2, CX \
	ADDQ DI, CX \
row: \
	VBROADCASTSS (DX), Y0 \
	MOVQ DI, R10 \
	MOVQ SI, R11 \
loop: \
	VMOVUPS (R10), Y4 \
	FMAO(0, R11, Y0, Y4, Y8) \
	VMOVUPS Y4, (R10) \
	ADDQ $32, R10 \
	ADDQ $STEP, R11 \
	CMPQ R10, CX \
	JB loop \
	ADDQ $4, DX \
	ADDQ R9, SI \
	DECQ BX \
	JNZ row \
	VZEROUPPER \
	RET

// PANEL body: a tile of 6 rows of x by 16 output columns of a weight
// stored (in, out): for t < 6, c < 16,
// dst[t·ldd + c] = Σ_i x[t·ldx + i] · w[i·ldw + c], i in order, one FMA
// each. OFF1 is the byte offset of column 8 in a weight row.
// func(dst *float32, ldd int, x *float32, ldx int, w *T, ldw int, in int)
#define PANEL(LWO, SHIFT, OFF1) \
	MOVQ x+16(FP), DX \
	MOVQ ldx+24(FP), R8 \
	SHLQ $2, R8 \
	LEAQ (DX)(R8*1), R9 \
	LEAQ (DX)(R8*2), R10 \
	LEAQ (R9)(R8*2), R11 \
	LEAQ (R10)(R8*2), R12 \
	LEAQ (R11)(R8*2), R13 \
	MOVQ w+32(FP), SI \
	MOVQ ldw+40(FP), R14 \
	SHLQ $SHIFT, R14 \
	MOVQ in+48(FP), CX \
	ZERO12 \
	XORQ AX, AX \
loop: \
	LWO(0, SI, Y12) \
	LWO(OFF1, SI, Y13) \
	VBROADCASTSS (DX)(AX*4), Y14 \
	VFMADD231PS Y12, Y14, Y0 \
	VFMADD231PS Y13, Y14, Y1 \
	VBROADCASTSS (R9)(AX*4), Y15 \
	VFMADD231PS Y12, Y15, Y2 \
	VFMADD231PS Y13, Y15, Y3 \
	VBROADCASTSS (R10)(AX*4), Y14 \
	VFMADD231PS Y12, Y14, Y4 \
	VFMADD231PS Y13, Y14, Y5 \
	VBROADCASTSS (R11)(AX*4), Y15 \
	VFMADD231PS Y12, Y15, Y6 \
	VFMADD231PS Y13, Y15, Y7 \
	VBROADCASTSS (R12)(AX*4), Y14 \
	VFMADD231PS Y12, Y14, Y8 \
	VFMADD231PS Y13, Y14, Y9 \
	VBROADCASTSS (R13)(AX*4), Y15 \
	VFMADD231PS Y12, Y15, Y10 \
	VFMADD231PS Y13, Y15, Y11 \
	ADDQ R14, SI \
	INCQ AX \
	CMPQ AX, CX \
	JB loop \
	MOVQ dst+0(FP), DI \
	MOVQ ldd+8(FP), R8 \
	SHLQ $2, R8 \
	LEAQ (DI)(R8*2), BX \
	ADDQ R8, BX \
	VMOVUPS Y0, (DI) \
	VMOVUPS Y1, 32(DI) \
	VMOVUPS Y2, (DI)(R8*1) \
	VMOVUPS Y3, 32(DI)(R8*1) \
	VMOVUPS Y4, (DI)(R8*2) \
	VMOVUPS Y5, 32(DI)(R8*2) \
	VMOVUPS Y6, (BX) \
	VMOVUPS Y7, 32(BX) \
	VMOVUPS Y8, (BX)(R8*1) \
	VMOVUPS Y9, 32(BX)(R8*1) \
	VMOVUPS Y10, (BX)(R8*2) \
	VMOVUPS Y11, 32(BX)(R8*2) \
	VZEROUPPER \
	RET

// func dotRowsF32(dst *float32, w *float32, ldw int, x *float32, k int, rows int)
TEXT ·dotRowsF32(SB), NOSPLIT, $0-48
	DOTROWS(FMAW_F32, 2)

// func dotRowsBF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)
TEXT ·dotRowsBF16(SB), NOSPLIT, $0-48
	DOTROWS32(FMAW_BF16)

// func dotRowsF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)
TEXT ·dotRowsF16(SB), NOSPLIT, $0-48
	DOTROWS32(FMAW_F16)

// func dotRows8F32(dst *float32, w *float32, ldw int, x *float32, k int, rows int)
TEXT ·dotRows8F32(SB), NOSPLIT, $0-48
	DOTROWS8(FMAW_F32, 2)

// func dotRows8BF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)
TEXT ·dotRows8BF16(SB), NOSPLIT, $0-48
	DOTROWS8(FMAW_BF16, 1)

// func dotRows8F16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int)
TEXT ·dotRows8F16(SB), NOSPLIT, $0-48
	DOTROWS8(FMAW_F16, 1)

// func dot4x3x8F32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int)
TEXT ·dot4x3x8F32(SB), NOSPLIT, $0-72
	DOT4X3_8(LW_F32, 2)

// func dot4x3x8BF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int)
TEXT ·dot4x3x8BF16(SB), NOSPLIT, $0-72
	DOT4X3_8(LW_BF16, 1)

// func dot4x3x8F16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int)
TEXT ·dot4x3x8F16(SB), NOSPLIT, $0-72
	DOT4X3_8(LW_F16, 1)

// func dot2x3F32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int)
TEXT ·dot2x3F32(SB), NOSPLIT, $0-64
	DOT2X3(LW_F32, 2)

// func dot1x3BF16(dst *float32, ldd int, w *uint16, x *float32, ldx int, k int, groups int)
TEXT ·dot1x3BF16(SB), NOSPLIT, $0-56
	DOT1X3_32(LW_BF16)

// func dot1x3F16(dst *float32, ldd int, w *uint16, x *float32, ldx int, k int, groups int)
TEXT ·dot1x3F16(SB), NOSPLIT, $0-56
	DOT1X3_32(LW_F16)

// func axpyRowsF32(dst *float32, a *float32, w *float32, ldw int, rows int, m int)
TEXT ·axpyRowsF32(SB), NOSPLIT, $0-48
	AXPYROWS(FMAO_F32, 32, 2)

// func axpyRowsBF16(dst *float32, a *float32, w *uint16, ldw int, rows int, m int)
TEXT ·axpyRowsBF16(SB), NOSPLIT, $0-48
	AXPYROWS(FMAO_BF16, 16, 1)

// func axpyRowsF16(dst *float32, a *float32, w *uint16, ldw int, rows int, m int)
TEXT ·axpyRowsF16(SB), NOSPLIT, $0-48
	AXPYROWS(FMAO_F16, 16, 1)

// func panel6x16F32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int)
TEXT ·panel6x16F32(SB), NOSPLIT, $0-56
	PANEL(LWO_F32, 2, 32)

// func panel6x16BF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)
TEXT ·panel6x16BF16(SB), NOSPLIT, $0-56
	PANEL(LWO_BF16, 1, 16)

// func panel6x16F16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)
TEXT ·panel6x16F16(SB), NOSPLIT, $0-56
	PANEL(LWO_F16, 1, 16)

// func cpuidECX1() uint32 returns CPUID leaf 1's ECX (bit 29: F16C).
TEXT ·cpuidECX1(SB), NOSPLIT, $0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, ret+0(FP)
	RET


// func prefetchLines(p unsafe.Pointer, n int) asks the caches for every
// 64-byte line of the n bytes at p (n ≥ 1), PREFETCHT0, waiting for none.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	ADDQ SI, CX
	ANDQ $~63, SI
prefetch:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	CMPQ SI, CX
	JB prefetch
	RET

// func roundF16AVX(dst, src *float32, n int) writes each of n floats (n a
// positive multiple of 8) rounded to binary16, to nearest even (F16C
// VCVTPS2PH), and widened back.
TEXT ·roundF16AVX(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
roundf16:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X0
	VCVTPH2PS X0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNE roundf16
	VZEROUPPER
	RET

// ELEMWISE body: dst[i] = a[i] OP b[i] for i < n (n a positive multiple
// of 8), each one rounded operation, as the Go loops compute it: 32 a
// pass, then 8. dst in DI, a in SI, b in DX, n in CX.
#define ELEMWISE(OP) \
	XORQ AX, AX \
	MOVQ CX, R8 \
	ANDQ $~31, R8 \
	JZ ew8 \
ew32: \
	VMOVUPS (SI)(AX*4), Y0 \
	VMOVUPS 32(SI)(AX*4), Y1 \
	VMOVUPS 64(SI)(AX*4), Y2 \
	VMOVUPS 96(SI)(AX*4), Y3 \
	OP (DX)(AX*4), Y0, Y0 \
	OP 32(DX)(AX*4), Y1, Y1 \
	OP 64(DX)(AX*4), Y2, Y2 \
	OP 96(DX)(AX*4), Y3, Y3 \
	VMOVUPS Y0, (DI)(AX*4) \
	VMOVUPS Y1, 32(DI)(AX*4) \
	VMOVUPS Y2, 64(DI)(AX*4) \
	VMOVUPS Y3, 96(DI)(AX*4) \
	ADDQ $32, AX \
	CMPQ AX, R8 \
	JB ew32 \
ew8: \
	CMPQ AX, CX \
	JAE ewdone \
	VMOVUPS (SI)(AX*4), Y0 \
	OP (DX)(AX*4), Y0, Y0 \
	VMOVUPS Y0, (DI)(AX*4) \
	ADDQ $8, AX \
	JMP ew8 \
ewdone: \
	VZEROUPPER \
	RET

// func addF32(dst, a, b *float32, n int)
TEXT ·addF32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ELEMWISE(VADDPS)

// func mulF32(dst, a, b *float32, n int)
TEXT ·mulF32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ELEMWISE(VMULPS)

// func rotateHalfF32(x, cos, sin *float32, half int) rotates one head
// vector x (2·half floats; half a positive multiple of 8) as RotateHalf:
// lo = a·cos - b·sin, hi = b·cos + a·sin, every product and sum rounded
// on its own (no fused multiply-add), a and b the halves.
TEXT ·rotateHalfF32(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ cos+8(FP), SI
	MOVQ sin+16(FP), DX
	MOVQ half+24(FP), CX
	LEAQ (DI)(CX*4), R9
	XORQ AX, AX
rot8:
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS (R9)(AX*4), Y1
	VMOVUPS (SI)(AX*4), Y2
	VMOVUPS (DX)(AX*4), Y3
	VMULPS Y2, Y0, Y4
	VMULPS Y3, Y1, Y5
	VSUBPS Y5, Y4, Y4
	VMULPS Y2, Y1, Y6
	VMULPS Y3, Y0, Y7
	VADDPS Y7, Y6, Y6
	VMOVUPS Y4, (DI)(AX*4)
	VMOVUPS Y6, (R9)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JB rot8
	VZEROUPPER
	RET
