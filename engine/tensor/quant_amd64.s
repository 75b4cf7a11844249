//go:build amd64 && !purego

#include "textflag.h"

// AVX2 dot products of one quantized weight row with activations rounded
// to Q8_0 blocks, as ggml's ggml_vec_dot_q8_0_q8_0 and q4_0_q8_0 compute
// them: per block of 32, the integer products summed exactly
// (VPMADDUBSW takes |w| unsigned and y·sign(w) signed, VPMADDWD adds the
// pairs), converted to 8 float lanes and accumulated by one FMA with the
// block's scale d_w·d_x; the 8 lanes are added at the end.
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
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7          // 16-bit ones
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
	VEXTRACTF128 $1, Y4, X5
	VADDPS X5, X4, X4
	VHADDPS X4, X4, X4
	VHADDPS X4, X4, X4
	VMOVSS X4, ret+32(FP)
	VZEROUPPER
	RET

// func dotQ4_0AVX2(w *byte, xd *float32, xq *int8, n int) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-36
	MOVQ w+0(FP), SI
	MOVQ xd+8(FP), DX
	MOVQ xq+16(FP), DI
	MOVQ n+24(FP), CX
	VXORPS Y4, Y4, Y4
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7          // 16-bit ones
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6          // low-nibble mask
	MOVL $0x08080808, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8          // 8 in every byte
	TESTQ CX, CX
	JEQ q4done
q4loop:
	VMOVDQU 2(SI), X0            // 16 bytes: weights j (low nibble) and j+16 (high)
	VPSRLW $4, X0, X1
	VPAND X6, X0, X0
	VPAND X6, X1, X1
	VINSERTI128 $1, X1, Y0, Y0   // weights 0..15 | 16..31
	VPSUBB Y8, Y0, Y0            // minus 8
	VMOVDQU (DI), Y1
	VPSIGNB Y0, Y0, Y2
	VPSIGNB Y0, Y1, Y3
	VPMADDUBSW Y3, Y2, Y5
	VPMADDWD Y7, Y5, Y5
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
	VEXTRACTF128 $1, Y4, X5
	VADDPS X5, X4, X4
	VHADDPS X4, X4, X4
	VHADDPS X4, X4, X4
	VMOVSS X4, ret+32(FP)
	VZEROUPPER
	RET
