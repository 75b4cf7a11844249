//go:build amd64 && !purego

#include "textflag.h"

// AVX2 scans of a score vector (scores.go). Plan 9 operand order:
// VMAXPS b, a, dst computes dst = a > b ? a : b (b when either is NaN);
// VCMPPS $p, b, a, dst compares a with b.

// SETUP loads the scores s into SI, their end (n of them) into CX, and
// -Inf into every lane of Y4.
#define SETUP \
	MOVQ s+0(FP), SI \
	MOVQ n+8(FP), CX \
	LEAQ (SI)(CX*4), CX \
	MOVL $0xff800000, AX \
	MOVL AX, X4 \
	VBROADCASTSS X4, Y4

// FIRSTBLOCK body: the index of the first block of 32 scores of s[:n]
// where some score s[i] has v PRED s[i] (VCMPPS predicate), or n; n a
// positive multiple of 32.
// func(s *float32, n int, v float32) int
#define FIRSTBLOCK(PRED) \
	SETUP \
	MOVQ s+0(FP), DI \
	VBROADCASTSS v+16(FP), Y4 \
loop: \
	VCMPPS $PRED, (SI), Y4, Y0 \
	VCMPPS $PRED, 32(SI), Y4, Y1 \
	VCMPPS $PRED, 64(SI), Y4, Y2 \
	VCMPPS $PRED, 96(SI), Y4, Y3 \
	VORPS Y1, Y0, Y0 \
	VORPS Y3, Y2, Y2 \
	VORPS Y2, Y0, Y0 \
	VPTEST Y0, Y0 \
	JNZ found \
	ADDQ $128, SI \
	CMPQ SI, CX \
	JB loop \
found: \
	SUBQ DI, SI \
	SHRQ $2, SI \
	MOVQ SI, ret+24(FP) \
	VZEROUPPER \
	RET

// COUNTCMP body: how many scores s[i] of s[:n] have v PRED s[i] (VCMPPS
// predicate, ordered); n a positive multiple of 32.
// func(s *float32, n int, v float32) int
#define COUNTCMP(PRED) \
	SETUP \
	VBROADCASTSS v+16(FP), Y4 \
	XORQ DX, DX \
loop: \
	VCMPPS $PRED, (SI), Y4, Y0 \
	VCMPPS $PRED, 32(SI), Y4, Y1 \
	VCMPPS $PRED, 64(SI), Y4, Y2 \
	VCMPPS $PRED, 96(SI), Y4, Y3 \
	VMOVMSKPS Y0, AX \
	VMOVMSKPS Y1, BX \
	VMOVMSKPS Y2, R8 \
	VMOVMSKPS Y3, R9 \
	SHLL $8, BX \
	SHLL $16, R8 \
	SHLL $24, R9 \
	ORL BX, AX \
	ORL R9, R8 \
	ORL R8, AX \
	POPCNTL AX, AX \
	ADDQ AX, DX \
	ADDQ $128, SI \
	CMPQ SI, CX \
	JB loop \
	MOVQ DX, ret+24(FP) \
	VZEROUPPER \
	RET

// func maxNaNF32(s *float32, n int) (max float32, nan bool)
// The largest of s[:n] that is not NaN (-Inf when none is) and whether
// one is NaN; n a positive multiple of 32. Two max accumulators start at
// -Inf and take each block as a: a NaN lane of the block leaves them as
// they are, and is ORed into Y6.
TEXT ·maxNaNF32(SB), NOSPLIT, $0-21
	SETUP
	VMOVAPS Y4, Y5
	VXORPS Y6, Y6, Y6
loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMAXPS Y4, Y0, Y4
	VMAXPS Y5, Y1, Y5
	VCMPPS $3, Y0, Y0, Y0 // unordered: NaN lanes
	VCMPPS $3, Y1, Y1, Y1
	VORPS Y0, Y6, Y6
	VORPS Y1, Y6, Y6
	VMAXPS Y4, Y2, Y4
	VMAXPS Y5, Y3, Y5
	VCMPPS $3, Y2, Y2, Y2
	VCMPPS $3, Y3, Y3, Y3
	VORPS Y2, Y6, Y6
	VORPS Y3, Y6, Y6
	ADDQ $128, SI
	CMPQ SI, CX
	JB loop
	VMAXPS Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS X5, X4, X4
	VPERMILPS $0x4e, X4, X5
	VMAXPS X5, X4, X4
	VPERMILPS $0xb1, X4, X5
	VMAXPS X5, X4, X4
	VMOVSS X4, max+16(FP)
	VMOVMSKPS Y6, AX
	TESTL AX, AX
	SETNE nan+20(FP)
	VZEROUPPER
	RET

// func countKeptF32(s *float32, n int) int
// How many of s[:n] are not -Inf (a NaN counts); n a positive multiple
// of 32.
TEXT ·countKeptF32(SB), NOSPLIT, $0-24
	SETUP
	XORQ DX, DX
loop:
	VCMPPS $4, (SI), Y4, Y0 // not equal, or unordered
	VCMPPS $4, 32(SI), Y4, Y1
	VCMPPS $4, 64(SI), Y4, Y2
	VCMPPS $4, 96(SI), Y4, Y3
	VMOVMSKPS Y0, AX
	VMOVMSKPS Y1, BX
	VMOVMSKPS Y2, R8
	VMOVMSKPS Y3, R9
	SHLL $8, BX
	SHLL $16, R8
	SHLL $24, R9
	ORL BX, AX
	ORL R9, R8
	ORL R8, AX
	POPCNTL AX, AX
	ADDQ AX, DX
	ADDQ $128, SI
	CMPQ SI, CX
	JB loop
	MOVQ DX, ret+16(FP)
	VZEROUPPER
	RET

