//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 kernels of kernels_avx512_amd64.go, for long rows (256 terms or
// more, a multiple of 16).
//
// A dot product of float32 weights keeps its sixteen lanes in one zmm
// accumulator: lane l sums the terms j ≡ l (mod 16) in order, one FMA
// each, exactly the lanes the AVX2 kernels keep in two ymm registers. One
// of 16-bit weights (bfloat16, binary16) keeps thirty-two lanes in two
// zmm accumulators s0 and s1, lane l summing the terms j ≡ l (mod 32),
// a row of 16 mod 32 terms ending with its last sixteen in s0; then
// s0 += s1 lane by lane, b[l] = s[l] + s[l+16], as the AVX2 kernels add
// their four ymm registers. At the end the high half is added to the
// low, a[l] = s[l] + s[l+8], and the eight lanes of a by the VHADDPS
// trees of kernels_amd64.s (SUM2, REDUCE4), so every result is bit for
// bit the one the AVX2 kernels compute.
//
// Decode reads two rows per pass (dotRows2Z*), rows r and h+r of the
// h pairs, so that two sequential streams far apart are in flight at once:
// on our AMD EPYC with Zen 5 cores, the SmolLM2-135M decode step streamed
// its weights 14-21 % faster so than one row at a time (bf16 23.1 -> 27.9
// GB/s, f32 25.4 -> 30.0, f16 26.4 -> 30.9 on one thread; 40.5 -> 49.1,
// 45.8 -> 53.7, 37.7 -> 43.1 on two). On Zen 4, two streams near each
// other (adjacent rows, or rows 32 apart) had read 3 to 8 times slower
// than one, and rows taken alternately, a whole row at a time, are no
// faster than one stream on Zen 5. An odd last row goes alone (dotRowsZ*,
// one FMA chain of float32 weights, two of 16-bit ones, whose 32 bytes
// per FMA latency were about the read bandwidth itself). Rows of
// xRegTerms (416) terms or more (dotRowsZX*) keep the first 416 terms of
// x in registers for the whole call: reading x again for every row, two
// 64-byte loads per 64 bytes of 16-bit weights, cost 5-8 % of the decode
// rate in the model on Zen 4. The two-row kernels read x once for both
// rows.
//
// Prefill holds a tile of weight rows by three rows of x in 24
// accumulators, the weight rows staying in L1 while the rows of x stream
// from L2: eight float32 rows (dot8x3ZF32, eleven vector loads per 24
// FMAs, three of them from L2), four 16-bit ones (dot4x3Z*, which need two
// accumulators per dot product: six loads of x per 24 FMAs). On our AMD
// EPYC with full-width FMA pipes (Zen 5), four float32 rows by six of x
// (six loads from L2 per 24 FMAs) reached 131-168 GFLOP/s with the
// weights in L3, eight by three 166-190: the FMAs wait less on L2.
//
// A prefill reads each weight once, from DRAM, and a block's first group
// of x waits on its weights: eight (or four) short rows, too short for
// the hardware prefetchers to get going on. So group g of a block asks L2
// for the weight row rows+g counted from the block's first (the next
// block's rows, then the following ones), a line per step of its loop
// (PREFETCHT1), and the next block arrives while this one computes. On
// Zen 4 that took the 16-bit tiles from 65-73 % of the FMA peak to 83-90
// %. On Zen 5, float32 prefill of 576-term rows went from 150-155 to
// 175-182 GFLOP/s with the weights cold (against 181-190 with the block
// read beforehand); all of the next block's lines asked for at once
// before the block gained 0-5 %. Rows past the matrix's end are only
// prefetched, never read: harmless.
//
// Plan 9 operand order: VFMADD231PS b, a, acc computes acc += a·b.

// ZERO12 clears the accumulators Z0..Z11.
#define ZERO12 \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11

// ZERO24 clears the accumulators Z0..Z23 of a prefill tile.
#define ZERO24 \
	ZERO12 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23

// Load 16 weights at element index AX of the row at base into dst.
#define LZ_F32(base, dst) VMOVUPS (base)(AX*4), dst

// Load 16 weights at element index AX plus off of the row at base into
// dst.
#define LZW_BF16(off, base, dst) VPMOVZXWD (off*2)(base)(AX*2), dst; VPSLLD $16, dst, dst
#define LZW_F16(off, base, dst) VCVTPH2PS (off*2)(base)(AX*2), dst

// FOLD adds the high eight lanes of z to its low eight: y[l] = z[l] + z[l+8].
#define FOLD(z, y, tmp) VEXTRACTF64X4 $1, z, tmp; VADDPS tmp, y, y

// SUM2 and REDUCE4 as in kernels_amd64.s (textflag.h macros do not cross
// files).
#define SUM2Z(a, b, xa, xt) \
	VHADDPS b, a, a \
	VHADDPS a, a, a \
	VEXTRACTF128 $1, a, xt \
	VADDPS xt, xa, xa

#define REDUCE4Z(a, b, c, d, xa, xc) \
	VHADDPS b, a, a \
	VHADDPS d, c, c \
	VHADDPS c, a, a \
	VEXTRACTF128 $1, a, xc \
	VADDPS xc, xa, xa

// DOTROWSZ body: dst[r] = w[r]·x for r < rows in sixteen lanes (float32
// weights), one row at a time, the weights read as one sequential stream;
// k a positive multiple of 16.
// func(dst *float32, w *float32, ldw int, x *float32, k int, rows int, side *sideLines)
#define DOTROWSZ \
	ROWSZ_ARGS(2) \
row: \
	SIDE \
	VPXORD Z0, Z0, Z0 \
	XORQ AX, AX \
	ROWSZ_REST

