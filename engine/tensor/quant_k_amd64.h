// The macros that the Q4_K and Q5_K kernels of quant_amd64.s (AVX2,
// KDOT) and quant_k512_amd64.s (AVX-512, K512) share: the block's scales
// and mins, its float part and the row's last sums, so that both keep
// ggml's order by one text.

#include "quant_common_amd64.h"

// KSCALES unpacks the six-bit scales and mins of the Q4_K or Q5_K block
// at SI, as ggml's utmp words: scales 0..3 and mins 0..3 are the low six
// bits of the block's first and second words, scales and mins 4..7 take
// their low four bits from the third word's nibbles and their top two
// from the top bits of the first and second words. It leaves the eight
// scales as int16 in X8 (the rest of Z8 zero), and in X12 the four min
// lanes m[2k]·S[2k] + m[2k+1]·S[2k+1] (S the activations' sums of 32 at
// R8: VPMADDWD).
#define KSCALES \
	MOVL 4(SI), AX \
	MOVL 8(SI), BX \
	MOVL 12(SI), R11 \
	MOVL AX, R13 \
	ANDL $0x3f3f3f3f, R13 \
	MOVL AX, R14 \
	SHRL $2, R14 \
	ANDL $0x30303030, R14 \
	MOVL R11, R15 \
	ANDL $0x0f0f0f0f, R15 \
	ORL R15, R14 \
	VMOVD R13, X8 \
	VPINSRD $1, R14, X8, X8 \
	VPMOVZXBW X8, X8 \
	MOVL BX, R13 \
	ANDL $0x3f3f3f3f, R13 \
	MOVL BX, R14 \
	SHRL $2, R14 \
	ANDL $0x30303030, R14 \
	SHRL $4, R11 \
	ANDL $0x0f0f0f0f, R11 \
	ORL R11, R14 \
	VMOVD R13, X9 \
	VPINSRD $1, R14, X9, X9 \
	VPMOVZXBW X9, X9 \
	VPMADDWD (R8), X9, X12

// KFLOATS is a block's float part: acc (Y4) += float(lane m)·(d_x·d_w)
// for the eight int32 lanes in Y10, then dmin = -d_x·dmin_w in X13
// (X15 holds the sign bit) for MINS, which adds the mins into X5.
#define KFLOATS(MINS) \
	VCVTDQ2PS Y10, Y10 \
	MOVWLZX (SI), AX \
	VMOVD AX, X11 \
	VCVTPH2PS X11, X11 \
	VMULSS (DX), X11, X11 \
	VBROADCASTSS X11, Y11 \
	VFMADD231PS Y10, Y11, Y4 \
	MOVWLZX 2(SI), AX \
	VMOVD AX, X13 \
	VCVTPH2PS X13, X13 \
	VMULSS (DX), X13, X13 \
	VXORPS X15, X13, X13 \
	MINS

// KHSUM leaves in X4 a row's result: hsum_float_8(acc), then FINAL adds
// the mins.
#define KHSUM(FINAL) \
	HSUM8(Y4, X4, X14) \
	FINAL

#define NOTHING

// Q4_K: four min lanes, accm[k] += float(lane k)·dmin; the result
// hsum_float_8(acc) + ((accm0+accm2) + (accm1+accm3)).
#define Q4KMINS \
	VCVTDQ2PS X12, X12 \
	VBROADCASTSS X13, X13 \
	VFMADD231PS X12, X13, X5

#define Q4KFINAL \
	VMOVHLPS X5, X5, X14 \
	VADDPS X14, X5, X5 \
	VMOVSHDUP X5, X14 \
	VADDSS X14, X5, X5 \
	VADDSS X5, X4, X4

// Q5_K: the mins as one integer a block, summs += float(Σ)·dmin, one FMA;
// the result hsum_float_8(acc) + summs.
#define Q5KMINS \
	VPHADDD X12, X12, X12 \
	VPHADDD X12, X12, X12 \
	VCVTDQ2PS X12, X12 \
	VFMADD231SS X12, X13, X5

#define Q5KFINAL \
	VADDSS X5, X4, X4

// The Q6_K kernels of both widths (dotQ6KAVX2, dotQ6KAVX512) share their
// rows loop (KROW, KROWEND) and a block's float part: Q6KBLOCKEND turns a block's int32 lanes Y10 into acc += float(lanes)·
// (d_x·d_w) and loops to block.
#define Q6KBLOCKEND(block) \
	VCVTDQ2PS Y10, Y10 \
	MOVWLZX 208(SI), AX \
	VMOVD AX, X11 \
	VCVTPH2PS X11, X11 \
	VMULSS (DX), X11, X11 \
	VBROADCASTSS X11, Y11 \
	VFMADD231PS Y10, Y11, Y4 \
	ADDQ $210, SI \
	ADDQ $4, DX \
	DECQ CX \
	JNE block

// KROWEND stores a row's result X4 at dst (advanced in its argument
// slot), steps R12 a row and loops to row while rows are left.
#define KROWEND(row) \
	MOVQ dst+0(FP), AX \
	VMOVSS X4, (AX) \
	ADDQ $4, AX \
	MOVQ AX, dst+0(FP) \
	ADDQ rb+16(FP), R12 \
	DECQ rows+24(FP) \
	JNE row

// KTAIL ends the Q4_K and Q5_K kernels of both widths (KDOT, K512) after
// a block's int32 lanes: its float part and mins (KFLOATS), the next
// block of BLOCK bytes, the row's result (KHSUM with FINAL) and the next
// row; the labels block, done, row and end are the kernel's.
#define KTAIL(BLOCK, MINS, FINAL) \
	KFLOATS(MINS) \
	ADDQ $BLOCK, SI \
	ADDQ $4, DX \
	ADDQ $16, R8 \
	DECQ CX \
	JNE block \
done: \
	KHSUM(FINAL) \
	KROWEND(row) \
end: \
	VZEROUPPER \
	RET
