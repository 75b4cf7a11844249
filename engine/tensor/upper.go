package tensor

import "fmt"

// A packed upper triangular matrix R (n, n) for products R a: what the
// forward-pass recording keeps per attention head (a Cholesky factor of 64
// or 128 dims), read from memory at every recorded step, so stored without
// most of its zeros. Columns of R are kept in bands of upperBand: column
// j of band b = j/upperBand holds R's rows 0 … upperBand·(b+1)-1 (rows past
// j, or past n, are zeros), so a band is a (upperBand, upperBand·(b+1))
// matrix whose rows are R's columns, and R a adds a[j] times column j to
// the band's outputs, upperBand at a time. At n = 64 that keeps 62.5 % of
// R's entries, at n = 128 56 %.

// upperBand is the width of a band of a packed upper triangular matrix:
// one AVX-512 register of float32 outputs.
const upperBand = 16

// UpperLen is the length of an n × n upper triangular matrix packed by
// PackUpper.
func UpperLen(n int) int {
	s := 0
	for j := 0; j < n; j += upperBand {
		s += min(upperBand, n-j) * (j + upperBand)
	}
	return s
}

// PackUpper packs the upper triangle of r (n, n, row-major, rounded to
// float32) into dst (UpperLen(n)) for MulUpper; r's entries below the
// diagonal are not read.
func PackUpper(dst []float32, r []float64, n int) {
	checkLen("PackUpper", UpperLen(n), dst)
	if len(r) != n*n {
		panic(fmt.Sprintf("tensor: PackUpper: r of %d for n = %d", len(r), n))
	}
	o := 0
	for j := range n {
		w := j/upperBand*upperBand + upperBand
		for i := range w {
			v := float32(0)
			if i <= j && i < n {
				v = float32(r[i*n+j])
			}
			dst[o+i] = v
		}
		o += w
	}
}

// MulUpper sets y (n) to R a for the R (n, n) that PackUpper packed into
// r: each output sums its terms in order of the column, one FMA each with
// the AVX-512 kernel (n a multiple of 16 up to 128), in the same order in
// pure Go otherwise.
func MulUpper(y, r, a []float32) {
	n := len(y)
	checkLen("MulUpper", n, a)
	checkLen("MulUpper", UpperLen(n), r)
	if n == 0 {
		return
	}
	if useAVX512 && n%upperBand == 0 && n <= 8*upperBand {
		mulUpperZF32(&y[0], &a[0], &r[0], n/upperBand)
		return
	}
	clear(y)
	o := 0
	for j, aj := range a {
		w := j/upperBand*upperBand + upperBand
		for i := range min(w, n) {
			y[i] += aj * r[o+i]
		}
		o += w
	}
}
