package tensor

import (
	"encoding/binary"
	"math"
)

// The quantized types GGUF files hold besides Q8_0, Q4_0, Q4_K, Q5_K and
// Q6_K: Q4_1, Q5_0, Q5_1, IQ4_NL (blocks of 32) and Q2_K, Q3_K, IQ4_XS
// (blocks of 256). llama-quantize gives rows that are not a multiple of
// 256 (SmolLM2-135M's 576, Qwen2.5-0.5B's 896) its fallback types: Q4_K →
// Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, Q2_K, Q3_K and IQ4_XS → IQ4_NL. So a
// "Q4_K_M" file of such a model is mostly Q5_0.
//
// Their dequantization is ggml's dequantize_row_* (float32, each product
// and sum rounded on its own: ggml builds those without fused
// multiply-adds). Their products sum integer products per block and scale
// them in float32 in the order of llama.cpp's AVX2 ggml_vec_dot_*
// functions (the build whose answers the tests compare with), lanes and
// fused multiply-adds included, so that a product's bits are llama.cpp's:
// one flipped rounding of a later activation moves a probability by up to
// 1e-2 in the small test models. Each is pure Go; quantJob.dotMore picks
// the kernel. Q5_0, Q5_1, Q4_1 and IQ4_NL rows have assembly twins where
// the VNNI kernels run (quant_avx512_amd64.s: dotQuads*Q5_0VNNI;
// quant_vnni1_amd64.s: dotQuads*Q5_1VNNI, *Q4_1VNNI, *IQ4NLVNNI; in
// ggml's layout and the packed one, quant.go), which quantJob.Run takes
// instead: the Go twins' bits, which the tests hold them to. Q2_K and
// Q3_K rows have AVX2 twins (quant_k23_amd64.s: dotQ2KAVX2, dotQ3KAVX2),
// and so do IQ4_XS rows (quant_iq4xs_amd64.s: dotIQ4XSAVX2), the same
// bits, which quantJob.Run takes where AVX2 runs.

// iq4nlValues is ggml's kvalues_iq4nl: the sixteen weights an IQ4_NL or
// IQ4_XS nibble stands for, before the block's scale. dotIQ4XSAVX2 loads
// it as its VPSHUFB table.
var iq4nlValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// dequantQ4_1: out[j] = d·(qs[j]&15) + m, out[j+16] = d·(qs[j]>>4) + m.
func dequantQ4_1(out []float32, blk []byte) {
	d, m := f16At(blk), f16At(blk[2:])
	for j := range 16 {
		q := blk[4+j]
		out[j] = float32(float32(q&15)*d) + m
		out[j+16] = float32(float32(q>>4)*d) + m
	}
}

// q5Value is the five-bit value of weight j (< 32) of a Q5_0 or Q5_1 block:
// the nibble of qs (low for j < 16, high for the rest) under bit j of the
// little-endian qh.
func q5Value(qh uint32, qs []byte, j int) int32 {
	v := qs[j%16]
	if j >= 16 {
		v >>= 4
	}
	return int32(v&15) | int32(qh>>j&1)<<4
}

// dequantQ5_0: out[j] = d·(q5 - 16).
func dequantQ5_0(out []float32, blk []byte) {
	d, qh, qs := f16At(blk), binary.LittleEndian.Uint32(blk[2:]), blk[6:22]
	for j := range 32 {
		out[j] = float32(q5Value(qh, qs, j)-16) * d
	}
}

// dequantQ5_1: out[j] = d·q5 + m.
func dequantQ5_1(out []float32, blk []byte) {
	d, m, qh, qs := f16At(blk), f16At(blk[2:]), binary.LittleEndian.Uint32(blk[4:]), blk[8:24]
	for j := range 32 {
		out[j] = float32(float32(q5Value(qh, qs, j))*d) + m
	}
}

// dequantIQ4NL: out[j] = d·iq4nlValues[nibble j], low nibbles first.
func dequantIQ4NL(out []float32, blk []byte) {
	d := f16At(blk)
	for j := range 16 {
		q := blk[2+j]
		out[j] = d * float32(iq4nlValues[q&15])
		out[j+16] = d * float32(iq4nlValues[q>>4])
	}
}

