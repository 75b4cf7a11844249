package tensor

import "unsafe"

// A decode step reads each weight once, in sequential streams that the
// hardware prefetchers follow at the machine's read bandwidth. Attention
// then reads the layer's cached keys and values: short runs (a few KiB
// per kv head), cold in memory after megabytes of weights streamed
// through the caches, which the prefetchers hardly get going on. In
// SmolLM2-135M's decode on our AMD EPYC they came at about 14 GB/s, and
// attention took 5 % of the step, three times its share of the bytes;
// asked for all at once just before (prefetchLines), they came no faster:
// the core holds only so many misses in flight. So a product can take
// memory to warm (Product.Warm): the decode kernels ask for a few of its
// lines at the start of each weight row, and they arrive while the
// weights stream. The k and v projections of a layer warm its cache
// (arch's warmKV): measured with the two alternating in one process,
// attention went from 600 to 295 µs a token and the whole step 1 to 1.6 %
// faster with bfloat16 weights; with float32 ones attention went from 640
// to 400 µs and the step was the same within 0.3 %, the projections
// slowed by what attention saved.

// maxSideRanges bounds the ranges of memory one product warms; a product
// given more warms none (it is a hint).
const maxSideRanges = 16

// sideLines is what one decode kernel call asks the caches for, read and
// moved on by the assembly (SIDE in kernels_avx512_amd64.s, which relies
// on this layout: per at 0, i at 8, n at 16, r at 24): ranges of
// 64-byte-aligned addresses, side.per lines at the start of each weight
// row, from range i/16 on.
type sideLines struct {
	per  int                       // lines a weight row asks for, at least 1
	i, n int                       // byte offsets into r: the current range, and the end (16 a range)
	r    [maxSideRanges][2]uintptr // each range's cursor and end, multiples of 64
}

// warmLines counts the 64-byte lines that warm's ranges touch, or returns -1
// when there are more ranges than a kernel call takes.
func warmLines(warm [][]float32) int {
	if len(warm) > maxSideRanges {
		return -1
	}
	total := 0
	for _, r := range warm {
		if len(r) > 0 {
			a, b := lineSpan(r)
			total += int(b-a) / 64
		}
	}
	return total
}

// lineSpan is the 64-byte-aligned span of addresses [a, b) that holds r
// (not empty).
func lineSpan(r []float32) (a, b uintptr) {
	start := uintptr(unsafe.Pointer(&r[0]))
	end := start + uintptr(len(r))*4
	return start &^ 63, (end + 63) &^ 63
}

// share sets s to the part of warm's lines that weight rows [r0, r1) of a
// product with rows rows ask for: lines [L·r0/rows, L·r1/rows) of the L
// lines of warm taken in order, ceil(L/rows) a row, so that the pieces of
// a product split over a pool each warm their own lines and together
// every line once. It returns s, or nil when there is nothing to ask for.
func (s *sideLines) share(warm [][]float32, r0, r1, rows int) *sideLines {
	total := warmLines(warm)
	if total <= 0 || r0 >= r1 || rows <= 0 {
		return nil
	}
	from, to := total*r0/rows, total*r1/rows
	*s = sideLines{per: (total + rows - 1) / rows}
	at := 0 // lines before the current range
	for _, r := range warm {
		if len(r) == 0 {
			continue
		}
		a, b := lineSpan(r)
		n := int(b-a) / 64
		lo, hi := max(from, at), min(to, at+n)
		if lo < hi {
			s.r[s.n/16] = [2]uintptr{a + uintptr(lo-at)*64, a + uintptr(hi-at)*64}
			s.n += 16
		}
		at += n
	}
	if s.n == 0 {
		return nil
	}
	return s
}
