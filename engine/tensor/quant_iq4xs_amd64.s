//go:build amd64 && !purego

#include "textflag.h"
#include "quant_common_amd64.h"

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
// ((a1+a5)+(a3+a7)), as dotIQ4XS's HSum8.
//
// One row at a time: two rows side by side (the activations' loads
// shared) measured faster in cache but are two streams a row apart, which
// this machine's prefetchers follow badly from memory: a decode step of a
// Llama-3.2-1B-shaped IQ4_XS file spent 1.5 times as long in them.
//
// Registers: R12 the next row, R11 rb, BX the rows left, R8 dst, SI the
// row's blocks, DX the activations' scales, DI their values, CX the
// blocks left. Y5 the nibble shifts (0 low, 4 high), Y6 0x0F, Y7 the
// table in both halves; Y10 the row's int32 lanes, Y4 its float
// accumulator. The scales of a block, as (s, s) word pairs one a
// sub-block, wait at 0(SP) for VPBROADCASTD.
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

// IQ4XSFMA: acc += float(lanes)·(d_w·d_x), d_w the f16 at r, d_x at
// (DX); y a scratch register.
#define IQ4XSFMA(r, lanes, acc, y, x) \
	VCVTDQ2PS lanes, lanes \
	VPBROADCASTW (r), x \
	VCVTPH2PS x, x \
	VMULSS (DX), x, x \
	VBROADCASTSS x, y \
	VFMADD231PS lanes, y, acc

// func dotIQ4XSAVX2(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
TEXT ·dotIQ4XSAVX2(SB), NOSPLIT, $32-56
	MOVQ dst+0(FP), R8
	MOVQ w+8(FP), R12
	MOVQ rb+16(FP), R11
	MOVQ rows+24(FP), BX
	VMOVDQU iq4xsNib<>(SB), Y5
	SPLAT($0x0F0F0F0F, X6, Y6)
	VBROADCASTI128 ·iq4nlValues(SB), Y7
iq4xsrow:
	TESTQ BX, BX
	JEQ iq4xsend
	MOVQ R12, SI
	MOVQ xd+32(FP), DX
	MOVQ xq+40(FP), DI
	MOVQ n+48(FP), CX
	VXORPS Y4, Y4, Y4
	TESTQ CX, CX
	JEQ iq4xsrowdone
iq4xsblock:
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
	JNE iq4xsblock
iq4xsrowdone:
	HSUM8(Y4, X4, X0)
	VMOVSS X4, (R8)
	ADDQ $4, R8
	ADDQ R11, R12
	DECQ BX
	JMP iq4xsrow
iq4xsend:
	VZEROUPPER
	RET

// dotIQ4XSAVX512 is dotIQ4XSAVX2 in AVX-512 (BW): the same integers and
// float sequence, the same bits, with two sub-blocks in one 64-byte
// register. VSHUFI64X2 puts the 32 bytes of qs of sub-blocks 2p and 2p+1
// as 16-byte lanes (2p, 2p, 2p+1, 2p+1), VPSRLVD shifts the second and
// fourth lanes by 4, so that after VPAND and VPSHUFB the register holds
// the two sub-blocks' 64 values in order, next to their 64 activations.
// AVX-512 has no VPSIGNB: v·sign(x) is v negated under the mask of x's
// sign bits (VPMOVB2M, a masked VPSUBB from zero); x = 0 keeps v, whose
// product with |x| = 0 is the same 0. VPMADDWD takes the two sub-blocks'
// scales side by side (VPERMW from the block's word pairs), and the
// sixteen int32 lanes (sub-block 2p's lane m in lane m, 2p+1's in lane
// 8+m) add at the block's end, exactly, into the AVX2 kernel's eight.
// It takes one row at a time: two rows side by side, as the AVX2 kernel
// takes them, are two streams a row apart, which this machine's
// prefetchers follow badly from memory (half the rate in a decode step of
// a Llama-3.2-1B file).

