package chat

import (
	"fmt"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// opSlice is x[start:stop:step] with Python's rules (negative indexes
// count from the end, None means the end, a negative step walks
// backwards) on a str (by character), list or tuple. The result is
// charged to the output budget before it is built.
func opSlice(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 4)
	if bad != nil {
		return bad
	}
	obj := args[0]
	var bounds [3]*int
	for i, v := range args[1:] {
		if isUndefined(v) || v.IsNil() {
			continue
		}
		n, ok := pyInt(v)
		if !ok {
			return errorValue(fmt.Errorf("TypeError: slice indices must be integers or None, not %s", typeName(v)))
		}
		bounds[i] = &n
	}
	step := 1
	if bounds[2] != nil {
		step = *bounds[2]
	}
	if step == 0 {
		return errorValue(fmt.Errorf("ValueError: slice step cannot be zero"))
	}
	st := stateOf(e.Environment.Context)
	switch {
	case isUndefined(obj) || obj.IsNil():
		return exec.AsValue(nil)
	case obj.IsString():
		s := obj.String()
		if step == 1 {
			n := utf8.RuneCountInString(s)
			lo, hi, _ := sliceIndexes(bounds[0], bounds[1], 1, n)
			sub, _ := runeSlice(s, exec.AsValue(lo), exec.AsValue(max(lo, hi)))
			return errorString(sub, st.charge("slicing [:]", len(sub)))
		}
		if err := st.fits("slicing [:]", sizeMul(5, len(s))); err != nil {
			return errorValue(err) // the characters of s, and the slice
		}
		runes := []rune(s)
		lo, _, count := sliceIndexes(bounds[0], bounds[1], step, len(runes))
		out := make([]rune, count)
		for i := range out {
			out[i] = runes[lo+i*step]
		}
		text := string(out)
		return errorString(text, st.charge("slicing [:]", len(text)))
	case obj.IsList():
		lo, _, count := sliceIndexes(bounds[0], bounds[1], step, obj.Len())
		if err := st.chargeItems("slicing [:]", count); err != nil {
			return errorValue(err)
		}
		out := make([]any, count)
		for i := range out {
			out[i] = obj.Index(lo + i*step).Interface()
		}
		if _, ok := obj.Interface().(tuple); ok {
			return exec.AsValue(tuple(out))
		}
		return exec.AsValue(out)
	}
	return errorValue(fmt.Errorf("TypeError: '%s' object is not subscriptable", typeName(obj)))
}

// sliceIndexes is Python's slice.indices for a sequence of n items: the
// first index, the clamped stop, and how many items the slice takes.
func sliceIndexes(start, stop *int, step, n int) (lo, hi, count int) {
	lower, upper := 0, n
	if step < 0 {
		lower, upper = -1, n-1
	}
	clamp := func(p *int, def int) int {
		if p == nil {
			return def
		}
		i := *p
		if i < 0 {
			return max(i+n, lower)
		}
		return min(i, upper)
	}
	if step > 0 {
		lo, hi = clamp(start, lower), clamp(stop, upper)
		if lo < hi {
			count = (hi-lo-1)/step + 1
		}
	} else {
		lo, hi = clamp(start, upper), clamp(stop, lower)
		if hi < lo {
			count = (lo-hi-1)/(-step) + 1
		}
	}
	return lo, hi, count
}
