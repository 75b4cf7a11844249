//go:build amd64 && !purego

#include "textflag.h"

// A vector exp in float64, four lanes, for kernels_amd64.go's expF64 and
// siluF32. exp(x) = 2^k · e^r with k = round(x·log2 e) and
// r = x - k·ln2 (ln2 split in a high part with trailing zeros and a low
// part, so k·ln2hi is exact), |r| ≤ ln2/2; e^r is its Taylor polynomial to
// degree 13 (truncation below 5e-18 relative) by Horner's rule with fused
// multiply-adds, and 2^k is built in the exponent bits as 2^h · 2^(k-h),
// h = k>>1, so that both factors are normal numbers from overflow down to
// the subnormals. k comes from the 1.5·2^52 shifter: adding it leaves
// round(x·log2 e) in the low mantissa bits. Inputs beyond math.Exp's
// overflow and underflow thresholds give +Inf and 0, NaN gives NaN.

DATA expLog2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA expLog2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA expLog2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA expLog2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL expLog2e<>(SB), RODATA|NOPTR, $32
DATA expShift<>+0(SB)/8, $0x4338000000000000
DATA expShift<>+8(SB)/8, $0x4338000000000000
DATA expShift<>+16(SB)/8, $0x4338000000000000
DATA expShift<>+24(SB)/8, $0x4338000000000000
GLOBL expShift<>(SB), RODATA|NOPTR, $32
DATA expLn2Hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA expLn2Hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA expLn2Hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA expLn2Hi<>+24(SB)/8, $0x3fe62e42fee00000
GLOBL expLn2Hi<>(SB), RODATA|NOPTR, $32
DATA expLn2Lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA expLn2Lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA expLn2Lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA expLn2Lo<>+24(SB)/8, $0x3dea39ef35793c76
GLOBL expLn2Lo<>(SB), RODATA|NOPTR, $32
DATA expHi<>+0(SB)/8, $0x40862e42fefa39ef
DATA expHi<>+8(SB)/8, $0x40862e42fefa39ef
DATA expHi<>+16(SB)/8, $0x40862e42fefa39ef
DATA expHi<>+24(SB)/8, $0x40862e42fefa39ef
GLOBL expHi<>(SB), RODATA|NOPTR, $32
DATA expLo<>+0(SB)/8, $0xc0874910d52d3051
DATA expLo<>+8(SB)/8, $0xc0874910d52d3051
DATA expLo<>+16(SB)/8, $0xc0874910d52d3051
DATA expLo<>+24(SB)/8, $0xc0874910d52d3051
GLOBL expLo<>(SB), RODATA|NOPTR, $32
DATA expOne<>+0(SB)/8, $0x3ff0000000000000
DATA expOne<>+8(SB)/8, $0x3ff0000000000000
DATA expOne<>+16(SB)/8, $0x3ff0000000000000
DATA expOne<>+24(SB)/8, $0x3ff0000000000000
GLOBL expOne<>(SB), RODATA|NOPTR, $32
DATA expInf<>+0(SB)/8, $0x7ff0000000000000
DATA expInf<>+8(SB)/8, $0x7ff0000000000000
DATA expInf<>+16(SB)/8, $0x7ff0000000000000
DATA expInf<>+24(SB)/8, $0x7ff0000000000000
GLOBL expInf<>(SB), RODATA|NOPTR, $32
DATA expC2<>+0(SB)/8, $0x3fe0000000000000
DATA expC2<>+8(SB)/8, $0x3fe0000000000000
DATA expC2<>+16(SB)/8, $0x3fe0000000000000
DATA expC2<>+24(SB)/8, $0x3fe0000000000000
GLOBL expC2<>(SB), RODATA|NOPTR, $32
DATA expC3<>+0(SB)/8, $0x3fc5555555555555
DATA expC3<>+8(SB)/8, $0x3fc5555555555555
DATA expC3<>+16(SB)/8, $0x3fc5555555555555
DATA expC3<>+24(SB)/8, $0x3fc5555555555555
GLOBL expC3<>(SB), RODATA|NOPTR, $32
DATA expC4<>+0(SB)/8, $0x3fa5555555555555
DATA expC4<>+8(SB)/8, $0x3fa5555555555555
DATA expC4<>+16(SB)/8, $0x3fa5555555555555
DATA expC4<>+24(SB)/8, $0x3fa5555555555555
GLOBL expC4<>(SB), RODATA|NOPTR, $32
DATA expC5<>+0(SB)/8, $0x3f81111111111111
DATA expC5<>+8(SB)/8, $0x3f81111111111111
DATA expC5<>+16(SB)/8, $0x3f81111111111111
DATA expC5<>+24(SB)/8, $0x3f81111111111111
GLOBL expC5<>(SB), RODATA|NOPTR, $32
DATA expC6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA expC6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA expC6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA expC6<>+24(SB)/8, $0x3f56c16c16c16c17
GLOBL expC6<>(SB), RODATA|NOPTR, $32
DATA expC7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA expC7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA expC7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA expC7<>+24(SB)/8, $0x3f2a01a01a01a01a
GLOBL expC7<>(SB), RODATA|NOPTR, $32
DATA expC8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA expC8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA expC8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA expC8<>+24(SB)/8, $0x3efa01a01a01a01a
GLOBL expC8<>(SB), RODATA|NOPTR, $32
DATA expC9<>+0(SB)/8, $0x3ec71de3a556c734
DATA expC9<>+8(SB)/8, $0x3ec71de3a556c734
DATA expC9<>+16(SB)/8, $0x3ec71de3a556c734
DATA expC9<>+24(SB)/8, $0x3ec71de3a556c734
GLOBL expC9<>(SB), RODATA|NOPTR, $32
DATA expC10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA expC10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA expC10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA expC10<>+24(SB)/8, $0x3e927e4fb7789f5c
GLOBL expC10<>(SB), RODATA|NOPTR, $32
DATA expC11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA expC11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA expC11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA expC11<>+24(SB)/8, $0x3e5ae64567f544e4
GLOBL expC11<>(SB), RODATA|NOPTR, $32
DATA expC12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA expC12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA expC12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA expC12<>+24(SB)/8, $0x3e21eed8eff8d898
GLOBL expC12<>(SB), RODATA|NOPTR, $32
DATA expC13<>+0(SB)/8, $0x3de6124613a86d09
DATA expC13<>+8(SB)/8, $0x3de6124613a86d09
DATA expC13<>+16(SB)/8, $0x3de6124613a86d09
DATA expC13<>+24(SB)/8, $0x3de6124613a86d09
GLOBL expC13<>(SB), RODATA|NOPTR, $32
DATA expBias<>+0(SB)/8, $1023
DATA expBias<>+8(SB)/8, $1023
DATA expBias<>+16(SB)/8, $1023
DATA expBias<>+24(SB)/8, $1023
GLOBL expBias<>(SB), RODATA|NOPTR, $32
DATA expSign<>+0(SB)/8, $0x8000000000000000
DATA expSign<>+8(SB)/8, $0x8000000000000000
DATA expSign<>+16(SB)/8, $0x8000000000000000
DATA expSign<>+24(SB)/8, $0x8000000000000000
GLOBL expSign<>(SB), RODATA|NOPTR, $32

