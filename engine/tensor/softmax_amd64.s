//go:build amd64 && !purego

#include "textflag.h"

// AVX2 loops of SoftmaxScaled (softmax.go). Plan 9 operand order:
// VDIVPS b, a, dst computes dst = a / b.

// func divMaxF32(w *float32, n int, d float32) float32
// w[j] /= d for j < n (a positive multiple of 8); returns the largest.
TEXT ·divMaxF32(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS d+16(FP), Y1
	LEAQ (SI)(CX*4), CX
	VMOVUPS (SI), Y0
	VDIVPS Y1, Y0, Y0
	VMOVUPS Y0, (SI)
	VMOVAPS Y0, Y2
	ADDQ $32, SI
	JMP check
loop:
	VMOVUPS (SI), Y0
	VDIVPS Y1, Y0, Y0
	VMOVUPS Y0, (SI)
	VMAXPS Y0, Y2, Y2
	ADDQ $32, SI
check:
	CMPQ SI, CX
	JB loop
	VEXTRACTF128 $1, Y2, X3
	VMAXPS X3, X2, X2
	VPERMILPS $0x4e, X2, X3
	VMAXPS X3, X2, X2
	VPERMILPS $0xb1, X2, X3
	VMAXPS X3, X2, X2
	VMOVSS X2, ret+24(FP)
	VZEROUPPER
	RET

// func roundSumF64(w *float32, e *float64, n int, s *[4]float64)
// w[j] = float32(e[j]) and s[j%4] += float64(w[j]) for j < n (a positive
// multiple of 4), each lane of s in order.
TEXT ·roundSumF64(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), DI
	MOVQ e+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ s+24(FP), DX
	VMOVUPD (DX), Y3
	LEAQ (DI)(CX*4), CX
loop:
	VMOVUPD (SI), Y0
	VCVTPD2PSY Y0, X1
	VMOVUPS X1, (DI)
	VCVTPS2PD X1, Y2
	VADDPD Y2, Y3, Y3
	ADDQ $32, SI
	ADDQ $16, DI
	CMPQ DI, CX
	JB loop
	VMOVUPD Y3, (DX)
	VZEROUPPER
	RET

// func divF32(w *float32, n int, d float32)
// w[j] /= d for j < n (a positive multiple of 8).
TEXT ·divF32(SB), NOSPLIT, $0-20
	MOVQ w+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS d+16(FP), Y1
	LEAQ (SI)(CX*4), CX
loop:
	VMOVUPS (SI), Y0
	VDIVPS Y1, Y0, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	CMPQ SI, CX
	JB loop
	VZEROUPPER
	RET