// ROWSZ_ARGS loads the arguments of a decode kernel, the row stride in
// bytes (ldw << shift) in R9, side (may be nil) in R8.
#define ROWSZ_ARGS(shift) \
	MOVQ dst+0(FP), DI \
	MOVQ w+8(FP), SI \
	MOVQ ldw+16(FP), R9 \
	SHLQ $shift, R9 \
	MOVQ x+24(FP), DX \
	MOVQ k+32(FP), CX \
	MOVQ rows+40(FP), BX \
	MOVQ side+48(FP), R8

// SIDE asks the caches for side.per more lines of the side memory (see
// sideLines in warm.go), PREFETCHT0, at the start of a weight row: a
// range's next lines from its cursor, which it moves on, or, where the
// range ends first, its last ones, the next row going on to the next
// range. Nothing when side is nil or every range is done. It uses R11 to
// R13. Offsets: per 0, i 8, n 16, r 24 (16 bytes a range: cursor, end).
#define SIDE \
	TESTQ R8, R8 \
	JZ sidedone \
	MOVQ 8(R8), R12 \
	CMPQ R12, 16(R8) \
	JAE sidedone \
	MOVQ 24(R8)(R12*1), R11 \
	MOVQ 0(R8), R13 \
sideline: \
	PREFETCHT0 (R11) \
	ADDQ $64, R11 \
	CMPQ R11, 32(R8)(R12*1) \
	JAE sidenext \
	DECQ R13 \
	JNZ sideline \
	MOVQ R11, 24(R8)(R12*1) \
	JMP sidedone \
sidenext: \
	ADDQ $16, R12 \
	MOVQ R12, 8(R8) \
sidedone:

// ROWSZ_REST finishes a row of float32 weights from term AX on, sixteen
// at a time with x read from memory, writes its sum and goes on to the
// next row (label row) or returns. Its loop starts a 64-byte line (as do
// the rows of the dotRowsZX* kernels): where the loop straddled two lines,
// F32 decode ran 10 % slower on our AMD EPYC, the code otherwise the same.
#define ROWSZ_REST \
	CMPQ AX, CX \
	JAE sum \
	PCALIGN $64 \
loop: \
	VMOVUPS (DX)(AX*4), Z4 \
	LZ_F32(SI, Z2) \
	VFMADD231PS Z2, Z4, Z0 \
	ADDQ $16, AX \
	CMPQ AX, CX \
	JB loop \
sum: \
	FOLD(Z0, Y0, Y2) \
	VXORPS Y1, Y1, Y1 \
	SUM2Z(Y0, Y1, X0, X2) \
	MOVSS X0, (DI) \
	ADDQ $4, DI \
	ADDQ R9, SI \
	DECQ BX \
	JNZ row \
	VZEROUPPER \
	RET

// LOADX26 loads the first 416 terms of x (at DX) into Z6..Z31, sixteen
// a register, for the dotRowsZX* kernels.
#define LOADX26 \
	VMOVUPS 0(DX), Z6 \
	VMOVUPS 64(DX), Z7 \
	VMOVUPS 128(DX), Z8 \
	VMOVUPS 192(DX), Z9 \
	VMOVUPS 256(DX), Z10 \
	VMOVUPS 320(DX), Z11 \
	VMOVUPS 384(DX), Z12 \
	VMOVUPS 448(DX), Z13 \
	VMOVUPS 512(DX), Z14 \
	VMOVUPS 576(DX), Z15 \
	VMOVUPS 640(DX), Z16 \
	VMOVUPS 704(DX), Z17 \
	VMOVUPS 768(DX), Z18 \
	VMOVUPS 832(DX), Z19 \
	VMOVUPS 896(DX), Z20 \
	VMOVUPS 960(DX), Z21 \
	VMOVUPS 1024(DX), Z22 \
	VMOVUPS 1088(DX), Z23 \
	VMOVUPS 1152(DX), Z24 \
	VMOVUPS 1216(DX), Z25 \
	VMOVUPS 1280(DX), Z26 \
	VMOVUPS 1344(DX), Z27 \
	VMOVUPS 1408(DX), Z28 \
	VMOVUPS 1472(DX), Z29 \
	VMOVUPS 1536(DX), Z30 \
	VMOVUPS 1600(DX), Z31

// X16 multiplies sixteen float32 weights at byte off of the row at SI
// (loaded into tmp) by the terms of x in xr into Z0.
#define X16(off, tmp, xr) VMOVUPS off(SI), tmp; VFMADD231PS tmp, xr, Z0

// X32 multiplies the 32 16-bit weights at element offsets lo and hi =
// lo+16 of the row at SI (widened by LZW into Z2, Z3) by the terms of x
// in xlo and xhi, into Z0 (lanes 0-15) and Z1 (16-31).
#define X32(LZW, lo, hi, xlo, xhi) LZW(lo, SI, Z2); LZW(hi, SI, Z3); VFMADD231PS Z2, xlo, Z0; VFMADD231PS Z3, xhi, Z1

// DOTROWSZX body: DOTROWSZ for float32 weights with the first xRegTerms
// (416) terms of x held in registers, Z6..Z31 (block b of 16 terms in
// Z(6+b)), as DOTROWSZ32X does for 16-bit weights: the same lanes, the
// same bits. k a multiple of 16, at least 416.
// func(dst *float32, w *float32, ldw int, x *float32, k int, rows int, side *sideLines)
#define DOTROWSZX \
	ROWSZ_ARGS(2) \
	LOADX26 \
	PCALIGN $64 \
