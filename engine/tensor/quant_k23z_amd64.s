//go:build amd64 && !purego

#include "textflag.h"
#include "quant_k23_amd64.h"

// The Q2_K and Q3_K kernels in AVX-512 (BW, VL): dotQ2KAVX2's and
// dotQ3KAVX2's integers and float sequence, the same bits, with two runs
// of a block in one 64-byte register: runs 2p and 2p+1 (bits 2k, 2k+1 of
// a half's 32 bytes of qs in bytes 0..31, bits 2k+2, 2k+3 in bytes
// 32..63, k = 2p mod 4) against their 64 contiguous activations
// 64p..64p+63. VPMADDUBSW and VPMADDWD with the pair's four scales side
// by side (VPERMW from the sixteen widened scales: word w takes scale
// 4p + w/8) then give sixteen int32 lanes: lanes 0..7 are dotQ2KAVX2's
// lane m of run 2p, lanes 8..15 of run 2p+1. Lanes 0..7 sum the even
// runs, 8..15 the odd ones, and the block's end adds the top eight onto
// the bottom eight (VEXTRACTI64X4, VPADDD): the AVX2 kernels' eight int32
// lanes, exactly. The float part is theirs: the same products, FMAs and
// sums in the same order (Q2_K takes d_w and dmin_w with one VCVTPH2PS
// and multiplies both by d_x with one VMULPS, each lane the VMULSS of
// dotQ2KAVX2, and widens its scales and mins with one VPMOVZXBW).
// One register holds a half's qs and, 32 bytes up, the same shifted
// right by 2: a pair's values are that AND 3 (runs 4h, 4h+1) or it
// shifted right by 4 AND 3 (runs 4h+2, 4h+3).

// k23zScaleIdx: for pair p of a block (runs 2p, 2p+1), VPERMW's word
// indices of its scales: word w takes scale 4p + w/8.
DATA k23zScaleIdx<>+0(SB)/8, $0x0000000000000000
DATA k23zScaleIdx<>+8(SB)/8, $0x0000000000000000
DATA k23zScaleIdx<>+16(SB)/8, $0x0001000100010001
DATA k23zScaleIdx<>+24(SB)/8, $0x0001000100010001
DATA k23zScaleIdx<>+32(SB)/8, $0x0002000200020002
DATA k23zScaleIdx<>+40(SB)/8, $0x0002000200020002
DATA k23zScaleIdx<>+48(SB)/8, $0x0003000300030003
DATA k23zScaleIdx<>+56(SB)/8, $0x0003000300030003
DATA k23zScaleIdx<>+64(SB)/8, $0x0004000400040004
DATA k23zScaleIdx<>+72(SB)/8, $0x0004000400040004
DATA k23zScaleIdx<>+80(SB)/8, $0x0005000500050005
DATA k23zScaleIdx<>+88(SB)/8, $0x0005000500050005
DATA k23zScaleIdx<>+96(SB)/8, $0x0006000600060006
DATA k23zScaleIdx<>+104(SB)/8, $0x0006000600060006
DATA k23zScaleIdx<>+112(SB)/8, $0x0007000700070007
DATA k23zScaleIdx<>+120(SB)/8, $0x0007000700070007
DATA k23zScaleIdx<>+128(SB)/8, $0x0008000800080008
DATA k23zScaleIdx<>+136(SB)/8, $0x0008000800080008
DATA k23zScaleIdx<>+144(SB)/8, $0x0009000900090009
DATA k23zScaleIdx<>+152(SB)/8, $0x0009000900090009
DATA k23zScaleIdx<>+160(SB)/8, $0x000a000a000a000a
DATA k23zScaleIdx<>+168(SB)/8, $0x000a000a000a000a
DATA k23zScaleIdx<>+176(SB)/8, $0x000b000b000b000b
DATA k23zScaleIdx<>+184(SB)/8, $0x000b000b000b000b
DATA k23zScaleIdx<>+192(SB)/8, $0x000c000c000c000c
DATA k23zScaleIdx<>+200(SB)/8, $0x000c000c000c000c
DATA k23zScaleIdx<>+208(SB)/8, $0x000d000d000d000d
DATA k23zScaleIdx<>+216(SB)/8, $0x000d000d000d000d
DATA k23zScaleIdx<>+224(SB)/8, $0x000e000e000e000e
DATA k23zScaleIdx<>+232(SB)/8, $0x000e000e000e000e
DATA k23zScaleIdx<>+240(SB)/8, $0x000f000f000f000f
DATA k23zScaleIdx<>+248(SB)/8, $0x000f000f000f000f
GLOBL k23zScaleIdx<>(SB), RODATA|NOPTR, $256

