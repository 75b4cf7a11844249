package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Making quantized blocks from float32 values, byte for byte as
// llama.cpp's llama-quantize writes them without an importance matrix
// (the build of ../shared/tools/llama-server, commit c392e509). Without
// one, ggml's quantize_q* functions call the reference quantizers
// quantize_row_q*_ref, which these follow step by step:
//
//   - Q8_0, Q4_0, Q5_0: the scale is the value of largest magnitude over
//     the largest level (127, -8, -16), rounded to binary16; each value is
//     multiplied by the float32 inverse of the unrounded scale and
//     rounded (Q8_0: half away from zero) or offset and truncated (Q4_0:
//     +8.5, Q5_0: +16.5, capped at 15 and 31).
//   - Q4_1, Q5_1: scale (max-min)/15 or /31 and min, both binary16; each
//     value is (x-min)·inverse, +0.5, truncated.
//   - Q4_K, Q5_K: per sub-block of 32, make_qkx2_quants fits a scale and a
//     min (weights sqrt(Σx²/32)+|x|, a search over 21 or 16 trial
//     scales, least squares for each); the 8 scales and mins are rounded
//     to 6 bits against the largest, the super-block's d and dmin to
//     binary16, and the values quantized again with the rounded scales.
//   - Q6_K: per sub-block of 16, make_qx_quants fits a signed scale (19
//     trial scales, weights x², least squares); the 16 scales are rounded
//     to int8 against the largest, d to binary16, and the values quantized
//     again.
//
// Every step is float32 arithmetic rounded on its own, as ggml-base is
// built (no fused multiply-adds: the explicit float32 conversions below
// keep Go from fusing a product into a sum on the machines where it
// would). Rounding to the nearest integer is ggml's nearest_int (the
// float32 sum with 1.5·2^23, ties to even); float to integer casts are
// x86's truncating conversion, whose answer for NaN and out-of-range
// values (-2^31) llama-quantize's blocks keep in their low bits.

// QuantizeRow writes the blocks of src in dtype to dst, as llama-quantize
// writes them from a float32 tensor: len(src) must be a whole number of
// the type's blocks (dtype.Block), and dst at least len(src)/elems·bytes
// bytes long, of which QuantizeRow writes exactly those. It makes Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K.
func QuantizeRow(dst []byte, src []float32, dtype DType) error {
	if !quantizes(dtype) {
		return fmt.Errorf("tensor: cannot quantize to %s: QuantizeRow makes q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k and q6_k", dtype)
	}
	elems, bs := dtype.Block()
	if len(src)%elems != 0 {
		return fmt.Errorf("tensor: %d values are not whole %d-value %s blocks: %s", len(src), elems, dtype, fallbackHint(dtype, len(src)))
	}
	nb := len(src) / elems
	if len(dst) < nb*bs {
		return fmt.Errorf("tensor: %d bytes for %d %s blocks, want at least %d", len(dst), nb, dtype, nb*bs)
	}
	for b := range nb {
		x, y := src[b*elems:(b+1)*elems], dst[b*bs:(b+1)*bs]
		switch dtype {
		case Q8_0:
			encodeQ8_0(y, x)
		case Q4_0:
			encodeQ4_0(y, x)
		case Q4_1:
			encodeQ4_1(y, x)
		case Q5_0:
			encodeQ5_0(y, x)
		case Q5_1:
			encodeQ5_1(y, x)
		case Q4_K:
			encodeQ4K(y, x)
		case Q5_K:
			encodeQ5K(y, x)
		case Q6_K:
			encodeQ6K(y, x)
		}
	}
	return nil
}

// quantizes reports whether QuantizeRow makes dtype.
func quantizes(dtype DType) bool {
	switch dtype {
	case Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K:
		return true
	}
	return false
}

// KFallback returns the type llama-quantize writes instead of dtype for a
// matrix whose rows are not a multiple of 256: Q4_K → Q5_0, Q5_K → Q5_1,
// Q6_K → Q8_0, Q2_K, Q3_K and IQ4_XS → IQ4_NL. Any other type is returned
// unchanged (llama-quantize writes F16 where a row is not a multiple of
// 32 either).
func KFallback(dtype DType) DType {
	switch dtype {
	case Q4_K:
		return Q5_0
	case Q5_K:
		return Q5_1
	case Q6_K:
		return Q8_0
	case Q2_K, Q3_K, IQ4_XS:
		return IQ4_NL
	}
	return dtype
}