row: \
	SIDE \
	VPXORD Z0, Z0, Z0 \
	X16(0, Z2, Z6) \
	X16(64, Z3, Z7) \
	X16(128, Z2, Z8) \
	X16(192, Z3, Z9) \
	X16(256, Z2, Z10) \
	X16(320, Z3, Z11) \
	X16(384, Z2, Z12) \
	X16(448, Z3, Z13) \
	X16(512, Z2, Z14) \
	X16(576, Z3, Z15) \
	X16(640, Z2, Z16) \
	X16(704, Z3, Z17) \
	X16(768, Z2, Z18) \
	X16(832, Z3, Z19) \
	X16(896, Z2, Z20) \
	X16(960, Z3, Z21) \
	X16(1024, Z2, Z22) \
	X16(1088, Z3, Z23) \
	X16(1152, Z2, Z24) \
	X16(1216, Z3, Z25) \
	X16(1280, Z2, Z26) \
	X16(1344, Z3, Z27) \
	X16(1408, Z2, Z28) \
	X16(1472, Z3, Z29) \
	X16(1536, Z2, Z30) \
	X16(1600, Z3, Z31) \
	MOVQ $416, AX \
	ROWSZ_REST

// DOTROWSZ32 body: DOTROWSZ for 16-bit weights in thirty-two lanes, two
// accumulators Z0 (lanes 0-15) and Z1 (16-31); k a positive multiple of
// 16 (a last block of sixteen goes to Z0).
// func(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)
#define DOTROWSZ32(LZW) \
	ROWSZ_ARGS(1) \
	MOVQ CX, R10 \
	ANDQ $~31, R10 \
row: \
	SIDE \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	XORQ AX, AX \
	ROWSZ32_REST(LZW)

// ROWSZ32_REST finishes a row of 16-bit weights from term AX on, 32 at a
// time with x read from memory (R10 = k rounded down to 32), then a last
// sixteen; writes its sum and goes on to the next row (label row) or
// returns.
#define ROWSZ32_REST(LZW) \
	CMPQ AX, R10 \
	JAE last16 \
	PCALIGN $64 \
loop: \
	VMOVUPS (DX)(AX*4), Z4 \
	VMOVUPS 64(DX)(AX*4), Z5 \
	LZW(0, SI, Z2) \
	LZW(16, SI, Z3) \
	VFMADD231PS Z2, Z4, Z0 \
	VFMADD231PS Z3, Z5, Z1 \
	ADDQ $32, AX \
	CMPQ AX, R10 \
	JB loop \
last16: \
	CMPQ AX, CX \
	JAE sum \
	VMOVUPS (DX)(AX*4), Z4 \
	LZW(0, SI, Z2) \
	VFMADD231PS Z2, Z4, Z0 \
sum: \
	VADDPS Z1, Z0, Z0 \
	FOLD(Z0, Y0, Y2) \
	VXORPS Y1, Y1, Y1 \
	SUM2Z(Y0, Y1, X0, X2) \
	MOVSS X0, (DI) \
	ADDQ $4, DI \
	ADDQ R9, SI \
	DECQ BX \
	JNZ row \
	VZEROUPPER \
	RET

// DOTROWSZ32X body: DOTROWSZ32 with the first xRegTerms (416) terms of x
// held in registers for the whole call, Z6..Z31 (block b of 32 terms in
// Z(6+2b), Z(7+2b)), so that a row's first 416 weights are multiplied
// without reading x again; the rest as in DOTROWSZ32. A dot product then
// reads its weights from the caches' incoming stream alone: with x read
// again for every row (two 64-byte loads per 64 bytes of weights),
// decode streamed 5-8 % slower on our AMD EPYC. The same lanes, in the
// same order, as DOTROWSZ32: the same bits. k a multiple of 16, at least
// 416.
// func(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)
#define DOTROWSZ32X(LZW) \
	ROWSZ_ARGS(1) \
	MOVQ CX, R10 \
	ANDQ $~31, R10 \
	LOADX26 \
	PCALIGN $64 \
row: \
	SIDE \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	XORQ AX, AX \
	X32(LZW, 0, 16, Z6, Z7) \
	X32(LZW, 32, 48, Z8, Z9) \
	X32(LZW, 64, 80, Z10, Z11) \
	X32(LZW, 96, 112, Z12, Z13) \
	X32(LZW, 128, 144, Z14, Z15) \
	X32(LZW, 160, 176, Z16, Z17) \
	X32(LZW, 192, 208, Z18, Z19) \
	X32(LZW, 224, 240, Z20, Z21) \
	X32(LZW, 256, 272, Z22, Z23) \
	X32(LZW, 288, 304, Z24, Z25) \
	X32(LZW, 320, 336, Z26, Z27) \
	X32(LZW, 352, 368, Z28, Z29) \
	X32(LZW, 384, 400, Z30, Z31) \
	MOVQ $416, AX \
	ROWSZ32_REST(LZW)

// FMA3 multiplies the weights in w by the three rows of x in xa, xb, xc
// into the accumulators a0..a2.
#define FMA3(w, xa, xb, xc, a0, a1, a2) \
	VFMADD231PS w, xa, a0 \
	VFMADD231PS w, xb, a1 \
	VFMADD231PS w, xc, a2

// DOT4X3Z32 body: four rows of 16-bit weights against groups·3 rows of x
// in thirty-two lanes; for g < groups, t < 3, r < 4: dst[(3g+t)·ldd + r]
// = w[r]·x[3g+t]. The accumulators of row r and x row t are Z(4t+r)
// (lanes 0-15) and Z(12+4t+r) (lanes 16-31), so that the four sums of
// one x row reduce together into four adjacent outputs.
// func(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int)
#define DOT4X3Z32(LZW) \
	MOVQ dst+0(FP), R15 \
	MOVQ w+16(FP), SI \
	MOVQ ldw+24(FP), AX \
	SHLQ $1, AX \
	LEAQ (SI)(AX*1), DI \
	LEAQ (SI)(AX*2), R13 \
	LEAQ (DI)(AX*2), R14 \
	MOVQ AX, R12 \
	LEAQ (R14)(AX*1), R11 \
	MOVQ x+32(FP), DX \
	MOVQ ldx+40(FP), AX \
	SHLQ $2, AX \
	LEAQ (DX)(AX*1), R8 \
	LEAQ (DX)(AX*2), R9 \
	MOVQ k+48(FP), CX \
	MOVQ CX, R10 \
	ANDQ $~31, R10 \
	MOVQ groups+56(FP), BX \