// K2PAIR adds a pair of runs to the int32 lanes Z10: the two-bit values
// in Z1 (unsigned bytes) times the activations at XOFF(DI), scaled by the
// words IDX picks from the scales in Z8.
#define K2PAIR(XOFF, IDX) \
	VPMADDUBSW XOFF(DI), Z1, Z1 \
	VPERMW Z8, IDX, Z2 \
	VPMADDWD Z2, Z1, Z1 \
	VPADDD Z1, Z10, Z10

// Q3PAIR is K2PAIR for Q3_K, as dotQ3KAVX2's Q3RUN: the values less 4
// where their high bit is clear, Σ u·x - Σ 4·x over those, u the two low
// bits in Z1, 4·(not the high bit) in Z3 (VPANDND of H, whose bit 2 is
// the hmask bit of the byte's run, with the 4s of Z5).
#define Q3PAIR(XOFF, IDX, H) \
	VPANDND Z5, H, Z3 \
	VMOVDQU64 XOFF(DI), Z12 \
	VPMADDUBSW Z12, Z1, Z1 \
	VPMADDUBSW Z12, Z3, Z3 \
	VPSUBW Z3, Z1, Z1 \
	VPERMW Z8, IDX, Z2 \
	VPMADDWD Z2, Z1, Z1 \
	VPADDD Z1, Z10, Z10

// K23ZHALF loads the 32 bytes of qs at OFF(SI) into Z0, the same shifted
// right by 2 above them, and leaves the first pair's values in Z1.
#define K23ZHALF(OFF) \
	VMOVDQU OFF(SI), Y0 \
	VPSRLW $2, Y0, Y1 \
	VINSERTI64X4 $1, Y1, Z0, Z0 \
	VPANDD Z6, Z0, Z1

// K23ZNEXT leaves the second pair of a half in Z1.
#define K23ZNEXT \
	VPSRLW $4, Z0, Z1 \
	VPANDD Z6, Z1, Z1

// K23ZFOLD adds lanes 8..15 of Z10 onto lanes 0..7 (Y10), exactly.
#define K23ZFOLD \
	VEXTRACTI64X4 $1, Z10, Y11 \
	VPADDD Y11, Y10, Y10

// func dotQ2KAVX512(dst *float32, w *byte, rb int, rows int, bsums *int32, xd *float32, xq *int8, n int)
TEXT ·dotQ2KAVX512(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), R13
	MOVQ w+8(FP), R12
	MOVQ rows+24(FP), R11
	SPLAT($0x03030303, X6, Z6)          // 3 in every byte
	SPLAT($0x0F0F0F0F, X7, Y7)          // low-nibble mask
	MOVQ $0x8000000000000000, AX
	VMOVQ AX, X15                // float32 sign of the second float
	MOVL $1, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14        // VPERMPS: the second float, eight times
	VMOVDQU64 k23zScaleIdx<>+0(SB), Z16
	VMOVDQU64 k23zScaleIdx<>+64(SB), Z17
	VMOVDQU64 k23zScaleIdx<>+128(SB), Z18
	VMOVDQU64 k23zScaleIdx<>+192(SB), Z19
	TESTQ R11, R11
	JEQ q2zend
q2zrow:
	KROWB(bsums, q2zdone)