// Quantize returns m (an F32, F16 or BF16 matrix) in dtype, each row
// widened to float32 and quantized by QuantizeRow, in the layout the GGUF
// loader gives a file of that type: packed where PackedLayout(dtype)
// holds. Rows must be whole blocks: for rows of the K-quants that are not
// a multiple of 256 the error names the type llama-quantize would use
// instead (KFallback). Rows are quantized in parallel; the bytes do not
// depend on how.
func (m Matrix) Quantize(dtype DType) (Matrix, error) {
	if m.DType != F32 && m.DType != F16 && m.DType != BF16 {
		return Matrix{}, fmt.Errorf("tensor: cannot quantize a %s matrix: start from F32, F16 or BF16 weights", m.DType)
	}
	if !quantizes(dtype) {
		return Matrix{}, fmt.Errorf("tensor: cannot quantize to %s: Quantize makes q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k and q6_k", dtype)
	}
	elems, bs := dtype.Block()
	if m.Rows <= 0 || m.Cols <= 0 {
		return Matrix{}, fmt.Errorf("tensor: cannot quantize an empty (%d, %d) matrix", m.Rows, m.Cols)
	}
	if m.Cols%elems != 0 {
		return Matrix{}, fmt.Errorf("tensor: rows of %d weights are not a multiple of %d, which %s needs: %s", m.Cols, elems, dtype, fallbackHint(dtype, m.Cols))
	}
	rb := m.Cols / elems * bs
	data := make([]byte, m.Rows*rb)
	workers := min(runtime.GOMAXPROCS(0), m.Rows)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		lo, hi := m.Rows*w/workers, m.Rows*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			row := make([]float32, m.Cols)
			for i := lo; i < hi && errs[w] == nil; i++ {
				m.Row(row, i)
				errs[w] = QuantizeRow(data[i*rb:(i+1)*rb], row, dtype)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Matrix{}, err
		}
	}
	if PackedLayout(dtype) {
		if err := PackQuantRows(data, data, dtype, m.Cols); err != nil {
			return Matrix{}, err
		}
		return NewPackedQuantMatrix(data, dtype, m.Rows, m.Cols)
	}
	return NewQuantMatrix(data, dtype, m.Rows, m.Cols)
}

// fallbackHint says what llama-quantize writes instead of dtype for rows
// of n values that are not whole blocks of it.
func fallbackHint(dtype DType, n int) string {
	if fb := KFallback(dtype); fb != dtype && n%32 == 0 {
		return fmt.Sprintf("llama-quantize writes such rows as %s (KFallback)", fb)
	}
	return "llama-quantize keeps such rows as F16"
}

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it is all zeros.
const groupMaxEps float32 = 1e-15

// nearestInt is ggml's nearest_int: the low 23 bits of f + 1.5·2^23 less
// 2^22, which is f rounded to the nearest integer, ties to even, for |f|
// below 2^22 (and the same bits as ggml's otherwise). Converting f again
// keeps a product passed in from fusing into the sum once inlined.
func nearestInt(f float32) int32 {
	v := float32(f) + 12582912
	return int32(math.Float32bits(v)&0x7fffff) - 0x400000
}

// cvtt converts f to int32 as x86's CVTTSS2SI does, truncating: -2^31
// for NaN and values out of range (a C cast, as ggml is built on x86).
func cvtt(f float32) int32 {
	if f >= -2147483648 && f < 2147483648 {
		return int32(f)
	}
	return math.MinInt32
}

// roundf is C's roundf: halves away from zero.
func roundf(f float32) float32 { return float32(math.Round(float64(f))) }

// abs32 is fabsf.
func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// sqrt32 is sqrtf (a float64 square root rounds to the same float32).
func sqrt32(f float32) float32 { return float32(math.Sqrt(float64(f))) }

// putF16 stores f rounded to binary16 (ties to even, as ggml's
// GGML_FP32_TO_FP16), little-endian.
func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, F32ToF16(f)) }

// encodeQ8_0 is quantize_row_q8_0_ref for one block.
func encodeQ8_0(y []byte, x []float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(y, d)
	for j, v := range x {
		y[2+j] = byte(cvtt(roundf(v * id)))
	}
}

// signedMax returns the value of x of largest magnitude (the first of
// equals) and that magnitude.
func signedMax(x []float32) (maxv, amax float32) {
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax, maxv = a, v
		}
	}
	return maxv, amax
}

// encodeQ4_0 is quantize_row_q4_0_ref for one block.
func encodeQ4_0(y []byte, x []float32) {
	maxv, _ := signedMax(x)
	d := maxv / -8
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(y, d)
	for j := range 16 {
		x0, x1 := float32(x[j]*id), float32(x[16+j]*id)
		q0 := min(15, int32(int8(cvtt(x0+8.5))))
		q1 := min(15, int32(int8(cvtt(x1+8.5))))
		y[2+j] = uint8(q0) | uint8(q1)<<4
	}
}