group: \
	ZERO24 \
	XORQ AX, AX \
loop: \
	PREFETCHT1 (R11)(AX*2) \
	VMOVUPS (DX)(AX*4), Z24 \
	VMOVUPS (R8)(AX*4), Z25 \
	VMOVUPS (R9)(AX*4), Z26 \
	LZW(0, SI, Z30) \
	FMA3(Z30, Z24, Z25, Z26, Z0, Z4, Z8) \
	LZW(0, DI, Z31) \
	FMA3(Z31, Z24, Z25, Z26, Z1, Z5, Z9) \
	LZW(0, R13, Z30) \
	FMA3(Z30, Z24, Z25, Z26, Z2, Z6, Z10) \
	LZW(0, R14, Z31) \
	FMA3(Z31, Z24, Z25, Z26, Z3, Z7, Z11) \
	VMOVUPS 64(DX)(AX*4), Z27 \
	VMOVUPS 64(R8)(AX*4), Z28 \
	VMOVUPS 64(R9)(AX*4), Z29 \
	LZW(16, SI, Z30) \
	FMA3(Z30, Z27, Z28, Z29, Z12, Z16, Z20) \
	LZW(16, DI, Z31) \
	FMA3(Z31, Z27, Z28, Z29, Z13, Z17, Z21) \
	LZW(16, R13, Z30) \
	FMA3(Z30, Z27, Z28, Z29, Z14, Z18, Z22) \
	LZW(16, R14, Z31) \
	FMA3(Z31, Z27, Z28, Z29, Z15, Z19, Z23) \
	ADDQ $32, AX \
	CMPQ AX, R10 \
	JB loop \
	CMPQ AX, CX \
	JAE sum \
	VMOVUPS (DX)(AX*4), Z24 \
	VMOVUPS (R8)(AX*4), Z25 \
	VMOVUPS (R9)(AX*4), Z26 \
	LZW(0, SI, Z30) \
	FMA3(Z30, Z24, Z25, Z26, Z0, Z4, Z8) \
	LZW(0, DI, Z31) \
	FMA3(Z31, Z24, Z25, Z26, Z1, Z5, Z9) \
	LZW(0, R13, Z30) \
	FMA3(Z30, Z24, Z25, Z26, Z2, Z6, Z10) \
	LZW(0, R14, Z31) \
	FMA3(Z31, Z24, Z25, Z26, Z3, Z7, Z11) \
sum: \
	VADDPS Z12, Z0, Z0 \
	VADDPS Z13, Z1, Z1 \
	VADDPS Z14, Z2, Z2 \
	VADDPS Z15, Z3, Z3 \
	VADDPS Z16, Z4, Z4 \
	VADDPS Z17, Z5, Z5 \
	VADDPS Z18, Z6, Z6 \
	VADDPS Z19, Z7, Z7 \
	VADDPS Z20, Z8, Z8 \
	VADDPS Z21, Z9, Z9 \
	VADDPS Z22, Z10, Z10 \
	VADDPS Z23, Z11, Z11 \
	MOVQ ldd+8(FP), AX \
	SHLQ $2, AX \
	FOLD(Z0, Y0, Y24) \
	FOLD(Z1, Y1, Y25) \
	FOLD(Z2, Y2, Y26) \
	FOLD(Z3, Y3, Y27) \
	FOLD(Z4, Y4, Y28) \
	FOLD(Z5, Y5, Y29) \
	FOLD(Z6, Y6, Y30) \
	FOLD(Z7, Y7, Y31) \
	FOLD(Z8, Y8, Y24) \
	FOLD(Z9, Y9, Y25) \
	FOLD(Z10, Y10, Y26) \
	FOLD(Z11, Y11, Y27) \
	REDUCE4Z(Y0, Y1, Y2, Y3, X0, X2) \
	VMOVUPS X0, (R15) \
	REDUCE4Z(Y4, Y5, Y6, Y7, X4, X6) \
	VMOVUPS X4, (R15)(AX*1) \
	REDUCE4Z(Y8, Y9, Y10, Y11, X8, X10) \
	VMOVUPS X8, (R15)(AX*2) \
	LEAQ (R15)(AX*2), R15 \
	ADDQ AX, R15 \
	MOVQ ldx+40(FP), AX \
	SHLQ $2, AX \
	LEAQ (AX)(AX*2), AX \
	ADDQ AX, DX \
	ADDQ AX, R8 \
	ADDQ AX, R9 \
	ADDQ R12, R11 \
	DECQ BX \
	JNZ group \
	VZEROUPPER \
	RET

// DOTROWS2Z bodies: decode in two streams. Pass i computes row i and
// row h+i (h = pairs) together, their loads interleaved in one loop, so
// that two far-apart sequential streams are in flight at once: on our
// AMD EPYC (Zen 5) one core read 10-25 % faster so than one row after
// another (and rows taken alternately, a whole row at a time, were no
// faster than one stream). x is read from memory, one load for both
// rows. Each row keeps the lanes and the order of DOTROWSZ (sixteen lanes
// of float32) or DOTROWSZ32 (thirty-two of 16-bit weights): the same
// bits. At the start of each pass SIDE asks for side.per lines. k a
// positive multiple of 16.
// func(dst *float32, w *T, ldw int, x *float32, k int, pairs int, side *sideLines)

// ROWS2Z_ARGS: ROWSZ_ARGS, and row h's start in R14, its output in R15.
#define ROWS2Z_ARGS(shift) \
	ROWSZ_ARGS(shift) \
	MOVQ BX, R14 \
	IMULQ R9, R14 \
	ADDQ SI, R14 \
	LEAQ (DI)(BX*4), R15

