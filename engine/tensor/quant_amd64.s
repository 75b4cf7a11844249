//go:build amd64 && !purego

#include "textflag.h"
#include "quant_k_amd64.h"

// KUNPACK is KSCALES (quant_k_amd64.h) with the eight scales also at
// 0(SP), where the pair loop broadcasts them from.
#define KUNPACK \
	KSCALES \
	VMOVDQU X8, 0(SP)

// KDOT body: the Q4_K and Q5_K kernels, ggml_vec_dot_q4_K_q8_K's and
// ggml_vec_dot_q5_K_q8_K's AVX2 paths. Per block of BLOCK bytes, eight
// int32 lanes, lane m = Σ over the four 32-byte runs of qs (at QS) of
// sc[2p]·Σ (low nibble)·x and sc[2p+1]·Σ (high nibble)·x over bytes
// 4m..4m+3 (Q5_K: FIFTH adds each value's fifth bit, bit j of qh[l] for
// value l of sub-block j, from Y13 loaded by HBITS and shifted a bit per
// sub-block), then acc[m] += float(lane m)·(d_x·d_w). The mins: X12's
// four lanes m[2k]·S[2k] + m[2k+1]·S[2k+1] (KUNPACK), which MINS adds
// into X5 with dmin = -d_x·dmin_w in X13, and FINAL into the result after
// hsum_float_8(acc). The rows loop: rows of rb bytes from w, dst[r] for r
// < rows; n blocks a row, so the activations restart with each row.
// func(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)
#define KDOT(BLOCK, QS, HBITS, FIFTH, MINS, FINAL) \
	MOVQ w+8(FP), R12 \
	SPLAT($0x0F0F0F0F, X6, Y6) \
	SPLAT($0x01010101, X7, Y7) \
	MOVL $0x80000000, AX \
	VMOVD AX, X15 \
	CMPQ rows+24(FP), $0 \
	JEQ end \
row: \
	VXORPS X5, X5, X5 \
	KROWB(s32, done) \
block: \
	KUNPACK \
	VPXOR Y10, Y10, Y10 \
	HBITS \
	LEAQ QS(SI), R9 \
	XORQ R10, R10 \
pair: \
	VMOVDQU (R9), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y6, Y0, Y0 \
	VPAND Y6, Y1, Y1 \
	FIFTH \
	VMOVDQU (DI), Y2 \
	VMOVDQU 32(DI), Y3 \
	VPMADDUBSW Y2, Y0, Y0 \
	VPMADDUBSW Y3, Y1, Y1 \
	VPBROADCASTW 0(SP)(R10*4), Y8 \
	VPBROADCASTW 2(SP)(R10*4), Y9 \
	VPMADDWD Y8, Y0, Y0 \
	VPMADDWD Y9, Y1, Y1 \
	VPADDD Y1, Y0, Y0 \
	VPADDD Y0, Y10, Y10 \
	ADDQ $32, R9 \
	ADDQ $64, DI \
	INCQ R10 \
	CMPQ R10, $4 \
	JNE pair \
	KTAIL(BLOCK, MINS, FINAL)

// Q5_K's fifth bits (its mins and result: Q5KMINS, Q5KFINAL in
// quant_k_amd64.h).
#define Q5KHBITS \
	VMOVDQU 16(SI), Y13

#define Q5KFIFTH \
	VPAND Y7, Y13, Y2 \
	VPSLLW $4, Y2, Y2 \
	VPOR Y2, Y0, Y0 \
	VPSRLW $1, Y13, Y13 \
	VPAND Y7, Y13, Y2 \
	VPSLLW $4, Y2, Y2 \
	VPOR Y2, Y1, Y1 \
	VPSRLW $1, Y13, Y13

// AVX2 dot products of one quantized weight row with activations rounded
// to Q8_0 blocks, as ggml's ggml_vec_dot_q8_0_q8_0 and q4_0_q8_0 compute
// them: per block of 32, the integer products summed exactly
// (VPMADDUBSW takes |w| unsigned and y·sign(w) signed, VPMADDWD adds the
// pairs), converted to 8 float lanes and accumulated by one FMA with the
// block's scale d_w·d_x; the 8 lanes are added at the end as ggml's
// hsum_float_8 adds them, ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).
//
// Plan 9 operand order: VFMADD231PS b, a, acc computes acc += a·b;
// VPSIGNB s, a, dst computes dst = a·sign(s).

// func dotQ8_0AVX2(w *byte, xd *float32, xq *int8, n int) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ xd+8(FP), DX
	MOVQ xq+16(FP), DI
	MOVQ n+24(FP), CX
	VXORPS Y4, Y4, Y4
	SPLAT($0x00010001, X7, Y7)          // 16-bit ones
	TESTQ CX, CX
	JEQ q8done