// iq4xsPairIdx: for sub-blocks 2p and 2p+1, VPERMW's word indices into
// IQ4XSSC's word pairs: sixteen words 4p (scale 2p), sixteen 4p+2.
DATA iq4xsPairIdx<>+0(SB)/8, $0x0000000000000000
DATA iq4xsPairIdx<>+8(SB)/8, $0x0000000000000000
DATA iq4xsPairIdx<>+16(SB)/8, $0x0000000000000000
DATA iq4xsPairIdx<>+24(SB)/8, $0x0000000000000000
DATA iq4xsPairIdx<>+32(SB)/8, $0x0002000200020002
DATA iq4xsPairIdx<>+40(SB)/8, $0x0002000200020002
DATA iq4xsPairIdx<>+48(SB)/8, $0x0002000200020002
DATA iq4xsPairIdx<>+56(SB)/8, $0x0002000200020002
DATA iq4xsPairIdx<>+64(SB)/8, $0x0004000400040004
DATA iq4xsPairIdx<>+72(SB)/8, $0x0004000400040004
DATA iq4xsPairIdx<>+80(SB)/8, $0x0004000400040004
DATA iq4xsPairIdx<>+88(SB)/8, $0x0004000400040004
DATA iq4xsPairIdx<>+96(SB)/8, $0x0006000600060006
DATA iq4xsPairIdx<>+104(SB)/8, $0x0006000600060006
DATA iq4xsPairIdx<>+112(SB)/8, $0x0006000600060006
DATA iq4xsPairIdx<>+120(SB)/8, $0x0006000600060006
DATA iq4xsPairIdx<>+128(SB)/8, $0x0008000800080008
DATA iq4xsPairIdx<>+136(SB)/8, $0x0008000800080008
DATA iq4xsPairIdx<>+144(SB)/8, $0x0008000800080008
DATA iq4xsPairIdx<>+152(SB)/8, $0x0008000800080008
DATA iq4xsPairIdx<>+160(SB)/8, $0x000a000a000a000a
DATA iq4xsPairIdx<>+168(SB)/8, $0x000a000a000a000a
DATA iq4xsPairIdx<>+176(SB)/8, $0x000a000a000a000a
DATA iq4xsPairIdx<>+184(SB)/8, $0x000a000a000a000a
DATA iq4xsPairIdx<>+192(SB)/8, $0x000c000c000c000c
DATA iq4xsPairIdx<>+200(SB)/8, $0x000c000c000c000c
DATA iq4xsPairIdx<>+208(SB)/8, $0x000c000c000c000c
DATA iq4xsPairIdx<>+216(SB)/8, $0x000c000c000c000c
DATA iq4xsPairIdx<>+224(SB)/8, $0x000e000e000e000e
DATA iq4xsPairIdx<>+232(SB)/8, $0x000e000e000e000e
DATA iq4xsPairIdx<>+240(SB)/8, $0x000e000e000e000e
DATA iq4xsPairIdx<>+248(SB)/8, $0x000e000e000e000e
GLOBL iq4xsPairIdx<>(SB), RODATA|NOPTR, $256

// IQ4XSSC leaves in y (a Y register; the top of its Z register zero)
// the block at r's eight scales less 32 as word pairs (s, s), sub-block
// ib's at words 2ib, 2ib+1, as IQ4XSSCALES writes them.
#define IQ4XSSC(r, y) \
	VPBROADCASTD 4(r), y \
	VPSRLVD iq4xsLo<>(SB), y, y \
	VPAND Y6, y, y \
	VPBROADCASTD 1(r), Y9 \
	VPSRLVD iq4xsHi<>(SB), Y9, Y9 \
	VPAND iq4xs30<>(SB), Y9, Y9 \
	VPOR Y9, y, y \
	VPSHUFB iq4xsDup<>(SB), y, y \
	VPSUBW iq4xs32<>(SB), y, y

