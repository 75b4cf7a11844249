// The constants and macros that the AVX-512 VNNI kernels of
// quant_avx512_amd64.s (Q8_0, Q4_0, Q5_0) and quant_vnni1_amd64.s (Q5_1,
// Q4_1, IQ4_NL) share; each file includes its own copy of the tables.

// Q4_0 shift counts: per 16-bit word, 0 in the low 16 bytes of a ymm (the
// low nibbles, weights 0..15) and 4 in the high 16 (the high nibbles,
// weights 16..31).
DATA q4Shift<>+0(SB)/8, $0
DATA q4Shift<>+8(SB)/8, $0
DATA q4Shift<>+16(SB)/8, $0x0004000400040004
DATA q4Shift<>+24(SB)/8, $0x0004000400040004
GLOBL q4Shift<>(SB), RODATA|NOPTR, $32

// permQ4: the VPERMI2PS indices of block 0 of eight into two scale
// tables of two rows each (rows 0, 1: 0..15; rows 2, 3: 16..31), one row
// per 16-byte lane: lanes 0..3 row 0, 4..7 row 1, 8..11 row 2, 12..15
// row 3. Block i's are these plus i.
DATA permQ4<>+0(SB)/8, $0
DATA permQ4<>+8(SB)/8, $0
DATA permQ4<>+16(SB)/8, $0x0000000800000008
DATA permQ4<>+24(SB)/8, $0x0000000800000008
DATA permQ4<>+32(SB)/8, $0x0000001000000010
DATA permQ4<>+40(SB)/8, $0x0000001000000010
DATA permQ4<>+48(SB)/8, $0x0000001800000018
DATA permQ4<>+56(SB)/8, $0x0000001800000018
GLOBL permQ4<>(SB), RODATA|NOPTR, $64

// rowsQ4lo, rowsQ4hi: the VPERMI2PS indices that gather, from the lanes
// 0..3 accumulator (0..15) and the lanes 4..7 one (16..31), rows 0 and 1
// (rowsQ4lo) or 2 and 3 (rowsQ4hi) as eight lanes each.
DATA rowsQ4lo<>+0(SB)/8, $0x0000000100000000
DATA rowsQ4lo<>+8(SB)/8, $0x0000000300000002
DATA rowsQ4lo<>+16(SB)/8, $0x0000001100000010
DATA rowsQ4lo<>+24(SB)/8, $0x0000001300000012
DATA rowsQ4lo<>+32(SB)/8, $0x0000000500000004
DATA rowsQ4lo<>+40(SB)/8, $0x0000000700000006
DATA rowsQ4lo<>+48(SB)/8, $0x0000001500000014
DATA rowsQ4lo<>+56(SB)/8, $0x0000001700000016
GLOBL rowsQ4lo<>(SB), RODATA|NOPTR, $64
DATA rowsQ4hi<>+0(SB)/8, $0x0000000900000008
DATA rowsQ4hi<>+8(SB)/8, $0x0000000b0000000a
DATA rowsQ4hi<>+16(SB)/8, $0x0000001900000018
DATA rowsQ4hi<>+24(SB)/8, $0x0000001b0000001a
DATA rowsQ4hi<>+32(SB)/8, $0x0000000d0000000c
DATA rowsQ4hi<>+40(SB)/8, $0x0000000f0000000e
DATA rowsQ4hi<>+48(SB)/8, $0x0000001d0000001c
DATA rowsQ4hi<>+56(SB)/8, $0x0000001f0000001e
GLOBL rowsQ4hi<>(SB), RODATA|NOPTR, $64

// rowsQ4b: the VPERMPS indices that take lane 0 of each 16-byte lane
// (four rows' results) into lanes 0..3.
DATA rowsQ4b<>+0(SB)/8, $0x0000000400000000
DATA rowsQ4b<>+8(SB)/8, $0x0000000c00000008
DATA rowsQ4b<>+16(SB)/8, $0
DATA rowsQ4b<>+24(SB)/8, $0
DATA rowsQ4b<>+32(SB)/8, $0
DATA rowsQ4b<>+40(SB)/8, $0
DATA rowsQ4b<>+48(SB)/8, $0
DATA rowsQ4b<>+56(SB)/8, $0
GLOBL rowsQ4b<>(SB), RODATA|NOPTR, $64