q8loop:
	VMOVDQU 2(SI), Y0            // 32 int8 weights
	VMOVDQU (DI), Y1             // 32 int8 activations
	VPSIGNB Y0, Y0, Y2           // |w|
	VPSIGNB Y0, Y1, Y3           // y·sign(w)
	VPMADDUBSW Y3, Y2, Y5        // 16 int16 pair sums
	VPMADDWD Y7, Y5, Y5          // 8 int32 sums
	VCVTDQ2PS Y5, Y5
	MOVWLZX (SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2             // d_w
	VMULSS (DX), X2, X2          // d_w·d_x
	VBROADCASTSS X2, Y2
	VFMADD231PS Y5, Y2, Y4
	ADDQ $34, SI
	ADDQ $4, DX
	ADDQ $32, DI
	DECQ CX
	JNE q8loop
q8done:
	HSUM8(Y4, X4, X5)
	VMOVSS X4, ret+32(FP)
	VZEROUPPER
	RET

// Q4SETUP loads the Q4_0 kernels' constants: 16-bit ones (Y7), the
// low-nibble mask (Y6) and 8 in every byte (Y8).
#define Q4SETUP \
	SPLAT($0x00010001, X7, Y7) \
	SPLAT($0x0F0F0F0F, X6, Y6) \
	SPLAT($0x08080808, X8, Y8)

// Q4LANES8 leaves in Y5 the eight exact int32 lanes of the Q4_0 block at
// SI against the 32 activations at DI: lane m the products of weights
// 4m..4m+3 (the 16 bytes at SI+2 hold weights j in their low nibbles and
// j+16 in their high ones; minus 8; VPSIGNB moves the signs to the
// activations for VPMADDUBSW, whose pairs of at most 2·8·128 do not
// saturate).
#define Q4LANES8 \
	VMOVDQU 2(SI), X0 \
	VPSRLW $4, X0, X1 \
	VPAND X6, X0, X0 \
	VPAND X6, X1, X1 \
	VINSERTI128 $1, X1, Y0, Y0 \
	VPSUBB Y8, Y0, Y0 \
	VMOVDQU (DI), Y1 \
	VPSIGNB Y0, Y0, Y2 \
	VPSIGNB Y0, Y1, Y3 \
	VPMADDUBSW Y3, Y2, Y5 \
	VPMADDWD Y7, Y5, Y5

// func dotQ4_0AVX2(w *byte, xd *float32, xq *int8, n int) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ xd+8(FP), DX
	MOVQ xq+16(FP), DI
	MOVQ n+24(FP), CX
	VXORPS Y4, Y4, Y4
	Q4SETUP
	TESTQ CX, CX
	JEQ q4done
q4loop:
	Q4LANES8
	VCVTDQ2PS Y5, Y5
	MOVWLZX (SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2
	VMULSS (DX), X2, X2
	VBROADCASTSS X2, Y2
	VFMADD231PS Y5, Y2, Y4
	ADDQ $18, SI
	ADDQ $4, DX
	ADDQ $32, DI
	DECQ CX
	JNE q4loop
q4done:
	HSUM8(Y4, X4, X5)
	VMOVSS X4, ret+32(FP)
	VZEROUPPER
	RET

// func dotQ4_0BlocksAVX2(w *byte, xd *float32, xq *int8, n int) float32
// dotQ4_0AVX2's integer lanes, added into one exact block sum, then one
// scalar fused multiply-add a block: acc = float(Σ)·(d_w·d_x) + acc, the
// order of llama.cpp's repacked Q4_0 kernels (dotQ4_0Blocks).
TEXT ·dotQ4_0BlocksAVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ xd+8(FP), DX
	MOVQ xq+16(FP), DI
	MOVQ n+24(FP), CX
	VXORPS X4, X4, X4
	Q4SETUP
	TESTQ CX, CX
	JEQ q4bdone
q4bloop:
	Q4LANES8
	VEXTRACTI128 $1, Y5, X3
	VPADDD X3, X5, X5
	VPSHUFD $0x4e, X5, X3
	VPADDD X3, X5, X5
	VPSHUFD $0xb1, X5, X3
	VPADDD X3, X5, X5            // the block's sum in every lane
	VCVTDQ2PS X5, X5
	MOVWLZX (SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2
	VMULSS (DX), X2, X2          // d_w·d_x
	VFMADD231SS X2, X5, X4
	ADDQ $18, SI
	ADDQ $4, DX
	ADDQ $32, DI
	DECQ CX
	JNE q4bloop
q4bdone:
	VMOVSS X4, ret+32(FP)
	VZEROUPPER
	RET

// The K-quant kernels (KDOT for Q4_K and Q5_K, and Q6_K's) unpack each
// block's scales themselves and loop over rows: the Go loop around them
// only splits the rows into runs.

// func dotQ4KAVX2(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)
TEXT ·dotQ4KAVX2(SB), NOSPLIT, $16-64
	KDOT(144, 16, NOTHING, NOTHING, Q4KMINS, Q4KFINAL)

// func dotQ5KAVX2(dst *float32, w *byte, rb int, rows int, s32 *int16, xd *float32, xq *int8, n int)
TEXT ·dotQ5KAVX2(SB), NOSPLIT, $16-64
	KDOT(176, 48, Q5KHBITS, Q5KFIFTH, Q5KMINS, Q5KFINAL)

// dotQ6KAVX2 is ggml_vec_dot_q6_K_q8_K's AVX2 path: per block, eight
// int32 lanes, lane m = Σ over the block's eight 32-value chunks of the
// chunk's sub-block scale · Σ (q-32)·x over its values 4m..4m+3 (the -32
// as ggml applies it, by a second VPMADDUBSW with 32s); then acc[m] +=
// float(lane m)·(d_x·d_w), one FMA per block; the lanes added as ggml's
// hsum_float_8: ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)). The sixteen
// int8 scales of a block are widened here. The rows loop: rows of rb
// bytes from w, dst[r] for r < rows.
// func dotQ6KAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
TEXT ·dotQ6KAVX2(SB), NOSPLIT, $32-56
	MOVQ w+8(FP), R12
	SPLAT($0x0F0F0F0F, X6, Y6)          // 0x0F
	SPLAT($0x30303030, X7, Y7)          // 0x30
	SPLAT($0x20202020, X15, Y15)        // 32 in every byte
	CMPQ rows+24(FP), $0
	JEQ q6kend
q6krow:
	KROW(q6kdone)
q6kblock:
	VPMOVSXBW 192(SI), Y8        // the sixteen int8 scales, widened
	VMOVDQU Y8, 0(SP)
	LEAQ 0(SP), R8
	VPXOR Y10, Y10, Y10
	MOVQ SI, R9                  // ql of this half
	LEAQ 128(SI), R11            // qh of this half
	MOVQ $2, R10
q6khalf:
	VMOVDQU (R9), Y12            // A = ql[0:32]
	VMOVDQU 32(R9), Y13          // B = ql[32:64]
	VMOVDQU (R11), Y14           // H = qh[0:32]
	// q1 = A&0F | (H<<4)&30
	VPAND Y6, Y12, Y0
	VPSLLW $4, Y14, Y1
	VPAND Y7, Y1, Y1
	VPOR Y1, Y0, Y0
	// q2 = B&0F | (H<<2)&30
	VPAND Y6, Y13, Y1
	VPSLLW $2, Y14, Y2
	VPAND Y7, Y2, Y2
	VPOR Y2, Y1, Y1
	// q3 = (A>>4)&0F | H&30
	VPSRLW $4, Y12, Y2
	VPAND Y6, Y2, Y2
	VPAND Y7, Y14, Y3
	VPOR Y3, Y2, Y2
	// q4 = (B>>4)&0F | (H>>2)&30
	VPSRLW $4, Y13, Y3
	VPAND Y6, Y3, Y3
	VPSRLW $2, Y14, Y5
	VPAND Y7, Y5, Y5
	VPOR Y5, Y3, Y3
	// p16 = maddubs(q, x) - maddubs(32, x), per chunk
	VMOVDQU (DI), Y8
	VPMADDUBSW Y8, Y0, Y0
	VPMADDUBSW Y8, Y15, Y9
	VPSUBW Y9, Y0, Y0
	VMOVDQU 32(DI), Y8
	VPMADDUBSW Y8, Y1, Y1
	VPMADDUBSW Y8, Y15, Y9
	VPSUBW Y9, Y1, Y1
	VMOVDQU 64(DI), Y8
	VPMADDUBSW Y8, Y2, Y2
	VPMADDUBSW Y8, Y15, Y9
	VPSUBW Y9, Y2, Y2
	VMOVDQU 96(DI), Y8
	VPMADDUBSW Y8, Y3, Y3
	VPMADDUBSW Y8, Y15, Y9
	VPSUBW Y9, Y3, Y3
	// scales: chunk k uses sc[2k] on its low 16 values, sc[2k+1] on the high
	VPBROADCASTW (R8), X8
	VPBROADCASTW 2(R8), X9
	VINSERTI128 $1, X9, Y8, Y8
	VPMADDWD Y8, Y0, Y0
	VPBROADCASTW 4(R8), X8
	VPBROADCASTW 6(R8), X9
	VINSERTI128 $1, X9, Y8, Y8
	VPMADDWD Y8, Y1, Y1
	VPBROADCASTW 8(R8), X8
	VPBROADCASTW 10(R8), X9
	VINSERTI128 $1, X9, Y8, Y8
	VPMADDWD Y8, Y2, Y2
	VPBROADCASTW 12(R8), X8
	VPBROADCASTW 14(R8), X9
	VINSERTI128 $1, X9, Y8, Y8
	VPMADDWD Y8, Y3, Y3
	VPADDD Y1, Y0, Y0            // as ggml: sumi += (p0+p1); sumi += (p2+p3)
	VPADDD Y0, Y10, Y10
	VPADDD Y3, Y2, Y2
	VPADDD Y2, Y10, Y10
	ADDQ $64, R9
	ADDQ $32, R11
	ADDQ $128, DI
	ADDQ $16, R8
	DECQ R10
	JNE q6khalf
	Q6KBLOCKEND(q6kblock)
q6kdone:
	HSUM8(Y4, X4, X5)
	KROWEND(q6krow)
q6kend:
	VZEROUPPER
	RET
