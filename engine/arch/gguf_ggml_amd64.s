//go:build amd64 && !purego

#include "textflag.h"

// swiGLUGGMLZ: dst[i] = silu(gate[i])·up[i] for i < n (a positive
// multiple of 16), silu as ggml_vec_silu_f32 of llama.cpp's AVX2 build
// computes it, x / (1 + ggml_v_expf(0 - x)), sixteen lanes at a time:
// each lane's arithmetic is the AVX2 code's (EXPAVX2 below). expGGML
// (gguf_ggml.go) is its Go twin.
//
// Plan 9 operand order: VFMADD231PS b, a, acc is acc += a·b;
// VFNMADD231PS b, a, acc is acc -= a·b; VFMADD213PS c, b, a is
// a = a·b + c; VSUBPS b, a, d is d = a - b; VDIVPS b, a, d is d = a / b;
// VCMPPS $p, b, a, k compares a with b.

#define BCAST(bits, z) MOVL $bits, AX; VPBROADCASTD AX, z

// EXPCONSTS loads EXPAVX2's constants.
#define EXPCONSTS \
	BCAST(0x4b400000, Z16)   /* r = 1.5·2^23 */ \
	BCAST(0x3fb8aa3b, Z17)   /* log2 e */ \
	BCAST(0x3f317200, Z18)   /* ln 2, high part */ \
	BCAST(0x35bfbe8e, Z19)   /* ln 2, low part */ \
	BCAST(0x3c072010, Z20)   /* polynomial coefficients, highest first */ \
	BCAST(0x3d2b9f17, Z21) \
	BCAST(0x3e2aaf33, Z22) \
	BCAST(0x3efffedb, Z23) \
	BCAST(0x3f7ffff6, Z24) \
	BCAST(0x3f800000, Z25)   /* 1 */ \
	BCAST(0x43400000, Z26)   /* 192 */ \
	BCAST(0x7fffffff, Z27)   /* |·| mask */ \
	BCAST(0x42fc0000, Z28)   /* 126 */ \
	VPXORD Z29, Z29, Z29     /* 0 */ \
	BCAST(0x82000000, Z31) \
	BCAST(0x7f000000, Z15)

// EXPAVX2 leaves in Z10 ggml_v_expf of the AVX2 build of Z1, lane by
// lane: z = x·log2e + r, n = z - r, b = x - n·ln2 (two steps), k = 2^n
// built as (z << 23) + bits(1), j the polynomial without its 1, and
// k + k·j; lanes with |n| > 126 instead (s2 + s2·j)·s1 with g = n ≤ 0 ?
// 0x82000000 : 0, s1 = bits(g + 0x7f000000), s2 = bits(z<<23 - g), and
// lanes with |n| > 192 s1·s1. Scratch Z2..Z9, Z11..Z14, K1..K3.
#define EXPAVX2(lbl) \
	VMOVAPS Z16, Z2 \
	VFMADD231PS Z17, Z1, Z2          /* z */ \
	VSUBPS Z16, Z2, Z3               /* n */ \
	VMOVAPS Z1, Z4 \
	VFNMADD231PS Z18, Z3, Z4 \
	VFNMADD231PS Z19, Z3, Z4         /* b */ \
	VPSLLD $23, Z2, Z5               /* e = z << 23 */ \
	VPADDD Z25, Z5, Z11              /* k */ \
	VMULPS Z4, Z4, Z6                /* u = b·b */ \
	VMOVAPS Z21, Z7 \
	VFMADD231PS Z20, Z4, Z7          /* c5·b + c4 */ \
	VMOVAPS Z23, Z8 \
	VFMADD231PS Z22, Z4, Z8          /* c3·b + c2 */ \
	VFMADD213PS Z8, Z6, Z7           /* (c5·b + c4)·u + (c3·b + c2) */ \
	VMULPS Z24, Z4, Z9               /* c1·b */ \
	VFMADD213PS Z9, Z6, Z7           /* j */ \
	VMOVAPS Z11, Z10 \
	VFMADD213PS Z11, Z7, Z10         /* k·j + k */ \
	VANDPS Z27, Z3, Z12 \
	VCMPPS $0x1e, Z28, Z12, K1       /* c: |n| > 126 (GT_OQ) */ \
	KORTESTW K1, K1 \
	JEQ lbl \
	VCMPPS $0x12, Z29, Z3, K2        /* n ≤ 0 (LE_OQ) */ \
	VPXORD Z13, Z13, Z13 \
	VMOVDQA32 Z31, K2, Z13           /* g */ \
	VPADDD Z15, Z13, Z14             /* s1 */ \
	VPSUBD Z13, Z5, Z13              /* s2 */ \
	VMOVAPS Z13, Z6 \
	VFMADD213PS Z13, Z7, Z6          /* s2·j + s2 */ \
	VMULPS Z14, Z6, Z6 \
	VMOVAPS Z6, K1, Z10 \
	VCMPPS $0x1e, Z26, Z12, K3       /* d: |n| > 192 */ \
	VMULPS Z14, Z14, Z6 \
	VMOVAPS Z6, K3, Z10 \
