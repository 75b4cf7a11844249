//go:build amd64 && !purego

#include "textflag.h"
#include "quant_vnni_amd64.h"

// AVX-512 VNNI dot products of four Q8_0, Q4_0 or Q5_0 weight rows with
// activations rounded to Q8_0 blocks: for each row the sum dotQ8_0AVX2 or
// dotQ4_0AVX2 (quant_amd64.s) or dotQ5_0 (quant_more.go, llama.cpp's
// ggml_vec_dot_q5_0_q8_0, which sums as dotQ4_0 does) computes, bit for
// bit. Q5_0 goes as Q4_0 does, its fifth bits added under a mask (see
// WQ5 and Q5VALS below).
//
// Per block of 32 the AVX2 kernels form eight int32 lanes, lane m the
// exact sum of the products of values 4m..4m+3, and accumulate them by
// acc[m] += float(lane m)·(d_w·d_x), one FMA per block; the eight lanes
// are added at the end. Here four rows go at once, keeping four FMA
// chains in flight and sharing the activations' loads: in ggml's layout
// each row has its own ymm accumulator; in the packed layout (below) a
// zmm holds two Q8_0 rows (lanes 0..7 the first row's, 8..15 the
// second's), or for Q4_0 four rows' lanes 0..3 in one accumulator and
// their lanes 4..7 in another. The kernels are bound by how many
// operations they issue per block; on our AMD EPYC a zmm operation takes
// two of the four 256-bit vector pipes, so zmm and ymm forms run as fast
// there, and the zmm ones need half the operations where the pipes are
// 512 bits wide.
//
// A Q4_0 matrix marked SumBlocks (llama.cpp's repacked order) adds each
// row's lanes of a block into one exact sum first and takes one FMA a
// block (BSUM4; the packed kernels dotQuadsPackedQ4_0BVNNI and
// dotQuads2PackedQ4_0BVNNI).
//
// VPDPBUSD multiplies unsigned bytes by signed ones, so Q8_0 weights are
// offset by 128 (w XOR 0x80) and Q4_0 nibbles are left at 0..15 instead
// of -8..7. The offset times the sum of the four activations is removed by
// starting each lane from the block's lane offsets (qActs.xv: -128·Σx or
// -8·Σx), so the lanes are the exact integers of the AVX2 kernels.
//
// Two weight layouts (quant.go). In ggml's, each block holds its f16
// scale then its values; the four rows are read a quarter of the matrix
// apart (quantJob.runQuads), and the eight scales of a group of blocks
// are gathered from eight places (ROWSCALES8). In the packed layout the
// matrix interleaves its rows four by four: the kernel reads one stream
// in order, and two rows' eight scales are one 32-byte load. Measured on
// our AMD EPYC, one thread, SmolLM2-135M's shape: the packed kernel is
// about 40 % faster with its weights in cache, and Q8_0 and Q4_0 decode
// and prefill from a GGUF file 5-35 % faster.
//
// Plan 9 operand order: VPDPBUSD s, u, acc computes acc += Σ u·s (u
// unsigned, s signed bytes); VFMADD231PS b, a, acc computes acc += a·b;
// VPERMPS table, index, dst.

// permBase: the VPERMPS indices of block 0 of eight in a zmm of two rows
// (lanes 0..7 pick lane 0, lanes 8..15 lane 8); block i's are these plus
// i.
DATA permBase<>+0(SB)/8, $0
DATA permBase<>+8(SB)/8, $0
DATA permBase<>+16(SB)/8, $0
DATA permBase<>+24(SB)/8, $0
DATA permBase<>+32(SB)/8, $0x0000000800000008
DATA permBase<>+40(SB)/8, $0x0000000800000008
DATA permBase<>+48(SB)/8, $0x0000000800000008
DATA permBase<>+56(SB)/8, $0x0000000800000008
GLOBL permBase<>(SB), RODATA|NOPTR, $64

// WQ8 leaves in y the 32 weights at addr as unsigned bytes (offset by
// 128); WQ4 the 16 bytes of nibbles at addr, low nibbles (weights 0..15)
// in the low half, high ones (16..31) in the high half.
#define WQ8(addr, y) \
	VPXOR addr, Y7, y

#define WQ4(addr, y) \
	VBROADCASTI128 addr, y \
	VPSRLVW Y8, y, y \
	VPAND Y6, y, y

// BLOCK4 adds block i of a group of four rows into Y4, Y9, Y14, Y15: the
// rows' weights at a0, a1, a2, a3, the activations' values and lane
// offsets at i*64(DI)(AX), the scale products lane i of Y16..Y19, picked
// by the index yi (all lanes i).
#define BLOCK4(W, a0, a1, a2, a3, i, yi) \
	VMOVDQU i*64(DI)(AX*1), Y5 \
	VMOVDQU i*64+32(DI)(AX*1), Y10 \
	W(a0, Y0) \
	W(a1, Y1) \
	W(a2, Y2) \
	W(a3, Y3) \
	VMOVDQA Y10, Y11 \
	VMOVDQA Y10, Y12 \
	VMOVDQA Y10, Y13 \
	VPDPBUSD Y5, Y0, Y10 \
	VPDPBUSD Y5, Y1, Y11 \
	VPDPBUSD Y5, Y2, Y12 \
	VPDPBUSD Y5, Y3, Y13 \
	VCVTDQ2PS Y10, Y10 \
	VCVTDQ2PS Y11, Y11 \
	VCVTDQ2PS Y12, Y12 \
	VCVTDQ2PS Y13, Y13 \
	VPERMPS Y16, yi, Y28 \
	VPERMPS Y17, yi, Y29 \
	VPERMPS Y18, yi, Y30 \
	VPERMPS Y19, yi, Y31 \
	VFMADD231PS Y28, Y10, Y4 \
	VFMADD231PS Y29, Y11, Y9 \
	VFMADD231PS Y30, Y12, Y14 \
	VFMADD231PS Y31, Y13, Y15

