package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// randRanges returns up to maxSideRanges+1 slices of one backing array,
// of random offsets and lengths (some empty), in random order.
func randRanges(r *rand.Rand) [][]float32 {
	back := make([]float32, 1<<14)
	ranges := make([][]float32, r.IntN(maxSideRanges+2))
	for i := range ranges {
		lo := r.IntN(len(back))
		ranges[i] = back[lo : lo+r.IntN(min(len(back)-lo, 3000)+1)]
	}
	return ranges
}

// TestSideShare: whatever the ranges and however a pool cuts a product's
// rows into pieces, the pieces' shares are the ranges' lines, each once,
// in order, and each piece's rows ask for enough lines to cover its share.
func TestSideShare(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 2000 {
		warm := randRanges(r)
		rows := 1 + r.IntN(700)
		var want []uintptr
		for _, w := range warm {
			if len(w) > 0 {
				a, b := lineSpan(w)
				for l := a; l < b; l += 64 {
					want = append(want, l)
				}
			}
		}
		if len(warm) > maxSideRanges {
			want = nil
		}
		var got []uintptr
		for lo := 0; lo < rows; {
			hi := min(rows, lo+1+r.IntN(rows))
			var s sideLines
			side := s.share(warm, lo, hi, rows)
			if side == nil {
				lo = hi
				continue
			}
			n := 0
			for k := 0; k < side.n/16; k++ {
				for l := side.r[k][0]; l < side.r[k][1]; l += 64 {
					got = append(got, l)
					n++
				}
			}
			if n > side.per*(hi-lo) {
				t.Fatalf("trial %d: rows [%d, %d) share %d lines at %d a row", trial, lo, hi, n, side.per)
			}
			lo = hi
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d: %d ranges over %d rows: pieces asked for %d lines, want %d", trial, len(warm), rows, len(got), len(want))
		}
	}
}

// sideModel is the SIDE macro of kernels_avx512_amd64.s in Go: what a
// kernel call of rows rows leaves of s.
func sideModel(s sideLines, rows int) sideLines {
	for range rows {
		if s.i >= s.n {
			break
		}
		k := s.i / 16
		cur := s.r[k][0]
		for p := s.per; p > 0; p-- {
			cur += 64
			if cur >= s.r[k][1] {
				s.i += 16
				break
			}
			if p == 1 {
				s.r[k][0] = cur
			}
		}
	}
	return s
}

// dotRowsZModel is what dotRowsZ's kernels leave of s for rows rows: SIDE
// once a pass of two rows, asking for twice s.per lines, then once for an
// odd last row.
func dotRowsZModel(s sideLines, rows int) sideLines {
	if rows >= 2 {
		s.per *= 2
		s = sideModel(s, rows/2)
	}
	if rows%2 == 1 {
		s = sideModel(s, 1)
	}
	return s
}

// TestSideKernels: every AVX-512 decode kernel (two rows a pass, and one
// for an odd last row) moves the side cursors exactly as the Go model of
// SIDE does, and computes the same bits with side memory to warm as
// without.
func TestSideKernels(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this machine: the kernels under test do not run (their AVX2 twins take no side memory)")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, dt := range []DType{F32, BF16, F16} {
		for _, cols := range []int{256, 416, 576} {
			rows := 1 + r.IntN(40)
			w, _ := randMatrix(r, dt, rows, cols)
			x := randVec(r, cols)
			want := make([]float32, rows)
			w.dotRowsZ(want, 0, rows*cols, x, nil)
			for trial := range 50 {
				warm := randRanges(r)
				var s sideLines
				side := s.share(warm, 0, 1+r.IntN(rows), rows)
				if side == nil {
					continue
				}
				side.per = 1 + r.IntN(4) // also fewer lines a row than the share
				model := dotRowsZModel(*side, rows)
				got := make([]float32, rows)
				w.dotRowsZ(got, 0, rows*cols, x, side)
				name := fmt.Sprintf("%s %dx%d trial %d", dt, rows, cols, trial)
				checkEqual(t, name, got, want)
				if *side != model {
					t.Fatalf("%s: side after the kernel\n%+v\nwant\n%+v", name, *side, model)
				}
			}
		}
	}
}

// TestWarmProducts: products that warm memory compute the same bits as
// products that do not, on a pool of one or two threads and without one,
// for decode and for prefill (which warms nothing).
func TestWarmProducts(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	back := make([]float32, 10000)
	warm := [][]float32{back[10:400], back[1000:1001], back[5000:9000]}
	for _, dt := range []DType{F32, BF16, F16} {
		w, _ := randMatrix(r, dt, 300, 576)
		for _, n := range []int{1, 7} {
			x := randVec(r, n*576)
			want := make([]float32, n*300)
			MatMul(want, w, x)
			for _, threads := range []int{0, 1, 2} {
				var p *Pool
				if threads > 0 {
					p = NewPool(threads)
				}
				got := make([]float32, n*300)
				p.MatMuls(x, Product{Dst: got, W: w, Warm: warm})
				checkEqual(t, fmt.Sprintf("%s n=%d threads=%d", dt, n, threads), got, want)
				if p != nil {
					p.Close()
				}
			}
		}
	}
}