lbl:

// func swiGLUGGMLZ(dst, gate, up *float32, n int)
TEXT ·swiGLUGGMLZ(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), DX
	MOVQ n+24(FP), CX
	EXPCONSTS
	TESTQ CX, CX
	JEQ done
loop:
	VMOVUPS (SI), Z0                 // x
	VSUBPS Z0, Z29, Z1               // -x, as 0 - x
	EXPAVX2(sexp)
	VADDPS Z25, Z10, Z10             // 1 + exp(-x)
	VDIVPS Z10, Z0, Z0               // silu = x / (1 + exp(-x))
	VMULPS (DX), Z0, Z0              // · up
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JNE loop
done:
	VZEROUPPER
	RET

// HSUM8 leaves in x (a ymm's low half) the sum of the ymm y's eight
// lanes as ggml_vec_soft_max_f32's AVX2 code adds them: ((l0+l4) +
// (l2+l6)) + ((l1+l5) + (l3+l7)); xt scratch.
#define HSUM8(y, x, xt) \
	VEXTRACTF128 $1, y, xt \
	VADDPS xt, x, x \
	VMOVHLPS x, x, xt \
	VADDPS xt, x, x \
	VMOVSHDUP x, xt \
	VADDSS xt, x, x

// func expSumZ(dst, src *float32, sub float32, n int) float64
// dst[i] = ggml_v_expf(src[i] - sub) for i < n, a positive multiple of 16:
// the exponentials of ggml_soft_max_f32 (expGGML is the Go twin), and
// their sum as it adds them: each group of eight by HSUM8, widened and
// added in float64, group after group.
TEXT ·expSumZ(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	VBROADCASTSS sub+16(FP), Z30
	MOVQ n+24(FP), CX
	EXPCONSTS
	VXORPD X0, X0, X0
	VMOVSD X0, ret+32(FP)
	TESTQ CX, CX
	JEQ edone
eloop:
	VMOVUPS (SI), Z1
	VSUBPS Z30, Z1, Z1               // x - max
	EXPAVX2(eexp)
	VMOVUPS Z10, (DI)
	VEXTRACTF64X4 $1, Z10, Y3        // lanes 8..15
	HSUM8(Y10, X10, X2)              // lanes 0..7 (clears Z10's upper lanes)
	HSUM8(Y3, X3, X2)
	VCVTSS2SD X10, X1, X1
	VCVTSS2SD X3, X3, X3
	VMOVSD ret+32(FP), X0
	VADDSD X1, X0, X0
	VADDSD X3, X0, X0
	VMOVSD X0, ret+32(FP)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JNE eloop
edone:
	VZEROUPPER
	RET

// func rotatePairsZ(x, cos, sin *float32, n int)
// rotatePairsGGML over n pairs (a positive multiple of 4), four pairs a
// ymm: x = a0 b0 a1 b1 ..., A = a0 a0 a1 a1 ..., B = b0 b0 b1 b1 ...,
// CS = c0 s0 c1 s1 ..., SC = s0 c0 s1 c1 ...; then B·SC with its even
// lanes negated (-(b·s), b·c), and one FMA: A·CS + that, which is
// fma(a, c, -(b·s)) and fma(a, s, b·c), the Go twin's bits.
TEXT ·rotatePairsZ(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ cos+8(FP), SI
	MOVQ sin+16(FP), DX
	MOVQ n+24(FP), CX
	MOVL $0x80000000, AX
	VMOVD AX, X7
	VPBROADCASTQ X7, Y7              // the sign bit of the even lanes
rot:
	VMOVUPS (DI), Y0
	VMOVUPS (SI), X1
	VMOVUPS (DX), X2
	VUNPCKLPS X2, X1, X3
	VUNPCKHPS X2, X1, X4
	VINSERTF128 $1, X4, Y3, Y3       // CS
	VUNPCKLPS X1, X2, X5
	VUNPCKHPS X1, X2, X6
	VINSERTF128 $1, X6, Y5, Y5       // SC
	VMOVSHDUP Y0, Y8                 // B
	VMOVSLDUP Y0, Y9                 // A
	VMULPS Y5, Y8, Y8
	VXORPS Y7, Y8, Y8
	VFMADD231PS Y3, Y9, Y8
	VMOVUPS Y8, (DI)
	ADDQ $32, DI
	ADDQ $16, SI
	ADDQ $16, DX
	SUBQ $4, CX
	JNE rot
	VZEROUPPER
	RET