// BLOCK4G is BLOCK4 for ggml's layout: the rows at SI, SI+R14, R9 and
// R9+R14, the block's values at doff of each.
#define BLOCK4G(W, doff, i, yi) \
	BLOCK4(W, doff(SI), doff(SI)(R14*1), doff(R9), doff(R9)(R14*1), i, yi)

// SCALES8 leaves in ys the scale products d_w·d_x of the eight blocks of
// the ggml-layout row at r against the activations' blocks R15..R15+7.
#define SCALES8(BLOCK, r, ys) \
	ROWSCALES8(BLOCK, r, X0, X1, X2) \
	VCVTPH2PS X0, Y0 \
	VMULPS (DX)(R15*4), Y0, ys

// SCALE1 leaves in every lane of ys the scale product of the ggml block
// whose scale is at addr against the activations' block R15.
#define SCALE1(addr, ys) \
	VPBROADCASTW addr, X0 \
	VCVTPH2PS X0, X0 \
	VMULSS (DX)(R15*4), X0, X0 \
	VBROADCASTSS X0, ys

// Where block i of a group keeps its values in ggml's layout (Q8_0, Q4_0).
#define VALSQ8(i) i*34+2
#define VALSQ4(i) i*18+2

// DOTQUADS body: for p < quads and j < 4, dst[p+j·h] is the row at
// w+(p+j·h)·rb against the activations: xd the blocks' scales, xv per
// block its values then its eight lane offsets (64 bytes); n blocks a
// row, BLOCK bytes a block. Groups of eight blocks (their values where
// VALS says), then the blocks left one at a time.
// h may be 0: one row, computed four times.
// func(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)
#define DOTQUADS(W, BLOCK, VALS) \
	MOVQ dst+0(FP), R10 \
	MOVQ h+8(FP), R11 \
	MOVQ w+16(FP), R12 \
	MOVQ rb+24(FP), R13 \
	MOVQ xd+32(FP), DX \
	MOVQ xv+40(FP), DI \
	MOVQ n+48(FP), CX \
	MOVQ quads+56(FP), BX \
	MOVQ R11, R14 \
	IMULQ R13, R14 \
	SHLQ $2, R11 \
	IDX8 \
	TESTQ BX, BX \
	JEQ end \
quad: \
	MOVQ R12, SI \
	LEAQ (SI)(R14*2), R9 \
	XORQ AX, AX \
	XORQ R15, R15 \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y9, Y9, Y9 \
	VPXOR Y14, Y14, Y14 \
	VPXOR Y15, Y15, Y15 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JA loop1 \
loop8: \
	SCALES8(BLOCK, SI, Y16) \
	LEAQ (SI)(R14*1), R8 \
	SCALES8(BLOCK, R8, Y17) \
	SCALES8(BLOCK, R9, Y18) \
	LEAQ (R9)(R14*1), R8 \
	SCALES8(BLOCK, R8, Y19) \
	BLOCK4G(W, VALS(0), 0, Y20) \
	BLOCK4G(W, VALS(1), 1, Y21) \
	BLOCK4G(W, VALS(2), 2, Y22) \
	BLOCK4G(W, VALS(3), 3, Y23) \
	BLOCK4G(W, VALS(4), 4, Y24) \
	BLOCK4G(W, VALS(5), 5, Y25) \
	BLOCK4G(W, VALS(6), 6, Y26) \
	BLOCK4G(W, VALS(7), 7, Y27) \
	ADDQ $(8*BLOCK), SI \
	ADDQ $(8*BLOCK), R9 \
	ADDQ $512, AX \
	ADDQ $8, R15 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JBE loop8 \
loop1: \
	CMPQ R15, CX \
	JAE done \
	SCALE1((SI), Y16) \
	SCALE1((SI)(R14*1), Y17) \
	SCALE1((R9), Y18) \
	SCALE1((R9)(R14*1), Y19) \
	BLOCK4G(W, 2, 0, Y20) \
	ADDQ $BLOCK, SI \
	ADDQ $BLOCK, R9 \
	ADDQ $64, AX \
	INCQ R15 \
	JMP loop1 \
done: \
	SUMS4 \
	VMOVSS X4, (R10) \
	VMOVSS X9, (R10)(R11*1) \
	LEAQ (R10)(R11*2), R8 \
	VMOVSS X14, (R8) \
	VMOVSS X15, (R8)(R11*1) \
	ADDQ $4, R10 \
	ADDQ R13, R12 \
	DECQ BX \
	JNE quad \