// func firstEqualF32(s *float32, n int, v float32) int: a score == v.
TEXT ·firstEqualF32(SB), NOSPLIT, $0-32
	FIRSTBLOCK(0x00) // EQ_OQ

// func firstAtLeastF32(s *float32, n int, v float32) int: a score ≥ v.
TEXT ·firstAtLeastF32(SB), NOSPLIT, $0-32
	FIRSTBLOCK(0x12) // LE_OQ: v ≤ s[i]

// func firstAbsAboveF32(s *float32, n int, v float32) int: the first
// block of 32 of s[:n] where some |s[i]| > v (never a NaN), or n; n a
// positive multiple of 32.
TEXT ·firstAbsAboveF32(SB), NOSPLIT, $0-32
	SETUP
	MOVQ s+0(FP), DI
	VBROADCASTSS v+16(FP), Y4
	MOVL $0x7fffffff, AX
	MOVL AX, X5
	VBROADCASTSS X5, Y5
absloop:
	VANDPS (SI), Y5, Y0
	VANDPS 32(SI), Y5, Y1
	VANDPS 64(SI), Y5, Y2
	VANDPS 96(SI), Y5, Y3
	VCMPPS $0x11, Y0, Y4, Y0 // LT_OQ: v < |s[i]|
	VCMPPS $0x11, Y1, Y4, Y1
	VCMPPS $0x11, Y2, Y4, Y2
	VCMPPS $0x11, Y3, Y4, Y3
	VORPS Y1, Y0, Y0
	VORPS Y3, Y2, Y2
	VORPS Y2, Y0, Y0
	VPTEST Y0, Y0
	JNZ absfound
	ADDQ $128, SI
	CMPQ SI, CX
	JB absloop
absfound:
	SUBQ DI, SI
	SHRQ $2, SI
	MOVQ SI, ret+24(FP)
	VZEROUPPER
	RET

// func firstNotEqualF32(s *float32, n int, v float32) int: a score != v
// (or NaN).
TEXT ·firstNotEqualF32(SB), NOSPLIT, $0-32
	FIRSTBLOCK(0x04) // NEQ_UQ

// func countAboveF32(s *float32, n int, v float32) int: scores > v.
TEXT ·countAboveF32(SB), NOSPLIT, $0-32
	COUNTCMP(0x11) // LT_OQ: v < s[i]

// func countEqualF32(s *float32, n int, v float32) int: scores == v.
TEXT ·countEqualF32(SB), NOSPLIT, $0-32
	COUNTCMP(0x00) // EQ_OQ

// func finiteRangeF32(s *float32, n int) (lo, hi float32)
// The smallest and largest finite scores of s[:n] (+Inf and -Inf when
// none is; of +0 and -0 either may come back); n a positive multiple of 8.
TEXT ·finiteRangeF32(SB), NOSPLIT, $0-24
	MOVQ s+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ (SI)(CX*4), CX
	MOVL $0x7fffffff, AX
	MOVL AX, X4
	VBROADCASTSS X4, Y4
	MOVL $0x7f800000, AX
	MOVL AX, X5
	VBROADCASTSS X5, Y5
	MOVL $0xff800000, AX
	MOVL AX, X8
	VBROADCASTSS X8, Y8
	VMOVAPS Y5, Y6
	VMOVAPS Y8, Y7
loop:
	VMOVUPS (SI), Y0
	VANDPS Y4, Y0, Y1
	VCMPPS $0x11, Y5, Y1, Y1 // |v| < Inf: finite (not NaN)
	VBLENDVPS Y1, Y0, Y5, Y2
	VBLENDVPS Y1, Y0, Y8, Y3
	VMINPS Y2, Y6, Y6
	VMAXPS Y3, Y7, Y7
	ADDQ $32, SI
	CMPQ SI, CX
	JB loop
	VEXTRACTF128 $1, Y6, X2
	VMINPS X2, X6, X6
	VPERMILPS $0x4e, X6, X2
	VMINPS X2, X6, X6
	VPERMILPS $0xb1, X6, X2
	VMINPS X2, X6, X6
	VMOVSS X6, lo+16(FP)
	VEXTRACTF128 $1, Y7, X3
	VMAXPS X3, X7, X7
	VPERMILPS $0x4e, X7, X3
	VMAXPS X3, X7, X7
	VPERMILPS $0xb1, X7, X3
	VMAXPS X3, X7, X7
	VMOVSS X7, hi+20(FP)
	VZEROUPPER
	RET

// func removeBelowF32(s *float32, n int, v float32)
// s[i] = -Inf for every s[i] < v (ordered: NaN stays), i < n, n a
// positive multiple of 8.
TEXT ·removeBelowF32(SB), NOSPLIT, $0-20
	MOVQ s+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ (SI)(CX*4), CX
	VBROADCASTSS v+16(FP), Y4
	MOVL $0xff800000, AX
	MOVL AX, X5
	VBROADCASTSS X5, Y5
remove:
	VMOVUPS (SI), Y0
	VCMPPS $0x11, Y4, Y0, Y1 // s[i] < v
	VBLENDVPS Y1, Y5, Y0, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	CMPQ SI, CX
	JB remove
	VZEROUPPER
	RET
