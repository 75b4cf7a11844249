package tensor

import "fmt"

// MatVec computes dst = W x for a weight stored (out, in), the layout of
// nn.Linear and of llama2.c: x is (Cols), dst (Rows). It is MatMul with one
// row of x.
func MatVec(dst []float32, w Matrix, x []float32) { MatMul(dst, w, x) }

// MatMul computes dst = x Wᵀ for a weight stored (out, in), the layout of
// nn.Linear: x is (n, W.Cols) and dst (n, W.Rows), with n = len(x)/W.Cols.
// The reference loop (matMulRef):
//
//	for t := 0; t < n; t++ {
//		for i := 0; i < W.Rows; i++ {
//			var s float32
//			for j := 0; j < W.Cols; j++ {
//				s += W[i][j] * x[t][j]
//			}
//			dst[t][i] = s
//		}
//	}
//
// The sum runs in float32 over eight interleaved partial sums, as SIMD code
// does, so the last bits differ from the loop above. Each weight row is read
// once for all n rows of x.
func MatMul(dst []float32, w Matrix, x []float32) {
	n := checkMatMul("MatMul", dst, w.Rows, w.Cols, x)
	matMulRows(dst, w, x, n, 0, w.Rows)
}

// MatMulT computes dst = x W for a weight stored (in, out), the layout of
// GPT-2's Conv1D: x is (n, W.Rows) and dst (n, W.Cols). The reference loop
// (matMulTRef):
//
//	for t := 0; t < n; t++ {
//		for o := 0; o < W.Cols; o++ {
//			var s float32
//			for i := 0; i < W.Rows; i++ {
//				s += x[t][i] * W[i][o]
//			}
//			dst[t][o] = s
//		}
//	}
//
// It streams the weight row by row, adding x[t][i] times row i to the
// outputs, so each sum is accumulated in the order of the loop above.
func MatMulT(dst []float32, w Matrix, x []float32) {
	n := checkMatMul("MatMulT", dst, w.Cols, w.Rows, x)
	matMulTCols(dst, w, x, n, 0, w.Cols)
}

// checkMatMul panics unless x holds whole rows of in elements and dst the
// matching rows of out elements; it returns the number of rows.
func checkMatMul(op string, dst []float32, out, in int, x []float32) int {
	if in == 0 || len(x)%in != 0 || len(dst) != len(x)/in*out {
		panic(fmt.Sprintf("tensor: %s: x of %d and dst of %d for a weight with %d inputs and %d outputs", op, len(x), len(dst), in, out))
	}
	return len(x) / in
}

// matMulRows computes rows [lo, hi) of W for each of the n rows of x.
func matMulRows(dst []float32, w Matrix, x []float32, n, lo, hi int) {
	in, out := w.Cols, w.Rows
	for i := lo; i < hi; i++ {
		switch w.DType {
		case F32:
			row := w.f32[i*in : (i+1)*in]
			for t := 0; t < n; t++ {
				dst[t*out+i] = dotF32(row, x[t*in:(t+1)*in])
			}
		case BF16:
			row := w.u16[i*in : (i+1)*in]
			for t := 0; t < n; t++ {
				dst[t*out+i] = dotBF16(row, x[t*in:(t+1)*in])
			}
		case F16:
			row := w.u16[i*in : (i+1)*in]
			for t := 0; t < n; t++ {
				dst[t*out+i] = dotF16(row, x[t*in:(t+1)*in])
			}
		}
	}
}

// matMulTCols computes output columns [lo, hi) for each of the n rows of x.
func matMulTCols(dst []float32, w Matrix, x []float32, n, lo, hi int) {
	in, out := w.Rows, w.Cols
	for t := 0; t < n; t++ {
		clear(dst[t*out+lo : t*out+hi])
	}
	for i := 0; i < in; i++ {
		for t := 0; t < n; t++ {
			a := x[t*in+i]
			d := dst[t*out+lo : t*out+hi]
			switch w.DType {
			case F32:
				axpyF32(d, a, w.f32[i*out+lo:i*out+hi])
			case BF16:
				axpyBF16(d, a, w.u16[i*out+lo:i*out+hi])
			case F16:
				axpyF16(d, a, w.u16[i*out+lo:i*out+hi])
			}
		}
	}
}

// dotF32 returns Σ w[j]·x[j] over len(w), in eight partial sums.
func dotF32(w, x []float32) float32 {
	x = x[:len(w)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(w); i += 8 {
		ww := w[i : i+8 : i+8]
		xx := x[i : i+8 : i+8]
		s0 += ww[0] * xx[0]
		s1 += ww[1] * xx[1]
		s2 += ww[2] * xx[2]
		s3 += ww[3] * xx[3]
		s4 += ww[4] * xx[4]
		s5 += ww[5] * xx[5]
		s6 += ww[6] * xx[6]
		s7 += ww[7] * xx[7]
	}
	for ; i < len(w); i++ {
		s0 += w[i] * x[i]
	}
	return ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
}

// dotBF16 is dotF32 with bfloat16 weights widened as they are read.
func dotBF16(w []uint16, x []float32) float32 {
	x = x[:len(w)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(w); i += 8 {
		ww := w[i : i+8 : i+8]
		xx := x[i : i+8 : i+8]
		s0 += BF16ToF32(ww[0]) * xx[0]
		s1 += BF16ToF32(ww[1]) * xx[1]
		s2 += BF16ToF32(ww[2]) * xx[2]
		s3 += BF16ToF32(ww[3]) * xx[3]
		s4 += BF16ToF32(ww[4]) * xx[4]
		s5 += BF16ToF32(ww[5]) * xx[5]
		s6 += BF16ToF32(ww[6]) * xx[6]
		s7 += BF16ToF32(ww[7]) * xx[7]
	}
	for ; i < len(w); i++ {
		s0 += BF16ToF32(w[i]) * x[i]
	}
	return ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
}

// dotF16 is dotF32 with binary16 weights widened as they are read.
func dotF16(w []uint16, x []float32) float32 {
	x = x[:len(w)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(w); i += 4 {
		ww := w[i : i+4 : i+4]
		xx := x[i : i+4 : i+4]
		s0 += F16ToF32(ww[0]) * xx[0]
		s1 += F16ToF32(ww[1]) * xx[1]
		s2 += F16ToF32(ww[2]) * xx[2]
		s3 += F16ToF32(ww[3]) * xx[3]
	}
	for ; i < len(w); i++ {
		s0 += F16ToF32(w[i]) * x[i]
	}
	return (s0 + s2) + (s1 + s3)
}

// axpyF32 computes d[k] += a·w[k].
func axpyF32(d []float32, a float32, w []float32) {
	w = w[:len(d)]
	for k := range d {
		d[k] += a * w[k]
	}
}

// axpyBF16 computes d[k] += a·w[k] for bfloat16 w.
func axpyBF16(d []float32, a float32, w []uint16) {
	w = w[:len(d)]
	for k := range d {
		d[k] += a * BF16ToF32(w[k])
	}
}

// axpyF16 computes d[k] += a·w[k] for binary16 w.
func axpyF16(d []float32, a float32, w []uint16) {
	w = w[:len(d)]
	for k := range d {
		d[k] += a * F16ToF32(w[k])
	}
}
