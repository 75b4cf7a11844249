//go:build amd64 && !purego

#include "textflag.h"
#include "quant_k_amd64.h"

// The Q4_K and Q5_K kernels in AVX-512 (BW): dotQ4KAVX2's and
// dotQ5KAVX2's integers and float sequence, the same bits, with each run of 32 bytes of a block's nibbles
// taken in one 64-byte register: its low nibbles in bytes 0..31, its high
// ones in bytes 32..63, against 64 contiguous activations (the run's two
// sub-blocks of 32). VPMADDUBSW and VPMADDWD with the two sub-blocks'
// scales side by side (VPERMW from the eight scales) then give sixteen
// int32 lanes: lanes 0..7 are dotQ4KAVX2's lane m for the low sub-block
// and lanes 8..15 for the high one, which the block's end adds exactly
// into the eight lanes of ggml's AVX2 order. Half the vector
// instructions of the AVX2 loop a block.

// q4kScaleIdx: for run p of a block, VPERMW's word indices of its two
// sub-blocks' scales: sixteen words 2p, then sixteen 2p+1.
DATA q4kScaleIdx<>+0(SB)/8, $0x0000000000000000
DATA q4kScaleIdx<>+8(SB)/8, $0x0000000000000000
DATA q4kScaleIdx<>+16(SB)/8, $0x0000000000000000
DATA q4kScaleIdx<>+24(SB)/8, $0x0000000000000000
DATA q4kScaleIdx<>+32(SB)/8, $0x0001000100010001
DATA q4kScaleIdx<>+40(SB)/8, $0x0001000100010001
DATA q4kScaleIdx<>+48(SB)/8, $0x0001000100010001
DATA q4kScaleIdx<>+56(SB)/8, $0x0001000100010001
DATA q4kScaleIdx<>+64(SB)/8, $0x0002000200020002
DATA q4kScaleIdx<>+72(SB)/8, $0x0002000200020002
DATA q4kScaleIdx<>+80(SB)/8, $0x0002000200020002
DATA q4kScaleIdx<>+88(SB)/8, $0x0002000200020002
DATA q4kScaleIdx<>+96(SB)/8, $0x0003000300030003
DATA q4kScaleIdx<>+104(SB)/8, $0x0003000300030003
DATA q4kScaleIdx<>+112(SB)/8, $0x0003000300030003
DATA q4kScaleIdx<>+120(SB)/8, $0x0003000300030003
DATA q4kScaleIdx<>+128(SB)/8, $0x0004000400040004
DATA q4kScaleIdx<>+136(SB)/8, $0x0004000400040004
DATA q4kScaleIdx<>+144(SB)/8, $0x0004000400040004
DATA q4kScaleIdx<>+152(SB)/8, $0x0004000400040004
DATA q4kScaleIdx<>+160(SB)/8, $0x0005000500050005
DATA q4kScaleIdx<>+168(SB)/8, $0x0005000500050005
DATA q4kScaleIdx<>+176(SB)/8, $0x0005000500050005
DATA q4kScaleIdx<>+184(SB)/8, $0x0005000500050005
DATA q4kScaleIdx<>+192(SB)/8, $0x0006000600060006
DATA q4kScaleIdx<>+200(SB)/8, $0x0006000600060006
DATA q4kScaleIdx<>+208(SB)/8, $0x0006000600060006
DATA q4kScaleIdx<>+216(SB)/8, $0x0006000600060006
DATA q4kScaleIdx<>+224(SB)/8, $0x0007000700070007
DATA q4kScaleIdx<>+232(SB)/8, $0x0007000700070007
DATA q4kScaleIdx<>+240(SB)/8, $0x0007000700070007
DATA q4kScaleIdx<>+248(SB)/8, $0x0007000700070007
GLOBL q4kScaleIdx<>(SB), RODATA|NOPTR, $256

// QRUN is run p of a block: nibbles at OFF(R9) (Q5_K: FIFTH adds the
// fifth bits), activations at XOFF(DI), the scales' indices in IDX; lanes
// added into Z10.
#define QRUN(OFF, XOFF, IDX, FIFTH) \
	VMOVDQU OFF(R9), Y0 \
	VPSRLW $4, Y0, Y1 \
	VINSERTI64X4 $1, Y1, Z0, Z0 \
	VPANDD Z6, Z0, Z0 \
	FIFTH \
	VMOVDQU64 XOFF(DI), Z2 \
	VPMADDUBSW Z2, Z0, Z0 \
	VPERMW Z8, IDX, Z9 \
	VPMADDWD Z9, Z0, Z0 \
	VPADDD Z0, Z10, Z10