// dequantQ2K: 16 sub-blocks of 16 weights, w = d·(sc&15)·q - dmin·(sc>>4)
// with q two bits: in each half of 128 weights, the 32 bytes of qs hold
// four runs of 32 weights, run k in bits 2k and 2k+1 (sub-blocks 8h+2k
// and 8h+2k+1 its first and last 16).
func dequantQ2K(out []float32, blk []byte) {
	sc, qs := blk[0:16], blk[16:80]
	d, dmin := f16At(blk[80:]), f16At(blk[82:])
	for h := range 2 {
		for k := range 4 {
			for s := range 2 {
				b := sc[8*h+2*k+s]
				dl, ml := d*float32(b&15), dmin*float32(b>>4)
				for l := 16 * s; l < 16*s+16; l++ {
					out[128*h+32*k+l] = float32(dl*float32(qs[32*h+l]>>(2*k)&3)) - ml
				}
			}
		}
	}
}

// q3KScales unpacks the sixteen 6-bit scales of a Q3_K block (12 bytes),
// less 32: scale s has its low four bits in the low (s < 8) or high
// (s ≥ 8) nibble of byte s%8, its top two in bits 2·(s/4) and 2·(s/4)+1
// of byte 8 + s%4.
func q3KScales(b []byte) [16]int8 {
	var s [16]int8
	for i := range 16 {
		lo := b[i%8] & 15
		if i >= 8 {
			lo = b[i%8] >> 4
		}
		hi := b[8+i%4] >> (2 * (i / 4)) & 3
		s[i] = int8(lo|hi<<4) - 32
	}
	return s
}

// q3KValue is weight l (< 32) of run k (< 4) of half h of a Q3_K block: the
// two bits 2k, 2k+1 of qs[32h+l], less 4 where bit 4h+k of hmask[l] is
// clear.
func q3KValue(hm, qs []byte, h, k, l int) int32 {
	q := int32(qs[32*h+l] >> (2 * k) & 3)
	if hm[l]>>(4*h+k)&1 == 0 {
		q -= 4
	}
	return q
}

// dequantQ3K: Q2_K's layout of two-bit runs with a third bit from hmask
// (q3KValue), w = d·scale·q with the sixteen signed scales of q3KScales.
func dequantQ3K(out []float32, blk []byte) {
	hm, qs, sc := blk[0:32], blk[32:96], q3KScales(blk[96:108])
	d := f16At(blk[108:])
	for h := range 2 {
		for k := range 4 {
			for l := range 32 {
				dl := d * float32(sc[8*h+2*k+l/16])
				out[128*h+32*k+l] = dl * float32(q3KValue(hm, qs, h, k, l))
			}
		}
	}
}

// iq4xsScale is the scale of sub-block ib (< 8, 32 weights) of an IQ4_XS
// block, less 32: four bits from the nibble ib%2 of scales_l[ib/2], two
// from bits 2ib, 2ib+1 of scales_h.
func iq4xsScale(blk []byte, ib int) int32 {
	sh := binary.LittleEndian.Uint16(blk[2:])
	lo := int32(blk[4+ib/2]>>(4*(ib%2))) & 15
	return lo | int32(sh>>(2*ib)&3)<<4 - 32
}

// dequantIQ4XS: 8 sub-blocks of 32 weights, each an IQ4_NL block's values
// (16 bytes of qs) under d·scale.
func dequantIQ4XS(out []float32, blk []byte) {
	d, qs := f16At(blk), blk[8:136]
	for ib := range 8 {
		dl := d * float32(iq4xsScale(blk, ib))
		for j := range 16 {
			q := qs[16*ib+j]
			out[32*ib+j] = dl * float32(iq4nlValues[q&15])
			out[32*ib+j+16] = dl * float32(iq4nlValues[q>>4])
		}
	}
}

