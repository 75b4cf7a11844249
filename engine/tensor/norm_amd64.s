//go:build amd64 && !purego

#include "textflag.h"

// func sumSquaresF64(x *float32, n int, s *[8]float64)
// s[j] += float64(x[i])² for every i < n with i%8 == j; n a positive
// multiple of 8. Each square is exact in float64, so the FMA adds it as a
// multiplication and an addition would.
TEXT ·sumSquaresF64(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ s+16(FP), DI
	LEAQ (SI)(CX*4), CX
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
loop:
	VCVTPS2PD (SI), Y2
	VCVTPS2PD 16(SI), Y3
	VFMADD231PD Y2, Y2, Y0
	VFMADD231PD Y3, Y3, Y1
	ADDQ $32, SI
	CMPQ SI, CX
	JB loop
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VZEROUPPER
	RET

// func scaleMulF32(dst, x, w *float32, n int, r float32)
// dst[i] = w[i] * (x[i] * r) for i < n, n a positive multiple of 8; dst
// may be x.
TEXT ·scaleMulF32(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS r+32(FP), Y4
	LEAQ (SI)(CX*4), CX
scale:
	VMULPS (SI), Y4, Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	CMPQ SI, CX
	JB scale
	VZEROUPPER
	RET