// minMax returns the smallest and largest of x.
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// encodeQ4_1 is quantize_row_q4_1_ref for one block.
func encodeQ4_1(y []byte, x []float32) {
	lo, hi := minMax(x)
	d := (hi - lo) / 15
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(y, d)
	putF16(y[2:], lo)
	for j := range 16 {
		x0, x1 := float32((x[j]-lo)*id), float32((x[16+j]-lo)*id)
		q0 := min(15, int32(int8(cvtt(x0+0.5))))
		q1 := min(15, int32(int8(cvtt(x1+0.5))))
		y[4+j] = uint8(q0) | uint8(q1)<<4
	}
}

// encodeQ5_0 is quantize_row_q5_0_ref for one block.
func encodeQ5_0(y []byte, x []float32) {
	maxv, _ := signedMax(x)
	d := maxv / -16
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(y, d)
	var qh uint32
	for j := range 16 {
		x0, x1 := float32(x[j]*id), float32(x[16+j]*id)
		q0 := uint8(min(31, int32(int8(cvtt(x0+16.5)))))
		q1 := uint8(min(31, int32(int8(cvtt(x1+16.5)))))
		y[6+j] = q0&15 | (q1&15)<<4
		qh |= uint32(q0&16)>>4<<j | uint32(q1&16)>>4<<(j+16)
	}
	binary.LittleEndian.PutUint32(y[2:], qh)
}

// encodeQ5_1 is quantize_row_q5_1_ref for one block.
func encodeQ5_1(y []byte, x []float32) {
	lo, hi := minMax(x)
	d := (hi - lo) / 31
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(y, d)
	putF16(y[2:], lo)
	var qh uint32
	for j := range 16 {
		x0, x1 := float32((x[j]-lo)*id), float32((x[16+j]-lo)*id)
		q0, q1 := uint8(cvtt(x0+0.5)), uint8(cvtt(x1+0.5))
		y[8+j] = q0&15 | (q1&15)<<4
		qh |= uint32(q0&16)>>4<<j | uint32(q1&16)>>4<<(j+16)
	}
	binary.LittleEndian.PutUint32(y[4:], qh)
}

// clampInt returns l limited to [lo, hi].
func clampInt(l, lo, hi int32) int32 { return max(lo, min(hi, l)) }

// makeQKX2 is ggml's make_qkx2_quants with use_mad false: it fits x ≈
// scale·L - theMin with L in [0, nmax] and theMin ≥ 0, weighing the
// squared errors by weights, trying the scales (nmax + rmin +
// rdelta·is)/(max-min) for is = 0..nstep (nstep ≥ 1) after the plain
// nmax/(max-min). laux is scratch of len(x).
func makeQKX2(x, weights []float32, L, laux []uint8, nmax int32, rmin, rdelta float32, nstep int) (scale, theMin float32) {
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < len(x); i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L[:len(x)])
		return 0, -lo
	}
	fmax := float32(nmax)
	iscale := fmax / (hi - lo)
	scale = 1 / iscale
	var best float32
	for i, v := range x {
		l := clampInt(nearestInt(float32(iscale*(v-lo))), 0, nmax)
		L[i] = uint8(l)
		diff := float32(scale*float32(l)) + lo - v
		diff = diff * diff
		best += float32(weights[i] * diff)
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + fmax) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(float32(iscale*(v-lo))), 0, nmax)
			laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if !(D > 0) {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var cur float32
		for i, v := range x {
			diff := float32(thisScale*float32(laux[i])) + thisMin - v
			diff = diff * diff
			cur += float32(weights[i] * diff)
		}
		if cur < best {
			copy(L[:len(x)], laux[:len(x)])
			best, scale, lo = cur, thisScale, thisMin
		}
	}
	return scale, -lo
}

// encodeQ4K is quantize_row_q4_K_ref for one block of 256.
func encodeQ4K(y []byte, x []float32) { encodeQ45K(y, x, 15) }

// encodeQ5K is quantize_row_q5_K_ref for one block of 256.
func encodeQ5K(y []byte, x []float32) { encodeQ45K(y, x, 31) }