// EXP4 sets Y1 = exp(Y0) (4 float64s); it clobbers Y2-Y6.
#define EXP4 \
	VMAXPD expLo<>(SB), Y0, Y2 \
	VMINPD expHi<>(SB), Y2, Y2 \
	VMOVUPD expShift<>(SB), Y3 \
	VFMADD231PD expLog2e<>(SB), Y2, Y3 \
	VSUBPD expShift<>(SB), Y3, Y4 \
	VFNMADD231PD expLn2Hi<>(SB), Y4, Y2 \
	VFNMADD231PD expLn2Lo<>(SB), Y4, Y2 \
	VMOVUPD expC13<>(SB), Y1 \
	VFMADD213PD expC12<>(SB), Y2, Y1 \
	VFMADD213PD expC11<>(SB), Y2, Y1 \
	VFMADD213PD expC10<>(SB), Y2, Y1 \
	VFMADD213PD expC9<>(SB), Y2, Y1 \
	VFMADD213PD expC8<>(SB), Y2, Y1 \
	VFMADD213PD expC7<>(SB), Y2, Y1 \
	VFMADD213PD expC6<>(SB), Y2, Y1 \
	VFMADD213PD expC5<>(SB), Y2, Y1 \
	VFMADD213PD expC4<>(SB), Y2, Y1 \
	VFMADD213PD expC3<>(SB), Y2, Y1 \
	VFMADD213PD expC2<>(SB), Y2, Y1 \
	VFMADD213PD expOne<>(SB), Y2, Y1 \
	VFMADD213PD expOne<>(SB), Y2, Y1 \
	VPSUBQ expShift<>(SB), Y3, Y3 \
	VPSRAD $1, Y3, Y5 \
	VPSUBQ Y5, Y3, Y3 \
	VPADDQ expBias<>(SB), Y5, Y5 \
	VPSLLQ $52, Y5, Y5 \
	VPADDQ expBias<>(SB), Y3, Y3 \
	VPSLLQ $52, Y3, Y3 \
	VMULPD Y5, Y1, Y1 \
	VMULPD Y3, Y1, Y1 \
	VCMPPD $0x1e, expHi<>(SB), Y0, Y5 \
	VBLENDVPD Y5, expInf<>(SB), Y1, Y1 \
	VCMPPD $0x11, expLo<>(SB), Y0, Y5 \
	VXORPD Y6, Y6, Y6 \
	VBLENDVPD Y5, Y6, Y1, Y1 \
	VCMPPD $0x03, Y0, Y0, Y5 \
	VBLENDVPD Y5, Y0, Y1, Y1