end: \
	VZEROUPPER \
	RET

// Two rows in one zmm (the packed kernel's): lanes 0..7 the first row's
// eight lanes, 8..15 the second's; the activations' values and lane
// offsets come twice (VBROADCASTI64X4).
//
// WZ8 leaves in z the 64 bytes at a (two rows' values of a packed block)
// as unsigned bytes; WZ8T the 32 at a (first row) and the 32 at b (second
// row).
#define WZ8(a, b, z, y, t) \
	VPXORD a, Z7, z

#define WZ8T(a, b, z, y, t) \
	VMOVDQU a, y \
	VINSERTI64X4 $1, b, z, z \
	VPXORD Z7, z, z

// BLOCK4Z adds block i of four rows into Z4 (rows 0 and 1) and Z9 (rows
// 2 and 3): the weights of rows 0, 1 at a0, a1 and of rows 2, 3 at a2,
// a3 (by W), the activations' values and lane offsets at i*64(DI)(AX),
// the scale products picked from Z12 (rows 0, 1) and Z24 (rows 2, 3) by
// the index zi (lanes 0..7 lane i, lanes 8..15 lane 8+i).
#define BLOCK4Z(W, a0, a1, a2, a3, i, zi) \
	VBROADCASTI64X4 i*64(DI)(AX*1), Z13 \
	VBROADCASTI64X4 i*64+32(DI)(AX*1), Z1 \
	W(a0, a1, Z0, Y0, Y3) \
	W(a2, a3, Z5, Y5, Y3) \
	VMOVDQA64 Z1, Z2 \
	VPDPBUSD Z13, Z0, Z1 \
	VPDPBUSD Z13, Z5, Z2 \
	VCVTDQ2PS Z1, Z1 \
	VCVTDQ2PS Z2, Z2 \
	VPERMPS Z12, zi, Z10 \
	VPERMPS Z24, zi, Z25 \
	VFMADD231PS Z1, Z10, Z4 \
	VFMADD231PS Z2, Z25, Z9

// BLOCK4PZ is BLOCK4Z for block i of a packed group at SI: the four rows'
// values side by side from doff, VS bytes each.
#define BLOCK4PZ(W, doff, VS, i, zi) \
	BLOCK4Z(W, doff(SI), doff+VS(SI), doff+2*VS(SI), doff+3*VS(SI), i, zi)

// Q4LANES forms, from four Q4_0 rows' 16 bytes of nibbles in Z0 (a
// 16-byte lane a row), Z2: the rows' lanes 0..3 (low nibbles, weights
// 0..15, against x0..15 four times over) and Z3: their lanes 4..7 (high
// nibbles against x16..31), as floats; the activations' values and lane
// offsets of block i at i*64(DI)(AX).
#define Q4LANES(i) \
	Q4INTS(i) \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3

// Q4INTS is Q4LANES before the conversion: the lanes as int32.
#define Q4INTS(i) \
	VPSRLW $4, Z0, Z1 \
	VPANDD Z6, Z0, Z0 \
	VPANDD Z6, Z1, Z1 \
	VBROADCASTI32X4 i*64(DI)(AX*1), Z13 \
	VBROADCASTI32X4 i*64+16(DI)(AX*1), Z14 \
	VBROADCASTI32X4 i*64+32(DI)(AX*1), Z2 \
	VBROADCASTI32X4 i*64+48(DI)(AX*1), Z3 \
	VPDPBUSD Z13, Z0, Z2 \
	VPDPBUSD Z14, Z1, Z3

// BSUM4 adds, in each 16-byte lane (a row), the int32 lanes of z and t
// into the block's exact sum, in all four lanes, converted to float32 in
// z (t scratch): the repacked kernels' one integer a block (SumBlocks).
#define BSUM4(z, t) \
	VPADDD t, z, z \
	VPSHUFD $0x4e, z, t \
	VPADDD t, z, z \
	VPSHUFD $0xb1, z, t \
	VPADDD t, z, z \
	VCVTDQ2PS z, z

// Q4FMA adds Z2 and Z3 times the scale products zs (a row a 16-byte lane)
// into Z4 (the four rows' lanes 0..3) and Z9 (lanes 4..7).
#define Q4FMA(zs) \
	VFMADD231PS Z2, zs, Z4 \
	VFMADD231PS Z3, zs, Z9

// The two packed kernels' pieces for DOTQUADSP: SETUP* their constants,
// BP* block i of a group (its scale products picked by the index zi from
// Z12 and Z24), TAIL* a block left (four ggml blocks at SI), GATHER*
// the four rows' sums from Z4 and Z9 to dst.
//
// Q8_0: two rows a zmm, lanes 0..7 the first row's and 8..15 the
// second's, in Z4 (rows 0, 1) and Z9 (rows 2, 3).
#define SETUP8 \
	MOVL $0xFF00, AX \
	KMOVW AX, K1

#define BP8(i, zi) \
	BLOCK4PZ(WZ8, 64+i*128, 32, i, zi)