// TAIL4LOAD loads, for a block left of the quad at SI (four ggml blocks
// of 18 bytes: Q4_0's or IQ4_NL's), the four rows' scale products d_w·d_x
// into Z12, a row a 16-byte lane (K1..K3 the masks of lanes 4..7, 8..11,
// 12..15), and their 16 bytes of nibbles into Z0, a row a 16-byte lane.
#define TAIL4LOAD \
	VPBROADCASTW (SI), Y12 \
	VPBROADCASTW 18(SI), K1, Y12 \
	VPBROADCASTW 36(SI), K2, Y12 \
	VPBROADCASTW 54(SI), K3, Y12 \
	VCVTPH2PS Y12, Z12 \
	VMULPS.BCST (DX)(R15*4), Z12, Z12 \
	VMOVDQU 2(SI), X0 \
	VINSERTI32X4 $1, 20(SI), Z0, Z0 \
	VINSERTI32X4 $2, 38(SI), Z0, Z0 \
	VINSERTI32X4 $3, 56(SI), Z0, Z0

#include "quant_common_amd64.h"

// SUMS4 leaves the sums of the four rows' accumulators Y4, Y9, Y14, Y15
// in the low lanes of X4, X9, X14, X15.
#define SUMS4 \
	HSUM8(Y4, X4, X5) \
	HSUM8(Y9, X9, X5) \
	HSUM8(Y14, X14, X5) \
	HSUM8(Y15, X15, X5)

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

// IDX8 fills Y20..Y27 with the VPERMPS indices of blocks 0..7 of a
// group: Y20+i all lanes i.
#define IDX8 \
	XORL AX, AX \
	VPBROADCASTD AX, Y20 \
	INCL AX \
	VPBROADCASTD AX, Y21 \
	INCL AX \
	VPBROADCASTD AX, Y22 \
	INCL AX \
	VPBROADCASTD AX, Y23 \
	INCL AX \
	VPBROADCASTD AX, Y24 \
	INCL AX \
	VPBROADCASTD AX, Y25 \
	INCL AX \
	VPBROADCASTD AX, Y26 \
	INCL AX \
	VPBROADCASTD AX, Y27

// q5Bit: 0x10 in every byte, the fifth bit of Q5_0's and Q5_1's weights
// (a ymm's or a zmm's).
DATA q5Bit<>+0(SB)/8, $0x1010101010101010
DATA q5Bit<>+8(SB)/8, $0x1010101010101010
DATA q5Bit<>+16(SB)/8, $0x1010101010101010
DATA q5Bit<>+24(SB)/8, $0x1010101010101010
DATA q5Bit<>+32(SB)/8, $0x1010101010101010
DATA q5Bit<>+40(SB)/8, $0x1010101010101010
DATA q5Bit<>+48(SB)/8, $0x1010101010101010
DATA q5Bit<>+56(SB)/8, $0x1010101010101010
GLOBL q5Bit<>(SB), RODATA|NOPTR, $64

// tail5Idx: the VPERMPS indices that spread four rows' scale products
// (lanes 0..3) a row a 16-byte lane.
DATA tail5Idx<>+0(SB)/8, $0
DATA tail5Idx<>+8(SB)/8, $0
DATA tail5Idx<>+16(SB)/8, $0x0000000100000001
DATA tail5Idx<>+24(SB)/8, $0x0000000100000001
DATA tail5Idx<>+32(SB)/8, $0x0000000200000002
DATA tail5Idx<>+40(SB)/8, $0x0000000200000002
DATA tail5Idx<>+48(SB)/8, $0x0000000300000003
DATA tail5Idx<>+56(SB)/8, $0x0000000300000003
GLOBL tail5Idx<>(SB), RODATA|NOPTR, $64
