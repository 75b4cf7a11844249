// The tables and macros that the Q2_K and Q3_K kernels of
// quant_k23_amd64.s (AVX2) and quant_k23z_amd64.s (AVX-512) share, so
// that both widths unpack Q3_K's scales and finish a row by one text;
// each file includes its own copy of the table.

#include "quant_common_amd64.h"

// q3Shifts: the right shifts 0, 2, 4, 6 of the four dwords that take the
// top two bits of Q3_K's scales 4j..4j+3 from the same word (bytes 8..11
// of the packed scales) into bits 0 and 1.
DATA q3Shifts<>+0(SB)/8, $0x0000000200000000
DATA q3Shifts<>+8(SB)/8, $0x0000000600000004
GLOBL q3Shifts<>(SB), RODATA|NOPTR, $16

// Q3KSCALES leaves in X0 the sixteen scales of the Q3_K block at SI as
// int8, less 32, as q3KScales: the low four bits from the nibbles of
// bytes 96..103, the top two from bytes 104..107 by q3Shifts<>. It takes
// 3 in every byte of X6, 0x0F in X7 and 32 in X14; X1 is scratch.
#define Q3KSCALES \
	VMOVQ 96(SI), X0 \
	VPSRLW $4, X0, X1 \
	VPUNPCKLQDQ X1, X0, X0 \
	VPAND X7, X0, X0 \
	VPBROADCASTD 104(SI), X1 \
	VPSRLVD q3Shifts<>(SB), X1, X1 \
	VPAND X6, X1, X1 \
	VPSLLW $4, X1, X1 \
	VPOR X1, X0, X0 \
	VPSUBB X14, X0, X0

// Q3KFMA is a Q3_K block's float part: acc (Y4) += float(lane m of
// Y10)·(d_x·d_w), d_w the binary16 at 108(SI), d_x at (DX).
#define Q3KFMA \
	VCVTDQ2PS Y10, Y10 \
	MOVWLZX 108(SI), AX \
	VMOVD AX, X11 \
	VCVTPH2PS X11, X11 \
	VMULSS (DX), X11, X11 \
	VBROADCASTSS X11, Y11 \
	VFMADD231PS Y10, Y11, Y4

// K23ROWEND stores a row's hsum_float_8 of Y4 at R13 (X2 scratch), steps
// R13 and R12 (the row) and loops to row while R11 rows are left.
#define K23ROWEND(row) \
	HSUM8(Y4, X4, X2) \
	VMOVSS X4, (R13) \
	ADDQ $4, R13 \
	ADDQ rb+16(FP), R12 \
	DECQ R11 \
	JNE row