q2zblock:
	// d_x·d_w and dmin = -d_x·dmin_w, as dotQ2KAVX2's two VMULSS
	VMOVD 80(SI), X3             // d_w, dmin_w in binary16
	VCVTPH2PS X3, X3
	VBROADCASTSS (DX), X2
	VMULPS X2, X3, X3            // d_x·d_w, d_x·dmin_w
	VXORPS X15, X3, X3           // d, dmin
	VBROADCASTSS X3, Y9          // d
	VPERMPS Y3, Y14, Y3          // dmin
	// the mins, as dotQ2KAVX2: acc += float(m[2k]·S[2k] + m[2k+1]·S[2k+1])·dmin
	VPMOVZXBW (SI), Y0           // scales[16] as words
	VPAND Y7, Y0, Y8             // the scales (the top of Z8 zero)
	VPSRLW $4, Y0, Y0            // the mins
	VMOVDQU32 (R8), Z2           // S[0..15]
	VPMOVDW Z2, Y2               // as int16: |S| ≤ 16·128, exact
	VPMADDWD Y2, Y0, Y0
	VCVTDQ2PS Y0, Y0
	VFMADD231PS Y0, Y3, Y4
	// the values
	VPXORD Z10, Z10, Z10
	K23ZHALF(16)
	K2PAIR(0, Z16)
	K23ZNEXT
	K2PAIR(64, Z17)
	K23ZHALF(48)
	K2PAIR(128, Z18)
	K23ZNEXT
	K2PAIR(192, Z19)
	K23ZFOLD
	VCVTDQ2PS Y10, Y10
	VFMADD231PS Y10, Y9, Y4
	ADDQ $84, SI
	ADDQ $4, DX
	ADDQ $256, DI
	ADDQ $64, R8
	DECQ CX
	JNE q2zblock
q2zdone:
	K23ROWEND(q2zrow)
q2zend:
	VZEROUPPER
	RET

// func dotQ3KAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
TEXT ·dotQ3KAVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), R13
	MOVQ w+8(FP), R12
	MOVQ rows+24(FP), R11
	SPLAT($0x03030303, X6, Z6)          // 3 in every byte
	SPLAT($0x04040404, X5, Z5)          // 4 in every byte
	SPLAT($0x0F0F0F0F, X7, X7)          // low-nibble mask
	SPLAT($0x20202020, X14, X14)        // 32 in every byte
	VMOVDQU64 k23zScaleIdx<>+0(SB), Z16
	VMOVDQU64 k23zScaleIdx<>+64(SB), Z17
	VMOVDQU64 k23zScaleIdx<>+128(SB), Z18
	VMOVDQU64 k23zScaleIdx<>+192(SB), Z19
	TESTQ R11, R11
	JEQ q3zend
q3zrow:
	KROW(q3zdone)
q3zblock:
	Q3KSCALES
	VPMOVSXBW X0, Y8             // the sixteen scales as words (the top of Z8 zero)
	// the hmask, and above it the same shifted right by 1: bit 2p of
	// byte l is hmask bit 2p of byte l in the low half, 2p+1 in the high
	VMOVDQU (SI), Y13
	VPSRLW $1, Y13, Y3
	VINSERTI64X4 $1, Y3, Z13, Z13
	VPXORD Z10, Z10, Z10
	K23ZHALF(32)
	VPSLLW $2, Z13, Z3
	Q3PAIR(0, Z16, Z3)
	K23ZNEXT
	Q3PAIR(64, Z17, Z13)
	K23ZHALF(64)
	VPSRLW $2, Z13, Z3
	Q3PAIR(128, Z18, Z3)
	K23ZNEXT
	VPSRLW $4, Z13, Z3
	Q3PAIR(192, Z19, Z3)
	K23ZFOLD
	Q3KFMA
	ADDQ $110, SI
	ADDQ $4, DX
	ADDQ $256, DI
	DECQ CX
	JNE q3zblock
q3zdone:
	K23ROWEND(q3zrow)
q3zend:
	VZEROUPPER
	RET
