package tensor

import (
	"fmt"
	"unsafe"
)

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
// The sum runs in float32 over interleaved partial sums: for rows of 256
// or more, sixteen for float32 weights, lane l taking the terms
// j ≡ l (mod 16) in order, and thirty-two for bfloat16 and binary16
// weights (j ≡ l (mod 32); a row of 16 mod 32 terms ends in lanes 0 to
// 15), first added as b[l] = s[l] + s[l+16]; eight lanes for shorter
// rows. The sixteen lanes are added at the end as a[l] = s[l] + s[l+8],
// then ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)): the lanes of two AVX2
// registers (of one for short rows). So the last bits differ from the
// loop above, and the assembly kernels (one fused multiply-add per term)
// differ from the pure-Go loops only in rounding. Every dot product is
// summed the same way whichever kernel and thread computes it, so the
// result does not depend on n or on the split.
//
// Decode (one or two rows of x) streams the weight rows in order, the
// pattern the hardware prefetchers follow best (with AVX-512, one row of
// x reads two streams at once: rows r and h+r of the h pairs; packed
// Q8_0 and Q4_0 quads the same way); prefill reads each pair of long
// float32 weight rows (a long 16-bit row alone; short rows by four) once
// for every three rows of x. With AVX-512, prefill reads each block of
// eight long float32 weight rows (four 16-bit ones) once for every three
// rows of x; the sums and so the bits stay the same.
func MatMul(dst []float32, w Matrix, x []float32) {
	n := checkMatMul("MatMul", dst, w.Rows, w.Cols, x)
	if w.needsRounding() {
		(*Pool)(nil).matMulRound(dst, w, x, n)
		return
	}
	matMulRows(dst, w, x, n, 0, w.Rows, nil)
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
// Each sum is accumulated in the order of the loop above (with one fused
// multiply-add per term in the assembly kernels). Decode streams the
// weight row by row, adding x[t][i] times row i to the outputs; prefill
// (six or more rows of x) works in tiles of six rows of x by sixteen
// outputs held in registers (sixty-four with AVX-512).
func MatMulT(dst []float32, w Matrix, x []float32) {
	checkMatMulT(w)
	n := checkMatMul("MatMulT", dst, w.Cols, w.Rows, x)
	matMulTCols(dst, w, x, n, 0, w.Cols)
}

// checkMatMulT panics for quantized weights, which GGUF files store
// [out, in] for MatMul: a programmer bug.
func checkMatMulT(w Matrix) {
	if w.DType.Quantized() || w.roundF16 {
		panic(fmt.Sprintf("tensor: MatMulT with %s weights: GGUF weights are [out, in], use MatMul", w.DType))
	}
}

// checkMatMul panics unless x holds whole rows of in elements and dst the
// matching rows of out elements; it returns the number of rows.
func checkMatMul(op string, dst []float32, out, in int, x []float32) int {
	if in == 0 || len(x)%in != 0 || len(dst) != len(x)/in*out {
		panic(fmt.Sprintf("tensor: %s: x of %d and dst of %d for a weight with %d inputs and %d outputs", op, len(x), len(dst), in, out))
	}
	return len(x) / in
}

// matMulRows computes rows [lo, hi) of W for each of the n rows of x. The
// assembly kernels need Cols to be a multiple of 16 for long rows (≥
// wideRow) and of 8 for short ones. A decode of one row of x with the
// AVX-512 kernels also brings side's memory into the caches (side may be
// nil).
func matMulRows(dst []float32, w Matrix, x []float32, n, lo, hi int, side *sideLines) {
	in, out := w.Cols, w.Rows
	wide := in >= wideRow
	if !useAsm || wide && in%16 != 0 || in%8 != 0 {
		matMulRowsGo(dst, w, x, n, lo, hi)
		return
	}
	w.prefetch(lo*in, hi*in)
	if n == 1 {
		// Decode of one row: the weight rows in one call (blocks of 64
		// rows, as below, cost 1-4 % of a decode step at SmolLM2-135M's
		// shape in calls and restarts).
		w.dotRows(dst[lo:hi], lo, x, side)
		return
	}
	if n < 3 {
		// Decode of two rows: blocks of rows small enough to stay in cache
		// for the second row of x.
		const block = 64
		for r := lo; r < hi; r += block {
			e := min(r+block, hi)
			for t := 0; t < n; t++ {
				w.dotRows(dst[t*out+r:t*out+e], r, x[t*in:(t+1)*in], nil)
			}
		}
		return
	}
	if wide && useAVX512 && n >= 6 {
		matMulRowsZ(dst, w, x, n, lo, hi)
		return
	}
	// Prefill: blocks of 4 weight rows (short rows), 2 (long rows of
	// float32) or 1 (long rows of 16-bit weights) against groups of 3 rows
	// of x; a last partial group is done as the last 3 rows of x,
	// recomputing one or two (to the same bits).
	rows := 4
	if wide {
		rows = w.wideBlock()
	}
	g, tail := n/3, n%3 != 0
	blocks := (hi - lo) / rows
	for pass := range 2 {
		t0, groups := 0, g
		if pass == 1 {
			if !tail {
				break
			}
			t0, groups = n-3, 1
		}
		if !wide && blocks > 0 { // every block in one call
			w.dot4x3(dst[t0*out+lo:], out, lo, x[t0*in:], groups, blocks)
			continue
		}
		for b := range blocks {
			r := lo + b*rows
			w.dotWide3(dst[t0*out+r:], out, r, x[t0*in:], groups)
		}
	}
	r := lo + blocks*rows
	if r < hi { // the last rows, fewer than a block
		for t := 0; t < n; t++ {
			w.dotRows(dst[t*out+r:t*out+hi], r, x[t*in:(t+1)*in], nil)
		}
	}
}

// prefetchBytes bounds the weights a product asks the caches for, all at
// once, before it starts. A weight this small is read in one burst too
// short for the hardware prefetchers, which follow a stream only after
// some misses: the keys and values of a decode step's attention (at most
// 64 KiB per kv head for a context of 256 tokens of 64 dims), cold in
// memory after the layer weights streamed through the caches, were read
// at a fraction of the memory bandwidth, one miss after another. Larger
// weights stream well without help. (A Llama decode step now warms its
// keys and values earlier, while the k and v projections stream: see
// warm.go. Measured again on our AMD EPYC, this prefetch made no
// difference either way, with warming or, cold, without.)
const prefetchBytes = 64 << 10

// prefetch asks the caches for the weight elements [lo, hi) when they
// take at most prefetchBytes, with the assembly.
func (m Matrix) prefetch(lo, hi int) {
	bytes := (hi - lo) * m.DType.Size()
	if !useAsm || bytes <= 0 || bytes > prefetchBytes {
		return
	}
	switch m.DType {
	case F32:
		prefetchLines(unsafe.Pointer(&m.f32[lo]), bytes)
	case BF16, F16:
		prefetchLines(unsafe.Pointer(&m.u16[lo]), bytes)
	}
}

// xTileBytes bounds the rows of x that matMulRowsZ runs every weight
// block against before moving on: few enough to stay in L2 (1 MiB or more
// per core on the machines with AVX-512) while the weights stream past.
// On Zen 5, SmolLM2-135M's MLP down projection (1536 terms a row, 64
// rows of x) ran at 103-109 GFLOP/s with 256 KiB (two tiles, so its
// weights read twice) and 134-141 with 512 KiB (one tile); 768 KiB gained
// nothing more.
const xTileBytes = 512 << 10

// matMulRowsZ is the prefill of matMulRows with the AVX-512 kernels (n ≥
// 6, long rows): blocks of weight rows against groups of rows of x (8 by
// 3 for float32 weights, 4 by 3 for 16-bit ones: Matrix.zBlock), the
// block's weights staying in L1 while a tile of x (at most xTileBytes)
// streams from L2. A tile's last partial group is done as its last 3
// rows of x (a last tile of fewer than 3 rows as the last 3 rows of all),
// recomputing up to 2 to the same bits; the last weight rows, fewer than
// a block, one row of x at a time.
func matMulRowsZ(dst []float32, w Matrix, x []float32, n, lo, hi int) {
	in, out := w.Cols, w.Rows
	rows, s := w.zBlock()
	var acc []float32 // lanes between chunks of long rows (Matrix.dotZ)
	if w.chunked() {
		var buf [accGroups * 384]float32 // 48 KiB, zeroed only where used
		acc = buf[:]
	}
	tile := max(s, xTileBytes/(4*in)/s*s)
	end := lo + (hi-lo)/rows*rows
	for t0 := 0; t0 < n; t0 += tile {
		t1 := min(t0+tile, n)
		b := min(t0, t1-s)
		g, tail := (t1-b)/s, (t1-b)%s != 0
		for r := lo; r < end; r += rows {
			w.dotZ(dst[b*out+r:], out, r, x[b*in:], g, acc)
			if tail {
				w.dotZ(dst[(t1-s)*out+r:], out, r, x[(t1-s)*in:], 1, acc)
			}
		}
	}
	if end < hi {
		for t := 0; t < n; t++ {
			w.dotRows(dst[t*out+end:t*out+hi], end, x[t*in:(t+1)*in], nil)
		}
	}
}

// matMulRowsGo is matMulRows in pure Go.
func matMulRowsGo(dst []float32, w Matrix, x []float32, n, lo, hi int) {
	in, out := w.Cols, w.Rows
	for i := lo; i < hi; i++ {
		for t := 0; t < n; t++ {
			xt := x[t*in : (t+1)*in]
			var s float32
			switch w.DType {
			case F32:
				s = dotF32(w.f32[i*in:(i+1)*in], xt)
			case BF16:
				s = dotBF16(w.u16[i*in:(i+1)*in], xt)
			case F16:
				s = dotF16(w.u16[i*in:(i+1)*in], xt)
			}
			dst[t*out+i] = s
		}
	}
}

// matMulTCols computes output columns [lo, hi) for each of the n rows of x.
func matMulTCols(dst []float32, w Matrix, x []float32, n, lo, hi int) {
	if !useAsm {
		matMulTColsGo(dst, w, x, n, lo, hi)
		return
	}
	in, out := w.Rows, w.Cols
	if lo == 0 && hi == out {
		w.prefetch(0, in*out)
	}
	// Tiles of 6 rows of x by 64 columns (AVX-512) or 16 where they fit,
	// the rest by rows. Every tile sums in the same order, so the bits do
	// not depend on which one computes an output.
	tn, tc := 0, lo
	if n >= 6 {
		tn, tc = n/6*6, lo+(hi-lo)/16*16
		c := lo
		for ; useAVX512 && c+64 <= tc; c += 64 {
			for t := 0; t < tn; t += 6 {
				w.panelZ(dst[t*out+c:], out, x[t*in:], c)
			}
		}
		for ; c < tc; c += 16 {
			for t := 0; t < tn; t += 6 {
				w.panel(dst[t*out+c:], out, x[t*in:], c)
			}
		}
	}
	matMulTAxpy(dst, w, x, 0, tn, tc, hi)
	matMulTAxpy(dst, w, x, tn, n, lo, hi)
}

// matMulTAxpy computes output columns [lo, hi) of rows [t0, t1) of x.
// Where a block of 64 columns is most of each weight row (out ≤ 128:
// attention's values, with a head dimension of 64 or 128), the AVX-512
// kernel keeps a block's outputs in registers over all the weight rows;
// the rest goes to matMulTAxpyRows. Both sum each output over the rows in
// order, one FMA per term, so the bits are the same.
func matMulTAxpy(dst []float32, w Matrix, x []float32, t0, t1, lo, hi int) {
	if t0 >= t1 || lo >= hi {
		return
	}
	if in, out := w.Rows, w.Cols; useAVX512 && out <= 128 {
		z := (hi - lo) / 64 * 64
		t := t0
		for ; t+3 <= t1; t += 3 { // three rows share each weight row's loads
			for c := lo; c < lo+z; c += 64 {
				w.panel3Z(dst[t*out+c:], out, x[t*in:(t+3)*in], c)
			}
		}
		for ; t < t1; t++ {
			for c := lo; c < lo+z; c += 64 {
				w.panel1Z(dst[t*out+c:t*out+c+64], x[t*in:(t+1)*in], c)
			}
		}
		lo += z
	}
	matMulTAxpyRows(dst, w, x, t0, t1, lo, hi)
}

// matMulTAxpyRows computes output columns [lo, hi) of rows [t0, t1) of x
// by adding x[t][i] times row i of W to the outputs, row after row: the
// weights stream in order and the outputs stay in cache.
func matMulTAxpyRows(dst []float32, w Matrix, x []float32, t0, t1, lo, hi int) {
	if t0 >= t1 || lo >= hi {
		return
	}
	in, out := w.Rows, w.Cols
	m := (hi - lo) / 8 * 8
	for t := t0; t < t1; t++ {
		d := dst[t*out+lo : t*out+hi]
		a := x[t*in : (t+1)*in]
		clear(d)
		if m > 0 {
			w.axpyRows(d[:m], a, 0, lo)
		}
		for o := m; o < len(d); o++ {
			for i, ai := range a {
				d[o] += ai * w.At(i, lo+o)
			}
		}
	}
}

// matMulTColsGo is matMulTCols in pure Go.
func matMulTColsGo(dst []float32, w Matrix, x []float32, n, lo, hi int) {
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
