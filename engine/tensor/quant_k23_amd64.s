//go:build amd64 && !purego

#include "textflag.h"
#include "quant_k23_amd64.h"

// The Q2_K and Q3_K kernels in AVX2: dotQ2K's and dotQ3K's bits (the
// order of llama.cpp's AVX2 ggml_vec_dot_q2_K_q8_K and q3_K_q8_K). A
// block of 256 weights is eight runs of 32 values: run i = 4h+k takes
// bits 2k, 2k+1 of the 32 bytes of qs of half h (and, for Q3_K, bit i of
// the 32 bytes of hmask), against activations 32i..32i+31, its first 16
// values under scale 2i and its last 16 under scale 2i+1. Per run,
// VPMADDUBSW (the two-bit values unsigned, ≤ 3, times the int8
// activations: pairs in int16, never saturated) and VPMADDWD with the
// scales as int16 (the low 128-bit lane's eight words scale 2i, the high
// lane's scale 2i+1) give eight int32 lanes, lane m the run's bytes
// 4m..4m+3; VPADDD sums the eight runs, exactly, as dot32 does. Then one
// VFMADD231PS per block, acc[m] += float(lane m)·(d_x·d_w) (Q2_K: first
// the mins' FMA, with dmin = -d_x·dmin_w), and at the end ggml's
// hsum_float_8, ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).
//
// The scales: the block's sixteen widened to int16 in Y1, words 0..7
// copied to both lanes of Y8 (half 0's runs) and words 8..15 to both of
// Y9 (half 1's); run k of a half picks its two with one VPSHUFB by
// k23Pick<>'s mask k: in the low lane bytes 4k, 4k+1 (word 2k) eight
// times, in the high lane bytes 4k+2, 4k+3 (word 2k+1).

DATA k23Pick<>+0(SB)/8, $0x0100010001000100
DATA k23Pick<>+8(SB)/8, $0x0100010001000100
DATA k23Pick<>+16(SB)/8, $0x0302030203020302
DATA k23Pick<>+24(SB)/8, $0x0302030203020302
DATA k23Pick<>+32(SB)/8, $0x0504050405040504
DATA k23Pick<>+40(SB)/8, $0x0504050405040504
DATA k23Pick<>+48(SB)/8, $0x0706070607060706
DATA k23Pick<>+56(SB)/8, $0x0706070607060706
DATA k23Pick<>+64(SB)/8, $0x0908090809080908
DATA k23Pick<>+72(SB)/8, $0x0908090809080908
DATA k23Pick<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k23Pick<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k23Pick<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k23Pick<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k23Pick<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k23Pick<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k23Pick<>(SB), RODATA|NOPTR, $128

// K23RUN adds run k of a half to the int32 lanes Y10: the two-bit values
// in Y1 (unsigned bytes) times the activations at XOFF(DI), scaled by
// the words k23Pick<>'s mask k (at POFF) picks from SC.
#define K23RUN(XOFF, POFF, SC) \
	VPMADDUBSW XOFF(DI), Y1, Y1 \
	VPSHUFB k23Pick<>+POFF(SB), SC, Y2 \
	VPMADDWD Y2, Y1, Y1 \
	VPADDD Y1, Y10, Y10

// Q3RUN is K23RUN for Q3_K: the values less 4 where their high bit is
// clear, as Σ u·x - Σ 4·x over those, two VPMADDUBSW: u the two low bits
// in Y1, 4·(not the high bit) in Y3 (VPANDN of the hmask bit, moved to
// bit 2, with the 4s of Y5). Both pair sums stay within ±1024, their
// difference within ±1792: exact in int16.
#define Q3RUN(XOFF, POFF, SC, H) \
	VPANDN Y5, H, Y3 \
	VMOVDQU XOFF(DI), Y12 \
	VPMADDUBSW Y12, Y1, Y1 \
	VPMADDUBSW Y12, Y3, Y3 \
	VPSUBW Y3, Y1, Y1 \
	VPSHUFB k23Pick<>+POFF(SB), SC, Y2 \
	VPMADDWD Y2, Y1, Y1 \
	VPADDD Y1, Y10, Y10

