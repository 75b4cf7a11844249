//go:build amd64 && !purego

#include "textflag.h"

// mulUpperZF32 (upper.go): band b of a packed upper triangular matrix is
// sixteen columns of R, each 16·(b+1) floats, the outputs of bands 0 … b;
// the kernel adds a[j] times each column to the outputs Z0 … Zb, band
// after band, and stores the 16·bands outputs at the end.

// UPPER_COL adds a[j] (DX) times one column at SI to the outputs named,
// then moves to the next column and a[j+1].
#define UPPER_COL1 \
	VBROADCASTSS (DX), Z28 \
	VFMADD231PS (SI), Z28, Z0

#define UPPER_COL2 \
	UPPER_COL1 \
	VFMADD231PS 64(SI), Z28, Z1

#define UPPER_COL3 \
	UPPER_COL2 \
	VFMADD231PS 128(SI), Z28, Z2

#define UPPER_COL4 \
	UPPER_COL3 \
	VFMADD231PS 192(SI), Z28, Z3

#define UPPER_COL5 \
	UPPER_COL4 \
	VFMADD231PS 256(SI), Z28, Z4

#define UPPER_COL6 \
	UPPER_COL5 \
	VFMADD231PS 320(SI), Z28, Z5

#define UPPER_COL7 \
	UPPER_COL6 \
	VFMADD231PS 384(SI), Z28, Z6

#define UPPER_COL8 \
	UPPER_COL7 \
	VFMADD231PS 448(SI), Z28, Z7

// UPPER_BAND runs the sixteen columns of one band (COL its column macro,
// BYTES a column's length), then stops after band BANDS.
#define UPPER_BAND(COL, BYTES, label, BANDS) \
	MOVQ $16, CX \
label: \
	COL \
	ADDQ $4, DX \
	ADDQ $BYTES, SI \
	DECQ CX \
	JNZ label \
	CMPQ BX, $BANDS \
	JEQ done

// func mulUpperZF32(dst *float32, a *float32, r *float32, bands int)
TEXT ·mulUpperZF32(SB), NOSPLIT, $0-32
	MOVQ a+8(FP), DX
	MOVQ r+16(FP), SI
	MOVQ bands+24(FP), BX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	UPPER_BAND(UPPER_COL1, 64, band1, 1)
	UPPER_BAND(UPPER_COL2, 128, band2, 2)
	UPPER_BAND(UPPER_COL3, 192, band3, 3)
	UPPER_BAND(UPPER_COL4, 256, band4, 4)
	UPPER_BAND(UPPER_COL5, 320, band5, 5)
	UPPER_BAND(UPPER_COL6, 384, band6, 6)
	UPPER_BAND(UPPER_COL7, 448, band7, 7)
	UPPER_BAND(UPPER_COL8, 512, band8, 8)
done:
	MOVQ dst+0(FP), DI
	VMOVUPS Z0, (DI)
	CMPQ BX, $1
	JEQ out
	VMOVUPS Z1, 64(DI)
	CMPQ BX, $2
	JEQ out
	VMOVUPS Z2, 128(DI)
	CMPQ BX, $3
	JEQ out
	VMOVUPS Z3, 192(DI)
	CMPQ BX, $4
	JEQ out
	VMOVUPS Z4, 256(DI)
	CMPQ BX, $5
	JEQ out
	VMOVUPS Z5, 320(DI)
	CMPQ BX, $6
	JEQ out
	VMOVUPS Z6, 384(DI)
	CMPQ BX, $7
	JEQ out
	VMOVUPS Z7, 448(DI)
out:
	VZEROUPPER
	RET
