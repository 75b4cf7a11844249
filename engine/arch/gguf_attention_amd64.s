//go:build amd64 && !purego

#include "textflag.h"

// llama.cpp's attention sums (its AVX2 build), in AVX-512: the same
// float32 operations in the same order as the Go twins dotGGML and
// kqvGGML (gguf_attention.go), so the same bits.
//
// Plan 9 operand order: VFMADD231PS b, a, acc is acc += a·b.

// func scoresGGMLZ(dst *float32, k *float32, q *float32, hd int, keys int)
// dst[j] = dotGGML(k[j·hd:(j+1)·hd], q) for j < keys; hd a positive
// multiple of 32. ggml_vec_dot_f32's four accumulators of eight lanes
// are two zmm here: Z0 holds accumulators 0 and 1 (terms 0..15 of each
// run of 32), Z1 accumulators 2 and 3 (terms 16..31); then (a0+a2) +
// (a1+a3) lane by lane, and the eight lanes ((r0+r4)+(r1+r5)) +
// ((r2+r6)+(r3+r7)) by two horizontal adds.
TEXT ·scoresGGMLZ(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ k+8(FP), SI
	MOVQ q+16(FP), DX
	MOVQ hd+24(FP), CX
	MOVQ keys+32(FP), BX
	MOVQ CX, R12
	SHLQ $2, R12                     // row bytes
	TESTQ BX, BX
	JEQ sdone
skey:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	XORQ AX, AX
srun:
	VMOVUPS (DX)(AX*4), Z2
	VFMADD231PS (SI)(AX*4), Z2, Z0
	VMOVUPS 64(DX)(AX*4), Z3
	VFMADD231PS 64(SI)(AX*4), Z3, Z1
	ADDQ $32, AX
	CMPQ AX, CX
	JB srun
	VADDPS Z1, Z0, Z0                // a0+a2 | a1+a3
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0                // r = (a0+a2) + (a1+a3)
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0                // r0+r4, r1+r5, r2+r6, r3+r7
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, (DI)
	ADDQ $4, DI
	ADDQ R12, SI
	DECQ BX
	JNE skey
sdone:
	VZEROUPPER
	RET

// func kqvLanesZ(out *float32, v *float32, w *float32, hd int, keys int, lanes int)
// out[d] = Σ_j v[j·hd + d]·w[j] for j < keys, summed as kqvGGML does:
// lane j mod lanes (8 or 32) of its own FMA chain, the lanes added as
// tinyBLAS's hsum (8) or ggml_vec_dot_f32's reduction (32). Sixteen dims
// at a time, a lane's chain a zmm. With 32 lanes, two passes over the
// keys: A takes lanes 0..7 and 16..23 (Z0..Z7, Z8..Z15), adding them into
// p[l] = a[l] + a[16+l] (Z16..Z23), B lanes 8..15 and 24..31 into q[l] =
// a[8+l] + a[24+l]; then r[l] = p[l] + q[l] and ((r0+r4)+(r1+r5)) +
// ((r2+r6)+(r3+r7)). hd a positive multiple of 16.

// LANE fuses key R10 (its dims at R10) times its weight off(R9) into z
// and steps R10 to the next key.
#define LANE(z, off) \
	VBROADCASTSS off(R9), Z30 \
	VFMADD231PS (R10), Z30, z \
	ADDQ R12, R10

// TLANE is LANE for lane l of the last, partial run of keys (DX keys in
// it): it jumps to done when the run has no key l.
#define TLANE(z, off, l, done) \
	CMPQ DX, $l \
	JLE done \
	LANE(z, off)

#define ZERO16 \
	VPXORD Z0, Z0, Z0; VPXORD Z1, Z1, Z1; VPXORD Z2, Z2, Z2; VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4; VPXORD Z5, Z5, Z5; VPXORD Z6, Z6, Z6; VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8; VPXORD Z9, Z9, Z9; VPXORD Z10, Z10, Z10; VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12; VPXORD Z13, Z13, Z13; VPXORD Z14, Z14, Z14; VPXORD Z15, Z15, Z15

// EIGHT runs LANE for eight lanes into Z(a)..Z(a+7), weights from off.
#define EIGHT(z0, z1, z2, z3, z4, z5, z6, z7, off) \
	LANE(z0, off); LANE(z1, off+4); LANE(z2, off+8); LANE(z3, off+12) \
	LANE(z4, off+16); LANE(z5, off+20); LANE(z6, off+24); LANE(z7, off+28)

#define TEIGHT(z0, z1, z2, z3, z4, z5, z6, z7, off, l, done) \
	TLANE(z0, off, l, done); TLANE(z1, off+4, l+1, done); TLANE(z2, off+8, l+2, done); TLANE(z3, off+12, l+3, done) \
	TLANE(z4, off+16, l+4, done); TLANE(z5, off+20, l+5, done); TLANE(z6, off+24, l+6, done); TLANE(z7, off+28, l+7, done)

// PASS32 runs one pass over the keys for lanes first..first+7 and
// first+16..first+23 (first 0 or 8) into Z0..Z15: R8 full runs of 32
// keys from R15 (their weights from CX), then the DX keys left.
#define PASS32(first, lbl, tail, done) \
	ZERO16 \
	LEAQ (SI)(R11*1), R15 \
	MOVQ CX, R9 \
	MOVQ R8, AX \
	TESTQ AX, AX \
	JEQ tail \
lbl: \
	MOVQ R12, R10 \
	IMULQ $first, R10 \
	ADDQ R15, R10 \
	EIGHT(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, first*4) \
	ADDQ R13, R10 \
	EIGHT(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, (first+16)*4) \
	ADDQ R14, R15 \
	ADDQ $128, R9 \
	DECQ AX \
	JNE lbl \
tail: \
	MOVQ R12, R10 \
	IMULQ $first, R10 \
	ADDQ R15, R10 \
	TEIGHT(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, first*4, first, done) \
	ADDQ R13, R10 \
	TEIGHT(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, (first+16)*4, first+16, done) \
done:

// PAIR8 leaves z(l) + z(8+l) in d for l < 8.
#define PAIR8(d0, d1, d2, d3, d4, d5, d6, d7) \
	VADDPS Z8, Z0, d0; VADDPS Z9, Z1, d1; VADDPS Z10, Z2, d2; VADDPS Z11, Z3, d3 \
	VADDPS Z12, Z4, d4; VADDPS Z13, Z5, d5; VADDPS Z14, Z6, d6; VADDPS Z15, Z7, d7

TEXT ·kqvLanesZ(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ hd+24(FP), CX
	MOVQ keys+32(FP), BX
	MOVQ CX, R12
	SHLQ $2, R12                     // row bytes
	MOVQ w+16(FP), CX                // the weights, from here on
	MOVQ R12, R13
	SHLQ $3, R13                     // 8 rows
	XORQ R11, R11                    // the dims' byte offset
	CMPQ lanes+40(FP), $8
	JEQ k8
	MOVQ R12, R14
	SHLQ $5, R14                     // 32 rows
	MOVQ BX, R8
	SHRQ $5, R8                      // full runs of 32
	MOVQ BX, DX
	ANDQ $31, DX                     // keys in the last run
k32block:
	PASS32(0, k32a, k32at, k32ad)
	PAIR8(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	PASS32(8, k32b, k32bt, k32bd)
	PAIR8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	VADDPS Z0, Z16, Z0
	VADDPS Z1, Z17, Z1
	VADDPS Z2, Z18, Z2
	VADDPS Z3, Z19, Z3
	VADDPS Z4, Z20, Z4
	VADDPS Z5, Z21, Z5
	VADDPS Z6, Z22, Z6
	VADDPS Z7, Z23, Z7
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z1, Z0, Z0
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	VMOVUPS Z0, (DI)(R11*1)
	ADDQ $64, R11
	CMPQ R11, R12
	JB k32block
	VZEROUPPER
	RET
k8:
	MOVQ BX, R8
	SHRQ $3, R8                      // full runs of 8
	MOVQ BX, DX
	ANDQ $7, DX
k8block:
	ZERO16
	LEAQ (SI)(R11*1), R10
	MOVQ CX, R9
	MOVQ R8, AX
	TESTQ AX, AX
	JEQ k8tail
k8run:
	EIGHT(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 0)
	ADDQ $32, R9
	DECQ AX
	JNE k8run
k8tail:
	TEIGHT(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 0, 0, k8done)
k8done:
	// ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7))
	VADDPS Z4, Z0, Z0
	VADDPS Z6, Z2, Z2
	VADDPS Z2, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z7, Z3, Z3
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
	VMOVUPS Z0, (DI)(R11*1)
	ADDQ $64, R11
	CMPQ R11, R12
	JB k8block
	VZEROUPPER
	RET