// K512 is the body of the Q4_K and Q5_K kernels: dotQ4KAVX2's and
// dotQ5KAVX2's (quant_amd64.s, KDOT), a block's four runs by QRUN. Per
// block of BLOCK bytes, values at QS; HBITS loads what FIFTH needs (Q5_K:
// qh, and qh shifted right by one, side by side in Z13), MINS and FINAL
// add the mins as KDOT's do.
// func(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)
#define K512(BLOCK, QS, HBITS, FIFTH, MINS, FINAL) \
	MOVQ w+8(FP), R12 \
	SPLAT($0x0F0F0F0F, X6, Z6) \
	SPLAT($0x01010101, X7, Z7) \
	MOVL $0x80000000, AX \
	VMOVD AX, X15 \
	VMOVDQU64 q4kScaleIdx<>+0(SB), Z16 \
	VMOVDQU64 q4kScaleIdx<>+64(SB), Z17 \
	VMOVDQU64 q4kScaleIdx<>+128(SB), Z18 \
	VMOVDQU64 q4kScaleIdx<>+192(SB), Z19 \
	CMPQ rows+24(FP), $0 \
	JEQ end \
row: \
	VXORPS X5, X5, X5 \
	KROWB(s32, done) \
block: \
	KSCALES \
	VPXORD Z10, Z10, Z10 \
	HBITS \
	LEAQ QS(SI), R9 \
	QRUN(0, 0, Z16, FIFTH) \
	QRUN(32, 64, Z17, FIFTH) \
	QRUN(64, 128, Z18, FIFTH) \
	QRUN(96, 192, Z19, FIFTH) \
	ADDQ $256, DI \
	VEXTRACTI64X4 $1, Z10, Y11 \
	VPADDD Y11, Y10, Y10 \
	KTAIL(BLOCK, MINS, FINAL)

// Q5_K: qh and qh>>1 side by side, so that run p's low nibbles take bit
// 2p of qh[l] and its high ones bit 2p+1 (its mins and result: Q5KMINS,
// Q5KFINAL in quant_k_amd64.h).
#define Q5KHBITS \
	VMOVDQU 16(SI), Y13 \
	VPSRLW $1, Y13, Y1 \
	VINSERTI64X4 $1, Y1, Z13, Z13

#define Q5KFIFTH \
	VPANDD Z7, Z13, Z2 \
	VPSLLW $4, Z2, Z2 \
	VPORD Z2, Z0, Z0 \
	VPSRLW $2, Z13, Z13

// func dotQ4KAVX512(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)
TEXT ·dotQ4KAVX512(SB), NOSPLIT, $0-64
	K512(144, 16, NOTHING, NOTHING, Q4KMINS, Q4KFINAL)

// func dotQ5KAVX512(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)
TEXT ·dotQ5KAVX512(SB), NOSPLIT, $0-64
	K512(176, 48, Q5KHBITS, Q5KFIFTH, Q5KMINS, Q5KFINAL)

// The Q6_K kernel in AVX-512 (BW): dotQ6KAVX2's integers and float
// sequence, the same bits, with two 32-value chunks of a half block in one
// 64-byte register (chunks 0 and 1: ql[0:64] low nibbles, qh shifted left
// 4 and 2; chunks 2 and 3: the high nibbles, qh as is and shifted right
// 2), against the chunks' 64 contiguous activations. VPMADDWD with the
// four sub-blocks' scales (VPERMW from the sixteen, widened) gives sixteen
// int32 lanes, chunk 2k's lane m in lane m and chunk 2k+1's in lane 8+m,
// which the block's end adds exactly into ggml's eight.

// q6kScaleIdx: for chunks 2k and 2k+1 of the block (k = 2·half + pair),
// VPERMW's word indices of their scales: word i takes scale 4k + i/8.
DATA q6kScaleIdx<>+0(SB)/8, $0x0000000000000000
DATA q6kScaleIdx<>+8(SB)/8, $0x0000000000000000
DATA q6kScaleIdx<>+16(SB)/8, $0x0001000100010001
DATA q6kScaleIdx<>+24(SB)/8, $0x0001000100010001
DATA q6kScaleIdx<>+32(SB)/8, $0x0002000200020002
DATA q6kScaleIdx<>+40(SB)/8, $0x0002000200020002
DATA q6kScaleIdx<>+48(SB)/8, $0x0003000300030003
DATA q6kScaleIdx<>+56(SB)/8, $0x0003000300030003
DATA q6kScaleIdx<>+64(SB)/8, $0x0004000400040004
DATA q6kScaleIdx<>+72(SB)/8, $0x0004000400040004
DATA q6kScaleIdx<>+80(SB)/8, $0x0005000500050005
DATA q6kScaleIdx<>+88(SB)/8, $0x0005000500050005
DATA q6kScaleIdx<>+96(SB)/8, $0x0006000600060006
DATA q6kScaleIdx<>+104(SB)/8, $0x0006000600060006
DATA q6kScaleIdx<>+112(SB)/8, $0x0007000700070007
DATA q6kScaleIdx<>+120(SB)/8, $0x0007000700070007
DATA q6kScaleIdx<>+128(SB)/8, $0x0008000800080008
DATA q6kScaleIdx<>+136(SB)/8, $0x0008000800080008
DATA q6kScaleIdx<>+144(SB)/8, $0x0009000900090009
DATA q6kScaleIdx<>+152(SB)/8, $0x0009000900090009
DATA q6kScaleIdx<>+160(SB)/8, $0x000a000a000a000a
DATA q6kScaleIdx<>+168(SB)/8, $0x000a000a000a000a
DATA q6kScaleIdx<>+176(SB)/8, $0x000b000b000b000b
DATA q6kScaleIdx<>+184(SB)/8, $0x000b000b000b000b
DATA q6kScaleIdx<>+192(SB)/8, $0x000c000c000c000c
DATA q6kScaleIdx<>+200(SB)/8, $0x000c000c000c000c
DATA q6kScaleIdx<>+208(SB)/8, $0x000d000d000d000d
DATA q6kScaleIdx<>+216(SB)/8, $0x000d000d000d000d
DATA q6kScaleIdx<>+224(SB)/8, $0x000e000e000e000e
DATA q6kScaleIdx<>+232(SB)/8, $0x000e000e000e000e
DATA q6kScaleIdx<>+240(SB)/8, $0x000f000f000f000f
DATA q6kScaleIdx<>+248(SB)/8, $0x000f000f000f000f
GLOBL q6kScaleIdx<>(SB), RODATA|NOPTR, $256

