package engine

import (
	"math"
	"slices"

	"tracer/engine/tensor"
)

// picker chooses sampled tokens; it keeps scratch space between steps so
// that a step allocates nothing.
type picker struct {
	ids []int32 // candidate ids, reordered in place
}

// exactMin is the least probability whose float64 sums are exact: a float32
// of at least 2^-29 is a multiple of 2^-52, and so is any sum of such
// numbers, which float64 holds exactly below 2. Cumulative sums of these
// probabilities do not depend on the order of the terms.
const exactMin = 0x1p-29

// pick chooses a token from probs with the uniform draw u: tokens are laid
// out by descending probability (ties by id) on [0, 1), and the token whose
// interval holds u is chosen. It returns the token and its interval. The
// reference (pickRef in the tests) sorts every kept token:
//
//	ids := kept tokens sorted by descending probability, ties by id
//	total := Σ probs (in id order, float64)
//	for each id in ids: lo, hi = hi, hi+probs[id]; if u·total < hi: return id, lo/total, hi/total
//
// pick returns the same token and the same bits in O(vocab) expected time:
// above exactMin the running sums are exact, so it selects the prefix of
// the order that holds u·total by partitioning around pivots, quickselect
// fashion, without sorting. A draw that lands among the tiny probabilities
// (or a distribution summing to 1.5 or more) falls back to the sort.
//
// NaN and negative entries count as 0. When nothing is left, no positive
// finite mass (every probability 0 or NaN, or one +Inf), pick returns
// ok = false: the caller stops the run rather than choose at random.
func (pk *picker) pick(probs []float32, u float64) (id int, lo, hi float64, ok bool) {
	var total float64
	pk.ids = pk.ids[:0]
	for i := 0; i < len(probs); {
		// Past blocks of zeros (most after a top-k or top-p): p > 0 is
		// p ≥ the smallest positive float32.
		i += tensor.SkipBelow(probs[i:], math.SmallestNonzeroFloat32)
		for end := min(i+32, len(probs)); i < end; i++ {
			if p := probs[i]; p > 0 {
				total += float64(p)
				if p >= exactMin {
					pk.ids = append(pk.ids, int32(i))
				}
			}
		}
	}
	if !(total > 0 && total <= math.MaxFloat64) {
		return 0, 0, 0, false
	}
	u = min(max(u, 0), 1) // a NaN u stays NaN and lands on the last token
	target := u * total
	if total < 1.5 {
		if id, lo, hi, ok := selectPrefix(pk.ids, probs, target); ok {
			return id, lo / total, hi / total, true
		}
	}
	id, lo, hi = pk.pickSorted(probs, target, total)
	return id, lo, hi, true
}

// selectPrefix finds, among ids (probabilities ≥ exactMin, summing below
// 2), the token at which the descending cumulative sum first exceeds
// target, and that sum before and after it. It reports false when the
// whole set sums to target or less.
func selectPrefix(ids []int32, probs []float32, target float64) (int, float64, float64, bool) {
	var acc float64 // exact mass of the tokens ranked before ids
	for len(ids) > 0 {
		pivot := median3(probs[ids[0]], probs[ids[len(ids)/2]], probs[ids[len(ids)-1]])
		// Three-way partition: [> pivot | == pivot | < pivot].
		lt, i, gt := 0, 0, len(ids)
		for i < gt {
			switch p := probs[ids[i]]; {
			case p > pivot:
				ids[lt], ids[i] = ids[i], ids[lt]
				lt++
				i++
			case p < pivot:
				gt--
				ids[i], ids[gt] = ids[gt], ids[i]
			default:
				i++
			}
		}
		var above float64
		for _, id := range ids[:lt] {
			above += float64(probs[id])
		}
		if acc+above > target {
			ids = ids[:lt]
			continue
		}
		acc += above
		eq := ids[lt:gt] // ties, ranked by id
		p := float64(pivot)
		if acc+float64(len(eq))*p > target {
			// The k-th smallest id of the ties, k the first with
			// acc + (k+1)·p > target (exact: every term is a multiple of 2^-52).
			k := int((target - acc) / p)
			for k > 0 && acc+float64(k)*p > target {
				k--
			}
			for acc+float64(k+1)*p <= target {
				k++
			}
			id := kthSmallest(eq, k)
			lo := acc + float64(k)*p
			return int(id), lo, lo + p, true
		}
		acc += float64(len(eq)) * p
		ids = ids[gt:]
	}
	return 0, 0, 0, false
}

func median3(a, b, c float32) float32 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}

// kthSmallest returns the k-th smallest (0-based) of v, reordering v: a
// quickselect, for token ids here and for scores in TopK.
func kthSmallest[T int32 | float32](v []T, k int) T {
	lo, hi := 0, len(v)-1
	for lo < hi {
		pivot := v[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

// pickSorted is the reference walk over every kept token in sorted order,
// for draws past the exact range. total must be positive: then some
// probability is positive and the list is not empty.
func (pk *picker) pickSorted(probs []float32, target, total float64) (int, float64, float64) {
	pk.ids = pk.ids[:0]
	for i, p := range probs {
		if p > 0 {
			pk.ids = append(pk.ids, int32(i))
		}
	}
	slices.SortFunc(pk.ids, func(a, b int32) int {
		switch {
		case probs[a] > probs[b]:
			return -1
		case probs[a] < probs[b]:
			return 1
		}
		return int(a - b)
	})
	var lo, hi float64
	for _, i := range pk.ids {
		lo, hi = hi, hi+float64(probs[i])
		if target < hi {
			return int(i), lo / total, hi / total
		}
	}
	last := pk.ids[len(pk.ids)-1]
	return int(last), (hi - float64(probs[last])) / total, 1
}