// encodeQ45K is quantize_row_q4_K_ref (nmax 15) or quantize_row_q5_K_ref
// (nmax 31) for one block: f16 d, f16 dmin, 12 bytes of 6-bit scales and
// mins, then Q5_K's 32 bytes of fifth bits, then the nibbles.
func encodeQ45K(y []byte, x []float32, nmax int32) {
	var (
		L              [256]uint8
		laux           [32]uint8
		weights        [32]float32
		scales, mins   [8]float32
		maxScale, maxM float32
	)
	rmin, rdelta, nstep := float32(-1), float32(0.1), 20
	if nmax == 31 {
		rmin, nstep = -0.5, 15
	}
	for j := range 8 {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrt32(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2(xs, weights[:], L[32*j:32*j+32], laux[:], nmax, rmin, rdelta, nstep)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxM {
			maxM = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxM > 0 {
		invMin = 63 / maxM
	}
	sc := y[4:16]
	for j := range 8 {
		ls := min(63, uint8(nearestInt(float32(invScale*scales[j]))))
		lm := min(63, uint8(nearestInt(float32(invMin*mins[j]))))
		if j < 4 {
			sc[j], sc[j+4] = ls, lm
		} else {
			sc[j+4] = ls&15 | (lm&15)<<4
			sc[j-4] |= ls >> 4 << 6
			sc[j] |= lm >> 4 << 6
		}
	}
	putF16(y, maxScale/63)
	putF16(y[2:], maxM/63)
	d, dmin := f16At(y), f16At(y[2:])
	for j := range 8 {
		s, m := scaleMinK4(j, sc)
		dj := d * float32(s)
		if dj == 0 {
			continue
		}
		dm := float32(dmin * float32(m))
		for i := 32 * j; i < 32*j+32; i++ {
			L[i] = uint8(clampInt(nearestInt((x[i]+dm)/dj), 0, nmax))
		}
	}
	qs := y[16:144]
	if nmax == 31 {
		qh := y[16:48]
		clear(qh)
		qs = y[48:176]
		for p := range 4 {
			for l := range 32 {
				lo, hi := L[64*p+l], L[64*p+32+l]
				if lo > 15 {
					lo -= 16
					qh[l] |= 1 << (2 * p)
				}
				if hi > 15 {
					hi -= 16
					qh[l] |= 2 << (2 * p)
				}
				qs[32*p+l] = lo | hi<<4
			}
		}
		return
	}
	for p := range 4 {
		for l := range 32 {
			qs[32*p+l] = L[64*p+l] | L[64*p+32+l]<<4
		}
	}
}

// makeQX is ggml's make_qx_quants with rmse_type 1 and no importance
// weights: it fits x ≈ scale·(L - nmax) with L in [0, 2·nmax), weighing
// the squared errors by x², trying the scales -(nmax + 0.1·is)/max for is
// = -9..9 (max the value of largest magnitude) and keeping the least
// squares scale of the best. A group below groupMaxEps is all zeros.
func makeQX(x []float32, L []int8, nmax int32) float32 {
	maxv, amax := signedMax(x)
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	fmax := float32(nmax)
	iscale := -fmax / maxv
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(float32(iscale*v)), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w, fl := v*v, float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := int32(-9); is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fmax + float32(float32(0.1)*float32(is))) / maxv
		sumlx, suml2 = 0, 0
		for _, v := range x {
			l := clampInt(nearestInt(float32(iscale*v)), -nmax, nmax-1)
			w, fl := v*v, float32(l)
			sumlx += float32(w * v * fl)
			suml2 += float32(w * fl * fl)
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(clampInt(nearestInt(float32(iscale*v)), -nmax, nmax-1) + nmax)
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// encodeQ6K is quantize_row_q6_K_ref for one block of 256: ql[128],
// qh[64], int8 scales[16], f16 d.
func encodeQ6K(y []byte, x []float32) {
	var (
		L                     [256]int8
		scales                [16]float32
		maxScale, maxAbsScale float32
	)
	for ib := range 16 {
		s := makeQX(x[16*ib:16*ib+16], L[16*ib:16*ib+16], 32)
		scales[ib] = s
		if a := abs32(s); a > maxAbsScale {
			maxAbsScale, maxScale = a, s
		}
	}
	if maxAbsScale < groupMaxEps {
		clear(y[:210])
		return
	}
	iscale := -128 / maxScale
	putF16(y[208:], 1/iscale)
	sc := y[192:208]
	for ib := range 16 {
		sc[ib] = byte(int8(min(127, nearestInt(float32(iscale*scales[ib])))))
	}
	d16 := f16At(y[208:])
	for j := range 16 {
		d := d16 * float32(int8(sc[j]))
		if d == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(clampInt(nearestInt(x[i]/d), -32, 31) + 32)
		}
	}
	for h := range 2 {
		ql, qh, l6 := y[64*h:64*h+64], y[128+32*h:128+32*h+32], L[128*h:128*h+128]
		for l := range 32 {
			q1, q2, q3, q4 := uint8(l6[l]), uint8(l6[l+32]), uint8(l6[l+64]), uint8(l6[l+96])
			ql[l] = q1&15 | (q3&15)<<4
			ql[l+32] = q2&15 | (q4&15)<<4
			qh[l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
		}
	}
}
