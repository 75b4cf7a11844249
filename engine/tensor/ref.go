package tensor

// The reference twins of the fast kernels: the plain loops their doc
// comments show, used by the tests to check the fast versions.

// matMulRef is the reference loop of MatMul.
func matMulRef(dst []float32, w Matrix, x []float32) {
	n := checkMatMul("matMulRef", dst, w.Rows, w.Cols, x)
	for t := 0; t < n; t++ {
		for i := 0; i < w.Rows; i++ {
			var s float32
			for j := 0; j < w.Cols; j++ {
				s += w.At(i, j) * x[t*w.Cols+j]
			}
			dst[t*w.Rows+i] = s
		}
	}
}

// matMulTRef is the reference loop of MatMulT.
func matMulTRef(dst []float32, w Matrix, x []float32) {
	n := checkMatMul("matMulTRef", dst, w.Cols, w.Rows, x)
	for t := 0; t < n; t++ {
		for o := 0; o < w.Cols; o++ {
			var s float32
			for i := 0; i < w.Rows; i++ {
				s += x[t*w.Rows+i] * w.At(i, o)
			}
			dst[t*w.Cols+o] = s
		}
	}
}