// dotQ2KAVX2: per Q2_K block of 84 bytes (scales[16]: low nibble scale,
// high nibble min; qs[64]; d and dmin binary16 at 80 and 82), first the
// mins, lane k = m[2k]·S[2k] + m[2k+1]·S[2k+1] (S the activations' int32
// sums of 16 at R8, packed to int16 by VPACKSSDW: |S| ≤ 16·128, no
// saturation; VPERMQ puts them back in order across the lanes), acc +=
// float(lanes)·(-d_x·dmin_w); then the values' eight runs, acc +=
// float(lanes)·(d_x·d_w). The rows loop: rows of rb bytes from w, dst[r]
// for r < rows; n blocks a row, the activations restart with each row.
// func dotQ2KAVX2(dst *float32, w *byte, rb int, rows int, bsums *int32, xd *float32, xq *int8, n int)
TEXT ·dotQ2KAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), R13
	MOVQ w+8(FP), R12
	MOVQ rows+24(FP), R11
	SPLAT($0x03030303, X6, Y6)          // 3 in every byte
	SPLAT($0x0F0F0F0F, X7, X7)          // low-nibble mask
	MOVL $0x80000000, AX
	VMOVD AX, X15                // float32 sign
	TESTQ R11, R11
	JEQ q2kend
q2krow:
	KROWB(bsums, q2kdone)
q2kblock:
	// the mins: acc += float(m[2k]·S[2k] + m[2k+1]·S[2k+1])·dmin
	VMOVDQU (SI), X0             // scales[16]
	VPAND X7, X0, X1             // the scales
	VPSRLW $4, X0, X0
	VPAND X7, X0, X0             // the mins
	VPMOVZXBW X0, Y0
	VMOVDQU (R8), Y2             // S[0..7]
	VPACKSSDW 32(R8), Y2, Y2     // S0..3, S8..11 | S4..7, S12..15
	VPERMQ $0xD8, Y2, Y2         // S0..15
	VPMADDWD Y2, Y0, Y0
	VCVTDQ2PS Y0, Y0
	MOVWLZX 82(SI), AX
	VMOVD AX, X3
	VCVTPH2PS X3, X3
	VMULSS (DX), X3, X3          // d_x·dmin_w
	VXORPS X15, X3, X3           // dmin = -d_x·dmin_w
	VBROADCASTSS X3, Y3
	VFMADD231PS Y0, Y3, Y4
	// the values
	VPMOVZXBW X1, Y1
	VPERMQ $0x44, Y1, Y8         // scales 0..7, both lanes
	VPERMQ $0xEE, Y1, Y9         // scales 8..15, both lanes
	VPXOR Y10, Y10, Y10
	VMOVDQU 16(SI), Y0           // qs of half 0
	VPAND Y6, Y0, Y1
	K23RUN(0, 0, Y8)
	VPSRLW $2, Y0, Y0
	VPAND Y6, Y0, Y1
	K23RUN(32, 32, Y8)
	VPSRLW $2, Y0, Y0
	VPAND Y6, Y0, Y1
	K23RUN(64, 64, Y8)
	VPSRLW $2, Y0, Y0
	VPAND Y6, Y0, Y1
	K23RUN(96, 96, Y8)
	VMOVDQU 48(SI), Y0           // qs of half 1
	VPAND Y6, Y0, Y1
	K23RUN(128, 0, Y9)
	VPSRLW $2, Y0, Y0
	VPAND Y6, Y0, Y1
	K23RUN(160, 32, Y9)
	VPSRLW $2, Y0, Y0
	VPAND Y6, Y0, Y1
	K23RUN(192, 64, Y9)
	VPSRLW $2, Y0, Y0
	VPAND Y6, Y0, Y1
	K23RUN(224, 96, Y9)
	VCVTDQ2PS Y10, Y10
	MOVWLZX 80(SI), AX
	VMOVD AX, X11
	VCVTPH2PS X11, X11
	VMULSS (DX), X11, X11        // d = d_x·d_w
	VBROADCASTSS X11, Y11
	VFMADD231PS Y10, Y11, Y4
	ADDQ $84, SI
	ADDQ $4, DX
	ADDQ $256, DI
	ADDQ $64, R8
	DECQ CX
	JNE q2kblock