// quantizeQ8_1 rounds a block of 32 values as ggml's quantize_row_q8_1
// (its AVX2 form): the values and binary16 scale of quantizeQ8_0, and s =
// (amax/127)·Σq rounded to binary16 (the float32 scale, not the binary16
// one). It returns both widened from binary16.
func quantizeQ8_1(q []int8, x []float32) (d, s float32) {
	d = quantizeQ8_0(q, x)
	var amax float32
	for _, v := range x[:32] {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	var sum int32
	for _, v := range q[:32] {
		sum += int32(v)
	}
	return d, F16ToF32(F32ToF16(amax / 127 * float32(sum)))
}

// dotMore is the product of row (weights of one of the types of this
// file) with row t of the rounded activations xq.
func (j *quantJob) dotMore(row []byte, t int, xq []int8) float32 {
	a, in := j.a, j.w.Cols
	switch j.w.DType {
	case Q4_1:
		return dotQ4_1(row, a.d[t*in/32:(t+1)*in/32], a.s[t*in/32:(t+1)*in/32], xq)
	case Q5_0:
		return dotQ5_0(row, a.d[t*in/32:(t+1)*in/32], xq)
	case Q5_1:
		return dotQ5_1(row, a.d[t*in/32:(t+1)*in/32], a.s[t*in/32:(t+1)*in/32], xq)
	case IQ4_NL:
		return dotIQ4NL(row, a.d[t*in/32:(t+1)*in/32], xq)
	case Q2_K:
		return dotQ2K(row, a.d[t*in/256:(t+1)*in/256], xq, a.bsums[t*in/16:(t+1)*in/16])
	case Q3_K:
		return dotQ3K(row, a.d[t*in/256:(t+1)*in/256], xq)
	case IQ4_XS:
		return dotIQ4XS(row, a.d[t*in/256:(t+1)*in/256], xq)
	}
	panic("tensor: dotMore of " + j.w.DType.String())
}

// dot32 adds each product of 32 weights w and 32 activations x to lane
// j/4 of lanes: the eight int32 lanes of the AVX2 kernels (maddubs on
// pairs, then madd on pairs of pairs), exact.
func dot32(lanes *[8]int32, w *[32]int32, x []int8, scale int32) {
	x = x[:32]
	for m := range 8 {
		s := w[4*m]*int32(x[4*m]) + w[4*m+1]*int32(x[4*m+1]) + w[4*m+2]*int32(x[4*m+2]) + w[4*m+3]*int32(x[4*m+3])
		lanes[m] += scale * s
	}
}

// dotQ4_1 is the Q4_1 row w against Q8_1 activations (scales xd, sums xs,
// values xq) in the order of llama.cpp's AVX2 ggml_vec_dot_q4_1_q8_1:
// dotQ4_0's eight lanes of the nibbles (without offset) scaled by
// d_w·d_x, and the mins apart, summs = fma32(m_w, s_x, summs); the result
// HSum8(acc) + summs.
func dotQ4_1(w []byte, xd, xs []float32, xq []int8) float32 {
	var acc [8]float32
	var summs float32
	var v [32]int32
	for b, dx := range xd {
		blk := w[20*b : 20*b+20]
		summs = FMA32(f16At(blk[2:]), xs[b], summs)
		for j := range 16 {
			v[j], v[j+16] = int32(blk[4+j]&15), int32(blk[4+j]>>4)
		}
		var lanes [8]int32
		dot32(&lanes, &v, xq[32*b:], 1)
		d := f16At(blk) * dx
		for m, l := range lanes {
			acc[m] = FMA32(d, float32(l), acc[m])
		}
	}
	return HSum8(&acc) + summs
}

// dotQ5_0 is the Q5_0 row w against Q8_0 activations in dotQ4_0's order
// (llama.cpp's AVX2 ggml_vec_dot_q5_0_q8_0 and tinyBLAS sum them so): the
// five-bit values less 16. The VNNI kernels (dotQuads*Q5_0VNNI) compute
// the same bits.
func dotQ5_0(w []byte, xd []float32, xq []int8) float32 {
	var acc [8]float32
	var v [32]int32
	for b, dx := range xd {
		blk := w[22*b : 22*b+22]
		qh, qs := binary.LittleEndian.Uint32(blk[2:]), blk[6:22]
		for j := range v {
			v[j] = q5Value(qh, qs, j) - 16
		}
		var lanes [8]int32
		dot32(&lanes, &v, xq[32*b:], 1)
		d := f16At(blk) * dx
		for m, l := range lanes {
			acc[m] = FMA32(d, float32(l), acc[m])
		}
	}
	return HSum8(&acc)
}

// dotQ5_1 is dotQ4_1 for Q5_1 rows (ggml_vec_dot_q5_1_q8_1): the five-bit
// values, no offset.
func dotQ5_1(w []byte, xd, xs []float32, xq []int8) float32 {
	var acc [8]float32
	var summs float32
	var v [32]int32
	for b, dx := range xd {
		blk := w[24*b : 24*b+24]
		summs = FMA32(f16At(blk[2:]), xs[b], summs)
		qh, qs := binary.LittleEndian.Uint32(blk[4:]), blk[8:24]
		for j := range v {
			v[j] = q5Value(qh, qs, j)
		}
		var lanes [8]int32
		dot32(&lanes, &v, xq[32*b:], 1)
		d := f16At(blk) * dx
		for m, l := range lanes {
			acc[m] = FMA32(d, float32(l), acc[m])
		}
	}
	return HSum8(&acc) + summs
}

// iq4nlBlock writes the 32 values of an IQ4_NL block's nibbles (16 bytes)
// through iq4nlValues to v, low nibbles first.
func iq4nlBlock(v *[32]int32, qs []byte) {
	for j := range 16 {
		v[j], v[j+16] = int32(iq4nlValues[qs[j]&15]), int32(iq4nlValues[qs[j]>>4])
	}
}

// dotIQ4NL is the IQ4_NL row w against Q8_0 activations in the order of
// llama.cpp's AVX2 ggml_vec_dot_iq4_nl_q8_0, what llama.cpp computes a
// product of one row of activations with (a decode step): blocks in
// pairs, the even ones' dotQ4_0-style lanes in one accumulator and the odd
// ones' in another, added lane by lane before HSum8; a last odd block as
// one integer, sumf = fma32(Σ, d_w·d_x, sumf). With two rows or more (a
// prompt), llama.cpp's llamafile_sgemm (tinyBLAS) sums IQ4_NL rows with one
// accumulator, as dotQ4_0 does; tracer keeps this order whatever the
// number of rows, so that a row's result does not depend on the batch
// (arch's batcher relies on it), and a prompt's IQ4_NL products may differ
// from llama.cpp's in the last bit. (For Q8_0, Q4_0 and Q5_0 both of
// llama.cpp's paths sum alike.)
func dotIQ4NL(w []byte, xd []float32, xq []int8) float32 {
	var acc [2][8]float32
	var v [32]int32
	nb := len(xd)
	b := 0
	for ; b+1 < nb; b += 2 {
		for p := range 2 {
			blk := w[18*(b+p) : 18*(b+p)+18]
			iq4nlBlock(&v, blk[2:18])
			var lanes [8]int32
			dot32(&lanes, &v, xq[32*(b+p):], 1)
			d := f16At(blk) * xd[b+p]
			for m, l := range lanes {
				acc[p][m] = FMA32(d, float32(l), acc[p][m])
			}
		}
	}
	var sum [8]float32
	for m := range sum {
		sum[m] = acc[0][m] + acc[1][m]
	}
	sumf := HSum8(&sum)
	for ; b < nb; b++ {
		blk := w[18*b : 18*b+18]
		iq4nlBlock(&v, blk[2:18])
		var s int32
		for j, q := range xq[32*b : 32*b+32] {
			s += v[j] * int32(q)
		}
		sumf = FMA32(float32(s), f16At(blk)*xd[b], sumf)
	}
	return sumf
}

// dotQ2K is the Q2_K row w against Q8_K activations in the order of
// llama.cpp's AVX2 ggml_vec_dot_q2_K_q8_K: per block, first the mins,
// lane k = (sc[2k]>>4)·S[2k] + (sc[2k+1]>>4)·S[2k+1] (S the activations'
// sums of 16), acc[k] = fma32(-d_x·dmin_w, lane k, acc[k]); then eight
// lanes of (sc&15)·q·x over bytes 4m..4m+3 of each run of 32 values,
// acc[m] = fma32(d_x·d_w, lane m, acc[m]); the result HSum8(acc).
// dotQ2KAVX2 computes the same bits.
func dotQ2K(w []byte, xd []float32, xq []int8, bsums []int32) float32 {
	var acc [8]float32
	var v [32]int32
	for b, dx := range xd {
		blk, q8, bs := w[84*b:84*b+84], xq[256*b:256*b+256], bsums[16*b:16*b+16]
		sc, qs := blk[0:16], blk[16:80]
		d, dmin := dx*f16At(blk[80:]), -dx*f16At(blk[82:])
		for k := range 8 {
			mins := int32(sc[2*k]>>4)*bs[2*k] + int32(sc[2*k+1]>>4)*bs[2*k+1]
			acc[k] = FMA32(dmin, float32(mins), acc[k])
		}
		var lanes [8]int32
		for h := range 2 {
			for k := range 4 {
				for l := range 32 {
					v[l] = int32(qs[32*h+l]>>(2*k)&3) * int32(sc[8*h+2*k+l/16]&15)
				}
				dot32(&lanes, &v, q8[128*h+32*k:], 1)
			}
		}
		for m, l := range lanes {
			acc[m] = FMA32(d, float32(l), acc[m])
		}
	}
	return HSum8(&acc)
}

// dotQ3K is the Q3_K row w against Q8_K activations in the order of
// llama.cpp's AVX2 ggml_vec_dot_q3_K_q8_K: eight lanes of scale·q·x over
// bytes 4m..4m+3 of each run of 32 values, acc[m] = fma32(d_x·d_w, lane
// m, acc[m]); the result HSum8(acc). dotQ3KAVX2 computes the same bits.
func dotQ3K(w []byte, xd []float32, xq []int8) float32 {
	var acc [8]float32
	var v [32]int32
	for b, dx := range xd {
		blk, q8 := w[110*b:110*b+110], xq[256*b:256*b+256]
		hm, qs, sc := blk[0:32], blk[32:96], q3KScales(blk[96:108])
		var lanes [8]int32
		for h := range 2 {
			for k := range 4 {
				for l := range 32 {
					v[l] = q3KValue(hm, qs, h, k, l) * int32(sc[8*h+2*k+l/16])
				}
				dot32(&lanes, &v, q8[128*h+32*k:], 1)
			}
		}
		d := dx * f16At(blk[108:])
		for m, l := range lanes {
			acc[m] = FMA32(d, float32(l), acc[m])
		}
	}
	return HSum8(&acc)
}

// dotIQ4XS is the IQ4_XS row w against Q8_K activations in the order of
// llama.cpp's AVX2 ggml_vec_dot_iq4_xs_q8_K: eight lanes of scale·value·x
// over bytes 4m..4m+3 of each sub-block of 32, acc[m] = fma32(d_w·d_x,
// lane m, acc[m]); the result HSum8(acc).
func dotIQ4XS(w []byte, xd []float32, xq []int8) float32 {
	var acc [8]float32
	var v [32]int32
	for b, dx := range xd {
		blk, q8 := w[136*b:136*b+136], xq[256*b:256*b+256]
		var lanes [8]int32
		for ib := range 8 {
			iq4nlBlock(&v, blk[8+16*ib:8+16*ib+16])
			dot32(&lanes, &v, q8[32*ib:], iq4xsScale(blk, ib))
		}
		d := f16At(blk) * dx
		for m, l := range lanes {
			acc[m] = FMA32(d, float32(l), acc[m])
		}
	}
	return HSum8(&acc)
}
