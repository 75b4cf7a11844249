//go:build amd64 && !purego

#include "textflag.h"

// llama.cpp's attention sums in AVX-512 (tinyBLAS, llamafile_sgemm of
// b4748): sixteen lanes, lane l the fused multiply-adds of terms l, l+16,
// l+32, ... (the first a plain product), reduced as GCC's
// _mm512_reduce_add_ps: t[l] = x[l+8] + x[l], u[l] = t[l+4] + t[l], then
// (u0+u2) + (u1+u3). Go twins: dotTiny and kqvTinyGo (gguf_attention.go).
// Both kernels keep their sums in registers: the scores go four keys at a
// time (four independent chains and reductions in flight, the query's
// loads shared), the weighted values sixteen dims at a time with one
// register a lane (sixteen chains), so that neither waits on one chain's
// latency nor on memory for its partial sums.
//
// Plan 9 operand order: VFMADD231PS b, a, acc is acc += a·b.

// REDUCE16 leaves the reduction of z's lanes in x (y, x its halves; yt,
// xt scratch).
#define REDUCE16(z, y, x, yt, xt) \
	VEXTRACTF64X4 $1, z, yt \
	VADDPS y, yt, y \
	VEXTRACTF128 $1, y, xt \
	VADDPS x, xt, x \
	VPERMILPS $0x4e, x, xt \
	VADDPS xt, x, x \
	VMOVSHDUP x, xt \
	VADDSS xt, x, x

// func scoresTinyZ(dst *float32, k *float32, q *float32, hd int, keys int)
// dst[j] = the tinyBLAS dot product of key row j (hd floats) with q; hd a
// positive multiple of 16. Keys four at a time (Z0..Z3), then one.
TEXT ·scoresTinyZ(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ k+8(FP), SI
	MOVQ q+16(FP), DX
	MOVQ hd+24(FP), CX
	MOVQ keys+32(FP), BX
	MOVQ CX, R12
	SHLQ $2, R12                     // row bytes
squad:
	CMPQ BX, $4
	JB sone
	LEAQ (SI)(R12*1), R8
	LEAQ (R8)(R12*1), R9
	LEAQ (R9)(R12*1), R10
	VMOVUPS (DX), Z8
	VMULPS (SI), Z8, Z0
	VMULPS (R8), Z8, Z1
	VMULPS (R9), Z8, Z2
	VMULPS (R10), Z8, Z3
	MOVQ $16, AX
	CMPQ AX, CX
	JAE squadred
squadloop:
	VMOVUPS (DX)(AX*4), Z8
	VFMADD231PS (SI)(AX*4), Z8, Z0
	VFMADD231PS (R8)(AX*4), Z8, Z1
	VFMADD231PS (R9)(AX*4), Z8, Z2
	VFMADD231PS (R10)(AX*4), Z8, Z3
	ADDQ $16, AX
	CMPQ AX, CX
	JB squadloop
squadred:
	REDUCE16(Z0, Y0, X0, Y4, X4)
	REDUCE16(Z1, Y1, X1, Y5, X5)
	REDUCE16(Z2, Y2, X2, Y6, X6)
	REDUCE16(Z3, Y3, X3, Y7, X7)
	VMOVSS X0, (DI)
	VMOVSS X1, 4(DI)
	VMOVSS X2, 8(DI)
	VMOVSS X3, 12(DI)
	ADDQ $16, DI
	LEAQ (R10)(R12*1), SI
	SUBQ $4, BX
	JMP squad
sone:
	TESTQ BX, BX
	JEQ sdone
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
	REDUCE16(Z0, Y0, X0, Y1, X1)
	VMOVSS X0, (DI)
	ADDQ $4, DI
	ADDQ R12, SI
	DECQ BX
	JMP sone
sdone:
	VZEROUPPER
	RET

// func kqvTinyZ(out *float32, v *float32, w *float32, hd int, keys int)
// out[d] = Σ_j v[j·hd + d]·w[j] with lane l = j mod 16 as tinyBLAS sums
// it; hd a positive multiple of 16, keys ≥ 1. Sixteen dims at a time:
// lane l's sums in Z16+l, the keys sixteen a group (the first group's
// terms plain products), the rest lane by lane; lanes no key reaches
// stay 0, as the Go twin's.
TEXT ·kqvTinyZ(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ w+16(FP), R9
	MOVQ hd+24(FP), CX
	MOVQ keys+32(FP), BX
	MOVQ CX, R12
	SHLQ $2, R12                     // row bytes
	XORQ R11, R11                    // the dims' byte offset
kblock:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	LEAQ (SI)(R11*1), R10            // key 0's dims
	MOVQ R9, DX                      // w[0]
	MOVQ BX, R8                      // keys left
	CMPQ R8, $16
	JB kfirst
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z16
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z17
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z18
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z19
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z20
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z21
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z22
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z23
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z24
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z25
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z26
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z27
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z28
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z29
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z30
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z31
	ADDQ $4, DX
	ADDQ R12, R10
	SUBQ $16, R8
kgroups:
	CMPQ R8, $16
	JB klast
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z16
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z17
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z18
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z19
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z20
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z21
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z22
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z23
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z24
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z25
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z26
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z27
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z28
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z29
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z30
	ADDQ $4, DX
	ADDQ R12, R10
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z31
	ADDQ $4, DX
	ADDQ R12, R10
	SUBQ $16, R8
	JMP kgroups
klast:
	TESTQ R8, R8
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z16
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $1
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z17
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $2
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z18
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $3
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z19
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $4
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z20
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $5
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z21
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $6
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z22
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $7
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z23
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $8
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z24
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $9
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z25
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $10
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z26
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $11
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z27
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $12
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z28
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $13
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z29
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $14
	JEQ kred
	VBROADCASTSS (DX), Z0
	VFMADD231PS (R10), Z0, Z30
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $15
	JEQ kred
	JMP kred
kfirst:
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z16
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $1
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z17
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $2
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z18
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $3
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z19
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $4
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z20
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $5
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z21
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $6
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z22
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $7
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z23
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $8
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z24
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $9
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z25
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $10
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z26
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $11
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z27
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $12
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z28
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $13
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z29
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $14
	JEQ kred
	VBROADCASTSS (DX), Z0
	VMULPS (R10), Z0, Z30
	ADDQ $4, DX
	ADDQ R12, R10
	CMPQ R8, $15
	JEQ kred
kred:
	// t[l] = x[l+8] + x[l], l < 8
	VADDPS Z24, Z16, Z16
	VADDPS Z25, Z17, Z17
	VADDPS Z26, Z18, Z18
	VADDPS Z27, Z19, Z19
	VADDPS Z28, Z20, Z20
	VADDPS Z29, Z21, Z21
	VADDPS Z30, Z22, Z22
	VADDPS Z31, Z23, Z23
	// u[l] = t[l+4] + t[l], l < 4
	VADDPS Z20, Z16, Z16
	VADDPS Z21, Z17, Z17
	VADDPS Z22, Z18, Z18
	VADDPS Z23, Z19, Z19
	// (u0+u2) + (u1+u3)
	VADDPS Z18, Z16, Z16
	VADDPS Z19, Z17, Z17
	VADDPS Z17, Z16, Z16
	VMOVUPS Z16, (DI)(R11*1)
	ADDQ $64, R11
	CMPQ R11, R12
	JB kblock
	VZEROUPPER
	RET