q2kdone:
	K23ROWEND(q2krow)
q2kend:
	VZEROUPPER
	RET

// dotQ3KAVX2: per Q3_K block of 110 bytes (hmask[32]; qs[64]; the
// sixteen six-bit scales packed in 12 bytes; d binary16 at 108), the
// scales unpacked as q3KScales does (low four bits from the nibbles of
// bytes 0..7, top two from bytes 8..11 by q3Shifts<>, less 32, widened
// signed), the eight runs (Q3RUN: the hmask bit i of run i moved to bit 2
// by a shift of the hmask words by 2-i, each byte's bit staying within
// its byte), acc += float(lanes)·(d_x·d_w). The rows loop as dotQ2KAVX2's.
// func dotQ3KAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
TEXT ·dotQ3KAVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), R13
	MOVQ w+8(FP), R12
	MOVQ rows+24(FP), R11
	SPLAT($0x03030303, X6, Y6)          // 3 in every byte
	SPLAT($0x04040404, X5, Y5)          // 4 in every byte
	SPLAT($0x0F0F0F0F, X7, X7)          // low-nibble mask
	SPLAT($0x20202020, X14, X14)        // 32 in every byte
	TESTQ R11, R11
	JEQ q3kend
q3krow:
	KROW(q3kdone)
q3kblock:
	Q3KSCALES
	VPMOVSXBW X0, Y1
	VPERMQ $0x44, Y1, Y8         // scales 0..7, both lanes
	VPERMQ $0xEE, Y1, Y9         // scales 8..15, both lanes
	VMOVDQU (SI), Y13            // hmask
	VPXOR Y10, Y10, Y10
	VMOVDQU 32(SI), Y0           // qs of half 0
	VPAND Y6, Y0, Y1
	VPSLLW $2, Y13, Y3
	Q3RUN(0, 0, Y8, Y3)
	VPSRLW $2, Y0, Y1
	VPAND Y6, Y1, Y1
	VPSLLW $1, Y13, Y3
	Q3RUN(32, 32, Y8, Y3)
	VPSRLW $4, Y0, Y1
	VPAND Y6, Y1, Y1
	Q3RUN(64, 64, Y8, Y13)
	VPSRLW $6, Y0, Y1
	VPAND Y6, Y1, Y1
	VPSRLW $1, Y13, Y3
	Q3RUN(96, 96, Y8, Y3)
	VMOVDQU 64(SI), Y0           // qs of half 1
	VPAND Y6, Y0, Y1
	VPSRLW $2, Y13, Y3
	Q3RUN(128, 0, Y9, Y3)
	VPSRLW $2, Y0, Y1
	VPAND Y6, Y1, Y1
	VPSRLW $3, Y13, Y3
	Q3RUN(160, 32, Y9, Y3)
	VPSRLW $4, Y0, Y1
	VPAND Y6, Y1, Y1
	VPSRLW $4, Y13, Y3
	Q3RUN(192, 64, Y9, Y3)
	VPSRLW $6, Y0, Y1
	VPAND Y6, Y1, Y1
	VPSRLW $5, Y13, Y3
	Q3RUN(224, 96, Y9, Y3)
	Q3KFMA
	ADDQ $110, SI
	ADDQ $4, DX
	ADDQ $256, DI
	DECQ CX
	JNE q3kblock
q3kdone:
	K23ROWEND(q3krow)
q3kend:
	VZEROUPPER
	RET