// SUM2ROWS adds the lanes of Z0 (row i) and Z1 (row h+i) each as
// DOTROWSZ does, stores the sums at (DI) and (R15) and moves both rows
// and outputs on, then loops to row2 or returns.
#define SUM2ROWS \
	FOLD(Z0, Y0, Y2) \
	FOLD(Z1, Y1, Y3) \
	SUM2Z(Y0, Y1, X0, X2) \
	MOVSS X0, (DI) \
	VEXTRACTPS $1, X0, (R15) \
	ADDQ $4, DI \
	ADDQ $4, R15 \
	ADDQ R9, SI \
	ADDQ R9, R14 \
	DECQ BX \
	JNZ row2 \
	VZEROUPPER \
	RET

#define DOTROWS2Z \
	ROWS2Z_ARGS(2) \
row2: \
	SIDE \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	XORQ AX, AX \
	PCALIGN $64 \
loop2: \
	VMOVUPS (DX)(AX*4), Z4 \
	VMOVUPS (SI)(AX*4), Z2 \
	VMOVUPS (R14)(AX*4), Z3 \
	VFMADD231PS Z2, Z4, Z0 \
	VFMADD231PS Z3, Z4, Z1 \
	ADDQ $16, AX \
	CMPQ AX, CX \
	JB loop2 \
	SUM2ROWS

// DOTROWS2Z32: row i in Z0 (lanes 0-15) and Z1 (16-31), row h+i in Z8
// and Z9; R10 = k rounded down to 32.
#define DOTROWS2Z32(LZW) \
	ROWS2Z_ARGS(1) \
	MOVQ CX, R10 \
	ANDQ $~31, R10 \
row2: \
	SIDE \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	XORQ AX, AX \
	CMPQ AX, R10 \
	JAE last2 \
	PCALIGN $64 \
loop2: \
	VMOVUPS (DX)(AX*4), Z4 \
	VMOVUPS 64(DX)(AX*4), Z5 \
	LZW(0, SI, Z2) \
	LZW(16, SI, Z3) \
	LZW(0, R14, Z6) \
	LZW(16, R14, Z7) \
	VFMADD231PS Z2, Z4, Z0 \
	VFMADD231PS Z3, Z5, Z1 \
	VFMADD231PS Z6, Z4, Z8 \
	VFMADD231PS Z7, Z5, Z9 \
	ADDQ $32, AX \
	CMPQ AX, R10 \
	JB loop2 \
last2: \
	CMPQ AX, CX \
	JAE sum2 \
	VMOVUPS (DX)(AX*4), Z4 \
	LZW(0, SI, Z2) \
	LZW(0, R14, Z6) \
	VFMADD231PS Z2, Z4, Z0 \
	VFMADD231PS Z6, Z4, Z8 \
sum2: \
	VADDPS Z1, Z0, Z0 \
	VADDPS Z9, Z8, Z1 \
	SUM2ROWS

// Load 16 weights at byte offset off of base into dst.
#define LOZ_F32(off, base, dst) VMOVUPS off(base), dst
#define LOZ_BF16(off, base, dst) VPMOVZXWD off(base), dst; VPSLLD $16, dst, dst
#define LOZ_F16(off, base, dst) VCVTPH2PS off(base), dst

// FMA4 multiplies the 64 weights in Z24..Z27 by the broadcast x into the
// accumulators a0..a3.
#define FMA4(x, a0, a1, a2, a3) \
	VFMADD231PS Z24, x, a0 \
	VFMADD231PS Z25, x, a1 \
	VFMADD231PS Z26, x, a2 \
	VFMADD231PS Z27, x, a3

// PANELZ body: a tile of 6 rows of x by 64 output columns of a weight
// stored (in, out), the AVX-512 PANEL of kernels_amd64.s: for t < 6,
// c < 64, dst[t·ldd + c] = Σ_i x[t·ldx + i] · w[i·ldw + c], i in order,
// one FMA each, so the same bits as the AVX2 panel and axpy kernels. O1,
// O2, O3 are the byte offsets of columns 16, 32 and 48 in a weight row.
// func(dst *float32, ldd int, x *float32, ldx int, w *T, ldw int, in int)
// PANEL_ARGS loads a panel's arguments: x's first three rows at DX, R9,
// R10 (their stride in bytes in R8), the weights at SI (row stride in
// bytes, ldw << SHIFT, in R14) and in in CX.
#define PANEL_ARGS(SHIFT) \
	MOVQ x+16(FP), DX \
	MOVQ ldx+24(FP), R8 \
	SHLQ $2, R8 \
	LEAQ (DX)(R8*1), R9 \
	LEAQ (DX)(R8*2), R10 \
	MOVQ w+32(FP), SI \
	MOVQ ldw+40(FP), R14 \
	SHLQ $SHIFT, R14 \
	MOVQ in+48(FP), CX

// PANEL_W loads the 64 weights of the row at SI into Z24..Z27.
#define PANEL_W(LOZ, O1, O2, O3) \
	LOZ(0, SI, Z24) \
	LOZ(O1, SI, Z25) \
	LOZ(O2, SI, Z26) \
	LOZ(O3, SI, Z27)

// PANEL_X3 multiplies them by term AX of x's rows at DX, R9, R10 into
// Z0..Z3, Z4..Z7, Z8..Z11.
#define PANEL_X3 \
	VBROADCASTSS (DX)(AX*4), Z28 \
	FMA4(Z28, Z0, Z1, Z2, Z3) \
	VBROADCASTSS (R9)(AX*4), Z29 \
	FMA4(Z29, Z4, Z5, Z6, Z7) \
	VBROADCASTSS (R10)(AX*4), Z30 \
	FMA4(Z30, Z8, Z9, Z10, Z11)

// PANEL_NEXT steps to the next weight row and term, back to loop while
// terms remain.
#define PANEL_NEXT \
	ADDQ R14, SI \
	INCQ AX \
	CMPQ AX, CX \
	JB loop