// func expF64(dst, src *float64, n int)
// dst[i] = exp(src[i]) for i < n, n a positive multiple of 4.
TEXT ·expF64(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
loop:
	VMOVUPD (SI)(AX*8), Y0
	EXP4
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, CX
	JB loop
	VZEROUPPER
	RET

// func siluF32(dst, src *float32, n int)
// dst[i] = float32(x / (1 + exp(-x))) with x = float64(src[i]), for i < n,
// n a positive multiple of 4.
TEXT ·siluF32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
loop:
	VCVTPS2PD (SI)(AX*4), Y7
	VXORPD expSign<>(SB), Y7, Y0
	EXP4
	VADDPD expOne<>(SB), Y1, Y1
	VDIVPD Y1, Y7, Y1
	VCVTPD2PSY Y1, X1
	VMOVUPS X1, (DI)(AX*4)
	ADDQ $4, AX
	CMPQ AX, CX
	JB loop
	VZEROUPPER
	RET

// EXP8 is EXP4 in eight lanes of zmm registers (AVX-512F), the same
// operations lane for lane, so the same bits: Z1 = exp(Z0); it clobbers
// Z2-Z6 and K1-K3. Constants come by embedded broadcast; k>>1 is VPSRAQ
// where EXP4 shifts dwords (the same value: the high dword of k only
// holds its sign).
#define EXP8 \
	VMAXPD.BCST expLo<>(SB), Z0, Z2 \
	VMINPD.BCST expHi<>(SB), Z2, Z2 \
	VBROADCASTSD expShift<>(SB), Z3 \
	VFMADD231PD.BCST expLog2e<>(SB), Z2, Z3 \
	VSUBPD.BCST expShift<>(SB), Z3, Z4 \
	VFNMADD231PD.BCST expLn2Hi<>(SB), Z4, Z2 \
	VFNMADD231PD.BCST expLn2Lo<>(SB), Z4, Z2 \
	VBROADCASTSD expC13<>(SB), Z1 \
	VFMADD213PD.BCST expC12<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC11<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC10<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC9<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC8<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC7<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC6<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC5<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC4<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC3<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC2<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expOne<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expOne<>(SB), Z2, Z1 \
	VPSUBQ.BCST expShift<>(SB), Z3, Z3 \
	VPSRAQ $1, Z3, Z5 \
	VPSUBQ Z5, Z3, Z3 \
	VPADDQ.BCST expBias<>(SB), Z5, Z5 \
	VPSLLQ $52, Z5, Z5 \
	VPADDQ.BCST expBias<>(SB), Z3, Z3 \
	VPSLLQ $52, Z3, Z3 \
	VMULPD Z5, Z1, Z1 \
	VMULPD Z3, Z1, Z1 \
	VCMPPD.BCST $0x1e, expHi<>(SB), Z0, K1 \
	VCMPPD.BCST $0x11, expLo<>(SB), Z0, K2 \
	VCMPPD $0x03, Z0, Z0, K3 \
	VBROADCASTSD expInf<>(SB), Z6 \
	VMOVAPD Z6, K1, Z1 \
	VPXORQ Z6, Z6, Z6 \
	VMOVAPD Z6, K2, Z1 \
	VMOVAPD Z0, K3, Z1

// EXP8X2 is EXP8 on two vectors at once, the instructions of each
// interleaved so that the two chains overlap: Z1 = exp(Z0) and
// Z17 = exp(Z16), the same bits; it clobbers Z2-Z6, Z18-Z22, K1-K3 and
// K5-K7.
#define EXP8X2 \
	VMAXPD.BCST expLo<>(SB), Z0, Z2 \
	VMAXPD.BCST expLo<>(SB), Z16, Z18 \
	VMINPD.BCST expHi<>(SB), Z2, Z2 \
	VMINPD.BCST expHi<>(SB), Z18, Z18 \
	VBROADCASTSD expShift<>(SB), Z3 \
	VBROADCASTSD expShift<>(SB), Z19 \
	VFMADD231PD.BCST expLog2e<>(SB), Z2, Z3 \
	VFMADD231PD.BCST expLog2e<>(SB), Z18, Z19 \
	VSUBPD.BCST expShift<>(SB), Z3, Z4 \
	VSUBPD.BCST expShift<>(SB), Z19, Z20 \
	VFNMADD231PD.BCST expLn2Hi<>(SB), Z4, Z2 \
	VFNMADD231PD.BCST expLn2Hi<>(SB), Z20, Z18 \
	VFNMADD231PD.BCST expLn2Lo<>(SB), Z4, Z2 \
	VFNMADD231PD.BCST expLn2Lo<>(SB), Z20, Z18 \
	VBROADCASTSD expC13<>(SB), Z1 \
	VBROADCASTSD expC13<>(SB), Z17 \
	VFMADD213PD.BCST expC12<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC12<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC11<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC11<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC10<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC10<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC9<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC9<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC8<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC8<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC7<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC7<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC6<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC6<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC5<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC5<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC4<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC4<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC3<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC3<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expC2<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expC2<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expOne<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expOne<>(SB), Z18, Z17 \
	VFMADD213PD.BCST expOne<>(SB), Z2, Z1 \
	VFMADD213PD.BCST expOne<>(SB), Z18, Z17 \
	VPSUBQ.BCST expShift<>(SB), Z3, Z3 \
	VPSUBQ.BCST expShift<>(SB), Z19, Z19 \
	VPSRAQ $1, Z3, Z5 \
	VPSRAQ $1, Z19, Z21 \
	VPSUBQ Z5, Z3, Z3 \
	VPSUBQ Z21, Z19, Z19 \
	VPADDQ.BCST expBias<>(SB), Z5, Z5 \
	VPADDQ.BCST expBias<>(SB), Z21, Z21 \
	VPSLLQ $52, Z5, Z5 \
	VPSLLQ $52, Z21, Z21 \
	VPADDQ.BCST expBias<>(SB), Z3, Z3 \
	VPADDQ.BCST expBias<>(SB), Z19, Z19 \
	VPSLLQ $52, Z3, Z3 \
	VPSLLQ $52, Z19, Z19 \
	VMULPD Z5, Z1, Z1 \
	VMULPD Z21, Z17, Z17 \
	VMULPD Z3, Z1, Z1 \
	VMULPD Z19, Z17, Z17 \
	VCMPPD.BCST $0x1e, expHi<>(SB), Z0, K1 \
	VCMPPD.BCST $0x1e, expHi<>(SB), Z16, K5 \
	VCMPPD.BCST $0x11, expLo<>(SB), Z0, K2 \
	VCMPPD.BCST $0x11, expLo<>(SB), Z16, K6 \
	VCMPPD $0x03, Z0, Z0, K3 \
	VCMPPD $0x03, Z16, Z16, K7 \
	VBROADCASTSD expInf<>(SB), Z6 \
	VBROADCASTSD expInf<>(SB), Z22 \
	VMOVAPD Z6, K1, Z1 \
	VMOVAPD Z22, K5, Z17 \
	VPXORQ Z6, Z6, Z6 \
	VPXORQ Z22, Z22, Z22 \
	VMOVAPD Z6, K2, Z1 \
	VMOVAPD Z22, K6, Z17 \
	VMOVAPD Z0, K3, Z1 \
	VMOVAPD Z16, K7, Z17


// func expF64Z(dst, src *float64, n int)
// dst[i] = exp(src[i]) for i < n, n a positive multiple of 8 (AVX-512F).
TEXT ·expF64Z(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	MOVQ CX, R8
	ANDQ $~15, R8
	JZ one
two:
	VMOVUPD (SI)(AX*8), Z0
	VMOVUPD 64(SI)(AX*8), Z16
	EXP8X2
	VMOVUPD Z1, (DI)(AX*8)
	VMOVUPD Z17, 64(DI)(AX*8)
	ADDQ $16, AX
	CMPQ AX, R8
	JB two
	CMPQ AX, CX
	JAE done
one:
	VMOVUPD (SI)(AX*8), Z0
	EXP8
	VMOVUPD Z1, (DI)(AX*8)
	ADDQ $8, AX
	CMPQ AX, CX
	JB one
done:
	VZEROUPPER
	RET

// func siluF32Z(dst, src *float32, n int)
// siluF32 in eight lanes, n a positive multiple of 8 (AVX-512F).
TEXT ·siluF32Z(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	MOVQ CX, R8
	ANDQ $~15, R8
	JZ one
two:
	VCVTPS2PD (SI)(AX*4), Z7
	VXORPD.BCST expSign<>(SB), Z7, Z0
	VCVTPS2PD 32(SI)(AX*4), Z23
	VXORPD.BCST expSign<>(SB), Z23, Z16
	EXP8X2
	VADDPD.BCST expOne<>(SB), Z1, Z1
	VADDPD.BCST expOne<>(SB), Z17, Z17
	VDIVPD Z1, Z7, Z1
	VDIVPD Z17, Z23, Z17
	VCVTPD2PS Z1, Y1
	VCVTPD2PS Z17, Y17
	VMOVUPS Y1, (DI)(AX*4)
	VMOVUPS Y17, 32(DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, R8
	JB two
	CMPQ AX, CX
	JAE done
one:
	VCVTPS2PD (SI)(AX*4), Z7
	VXORPD.BCST expSign<>(SB), Z7, Z0
	EXP8
	VADDPD.BCST expOne<>(SB), Z1, Z1
	VDIVPD Z1, Z7, Z1
	VCVTPD2PS Z1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JB one
done:
	VZEROUPPER
	RET

// ADD8INORDER adds the eight float32 lanes of y (its low half in x) to
// X10 one after another, lane 0 first; it clobbers X11 and X12.
#define ADD8INORDER(y, x) \
	VEXTRACTF128 $1, y, X12 \
	VADDSS x, X10, X10 \
	VMOVSHDUP x, X11 \
	VADDSS X11, X10, X10 \
	VMOVHLPS x, x, X11 \
	VADDSS X11, X10, X10 \
	VPERMILPS $0xff, x, X11 \
	VADDSS X11, X10, X10 \
	VADDSS X12, X10, X10 \
	VMOVSHDUP X12, X11 \
	VADDSS X11, X10, X10 \
	VMOVHLPS X12, X12, X11 \
	VADDSS X11, X10, X10 \
	VPERMILPS $0xff, X12, X11 \
	VADDSS X11, X10, X10

// EXPROUND8 sets Y1 to float32(exp(float64(src[AX:AX+8] - m))) and stores
// it at dst[AX:].
#define EXPROUND8 \
	VMOVUPS (SI)(AX*4), Y9 \
	VSUBPS Y8, Y9, Y9 \
	VCVTPS2PD Y9, Z0 \
	EXP8 \
	VCVTPD2PS Z1, Y1 \
	VMOVUPS Y1, (DI)(AX*4)

// func expRoundSumF32Z(dst, src *float32, n int, m, sum float32) float32
// dst[i] = float32(exp(float64(src[i] - m))) (EXP8's bits) for i < n, n a
// positive multiple of 8, and returns sum + dst[0] + dst[1] + ... added one
// after another in float32. The loop computes a block's exponentials
// before it adds the previous block's, so that the two overlap.
TEXT ·expRoundSumF32Z(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y8
	VMOVSS sum+28(FP), X10
	XORQ AX, AX
	EXPROUND8
	VMOVAPS Y1, Y13
	ADDQ $8, AX
	CMPQ AX, CX
	JAE last
loop:
	EXPROUND8
	ADD8INORDER(Y13, X13)
	VMOVAPS Y1, Y13
	ADDQ $8, AX
	CMPQ AX, CX
	JB loop
last:
	ADD8INORDER(Y13, X13)
	VMOVSS X10, ret+32(FP)
	VZEROUPPER
	RET

// SumExp's exponential (expNeg in exp.go): e^u for u in [-707, 0] from
// n = round(u·16/ln2) = 16k + j, r = u - n·ln2/16 (|r| ≤ ln2/32) and
// e^u = 2^k · (T[j] + T[j]·q), q = e^r - 1 to degree 7, T = expNegTable.
DATA expNegMin<>+0(SB)/8, $0xc086180000000000 // -707
GLOBL expNegMin<>(SB), RODATA|NOPTR, $8
DATA expNegInvL<>+0(SB)/8, $0x40371547652b82fe // 16/ln2
GLOBL expNegInvL<>(SB), RODATA|NOPTR, $8
DATA expNegL1<>+0(SB)/8, $0x3fa62e42fee00000 // ln2/16, high part
GLOBL expNegL1<>(SB), RODATA|NOPTR, $8
DATA expNegL2<>+0(SB)/8, $0x3daa39ef35793c76 // ln2/16, low part
GLOBL expNegL2<>(SB), RODATA|NOPTR, $8

// SUMEXPZ_CONSTS loads SumExp's arguments and constants: SI the scores,
// CX n, DI a, DX b, m in every lane of Z8, the table in Z9:Z10, -707 in
// Z11, 16/ln2, the shifter 1.5·2^52, ln2/16 high and low in Z20-Z23, the
// coefficients 1/7! .. 1/2! in Z24-Z29, zeros in Z30; the partial sums
// a and b in Z14 and Z15.
#define SUMEXPZ_CONSTS \
	MOVQ s+0(FP), SI \
	MOVQ n+8(FP), CX \
	VBROADCASTSD m+16(FP), Z8 \
	MOVQ a+24(FP), DI \
	MOVQ b+32(FP), DX \
	VMOVUPD ·expNegTable+0(SB), Z9 \
	VMOVUPD ·expNegTable+64(SB), Z10 \
	VBROADCASTSD expNegMin<>(SB), Z11 \
	VBROADCASTSD expNegInvL<>(SB), Z20 \
	VBROADCASTSD expShift<>(SB), Z21 \
	VBROADCASTSD expNegL1<>(SB), Z22 \
	VBROADCASTSD expNegL2<>(SB), Z23 \
	VBROADCASTSD expC7<>(SB), Z24 \
	VBROADCASTSD expC6<>(SB), Z25 \
	VBROADCASTSD expC5<>(SB), Z26 \
	VBROADCASTSD expC4<>(SB), Z27 \
	VBROADCASTSD expC3<>(SB), Z28 \
	VBROADCASTSD expC2<>(SB), Z29 \
	VPXORQ Z30, Z30, Z30 \
	VMOVUPD (DI), Z14 \
	VMOVUPD (DX), Z15

// EXPNEG8 adds the eight scores at off(SI)(AX*4) to the partial sums:
// U = min(s - m, 0), K set where s - m ≥ -707 (not for a NaN), W = e^U
// (expNeg's bits), Z14 += W where K; it clobbers T, N, R and R2.
#define EXPNEG8(off, U, T, N, R, W, R2, K) \
	VCVTPS2PD off(SI)(AX*4), U \
	VSUBPD Z8, U, U \
	VCMPPD $0x1d, Z11, U, K \
	VMINPD Z30, U, U \
	VMOVAPD Z21, T \
	VFMADD231PD Z20, U, T \
	VSUBPD Z21, T, N \
	VMOVAPD U, R \
	VFNMADD231PD Z22, N, R \
	VFNMADD231PD Z23, N, R \
	VMOVAPD Z24, W \
	VFMADD213PD Z25, R, W \
	VFMADD213PD Z26, R, W \
	VFMADD213PD Z27, R, W \
	VFMADD213PD Z28, R, W \
	VFMADD213PD Z29, R, W \
	VMULPD R, R, R2 \
	VFMADD213PD R, R2, W \
	VPSRLQ $4, T, N \
	VPSLLQ $52, N, N \
	VPERMI2PD Z10, Z9, T \
	VFMADD213PD T, T, W \
	VPADDQ N, W, W \
	VADDPD W, Z14, K, Z14

// SUMEXP_DOT adds e·u to the partial sums b (Z15) where K.
#define SUMEXP_DOT(U, W, K) \
	VMULPD U, W, W \
	VADDPD W, Z15, K, Z15

#define SUMEXP_NODOT(U, W, K)

// SUMEXPZ body: for i < n (CX, a positive multiple of 8), sixteen scores
// a turn while there are, score i to partial sum i mod 8, in index order.
#define SUMEXPZ(DOT) \
	XORQ AX, AX \
	MOVQ CX, R8 \
	ANDQ $~15, R8 \
	JZ one \
two: \
	EXPNEG8(0, Z0, Z1, Z2, Z3, Z4, Z5, K1) \
	EXPNEG8(32, Z16, Z17, Z18, Z19, Z12, Z13, K2) \
	DOT(Z0, Z4, K1) \
	DOT(Z16, Z12, K2) \
	ADDQ $16, AX \
	CMPQ AX, R8 \
	JB two \
	CMPQ AX, CX \
	JAE done \
one: \
	EXPNEG8(0, Z0, Z1, Z2, Z3, Z4, Z5, K1) \
	DOT(Z0, Z4, K1) \
	ADDQ $8, AX \
done: \
	VMOVUPD Z14, (DI) \
	VMOVUPD Z15, (DX) \
	VZEROUPPER \
	RET

// func sumExpZ(s *float32, n int, m float64, a, b *[8]float64)
TEXT ·sumExpZ(SB), NOSPLIT, $0-40
	SUMEXPZ_CONSTS
	SUMEXPZ(SUMEXP_NODOT)

// func sumExpDotZ(s *float32, n int, m float64, a, b *[8]float64)
TEXT ·sumExpDotZ(SB), NOSPLIT, $0-40
	SUMEXPZ_CONSTS
	SUMEXPZ(SUMEXP_DOT)