#define TAIL8 \
	VPBROADCASTW (SI), Y12 \
	VPBROADCASTW 34(SI), K1, Y12 \
	VCVTPH2PS Y12, Z12 \
	VMULPS.BCST (DX)(R15*4), Z12, Z12 \
	VPBROADCASTW 68(SI), Y24 \
	VPBROADCASTW 102(SI), K1, Y24 \
	VCVTPH2PS Y24, Z24 \
	VMULPS.BCST (DX)(R15*4), Z24, Z24 \
	BLOCK4Z(WZ8T, 2(SI), 36(SI), 70(SI), 104(SI), 0, Z16)

#define GATHER8 \
	VEXTRACTF64X4 $1, Z4, Y14 \
	VEXTRACTF64X4 $1, Z9, Y15 \
	SUMS4 \
	VMOVSS X4, (R10) \
	VMOVSS X14, 4(R10) \
	VMOVSS X9, 8(R10) \
	VMOVSS X15, 12(R10)

// Q4_0: a block's 64 bytes of four rows' nibbles are one load, a 16-byte
// lane a row: two VPDPBUSD a block for four rows (Q4LANES), each row's
// lanes 0..3 and 4..7 in two accumulators, gathered at the end (the same
// per-lane FMA chains, so the same bits).
#define SETUP4 \
	MOVL $0x0F0F0F0F, AX \
	VPBROADCASTD AX, Z6 \
	MOVL $0x00F0, AX \
	KMOVW AX, K1 \
	MOVL $0x0F00, AX \
	KMOVW AX, K2 \
	MOVL $0xF000, AX \
	KMOVW AX, K3

#define BP4(i, zi) \
	VMOVDQU64 64+i*64(SI), Z0 \
	Q4LANES(i) \
	VMOVDQA64 zi, Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	Q4FMA(Z10)

#define TAIL4 \
	TAIL4LOAD \
	Q4LANES(0) \
	Q4FMA(Z12)

#define GATHER4 \
	VMOVDQU64 rowsQ4lo<>(SB), Z14 \
	VPERMI2PS Z9, Z4, Z14 \
	VMOVDQU64 rowsQ4hi<>(SB), Z15 \
	VPERMI2PS Z9, Z4, Z15 \
	VEXTRACTF64X4 $1, Z14, Y4 \
	VEXTRACTF64X4 $1, Z15, Y9 \
	SUMS4 \
	VMOVSS X14, (R10) \
	VMOVSS X4, 4(R10) \
	VMOVSS X15, 8(R10) \
	VMOVSS X9, 12(R10)

// Q4_0 marked SumBlocks: BP4's lanes added into each row's block sum
// (BSUM4) and fused with the scale product into Z4 alone, every lane of
// a row's 16-byte lane alike; GATHER4B takes lane 0 of each.
#define BP4B(i, zi) \
	VMOVDQU64 64+i*64(SI), Z0 \
	Q4INTS(i) \
	BSUM4(Z2, Z3) \
	VMOVDQA64 zi, Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	VFMADD231PS Z2, Z10, Z4

#define TAIL4B \
	TAIL4LOAD \
	Q4INTS(0) \
	BSUM4(Z2, Z3) \
	VFMADD231PS Z2, Z12, Z4

#define GATHER4B \
	VMOVDQU64 rowsQ4b<>(SB), Z14 \
	VPERMPS Z4, Z14, Z14 \
	VMOVUPS X14, (R10)

// PACKEDARGS loads the packed kernels' first five arguments (dst in R10,
// w in SI, xd in DX, xv in DI, n in CX), sets up their constants (SETUP)
// and fills Z16..Z23 with the indices of blocks 0..7 (IDX block 0's).
#define PACKEDARGS(SETUP, IDX) \
	MOVQ dst+0(FP), R10 \
	MOVQ w+8(FP), SI \
	MOVQ xd+16(FP), DX \
	MOVQ xv+24(FP), DI \
	MOVQ n+32(FP), CX \
	SETUP \
	VMOVDQU64 IDX, Z16 \
	MOVL $1, AX \
	VPBROADCASTD AX, Z15 \
	VPADDD Z15, Z16, Z17 \
	VPADDD Z15, Z17, Z18 \
	VPADDD Z15, Z18, Z19 \
	VPADDD Z15, Z19, Z20 \
	VPADDD Z15, Z20, Z21 \
	VPADDD Z15, Z21, Z22 \
	VPADDD Z15, Z22, Z23

// PACKEDTAILS runs TAIL for each block left of a quad (R15 on to n),
// from lbl, going on at out.
#define PACKEDTAILS(TAIL, BLOCK, lbl, out) \
lbl: \
	CMPQ R15, CX \
	JAE out \
	TAIL \
	ADDQ $(4*BLOCK), SI \
	ADDQ $64, AX \
	INCQ R15 \
	JMP lbl \
out:

// DOTQUADSP body: dst[4p+j] for p < quads and j < 4 is row j of the p-th
// packed quad of rows (quant.go: 4·n blocks of BLOCK bytes, one after the
// other from w) against the activations, laid out as for DOTQUADS. A
// quad's groups of eight blocks (32·BLOCK bytes: the scales, then block by
// block the four rows' values), their scale products in Z12 (rows 0, 1)
// and Z24 (rows 2, 3), picked for block i by Z16+i (IDX the indices of
// block 0); then its blocks left, four ggml blocks each. The kernel reads
// the weights as one stream, in order, in zmm registers: half the
// operations of ymm ones (on our AMD EPYC, whose vector pipes are 256
// bits wide, as fast; where they are 512 bits wide, each runs in one
// pass).
// func(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)
#define DOTQUADSP(BLOCK, SETUP, IDX, BP, TAIL, GATHER) \
	PACKEDARGS(SETUP, IDX) \
	MOVQ quads+40(FP), BX \
	TESTQ BX, BX \
	JEQ end \
quad: \
	XORQ AX, AX \
	XORQ R15, R15 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z9, Z9, Z9 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JA loop1 \
loop8: \
	VBROADCASTF32X8 (DX)(R15*4), Z11 \
	VCVTPH2PS (SI), Z12 \
	VMULPS Z11, Z12, Z12 \
	VCVTPH2PS 32(SI), Z24 \
	VMULPS Z11, Z24, Z24 \
	BP(0, Z16) \
	BP(1, Z17) \
	BP(2, Z18) \
	BP(3, Z19) \
	BP(4, Z20) \
	BP(5, Z21) \
	BP(6, Z22) \
	BP(7, Z23) \
	ADDQ $(32*BLOCK), SI \
	ADDQ $512, AX \
	ADDQ $8, R15 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JBE loop8 \
	PACKEDTAILS(TAIL, BLOCK, loop1, done) \
	GATHER \
	ADDQ $16, R10 \
	DECQ BX \
	JNE quad \
end: \
	VZEROUPPER \
	RET

#define PFQ 4096

// The two-stream forms of BP8 and BP4 for DOTQUADSP2: block i of a
// packed group of quad A at SI, as BP8 or BP4 does, and the same block of
// quad B at R14 into Z26 (rows 0, 1 or lanes 0..3) and Z27, its scale
// products picked from Z28 and Z29, the activations' loads shared.
#define BP8X2(i, zi) \
	PREFETCHT0 PFQ+64+i*128(SI) \
	PREFETCHT0 PFQ+128+i*128(SI) \
	PREFETCHT0 PFQ+64+i*128(R14) \
	PREFETCHT0 PFQ+128+i*128(R14) \
	VBROADCASTI64X4 i*64(DI)(AX*1), Z13 \
	VBROADCASTI64X4 i*64+32(DI)(AX*1), Z1 \
	VPXORD 64+i*128(SI), Z7, Z0 \
	VPXORD 128+i*128(SI), Z7, Z5 \
	VPXORD 64+i*128(R14), Z7, Z6 \
	VPXORD 128+i*128(R14), Z7, Z8 \
	VMOVDQA64 Z1, Z2 \
	VMOVDQA64 Z1, Z14 \
	VMOVDQA64 Z1, Z15 \
	VPDPBUSD Z13, Z0, Z1 \
	VPDPBUSD Z13, Z5, Z2 \
	VPDPBUSD Z13, Z6, Z14 \
	VPDPBUSD Z13, Z8, Z15 \
	VCVTDQ2PS Z1, Z1 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z14, Z14 \
	VCVTDQ2PS Z15, Z15 \
	VPERMPS Z12, zi, Z10 \
	VPERMPS Z24, zi, Z25 \
	VPERMPS Z28, zi, Z30 \
	VPERMPS Z29, zi, Z31 \
	VFMADD231PS Z1, Z10, Z4 \
	VFMADD231PS Z2, Z25, Z9 \
	VFMADD231PS Z14, Z30, Z26 \
	VFMADD231PS Z15, Z31, Z27

// Q4INTSX2 is Q4INTS for block i of quad A (SI: lanes in Z2, Z3) and of
// quad B (R14: Z7, Z15), the activations' loads shared.
#define Q4INTSX2(i) \
	PREFETCHT0 PFQ+64+i*64(SI) \
	PREFETCHT0 PFQ+64+i*64(R14) \
	VMOVDQU64 64+i*64(SI), Z0 \
	VMOVDQU64 64+i*64(R14), Z5 \
	VPSRLW $4, Z0, Z1 \
	VPANDD Z6, Z0, Z0 \
	VPANDD Z6, Z1, Z1 \
	VPSRLW $4, Z5, Z8 \
	VPANDD Z6, Z5, Z5 \
	VPANDD Z6, Z8, Z8 \
	VBROADCASTI32X4 i*64(DI)(AX*1), Z13 \
	VBROADCASTI32X4 i*64+16(DI)(AX*1), Z14 \
	VBROADCASTI32X4 i*64+32(DI)(AX*1), Z2 \
	VBROADCASTI32X4 i*64+48(DI)(AX*1), Z3 \
	VMOVDQA64 Z2, Z7 \
	VMOVDQA64 Z3, Z15 \
	VPDPBUSD Z13, Z0, Z2 \
	VPDPBUSD Z14, Z1, Z3 \
	VPDPBUSD Z13, Z5, Z7 \
	VPDPBUSD Z14, Z8, Z15