// IQ4XSV512 leaves in z the 64 values of sub-blocks 2p, 2p+1 whose qs
// are at addr, in order.
#define IQ4XSV512(addr, z, y) \
	VMOVDQU addr, y \
	VSHUFI64X2 $0x50, z, z, z \
	VPSRLVD Z5, z, z \
	VPANDD Z6, z, z \
	VPSHUFB z, Z7, z

// IQ4XSX512 loads the activations at xoff(DI) of a pair of sub-blocks:
// |x| in Z2, the mask of x's negative bytes in K1.
#define IQ4XSX512(xoff) \
	VMOVDQU64 xoff(DI), Z1 \
	VPABSB Z1, Z2 \
	VPMOVB2M Z1, K1

// IQ4XSPROD adds the products of the values in z (scratch s) with the
// activations of IQ4XSX512 into lanes, the scales picked from table by
// idx.
#define IQ4XSPROD(z, s, table, idx, lanes) \
	VPSUBB z, Z31, K1, z \
	VPMADDUBSW z, Z2, z \
	VPERMW table, idx, s \
	VPMADDWD s, z, z \
	VPADDD z, lanes, lanes

// IQ4XSFOLD adds the top eight int32 lanes of z into the bottom eight (y).
#define IQ4XSFOLD(z, y, t) \
	VEXTRACTI64X4 $1, z, t \
	VPADDD t, y, y

// func dotIQ4XSAVX512(dst *float32, w *byte, rb int, rows int, xd *float32, xq *int8, n int)
TEXT ·dotIQ4XSAVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), R8
	MOVQ w+8(FP), R12
	MOVQ rb+16(FP), R11
	MOVQ rows+24(FP), BX
	VBROADCASTI64X4 iq4xsNib<>(SB), Z5
	SPLAT($0x0F0F0F0F, X6, Z6)
	VBROADCASTI32X4 ·iq4nlValues(SB), Z7
	VPXORD Z31, Z31, Z31
	VMOVDQU64 iq4xsPairIdx<>+0(SB), Z16
	VMOVDQU64 iq4xsPairIdx<>+64(SB), Z17
	VMOVDQU64 iq4xsPairIdx<>+128(SB), Z18
	VMOVDQU64 iq4xsPairIdx<>+192(SB), Z19
z4row:
	TESTQ BX, BX
	JEQ z4end
	MOVQ R12, SI
	MOVQ xd+32(FP), DX
	MOVQ xq+40(FP), DI
	MOVQ n+48(FP), CX
	VXORPS Y4, Y4, Y4
	TESTQ CX, CX
	JEQ z4rowdone
z4block:
	IQ4XSSC(SI, Y8)
	VPXORD Z10, Z10, Z10
	IQ4XSX512(0)
	IQ4XSV512(8(SI), Z0, Y0)
	IQ4XSPROD(Z0, Z3, Z8, Z16, Z10)
	IQ4XSX512(64)
	IQ4XSV512(40(SI), Z0, Y0)
	IQ4XSPROD(Z0, Z3, Z8, Z17, Z10)
	IQ4XSX512(128)
	IQ4XSV512(72(SI), Z0, Y0)
	IQ4XSPROD(Z0, Z3, Z8, Z18, Z10)
	IQ4XSX512(192)
	IQ4XSV512(104(SI), Z0, Y0)
	IQ4XSPROD(Z0, Z3, Z8, Z19, Z10)
	IQ4XSFOLD(Z10, Y10, Y3)
	IQ4XSFMA(SI, Y10, Y4, Y3, X3)
	ADDQ $136, SI
	ADDQ $4, DX
	ADDQ $256, DI
	DECQ CX
	JNE z4block
z4rowdone:
	HSUM8(Y4, X4, X0)
	VMOVSS X4, (R8)
	ADDQ $4, R8
	ADDQ R11, R12
	DECQ BX
	JMP z4row
z4end:
	VZEROUPPER
	RET