// PANEL_STORE3 writes Z0..Z11, three rows of 64 outputs, to dst (DI) with
// a row stride of ldd floats (R8 in bytes).
#define PANEL_STORE3 \
	MOVQ dst+0(FP), DI \
	MOVQ ldd+8(FP), R8 \
	SHLQ $2, R8 \
	VMOVUPS Z0, (DI) \
	VMOVUPS Z1, 64(DI) \
	VMOVUPS Z2, 128(DI) \
	VMOVUPS Z3, 192(DI) \
	VMOVUPS Z4, (DI)(R8*1) \
	VMOVUPS Z5, 64(DI)(R8*1) \
	VMOVUPS Z6, 128(DI)(R8*1) \
	VMOVUPS Z7, 192(DI)(R8*1) \
	VMOVUPS Z8, (DI)(R8*2) \
	VMOVUPS Z9, 64(DI)(R8*2) \
	VMOVUPS Z10, 128(DI)(R8*2) \
	VMOVUPS Z11, 192(DI)(R8*2)

#define PANELZ(LOZ, SHIFT, O1, O2, O3) \
	PANEL_ARGS(SHIFT) \
	LEAQ (R9)(R8*2), R11 \
	LEAQ (R10)(R8*2), R12 \
	LEAQ (R11)(R8*2), R13 \
	ZERO24 \
	XORQ AX, AX \
loop: \
	PANEL_W(LOZ, O1, O2, O3) \
	PANEL_X3 \
	VBROADCASTSS (R11)(AX*4), Z31 \
	FMA4(Z31, Z12, Z13, Z14, Z15) \
	VBROADCASTSS (R12)(AX*4), Z28 \
	FMA4(Z28, Z16, Z17, Z18, Z19) \
	VBROADCASTSS (R13)(AX*4), Z29 \
	FMA4(Z29, Z20, Z21, Z22, Z23) \
	PANEL_NEXT \
	PANEL_STORE3 \
	LEAQ (DI)(R8*2), BX \
	ADDQ R8, BX \
	VMOVUPS Z12, (BX) \
	VMOVUPS Z13, 64(BX) \
	VMOVUPS Z14, 128(BX) \
	VMOVUPS Z15, 192(BX) \
	VMOVUPS Z16, (BX)(R8*1) \
	VMOVUPS Z17, 64(BX)(R8*1) \
	VMOVUPS Z18, 128(BX)(R8*1) \
	VMOVUPS Z19, 192(BX)(R8*1) \
	VMOVUPS Z20, (BX)(R8*2) \
	VMOVUPS Z21, 64(BX)(R8*2) \
	VMOVUPS Z22, 128(BX)(R8*2) \
	VMOVUPS Z23, 192(BX)(R8*2) \
	VZEROUPPER \
	RET

// PANEL1Z body: PANELZ for one row of x (a decode step's value product,
// or a few rows of x one at a time): for c < 64, dst[c] = Σ_i x[i] ·
// w[i·ldw + c], i in order, one FMA each from +0, the outputs in four
// registers.
// func(dst *float32, x *float32, w *T, ldw int, in int)
#define PANEL1Z(LOZ, SHIFT, O1, O2, O3) \
	MOVQ x+8(FP), DX \
	MOVQ w+16(FP), SI \
	MOVQ ldw+24(FP), R14 \
	SHLQ $SHIFT, R14 \
	MOVQ in+32(FP), CX \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	XORQ AX, AX \
loop: \
	PANEL_W(LOZ, O1, O2, O3) \
	VBROADCASTSS (DX)(AX*4), Z28 \
	FMA4(Z28, Z0, Z1, Z2, Z3) \
	PANEL_NEXT \
	MOVQ dst+0(FP), DI \
	VMOVUPS Z0, (DI) \
	VMOVUPS Z1, 64(DI) \
	VMOVUPS Z2, 128(DI) \
	VMOVUPS Z3, 192(DI) \
	VZEROUPPER \
	RET

// PANEL3Z body: PANELZ for three rows of x (a decode step's value product
// for three query heads of one kv head): twelve chains of FMAs, not four,
// so that each weight row's loads and the chains' latency are shared.
// func(dst *float32, ldd int, x *float32, ldx int, w *T, ldw int, in int)
#define PANEL3Z(LOZ, SHIFT, O1, O2, O3) \
	PANEL_ARGS(SHIFT) \
	ZERO12 \
	XORQ AX, AX \
loop: \
	PANEL_W(LOZ, O1, O2, O3) \
	PANEL_X3 \
	PANEL_NEXT \
	PANEL_STORE3 \
	VZEROUPPER \
	RET

// FMA3W multiplies the sixteen weights at byte offset AX of the row that
// ends at base (loaded into w) by the three rows of x in Z24..Z26 into
// the accumulators a0..a2 (one per row of x).
#define FMA3W(base, w, a0, a1, a2) \
	VMOVUPS (base)(AX*1), w \
	VFMADD231PS w, Z24, a0 \
	VFMADD231PS w, Z25, a1 \
	VFMADD231PS w, Z26, a2

// FOLDTO adds the high eight lanes of z to its low eight into y: y[l] =
// z[l] + z[l+8] (y may be z's own low half, or a register below 16 for
// the VEX-only VHADDPS of REDUCE4Z).
#define FOLDTO(z, zy, y, tmp) VEXTRACTF64X4 $1, z, tmp; VADDPS tmp, zy, y