#define BP4X2(i, zi) \
	Q4INTSX2(i) \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VCVTDQ2PS Z7, Z7 \
	VCVTDQ2PS Z15, Z15 \
	VMOVDQA64 zi, Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	VMOVDQA64 zi, Z25 \
	VPERMI2PS Z29, Z28, Z25 \
	VFMADD231PS Z2, Z10, Z4 \
	VFMADD231PS Z3, Z10, Z9 \
	VFMADD231PS Z7, Z25, Z26 \
	VFMADD231PS Z15, Z25, Z27

#define BP4X2B(i, zi) \
	Q4INTSX2(i) \
	BSUM4(Z2, Z3) \
	BSUM4(Z7, Z15) \
	VMOVDQA64 zi, Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	VMOVDQA64 zi, Z25 \
	VPERMI2PS Z29, Z28, Z25 \
	VFMADD231PS Z2, Z10, Z4 \
	VFMADD231PS Z7, Z25, Z26

// DOTQUADSP2 body: DOTQUADSP over 2·pairs quads in two streams. Pass p
// computes quad p (A, at SI, outputs at R10) and quad pairs+p (B, at R14,
// outputs at R11) together, their groups of eight blocks interleaved in
// one loop, so that two far-apart sequential streams are in flight at
// once: from memory a single stream is what one core's prefetchers follow
// slowest (DOTROWS2Z, kernels_avx512_amd64.s). On our AMD EPYC (Zen 5),
// one thread, SmolLM2-135M's shape, decode went from 155 to 188 tokens/s
// in Q8_0 and from 259-268 to 304-315 in Q4_0. Each quad keeps the FMA
// chains and order of DOTQUADSP: the same bits. The blocks left after
// the groups are done for A, then for B (AX and R15 kept in R12, R13;
// A's pointer in R9 while SI walks B).
// func(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)
#define DOTQUADSP2(BLOCK, SETUP, IDX, BP2, TAIL, GATHER) \
	PACKEDARGS(SETUP, IDX) \
	MOVQ pairs+40(FP), BX \
	TESTQ BX, BX \
	JEQ end \
	MOVQ CX, R14 \
	IMULQ $(4*BLOCK), R14 \
	IMULQ BX, R14 \
	ADDQ SI, R14 \
	LEAQ (R10)(BX*8), R11 \
	LEAQ (R11)(BX*8), R11 \
pair: \
	XORQ AX, AX \
	XORQ R15, R15 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JA tails \
loop8: \
	PREFETCHT0 PFQ(SI) \
	PREFETCHT0 PFQ(R14) \
	VBROADCASTF32X8 (DX)(R15*4), Z11 \
	VCVTPH2PS (SI), Z12 \
	VMULPS Z11, Z12, Z12 \
	VCVTPH2PS 32(SI), Z24 \
	VMULPS Z11, Z24, Z24 \
	VCVTPH2PS (R14), Z28 \
	VMULPS Z11, Z28, Z28 \
	VCVTPH2PS 32(R14), Z29 \
	VMULPS Z11, Z29, Z29 \
	BP2(0, Z16) \
	BP2(1, Z17) \
	BP2(2, Z18) \
	BP2(3, Z19) \
	BP2(4, Z20) \
	BP2(5, Z21) \
	BP2(6, Z22) \
	BP2(7, Z23) \
	ADDQ $(32*BLOCK), SI \
	ADDQ $(32*BLOCK), R14 \
	ADDQ $512, AX \
	ADDQ $8, R15 \
	LEAQ 8(R15), R8 \
	CMPQ R8, CX \
	JBE loop8 \
tails: \
	MOVQ AX, R12 \
	MOVQ R15, R13 \
	PACKEDTAILS(TAIL, BLOCK, loopa, donea) \
	GATHER \
	MOVQ SI, R9 \
	MOVQ R14, SI \
	MOVQ R12, AX \
	MOVQ R13, R15 \
	VMOVAPS Z26, Z4 \
	VMOVAPS Z27, Z9 \
	PACKEDTAILS(TAIL, BLOCK, loopb, doneb) \
	XCHGQ R10, R11 \
	GATHER \
	XCHGQ R10, R11 \
	MOVQ SI, R14 \
	MOVQ R9, SI \
	ADDQ $16, R10 \
	ADDQ $16, R11 \
	DECQ BX \
	JNE pair \
end: \
	VZEROUPPER \
	RET


// Q5_0 (22 bytes a block: f16 d, qh[4], qs[16]; the weight q5 - 16 with
// q5 the nibble under bit j of qh). VPDPBUSD takes the weights as
// unsigned bytes q5 + 112 (= (q5 - 16) + 128: 112..143) against the
// lane offsets of Q8_0 weights (-128·Σx, shift 7), so the lanes are the
// exact integers of dotQ5_0. A nibble n becomes n | 0x70 (one
// VPTERNLOGD: (n & 0x0F) | 0x70), then those whose qh bit is set take
// 0x10 more (VPADDB under the mask of qh's bits, loaded by KMOVD or
// KMOVQ): 0x7n + 0x10 = 0x8n = n + 16 + 112.
//
// WQ5 leaves in y the 32 weights of the ggml block whose qh is at addr
// (its qs 4 bytes on): weights 0..15 in the low half, 16..31 in the
// high one (Y6 0x0F, Y7 0x70, Y8 q4Shift, as WQ4).
#define WQ5(addr, y) \
	KMOVD addr, K1 \
	VBROADCASTI128 4+addr, y \
	VPSRLVW Y8, y, y \
	VPTERNLOGD $0xEA, Y7, Y6, y \
	VPADDB q5Bit<>(SB), y, K1, y

