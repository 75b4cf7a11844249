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

// func kqvLanesZ(out *float32, v *float32, w *float32, acc *float32, hd int, keys int, lanes int)
// out[d] = Σ_j v[j·hd + d]·w[j] for j < keys, summed as kqvGGML does:
// lane j mod lanes (8 or 32) of its own FMA chain, the lanes added as
// tinyBLAS's hsum (8) or ggml_vec_dot_f32's reduction (32). Sixteen dims
// at a time, each lane's chain a zmm kept at acc (lanes·16 floats of
// scratch), then the lanes' tree of vertical adds. hd a positive
// multiple of 16.
TEXT ·kqvLanesZ(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ w+16(FP), R9
	MOVQ acc+24(FP), R13
	MOVQ hd+32(FP), CX
	MOVQ keys+40(FP), BX
	MOVQ lanes+48(FP), R14
	MOVQ CX, R12
	SHLQ $2, R12                     // row bytes
	MOVQ R14, R15
	DECQ R15                         // lanes - 1, the lane mask
	MOVQ R14, R8
	SHLQ $6, R8                      // the scratch's bytes
	VPXORD Z31, Z31, Z31
	XORQ R11, R11                    // the dims' byte offset
kblock:
	XORQ AX, AX
kzero:
	VMOVUPS Z31, (R13)(AX*1)
	ADDQ $64, AX
	CMPQ AX, R8
	JB kzero
	LEAQ (SI)(R11*1), R10            // key 0's dims
	XORQ DX, DX                      // key j
kkey:
	CMPQ DX, BX
	JAE kreduce
	MOVQ DX, AX
	ANDQ R15, AX
	SHLQ $6, AX                      // lane j mod lanes
	VMOVUPS (R13)(AX*1), Z0
	VBROADCASTSS (R9)(DX*4), Z1
	VFMADD231PS (R10), Z1, Z0
	VMOVUPS Z0, (R13)(AX*1)
	ADDQ R12, R10
	INCQ DX
	JMP kkey
kreduce:
	CMPQ R14, $8
	JEQ kred8
	// 32 lanes: r[l] = (a[l] + a[16+l]) + (a[8+l] + a[24+l]), then
	// ((r0+r4)+(r1+r5)) + ((r2+r6)+(r3+r7)).
#define R32(l, z) \
	VMOVUPS (l*64)(R13), z \
	VADDPS ((16+l)*64)(R13), z, z \
	VMOVUPS ((8+l)*64)(R13), Z8 \
	VADDPS ((24+l)*64)(R13), Z8, Z8 \
	VADDPS Z8, z, z
	R32(0, Z0)
	R32(1, Z1)
	R32(2, Z2)
	R32(3, Z3)
	R32(4, Z4)
	R32(5, Z5)
	R32(6, Z6)
	R32(7, Z7)
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z1, Z0, Z0
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	JMP kstore
kred8:
	// 8 lanes: ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).
	VMOVUPS (R13), Z0
	VADDPS 256(R13), Z0, Z0
	VMOVUPS 128(R13), Z2
	VADDPS 384(R13), Z2, Z2
	VADDPS Z2, Z0, Z0
	VMOVUPS 64(R13), Z1
	VADDPS 320(R13), Z1, Z1
	VMOVUPS 192(R13), Z3
	VADDPS 448(R13), Z3, Z3
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
kstore:
	VMOVUPS Z0, (DI)(R11*1)
	ADDQ $64, R11
	CMPQ R11, R12
	JB kblock
	VZEROUPPER
	RET