// STORE8 reduces the eight accumulators z0..z7 (weight rows 0..7 against
// one row of x; zy0..zy7 their low halves) each to its sum, in DOTROWSZ's
// order, and stores the eight sums at (dst).
#define STORE8(z0, z1, z2, z3, z4, z5, z6, z7, zy0, zy1, zy2, zy3, zy4, zy5, zy6, zy7, dst) \
	FOLDTO(z0, zy0, Y0, Y24) \
	FOLDTO(z1, zy1, Y1, Y25) \
	FOLDTO(z2, zy2, Y2, Y26) \
	FOLDTO(z3, zy3, Y3, Y27) \
	FOLDTO(z4, zy4, Y4, Y28) \
	FOLDTO(z5, zy5, Y5, Y29) \
	FOLDTO(z6, zy6, Y6, Y30) \
	FOLDTO(z7, zy7, Y7, Y31) \
	REDUCE4Z(Y0, Y1, Y2, Y3, X0, X2) \
	REDUCE4Z(Y4, Y5, Y6, Y7, X4, X6) \
	VMOVUPS X0, (dst) \
	VMOVUPS X4, 16(dst)

// LOADACC24 and STOREACC24 move the accumulators Z0..Z23 of a prefill
// tile from and to the 1536 bytes at base.
#define LOADACC24(base) \
	VMOVUPS 0(base), Z0; VMOVUPS 64(base), Z1; VMOVUPS 128(base), Z2; VMOVUPS 192(base), Z3 \
	VMOVUPS 256(base), Z4; VMOVUPS 320(base), Z5; VMOVUPS 384(base), Z6; VMOVUPS 448(base), Z7 \
	VMOVUPS 512(base), Z8; VMOVUPS 576(base), Z9; VMOVUPS 640(base), Z10; VMOVUPS 704(base), Z11 \
	VMOVUPS 768(base), Z12; VMOVUPS 832(base), Z13; VMOVUPS 896(base), Z14; VMOVUPS 960(base), Z15 \
	VMOVUPS 1024(base), Z16; VMOVUPS 1088(base), Z17; VMOVUPS 1152(base), Z18; VMOVUPS 1216(base), Z19 \
	VMOVUPS 1280(base), Z20; VMOVUPS 1344(base), Z21; VMOVUPS 1408(base), Z22; VMOVUPS 1472(base), Z23

#define STOREACC24(base) \
	VMOVUPS Z0, 0(base); VMOVUPS Z1, 64(base); VMOVUPS Z2, 128(base); VMOVUPS Z3, 192(base) \
	VMOVUPS Z4, 256(base); VMOVUPS Z5, 320(base); VMOVUPS Z6, 384(base); VMOVUPS Z7, 448(base) \
	VMOVUPS Z8, 512(base); VMOVUPS Z9, 576(base); VMOVUPS Z10, 640(base); VMOVUPS Z11, 704(base) \
	VMOVUPS Z12, 768(base); VMOVUPS Z13, 832(base); VMOVUPS Z14, 896(base); VMOVUPS Z15, 960(base) \
	VMOVUPS Z16, 1024(base); VMOVUPS Z17, 1088(base); VMOVUPS Z18, 1152(base); VMOVUPS Z19, 1216(base) \
	VMOVUPS Z20, 1280(base); VMOVUPS Z21, 1344(base); VMOVUPS Z22, 1408(base); VMOVUPS Z23, 1472(base)

// DOT8X3Z body: eight rows of float32 weights against groups·3 rows of x
// in sixteen lanes; for g < groups, t < 3, r < 8: dst[(3g+t)·ldd + r] =
// w[r]·x[3g+t], each sum in DOTROWSZ's lanes and order (the same bits).
// The accumulator of row r and x row t is Z(8t+r). Every base register
// points at its row's end and AX runs from -4k up to 0, so that eleven
// rows take eleven registers and no more. Group g prefetches row 8+g
// (its end kept at pf-8(SP)) through CX.
// func(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int)
#define DOT8X3Z \
	MOVQ k+48(FP), CX \
	SHLQ $2, CX \
	MOVQ w+16(FP), SI \
	ADDQ CX, SI \
	MOVQ ldw+24(FP), AX \
	SHLQ $2, AX \
	LEAQ (SI)(AX*1), DI \
	LEAQ (SI)(AX*2), R8 \
	LEAQ (DI)(AX*2), R9 \
	LEAQ (R8)(AX*2), R10 \
	LEAQ (R9)(AX*2), R11 \
	LEAQ (R10)(AX*2), R12 \
	LEAQ (R11)(AX*2), R13 \
	MOVQ x+32(FP), DX \
	ADDQ CX, DX \
	MOVQ ldx+40(FP), AX \
	SHLQ $2, AX \
	LEAQ (DX)(AX*1), R14 \
	LEAQ (DX)(AX*2), R15 \
	MOVQ groups+56(FP), BX \
	MOVQ ldw+24(FP), AX \
	SHLQ $2, AX \
	ADDQ R13, AX \
	MOVQ AX, pf-8(SP) \
group: \
	MOVQ mode+72(FP), AX \
	TESTQ $1, AX \
	JNZ loadacc \
	ZERO24 \
	JMP started \
loadacc: \
	MOVQ acc+64(FP), AX \
	LOADACC24(AX) \
started: \
	MOVQ k+48(FP), AX \
	SHLQ $2, AX \
	NEGQ AX \
	MOVQ pf-8(SP), CX \
loop: \
	PREFETCHT1 (CX)(AX*1) \
	VMOVUPS (DX)(AX*1), Z24 \
	VMOVUPS (R14)(AX*1), Z25 \
	VMOVUPS (R15)(AX*1), Z26 \
	FMA3W(SI, Z30, Z0, Z8, Z16) \
	FMA3W(DI, Z31, Z1, Z9, Z17) \
	FMA3W(R8, Z30, Z2, Z10, Z18) \
	FMA3W(R9, Z31, Z3, Z11, Z19) \
	FMA3W(R10, Z30, Z4, Z12, Z20) \
	FMA3W(R11, Z31, Z5, Z13, Z21) \
	FMA3W(R12, Z30, Z6, Z14, Z22) \
	FMA3W(R13, Z31, Z7, Z15, Z23) \
	ADDQ $64, AX \
	JNZ loop \
	MOVQ ldw+24(FP), CX \
	SHLQ $2, CX \
	ADDQ CX, pf-8(SP) \
	MOVQ mode+72(FP), AX \
	TESTQ $2, AX \
	JZ sums \
	MOVQ acc+64(FP), AX \
	STOREACC24(AX) \
	JMP stored \