// Where block i of a group keeps its qh in ggml's layout (Q5_0).
#define VALSQ5(i) i*22+2

// Q5VALS leaves in z0 and z1 the weights of a packed Q5_0 block of four
// rows whose 80 bytes of values are at off(base) (quant.go): z0 the low
// nibbles, z1 the high ones, a 16-byte lane a row (Z6 0x0F, Z30 0x70,
// Z31 0x10; klo and khi take the masks).
#define Q5VALS(off, base, z0, z1, klo, khi) \
	KMOVQ off(base), klo \
	KMOVQ off+8(base), khi \
	VMOVDQU64 off+16(base), z0 \
	VPSRLW $4, z0, z1 \
	VPTERNLOGD $0xEA, Z30, Z6, z0 \
	VPTERNLOGD $0xEA, Z30, Z6, z1 \
	VPADDB Z31, z0, klo, z0 \
	VPADDB Z31, z1, khi, z1

// Q5LANES is Q4LANES for the weights Q5VALS left in Z0 and Z1.
#define Q5LANES(i) \
	VBROADCASTI32X4 i*64(DI)(AX*1), Z13 \
	VBROADCASTI32X4 i*64+16(DI)(AX*1), Z14 \
	VBROADCASTI32X4 i*64+32(DI)(AX*1), Z2 \
	VBROADCASTI32X4 i*64+48(DI)(AX*1), Z3 \
	VPDPBUSD Z13, Z0, Z2 \
	VPDPBUSD Z14, Z1, Z3 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3

// The packed Q5_0 kernels' pieces, as Q4_0's (the same accumulators and
// GATHER4).
#define SETUP5 \
	MOVL $0x0F0F0F0F, AX \
	VPBROADCASTD AX, Z6 \
	MOVL $0x70707070, AX \
	VPBROADCASTD AX, Z30 \
	MOVL $0x10101010, AX \
	VPBROADCASTD AX, Z31

#define BP5(i, zi) \
	Q5VALS(64+i*80, SI, Z0, Z1, K4, K5) \
	Q5LANES(i) \
	VMOVDQA64 zi, Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	Q4FMA(Z10)

// TAIL5: a block left, 88 bytes at SI: the four rows' scales, then the
// values as in a group.
#define TAIL5 \
	VCVTPH2PS (SI), X12 \
	VMOVDQU64 tail5Idx<>(SB), Z10 \
	VPERMPS Z12, Z10, Z12 \
	VMULPS.BCST (DX)(R15*4), Z12, Z12 \
	Q5VALS(8, SI, Z0, Z1, K4, K5) \
	Q5LANES(0) \
	Q4FMA(Z12)

#define BP5X2(i, zi) \
	PREFETCHT0 PFQ+64+i*80(SI) \
	PREFETCHT0 PFQ+143+i*80(SI) \
	PREFETCHT0 PFQ+64+i*80(R14) \
	PREFETCHT0 PFQ+143+i*80(R14) \
	Q5VALS(64+i*80, SI, Z0, Z1, K4, K5) \
	Q5VALS(64+i*80, R14, Z5, Z8, K6, K7) \
	VBROADCASTI32X4 i*64(DI)(AX*1), Z13 \
	VBROADCASTI32X4 i*64+16(DI)(AX*1), Z14 \
	VBROADCASTI32X4 i*64+32(DI)(AX*1), Z2 \
	VBROADCASTI32X4 i*64+48(DI)(AX*1), Z3 \
	VMOVDQA64 Z2, Z7 \
	VMOVDQA64 Z3, Z15 \
	VPDPBUSD Z13, Z0, Z2 \
	VPDPBUSD Z14, Z1, Z3 \
	VPDPBUSD Z13, Z5, Z7 \
	VPDPBUSD Z14, Z8, Z15 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VCVTDQ2PS Z7, Z7 \
	VCVTDQ2PS Z15, Z15 \
	VMOVDQA64 zi, Z10 \
	VPERMI2PS Z24, Z12, Z10 \
	VMOVDQA64 zi, Z25 \
	VPERMI2PS Z29, Z28, Z25 \
	VFMADD231PS Z2, Z10, Z4 \
	VFMADD231PS Z3, Z10, Z9 \
	VFMADD231PS Z7, Z25, Z26 \
	VFMADD231PS Z15, Z25, Z27

// func dotQuadsQ8_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsQ8_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Y7
	DOTQUADS(WQ8, 34, VALSQ8)

// func dotQuadsQ4_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsQ4_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Y6
	VMOVDQU q4Shift<>(SB), Y8
	DOTQUADS(WQ4, 18, VALSQ4)

// func dotQuadsPackedQ8_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsPackedQ8_0VNNI(SB), NOSPLIT, $0-48
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z7
	DOTQUADSP(34, SETUP8, permBase<>(SB), BP8, TAIL8, GATHER8)