// Q6PAIR: chunks of one register: QL the 64 bytes of ql (nibbles at
// SHIFT 0 or 4), QH the qh bits already in place at 0x30 (Z1), the
// activations at XOFF(DI), the scales' indices IDX; lanes into Z10.
#define Q6PAIR(XOFF, IDX) \
	VPANDD Z7, Z1, Z1 \
	VPORD Z1, Z0, Z0 \
	VMOVDQU64 XOFF(DI), Z2 \
	VPMADDUBSW Z2, Z0, Z0 \
	VPMADDUBSW Z2, Z15, Z3 \
	VPSUBW Z3, Z0, Z0 \
	VPERMW Z8, IDX, Z9 \
	VPMADDWD Z9, Z0, Z0 \
	VPADDD Z0, Z10, Z10

// func dotQ6KAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
TEXT ·dotQ6KAVX512(SB), NOSPLIT, $0-56
	MOVQ w+8(FP), R12
	SPLAT($0x0F0F0F0F, X6, Z6)          // 0x0F
	SPLAT($0x30303030, X7, Z7)          // 0x30
	SPLAT($0x20202020, X15, Z15)        // 32 in every byte
	VMOVDQU64 q6kScaleIdx<>+0(SB), Z16
	VMOVDQU64 q6kScaleIdx<>+64(SB), Z17
	VMOVDQU64 q6kScaleIdx<>+128(SB), Z18
	VMOVDQU64 q6kScaleIdx<>+192(SB), Z19
	CMPQ rows+24(FP), $0
	JEQ q6zend
q6zrow:
	KROW(q6zdone)
q6zblock:
	VPMOVSXBW 192(SI), Y8        // the sixteen int8 scales, widened (the top of Z8 zero)
	VPXORD Z10, Z10, Z10

	// Half 0: ql[0:64], qh[0:32], activations 0..127.
	VMOVDQU64 0(SI), Z12
	VMOVDQU 128(SI), Y14
	VPANDD Z6, Z12, Z0           // chunks 0, 1: low nibbles
	VPSLLW $4, Y14, Y1
	VPSLLW $2, Y14, Y2
	VINSERTI64X4 $1, Y2, Z1, Z1  // their fifth and sixth bits
	Q6PAIR(0, Z16)
	VPSRLW $4, Z12, Z0
	VPANDD Z6, Z0, Z0            // chunks 2, 3: high nibbles
	VPSRLW $2, Y14, Y2
	VINSERTI64X4 $1, Y2, Z14, Z1
	Q6PAIR(64, Z17)

	// Half 1: ql[64:128], qh[32:64], activations 128..255.
	VMOVDQU64 64(SI), Z12
	VMOVDQU 160(SI), Y14
	VPANDD Z6, Z12, Z0
	VPSLLW $4, Y14, Y1
	VPSLLW $2, Y14, Y2
	VINSERTI64X4 $1, Y2, Z1, Z1
	Q6PAIR(128, Z18)
	VPSRLW $4, Z12, Z0
	VPANDD Z6, Z0, Z0
	VPSRLW $2, Y14, Y2
	VINSERTI64X4 $1, Y2, Z14, Z1
	Q6PAIR(192, Z19)

	ADDQ $256, DI
	VEXTRACTI64X4 $1, Z10, Y11
	VPADDD Y11, Y10, Y10
	Q6KBLOCKEND(q6zblock)
q6zdone:
	HSUM8(Y4, X4, X5)
	KROWEND(q6zrow)
q6zend:
	VZEROUPPER
	RET