sums: \
	MOVQ dst+0(FP), AX \
	MOVQ ldd+8(FP), CX \
	SHLQ $2, CX \
	STORE8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, AX) \
	ADDQ CX, AX \
	STORE8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15, AX) \
	ADDQ CX, AX \
	STORE8(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Y16, Y17, Y18, Y19, Y20, Y21, Y22, Y23, AX) \
	ADDQ CX, AX \
	MOVQ AX, dst+0(FP) \
stored: \
	ADDQ $1536, acc+64(FP) \
	MOVQ ldx+40(FP), AX \
	SHLQ $2, AX \
	LEAQ (AX)(AX*2), AX \
	ADDQ AX, DX \
	ADDQ AX, R14 \
	ADDQ AX, R15 \
	DECQ BX \
	JNZ group \
	VZEROUPPER \
	RET

// func panel1x64ZF32(dst *float32, x *float32, w *float32, ldw int, in int)
TEXT ·panel1x64ZF32(SB), NOSPLIT, $0-40
	PANEL1Z(LOZ_F32, 2, 64, 128, 192)

// func panel1x64ZBF16(dst *float32, x *float32, w *uint16, ldw int, in int)
TEXT ·panel1x64ZBF16(SB), NOSPLIT, $0-40
	PANEL1Z(LOZ_BF16, 1, 32, 64, 96)

// func panel1x64ZF16(dst *float32, x *float32, w *uint16, ldw int, in int)
TEXT ·panel1x64ZF16(SB), NOSPLIT, $0-40
	PANEL1Z(LOZ_F16, 1, 32, 64, 96)

// func panel6x64ZF32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int)
TEXT ·panel6x64ZF32(SB), NOSPLIT, $0-56
	PANELZ(LOZ_F32, 2, 64, 128, 192)

// func panel6x64ZBF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)
TEXT ·panel6x64ZBF16(SB), NOSPLIT, $0-56
	PANELZ(LOZ_BF16, 1, 32, 64, 96)

// func panel6x64ZF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)
TEXT ·panel6x64ZF16(SB), NOSPLIT, $0-56
	PANELZ(LOZ_F16, 1, 32, 64, 96)

// func dotRowsZF32(dst *float32, w *float32, ldw int, x *float32, k int, rows int, side *sideLines)
TEXT ·dotRowsZF32(SB), NOSPLIT, $0-56
	DOTROWSZ

// func dotRowsZXF32(dst *float32, w *float32, ldw int, x *float32, k int, rows int, side *sideLines)
TEXT ·dotRowsZXF32(SB), NOSPLIT, $0-56
	DOTROWSZX

// func dotRowsZBF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)
TEXT ·dotRowsZBF16(SB), NOSPLIT, $0-56
	DOTROWSZ32(LZW_BF16)

// func dotRowsZF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)
TEXT ·dotRowsZF16(SB), NOSPLIT, $0-56
	DOTROWSZ32(LZW_F16)

// func dotRowsZXBF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)
TEXT ·dotRowsZXBF16(SB), NOSPLIT, $0-56
	DOTROWSZ32X(LZW_BF16)

// func dotRowsZXF16(dst *float32, w *uint16, ldw int, x *float32, k int, rows int, side *sideLines)
TEXT ·dotRowsZXF16(SB), NOSPLIT, $0-56
	DOTROWSZ32X(LZW_F16)

// func dot4x3ZBF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int)
TEXT ·dot4x3ZBF16(SB), NOSPLIT, $0-64
	DOT4X3Z32(LZW_BF16)

// func dot4x3ZF16(dst *float32, ldd int, w *uint16, ldw int, x *float32, ldx int, k int, groups int)
TEXT ·dot4x3ZF16(SB), NOSPLIT, $0-64
	DOT4X3Z32(LZW_F16)

// func panel3x64ZF32(dst *float32, ldd int, x *float32, ldx int, w *float32, ldw int, in int)
TEXT ·panel3x64ZF32(SB), NOSPLIT, $0-56
	PANEL3Z(LOZ_F32, 2, 64, 128, 192)

// func panel3x64ZBF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)
TEXT ·panel3x64ZBF16(SB), NOSPLIT, $0-56
	PANEL3Z(LOZ_BF16, 1, 32, 64, 96)

// func panel3x64ZF16(dst *float32, ldd int, x *float32, ldx int, w *uint16, ldw int, in int)
TEXT ·panel3x64ZF16(SB), NOSPLIT, $0-56
	PANEL3Z(LOZ_F16, 1, 32, 64, 96)

// func dot8x3ZF32(dst *float32, ldd int, w *float32, ldw int, x *float32, ldx int, k int, groups int, acc *float32, mode int)
TEXT ·dot8x3ZF32(SB), NOSPLIT, $8-80
	DOT8X3Z

// func dotRows2ZF32(dst *float32, w *float32, ldw int, x *float32, k int, pairs int, side *sideLines)
TEXT ·dotRows2ZF32(SB), NOSPLIT, $0-56
	DOTROWS2Z

// func dotRows2ZBF16(dst *float32, w *uint16, ldw int, x *float32, k int, pairs int, side *sideLines)
TEXT ·dotRows2ZBF16(SB), NOSPLIT, $0-56
	DOTROWS2Z32(LZW_BF16)

// func dotRows2ZF16(dst *float32, w *uint16, ldw int, x *float32, k int, pairs int, side *sideLines)
TEXT ·dotRows2ZF16(SB), NOSPLIT, $0-56
	DOTROWS2Z32(LZW_F16)
