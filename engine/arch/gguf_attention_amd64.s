//go:build amd64 && !purego

#include "textflag.h"

// llama.cpp's decode attention sums in AVX-512 (tinyBLAS, llamafile_sgemm
// of b4748): sixteen lanes, lane l the fused multiply-adds of terms l,
// l+16, l+32, ... (the first a plain product), reduced as GCC's
// _mm512_reduce_add_ps: t[l] = x[l+8] + x[l], u[l] = t[l+4] + t[l], then
// (u0+u2) + (u1+u3). Go twins: dotTiny and kqvTinyGo (gguf_attention.go).
//
// Plan 9 operand order: VFMADD231PS b, a, acc is acc += a·b.

// REDUCE16 leaves the reduction of Z0's lanes in X0.
#define REDUCE16 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS Y0, Y1, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X0, X1, X0 \
	VPERMILPS $0x4e, X0, X1 \
	VADDPS X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS X1, X0, X0

// func scoresTinyZ(dst *float32, k *float32, q *float32, hd int, keys int)
// dst[j] = the tinyBLAS dot product of key row j (hd floats) with q; hd a
// positive multiple of 16.
TEXT ·scoresTinyZ(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ k+8(FP), SI
	MOVQ q+16(FP), DX
	MOVQ hd+24(FP), CX
	MOVQ keys+32(FP), BX
	TESTQ BX, BX
	JEQ sdone
skey:
	VMOVUPS (SI), Z0
	VMULPS (DX), Z0, Z0
	MOVQ $16, AX
	CMPQ AX, CX
	JAE sred
sloop:
	VMOVUPS (SI)(AX*4), Z2
	VFMADD231PS (DX)(AX*4), Z2, Z0
	ADDQ $16, AX
	CMPQ AX, CX
	JB sloop
sred:
	REDUCE16
	VMOVSS X0, (DI)
	ADDQ $4, DI
	LEAQ (SI)(CX*4), SI
	DECQ BX
	JNE skey
sdone:
	VZEROUPPER
	RET

// func kqvTinyZ(out *float32, v *float32, w *float32, acc *float32, hd int, keys int)
// out[d] = Σ_j v[j·hd + d]·w[j] with lane l = j mod 16 as tinyBLAS sums
// it (acc: 16·hd floats of scratch, rows of lanes 16 and up cleared
// here); hd a positive multiple of 16, keys ≥ 1.
TEXT ·kqvTinyZ(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ acc+24(FP), R8
	MOVQ hd+32(FP), CX
	MOVQ keys+40(FP), BX
	MOVQ CX, R12
	SHLQ $2, R12                     // row bytes
	// clear the rows of lanes no key reaches (keys < 16)
	MOVQ BX, R9
	CMPQ R9, $16
	JAE kfill
	MOVQ R9, AX
	IMULQ R12, AX
	LEAQ (R8)(AX*1), R10             // first untouched row
	MOVQ $16, R11
	SUBQ R9, R11
	IMULQ CX, R11                    // floats to clear
	VPXORD Z3, Z3, Z3
kclear:
	VMOVUPS Z3, (R10)
	ADDQ $64, R10
	SUBQ $16, R11
	JNE kclear
kfill:
	XORQ R9, R9                      // j
krow:
	MOVQ R9, AX
	ANDQ $15, AX
	IMULQ R12, AX
	LEAQ (R8)(AX*1), R10             // acc row of lane j mod 16
	VBROADCASTSS (DX)(R9*4), Z4      // w[j]
	XORQ AX, AX
	CMPQ R9, $16
	JAE kfma
kmul:
	VMULPS (SI)(AX*4), Z4, Z2
	VMOVUPS Z2, (R10)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JB kmul
	JMP knext
kfma:
	VMOVUPS (R10)(AX*4), Z2
	VFMADD231PS (SI)(AX*4), Z4, Z2
	VMOVUPS Z2, (R10)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JB kfma
knext:
	ADDQ R12, SI
	INCQ R9
	CMPQ R9, BX
	JB krow
	// reduce the sixteen rows, sixteen dims at a time
	XORQ AX, AX
kred:
	LEAQ (R8)(AX*4), R10
	// t[l] = row[l+8] + row[l], l < 8
	VMOVUPS (R10), Z10
	MOVQ R12, R11
	SHLQ $3, R11                     // 8 rows
	LEAQ (R10)(R11*1), R13           // row 8
	VADDPS (R13), Z10, Z10
	ADDQ R12, R10
	ADDQ R12, R13
	VMOVUPS (R10), Z11
	VADDPS (R13), Z11, Z11
	ADDQ R12, R10
	ADDQ R12, R13
	VMOVUPS (R10), Z12
	VADDPS (R13), Z12, Z12
	ADDQ R12, R10
	ADDQ R12, R13
	VMOVUPS (R10), Z13
	VADDPS (R13), Z13, Z13
	ADDQ R12, R10
	ADDQ R12, R13
	VMOVUPS (R10), Z14
	VADDPS (R13), Z14, Z14
	ADDQ R12, R10
	ADDQ R12, R13
	VMOVUPS (R10), Z15
	VADDPS (R13), Z15, Z15
	ADDQ R12, R10
	ADDQ R12, R13
	VMOVUPS (R10), Z16
	VADDPS (R13), Z16, Z16
	ADDQ R12, R10
	ADDQ R12, R13
	VMOVUPS (R10), Z17
	VADDPS (R13), Z17, Z17
	// u[l] = t[l+4] + t[l], l < 4
	VADDPS Z14, Z10, Z10
	VADDPS Z15, Z11, Z11
	VADDPS Z16, Z12, Z12
	VADDPS Z17, Z13, Z13
	// (u0+u2) + (u1+u3)
	VADDPS Z12, Z10, Z10
	VADDPS Z13, Z11, Z11
	VADDPS Z11, Z10, Z10
	VMOVUPS Z10, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JB kred
	VZEROUPPER
	RET
