//go:build amd64 && !purego

#include "textflag.h"

// dotIQ4XSAVX2: IQ4_XS rows against Q8_K activations in AVX2, the bits of
// dotIQ4XS (quant_more.go, the order of llama.cpp's AVX2
// ggml_vec_dot_iq4_xs_q8_K). A block of 256 weights is 136 bytes: d
// (f16) at 0, scales_h (uint16) at 2, scales_l[4] at 4, qs[128] at 8;
// sub-block ib (32 weights) has the 6-bit scale nibble ib of scales_l
// under bits 2ib, 2ib+1 of scales_h, less 32, and its values are the
// nibbles of qs[16ib:16ib+16] (low nibbles weights 0..15, high ones
// 16..31) through the table iq4nlValues (-127..113).
//
// Per sub-block VBROADCASTI128 puts its 16 bytes of qs in both halves of
// a register, VPSRLVD shifts the upper half's dwords by 4 and VPAND
// keeps the nibbles: the low half holds weights 0..15, the upper one
// 16..31, next to the activations x of the same values. VPSHUFB turns
// the nibbles into values v. The products go through VPMADDUBSW with
// |x| as the unsigned side and v·sign(x) as the signed one (v is never
// -128, so its negation fits; |x| = 128 when x = -128, which VPABSB gives
// as the unsigned byte 128): a pair sums to at most 2·128·127 = 32512 in
// magnitude and never saturates. VPMADDWD with the sub-block's scale in
// every word adds the pairs of pairs: lane m of the result is scale ·
// Σ v·x over bytes 4m..4m+3, lane m of dot32, and the eight sub-blocks
// add up in eight int32 lanes (at most 8·2·32512·32 in magnitude). Then
// acc[m] = fma(d_w·d_x, float(lane m), acc[m]), one VFMADD231PS a block,
// and the result is ggml's hsum_float_8 of acc, ((a0+a4)+(a2+a6)) +
// ((a1+a5)+(a3+a7)), as dotIQ4XS's hsum8.
//
// The rows go two at a time (the activations' loads and |x| shared),
// then the last one alone; each row's integers and floats are the same
// as alone.
//
// Registers: R12 the next row, R11 rb, BX the rows left, R8 dst, SI
// (and R9 = SI+rb) the rows' blocks, DX the activations' scales, DI
// their values, CX the blocks left. Y5 the nibble shifts (0 low, 4
// high), Y6 0x0F, Y7 the table in both halves; Y10, Y11 the rows' int32
// lanes, Y4, Y12 their float accumulators. The scales of a block, as
// (s, s) word pairs one a sub-block, wait at 0(SP) (first row) and
// 32(SP) (second row) for VPBROADCASTD.
//
// Plan 9 operand order: VPSHUFB index, table, dst; VPSRLVD counts, src,
// dst; VPMADDUBSW signed, unsigned, dst; VPSIGNB s, a, dst computes
// a·sign(s); VFMADD231PS b, a, acc computes acc += a·b.

// The nibble shifts: 0 for the low half's dwords, 4 for the upper's.
DATA iq4xsNib<>+0(SB)/8, $0
DATA iq4xsNib<>+8(SB)/8, $0
DATA iq4xsNib<>+16(SB)/8, $0x0000000400000004
DATA iq4xsNib<>+24(SB)/8, $0x0000000400000004
GLOBL iq4xsNib<>(SB), RODATA|NOPTR, $32

// iq4xsLo: dword ib shifts scales_l right by 4ib (nibble ib to bits 0..3).
DATA iq4xsLo<>+0(SB)/8, $0x0000000400000000
DATA iq4xsLo<>+8(SB)/8, $0x0000000c00000008
DATA iq4xsLo<>+16(SB)/8, $0x0000001400000010
DATA iq4xsLo<>+24(SB)/8, $0x0000001c00000018
GLOBL iq4xsLo<>(SB), RODATA|NOPTR, $32

// iq4xsHi: dword ib shifts the dword at byte 1 of the block (scales_h at
// bits 8..23) right by 4+2ib (bits 2ib, 2ib+1 of scales_h to bits 4, 5).
DATA iq4xsHi<>+0(SB)/8, $0x0000000600000004
DATA iq4xsHi<>+8(SB)/8, $0x0000000a00000008
DATA iq4xsHi<>+16(SB)/8, $0x0000000e0000000c
DATA iq4xsHi<>+24(SB)/8, $0x0000001200000010
GLOBL iq4xsHi<>(SB), RODATA|NOPTR, $32