// func dotQuadsPackedQ4_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsPackedQ4_0VNNI(SB), NOSPLIT, $0-48
	DOTQUADSP(18, SETUP4, permQ4<>(SB), BP4, TAIL4, GATHER4)

// func dotQuadsPackedQ4_0BVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsPackedQ4_0BVNNI(SB), NOSPLIT, $0-48
	DOTQUADSP(18, SETUP4, permQ4<>(SB), BP4B, TAIL4B, GATHER4B)

// func dotQuads2PackedQ8_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)
TEXT ·dotQuads2PackedQ8_0VNNI(SB), NOSPLIT, $0-48
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z7
	DOTQUADSP2(34, SETUP8, permBase<>(SB), BP8X2, TAIL8, GATHER8)

// func dotQuads2PackedQ4_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)
TEXT ·dotQuads2PackedQ4_0VNNI(SB), NOSPLIT, $0-48
	DOTQUADSP2(18, SETUP4, permQ4<>(SB), BP4X2, TAIL4, GATHER4)

// func dotQuads2PackedQ4_0BVNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)
TEXT ·dotQuads2PackedQ4_0BVNNI(SB), NOSPLIT, $0-48
	DOTQUADSP2(18, SETUP4, permQ4<>(SB), BP4X2B, TAIL4B, GATHER4B)

// func dotQuadsQ5_0VNNI(dst *float32, h int, w *byte, rb int, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsQ5_0VNNI(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Y6
	MOVL $0x70707070, AX
	VPBROADCASTD AX, Y7
	VMOVDQU q4Shift<>(SB), Y8
	DOTQUADS(WQ5, 22, VALSQ5)

// func dotQuadsPackedQ5_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, quads int)
TEXT ·dotQuadsPackedQ5_0VNNI(SB), NOSPLIT, $0-48
	DOTQUADSP(22, SETUP5, permQ4<>(SB), BP5, TAIL5, GATHER4)

// func dotQuads2PackedQ5_0VNNI(dst *float32, w *byte, xd *float32, xv *byte, n int, pairs int)
TEXT ·dotQuads2PackedQ5_0VNNI(SB), NOSPLIT, $0-48
	DOTQUADSP2(22, SETUP5, permQ4<>(SB), BP5X2, TAIL5, GATHER4)

// func quantQ8_0Z(x *float32, qs *int8, d *float32, xv *byte, shift int, blocks int)
// quantizeQ8_0 of blocks of 32 values at x, in AVX-512: qs the rounded
// values, d the scales (widened from binary16), and xv the VNNI layout
// (qActs.vnni, lane offsets shifted by shift: 7 for Q8_0 weights, 3 for
// Q4_0). The same bits as quantizeQ8_0 and vnni for finite x: |x| by
// masking the sign, the block maximum, d = amax/127 and id = 127/amax (0
// for an all-zero block) in float32, x·id rounded to nearest even
// (VCVTPS2DQ), d rounded to binary16 and back (VCVTPS2PH, nearest even).
TEXT ·quantQ8_0Z(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ qs+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ xv+24(FP), R8
	MOVQ shift+32(FP), CX
	MOVQ blocks+40(FP), BX
	VMOVQ CX, X9                     // the shift count
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z7              // |·| mask
	MOVL $0x01010101, AX
	VPBROADCASTD AX, Y6              // ones, unsigned bytes
	MOVL $0x42fe0000, AX
	VMOVD AX, X8                     // 127
	VXORPS X11, X11, X11             // 0
	TESTQ BX, BX
	JEQ qdone
qloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VANDPS Z7, Z0, Z2
	VANDPS Z7, Z1, Z3
	VMAXPS Z3, Z2, Z2
	VEXTRACTF64X4 $1, Z2, Y3
	VMAXPS Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VMAXPS X3, X2, X2
	VPERMILPS $0x4e, X2, X3
	VMAXPS X3, X2, X2
	VMOVSHDUP X2, X3
	VMAXPS X3, X2, X2                // amax in lane 0
	VDIVSS X8, X2, X4                // d = amax / 127
	VDIVSS X2, X8, X10               // 127 / amax
	VCMPSS $4, X11, X2, X12          // amax != 0
	VANDPS X12, X10, X10             // id, 0 for an all-zero block
	VBROADCASTSS X10, Z10
	VMULPS Z10, Z0, Z0
	VMULPS Z10, Z1, Z1
	VCVTPS2DQ Z0, Z0
	VCVTPS2DQ Z1, Z1
	VPMOVSDB Z0, X0
	VPMOVSDB Z1, X1
	VINSERTI128 $1, X1, Y0, Y0       // the 32 rounded values
	VMOVDQU Y0, (DI)
	VCVTPS2PH $0, X4, X4
	VCVTPH2PS X4, X4
	VMOVSS X4, (DX)
	VMOVDQU Y0, (R8)
	VPXOR Y12, Y12, Y12
	VPDPBUSD Y0, Y6, Y12             // the sums of each four values
	VPSLLD X9, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPSUBD Y12, Y13, Y12             // minus them, shifted
	VMOVDQU Y12, 32(R8)
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $4, DX
	ADDQ $64, R8
	DECQ BX
	JNE qloop
qdone:
	VZEROUPPER
	RET
