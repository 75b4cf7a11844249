package chat

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Comparing and walking values. A template can cheaply build a list that
// holds one list a thousand times, which holds another a thousand times:
// each level costs a thousand items of the output budget, yet walking it
// item by item visits a billion. Equality, ordering and the namespace
// cycle check therefore remember the containers they have compared or
// visited, each known by where its items live, and so walk each one once.

// containerKey identifies a list or dict by its items' storage.
type containerKey struct {
	ptr uintptr
	n   int
}

// keyOf returns the key of the list or dict v holds; false for anything
// else (an empty list included: it has no storage to tell it by).
func keyOf(v any) (containerKey, bool) {
	if x, ok := v.(*exec.Value); ok {
		if x == nil || !x.Val.IsValid() || !x.Val.CanInterface() {
			return containerKey{}, false
		}
		v = x.Interface()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice:
		if rv.Len() > 0 {
			return containerKey{rv.Pointer(), rv.Len()}, true
		}
	case reflect.Map, reflect.Pointer:
		if !rv.IsNil() {
			return containerKey{rv.Pointer(), -1}, true
		}
	}
	return containerKey{}, false
}

// comparer compares values as Python does, remembering the pairs of
// containers it has compared.
type comparer struct {
	equal map[[2]containerKey]bool
	order map[[2]containerKey]int
}

// pairOf is the pair of containers a and b, the key of both memo tables;
// ok is false when a or b is not a container.
func pairOf(a, b *exec.Value) (pair [2]containerKey, ok bool) {
	ka, okA := keyOf(a)
	kb, okB := keyOf(b)
	return [2]containerKey{ka, kb}, okA && okB
}

// pyEqual is Python's a == b.
func pyEqual(a, b *exec.Value) bool {
	return (&comparer{}).eq(a, b, 0)
}

func (c *comparer) eq(a, b *exec.Value, depth int) bool {
	lists := !isUndefined(a) && !isUndefined(b) && a.IsList() && b.IsList()
	dicts := !isUndefined(a) && !isUndefined(b) && a.IsDict() && b.IsDict()
	if !lists && !dicts || depth > maxValueDepth {
		return a.EqualValueTo(b)
	}
	pair, known := pairOf(a, b)
	if known {
		if pair[0] == pair[1] {
			return true
		}
		if r, ok := c.equal[pair]; ok {
			return r
		}
	}
	r := true
	if lists {
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !c.eq(a.Index(i), b.Index(i), depth+1) {
				r = false
				break
			}
		}
	} else {
		pa, pb := dictPairs(a), dictPairs(b)
		if len(pa) != len(pb) {
			return false
		}
		for _, p := range pa {
			v, found := dictGet(b, p.Key)
			if !found || !c.eq(p.Value, v, depth+1) {
				r = false
				break
			}
		}
	}
	if known {
		if c.equal == nil {
			c.equal = map[[2]containerKey]bool{}
		}
		c.equal[pair] = r
	}
	return r
}

// pyCompare orders two values as Python's < does: numbers (bools
// included) by value, strings by code point (lower-cased unless
// caseSensitive), lists item by item.
func pyCompare(a, b *exec.Value, caseSensitive bool) (int, error) {
	return (&comparer{}).compare(a, b, caseSensitive, 0)
}

func (c *comparer) compare(a, b *exec.Value, caseSensitive bool, depth int) (int, error) {
	if x, ok := asNumber(a); ok {
		if y, ok := asNumber(b); ok {
			if !x.isFloat && !y.isFloat {
				return cmp.Compare(x.i, y.i), nil
			}
			return cmp.Compare(x.f, y.f), nil
		}
	}
	switch {
	case isUndefined(a) || isUndefined(b) || depth > maxValueDepth:
	case a.IsString() && b.IsString():
		x, y := a.String(), b.String()
		if !caseSensitive {
			x, y = pyLower(x), pyLower(y)
		}
		return strings.Compare(x, y), nil
	case a.IsList() && b.IsList():
		pair, known := pairOf(a, b)
		if known {
			if pair[0] == pair[1] {
				return 0, nil
			}
			if r, ok := c.order[pair]; ok {
				return r, nil
			}
		}
		r := cmp.Compare(a.Len(), b.Len())
		for i := range min(a.Len(), b.Len()) {
			v, err := c.compare(a.Index(i), b.Index(i), caseSensitive, depth+1)
			if err != nil {
				return 0, err
			}
			if v != 0 {
				r = v
				break
			}
		}
		if known {
			if c.order == nil {
				c.order = map[[2]containerKey]int{}
			}
			c.order[pair] = r
		}
		return r, nil
	}
	return 0, fmt.Errorf("'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))
}

// reaches reports whether target can be reached from v: storing v in target
// would then make a cycle, which printing and comparison would follow
// forever. Each container is visited once.
func reaches(v any, target namespace) bool {
	return (&walker{seen: map[containerKey]bool{}}).reaches(v, target, 0)
}

type walker struct {
	seen map[containerKey]bool
}

func (w *walker) reaches(v any, target namespace, depth int) bool {
	if depth > maxValueDepth {
		return true
	}
	if x, ok := v.(*exec.Value); ok {
		return x != nil && x.Val.IsValid() && x.Val.CanInterface() && w.reaches(x.Interface(), target, depth+1)
	}
	if key, ok := keyOf(v); ok {
		if w.seen[key] {
			return false
		}
		w.seen[key] = true
	}
	switch x := v.(type) {
	case namespace:
		if reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(target).UnsafePointer() {
			return true
		}
		for _, item := range x {
			if w.reaches(item, target, depth+1) {
				return true
			}
		}
	case *exec.Dict:
		for _, p := range x.Pairs {
			if w.reaches(p.Value, target, depth+1) {
				return true
			}
		}
	case map[string]any:
		for _, item := range x {
			if w.reaches(item, target, depth+1) {
				return true
			}
		}
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
			for i := range rv.Len() {
				if rv.Index(i).CanInterface() && w.reaches(rv.Index(i).Interface(), target, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

// opEqual is == and opNotEqual != (gonja's walk every item).
func opEqual(_ *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 2)
	if bad != nil {
		return bad
	}
	return exec.AsValue(pyEqual(args[0], args[1]))
}

func opNotEqual(_ *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 2)
	if bad != nil {
		return bad
	}
	return exec.AsValue(!pyEqual(args[0], args[1]))
}

// testEqual is the eq (equalto, ==) test and testNotEqual the ne (!=) one.
func testEqual(_ *exec.Context, in *exec.Value, params *exec.VarArgs) (bool, error) {
	if len(params.Args) != 1 {
		return false, fmt.Errorf("eq: expected one value to compare with")
	}
	return pyEqual(in, params.Args[0]), nil
}

func testNotEqual(ctx *exec.Context, in *exec.Value, params *exec.VarArgs) (bool, error) {
	equal, err := testEqual(ctx, in, params)
	return !equal, err
}