// 0x30 in every byte.
DATA iq4xs30<>+0(SB)/8, $0x3030303030303030
DATA iq4xs30<>+8(SB)/8, $0x3030303030303030
DATA iq4xs30<>+16(SB)/8, $0x3030303030303030
DATA iq4xs30<>+24(SB)/8, $0x3030303030303030
GLOBL iq4xs30<>(SB), RODATA|NOPTR, $32

// iq4xsDup: VPSHUFB indices making each dword's byte 0 two words (the
// bytes 4k, then zero, twice, for dword k of each 16-byte half).
DATA iq4xsDup<>+0(SB)/8, $0x8004800480008000
DATA iq4xsDup<>+8(SB)/8, $0x800c800c80088008
DATA iq4xsDup<>+16(SB)/8, $0x8004800480008000
DATA iq4xsDup<>+24(SB)/8, $0x800c800c80088008
GLOBL iq4xsDup<>(SB), RODATA|NOPTR, $32

// 32 in every word.
DATA iq4xs32<>+0(SB)/8, $0x0020002000200020
DATA iq4xs32<>+8(SB)/8, $0x0020002000200020
DATA iq4xs32<>+16(SB)/8, $0x0020002000200020
DATA iq4xs32<>+24(SB)/8, $0x0020002000200020
GLOBL iq4xs32<>(SB), RODATA|NOPTR, $32

// IQ4XSSCALES writes the eight scales of the block at r, less 32, to
// off(SP): dword ib the word pair (s, s) of sub-block ib, for
// VPBROADCASTD and VPMADDWD. The low nibble and the two high bits are
// found by a shift per dword lane; only byte 0 of each lane counts.
#define IQ4XSSCALES(r, off) \
	VPBROADCASTD 4(r), Y8 \
	VPSRLVD iq4xsLo<>(SB), Y8, Y8 \
	VPAND Y6, Y8, Y8 \
	VPBROADCASTD 1(r), Y9 \
	VPSRLVD iq4xsHi<>(SB), Y9, Y9 \
	VPAND iq4xs30<>(SB), Y9, Y9 \
	VPOR Y9, Y8, Y8 \
	VPSHUFB iq4xsDup<>(SB), Y8, Y8 \
	VPSUBW iq4xs32<>(SB), Y8, Y8 \
	VMOVDQU Y8, off(SP)

// IQ4XSVALUES leaves in y the 32 values of the sub-block whose qs are at
// addr: weights 0..15 (low nibbles) in the low half, 16..31 in the upper.
#define IQ4XSVALUES(addr, y) \
	VBROADCASTI128 addr, y \
	VPSRLVD Y5, y, y \
	VPAND Y6, y, y \
	VPSHUFB y, Y7, y

// IQ4XSSUB1 adds sub-block products to one row's lanes Y10: qs at
// qoff(SI), activations at xoff(DI), its scale pair at soff(SP).
#define IQ4XSSUB1(qoff, xoff, soff) \
	IQ4XSVALUES(qoff(SI), Y0) \
	VMOVDQU xoff(DI), Y1 \
	VPABSB Y1, Y2 \
	VPSIGNB Y1, Y0, Y0 \
	VPMADDUBSW Y0, Y2, Y0 \
	VPBROADCASTD soff(SP), Y3 \
	VPMADDWD Y3, Y0, Y0 \
	VPADDD Y0, Y10, Y10

// IQ4XSSUB2 is IQ4XSSUB1 for two rows, SI's into Y10 (scales at soff(SP))
// and R9's into Y11 (at soff+32(SP), given as soff2): the activations
// and their absolute values are loaded once.
#define IQ4XSSUB2(qoff, xoff, soff, soff2) \
	VMOVDQU xoff(DI), Y1 \
	VPABSB Y1, Y2 \
	IQ4XSVALUES(qoff(SI), Y0) \
	IQ4XSVALUES(qoff(R9), Y8) \
	VPSIGNB Y1, Y0, Y0 \
	VPSIGNB Y1, Y8, Y8 \
	VPMADDUBSW Y0, Y2, Y0 \
	VPMADDUBSW Y8, Y2, Y8 \
	VPBROADCASTD soff(SP), Y3 \
	VPBROADCASTD soff2(SP), Y9 \
	VPMADDWD Y3, Y0, Y0 \
	VPMADDWD Y9, Y8, Y8 \
	VPADDD Y0, Y10, Y10 \
	VPADDD Y8, Y11, Y11

