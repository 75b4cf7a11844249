// The macros every quantized kernel's file includes (directly or through
// its kernels' own header), so that each is written once.

// SPLAT fills every dword of dst with the constant imm, by way of AX and
// the xmm x.
#ifndef SPLAT
#define SPLAT(imm, x, dst) \
	MOVL imm, AX \
	VMOVD AX, x \
	VPBROADCASTD x, dst
#endif

// HSUM8 leaves in x (the low half of the ymm acc) the sum of acc's eight
// float32 lanes, added as ggml's hsum_float_8 (and the AVX2 kernels' Go
// twins, HSum8) add them: ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)); t is
// scratch.
#ifndef HSUM8
#define HSUM8(acc, x, t) \
	VEXTRACTF128 $1, acc, t \
	VADDPS t, x, x \
	VMOVHLPS x, x, t \
	VADDPS t, x, x \
	VMOVSHDUP x, t \
	VADDSS t, x, x
#endif

// KROW starts a row of a kernel func(dst, w, rb, rows, xd, xq, n) that
// walks its rows from R12: the row's blocks at SI, the activations'
// scales at DX and values at DI, n blocks in CX, the accumulator Y4 zero;
// it goes to done when there are no blocks. KROWB is KROW for
// func(dst, w, rb, rows, sums, xd, xq, n), the activations' sums (the
// argument named sums) in R8.
#ifndef KROW
#define KROW(done) \
	MOVQ R12, SI \
	MOVQ xd+32(FP), DX \
	MOVQ xq+40(FP), DI \
	MOVQ n+48(FP), CX \
	VXORPS Y4, Y4, Y4 \
	TESTQ CX, CX \
	JEQ done

#define KROWB(sums, done) \
	MOVQ R12, SI \
	MOVQ sums+32(FP), R8 \
	MOVQ xd+40(FP), DX \
	MOVQ xq+48(FP), DI \
	MOVQ n+56(FP), CX \
	VXORPS Y4, Y4, Y4 \
	TESTQ CX, CX \
	JEQ done
#endif