// IQ4XSFMA: acc += float(lanes)·(d_w·d_x), d_w the f16 at r, d_x at
// (DX); y a scratch register.
#define IQ4XSFMA(r, lanes, acc, y, x) \
	VCVTDQ2PS lanes, lanes \
	VPBROADCASTW (r), x \
	VCVTPH2PS x, x \
	VMULSS (DX), x, x \
	VBROADCASTSS x, y \
	VFMADD231PS lanes, y, acc

// IQ4XSHSUM leaves in x (the low half of acc) hsum_float_8(acc), t a
// scratch register.
#define IQ4XSHSUM(acc, x, t) \
	VEXTRACTF128 $1, acc, t \
	VADDPS t, x, x \
	VMOVHLPS x, x, t \
	VADDPS t, x, x \
	VMOVSHDUP x, t \
	VADDSS t, x, x

// func dotIQ4XSAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
TEXT ·dotIQ4XSAVX2(SB), NOSPLIT, $64-56
	MOVQ dst+0(FP), R8
	MOVQ w+8(FP), R12
	MOVQ rb+16(FP), R11
	MOVQ rows+24(FP), BX
	VMOVDQU iq4xsNib<>(SB), Y5
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6
	VBROADCASTI128 ·iq4nlValues(SB), Y7
iq4xspair:
	CMPQ BX, $2
	JLT iq4xsone
	MOVQ R12, SI
	LEAQ (R12)(R11*1), R9
	MOVQ xd+32(FP), DX
	MOVQ xq+40(FP), DI
	MOVQ n+48(FP), CX
	VXORPS Y4, Y4, Y4
	VXORPS Y12, Y12, Y12
	TESTQ CX, CX
	JEQ iq4xspairdone
iq4xspairblock:
	IQ4XSSCALES(SI, 0)
	IQ4XSSCALES(R9, 32)
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	IQ4XSSUB2(8, 0, 0, 32)
	IQ4XSSUB2(24, 32, 4, 36)
	IQ4XSSUB2(40, 64, 8, 40)
	IQ4XSSUB2(56, 96, 12, 44)
	IQ4XSSUB2(72, 128, 16, 48)
	IQ4XSSUB2(88, 160, 20, 52)
	IQ4XSSUB2(104, 192, 24, 56)
	IQ4XSSUB2(120, 224, 28, 60)
	IQ4XSFMA(SI, Y10, Y4, Y3, X3)
	IQ4XSFMA(R9, Y11, Y12, Y9, X9)
	ADDQ $136, SI
	ADDQ $136, R9
	ADDQ $4, DX
	ADDQ $256, DI
	DECQ CX
	JNE iq4xspairblock
iq4xspairdone:
	IQ4XSHSUM(Y4, X4, X0)
	IQ4XSHSUM(Y12, X12, X1)
	VMOVSS X4, (R8)
	VMOVSS X12, 4(R8)
	ADDQ $8, R8
	LEAQ (R12)(R11*2), R12
	SUBQ $2, BX
	JMP iq4xspair
iq4xsone:
	TESTQ BX, BX
	JEQ iq4xsend
	MOVQ R12, SI
	MOVQ xd+32(FP), DX
	MOVQ xq+40(FP), DI
	MOVQ n+48(FP), CX
	VXORPS Y4, Y4, Y4
	TESTQ CX, CX
	JEQ iq4xsonedone
iq4xsoneblock:
	IQ4XSSCALES(SI, 0)
	VPXOR Y10, Y10, Y10
	IQ4XSSUB1(8, 0, 0)
	IQ4XSSUB1(24, 32, 4)
	IQ4XSSUB1(40, 64, 8)
	IQ4XSSUB1(56, 96, 12)
	IQ4XSSUB1(72, 128, 16)
	IQ4XSSUB1(88, 160, 20)
	IQ4XSSUB1(104, 192, 24)
	IQ4XSSUB1(120, 224, 28)
	IQ4XSFMA(SI, Y10, Y4, Y3, X3)
	ADDQ $136, SI
	ADDQ $4, DX
	ADDQ $256, DI
	DECQ CX
	JNE iq4xsoneblock
iq4xsonedone:
	IQ4XSHSUM(Y4, X4, X0)
	VMOVSS X4, (R8)
iq4xsend:
	VZEROUPPER
	RET
