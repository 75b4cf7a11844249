package chat

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Filters and tests that replace gonja's where Jinja (or transformers)
// behaves differently. The others are gonja's own.

// kwarg takes the i-th positional or the named argument, as Python binds
// them; nil when absent.
func kwarg(params *exec.VarArgs, i int, name string) *exec.Value {
	if i >= 0 && i < len(params.Args) {
		return params.Args[i]
	}
	return params.KwArgs[name]
}

// checkParams rejects arguments beyond the named ones.
func checkParams(params *exec.VarArgs, filter string, names ...string) error {
	if len(params.Args) > len(names) {
		return fmt.Errorf("%s() takes at most %d arguments (%d given)", filter, len(names), len(params.Args))
	}
	for k := range params.KwArgs {
		found := false
		for i, name := range names {
			if name == k {
				if i < len(params.Args) {
					return fmt.Errorf("%s() got multiple values for argument '%s'", filter, k)
				}
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s() got an unexpected keyword argument '%s'", filter, k)
		}
	}
	return nil
}

func errorValue(err error) *exec.Value { return exec.AsValue(err) }

// filterToJSON is transformers' tojson: json.dumps(x, ensure_ascii=False,
// indent=None, separators=None, sort_keys=False), so ", " and ": "
// separators, no HTML escaping, keys in order.
func filterToJSON(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	st := stateOf(e.Environment.Context)
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "tojson", "ensure_ascii", "indent", "separators", "sort_keys"); err != nil {
		return errorValue(err)
	}
	opts := jsonOptions{itemSep: ", ", keySep: ": "}
	if v := kwarg(params, 0, "ensure_ascii"); v != nil {
		opts.ensureASCII = v.IsTrue()
	}
	if v := kwarg(params, 1, "indent"); v != nil && !v.IsNil() {
		opts.hasIndent = true
		opts.itemSep = ","
		switch {
		case v.IsString():
			opts.indent = v.String()
		case v.IsInteger():
			if err := st.fits("filter tojson", v.Integer()); err != nil {
				return errorValue(err)
			}
			opts.indent = strings.Repeat(" ", max(0, v.Integer()))
		default:
			return errorValue(fmt.Errorf("tojson: indent must be an int or a string, not %s", typeName(v)))
		}
	}
	if v := kwarg(params, 2, "separators"); v != nil && !v.IsNil() {
		if !v.IsList() || v.Len() != 2 || !v.Index(0).IsString() || !v.Index(1).IsString() {
			return errorValue(fmt.Errorf("tojson: separators must be a pair of strings"))
		}
		opts.itemSep, opts.keySep = v.Index(0).String(), v.Index(1).String()
	}
	if v := kwarg(params, 3, "sort_keys"); v != nil {
		opts.sortKeys = v.IsTrue()
	}
	if isUndefined(in) {
		return errorValue(fmt.Errorf("tojson: Object of type Undefined is not JSON serializable"))
	}
	b := st.builder()
	if err := writeJSON(b, in, opts, 0); err != nil {
		return errorValue(err)
	}
	return errorString(st.finish("filter tojson", b))
}

// filterItems is Jinja's items: a mapping's (key, value) pairs in order.
func filterItems(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "items"); err != nil {
		return errorValue(err)
	}
	if isUndefined(in) {
		return exec.AsValue([]any{})
	}
	if !in.IsDict() {
		return errorValue(fmt.Errorf("items: can only get item pairs from a mapping, not %s", typeName(in)))
	}
	items, err := itemPairs(stateOf(e.Environment.Context), "filter items", in)
	if err != nil {
		return errorValue(err)
	}
	return exec.AsValue(items)
}

// itemPairs lists a dict's (key, value) pairs, each a 2-tuple: three list
// items to the budget.
func itemPairs(st *renderState, in string, d *exec.Value) ([]any, error) {
	pairs := dictPairs(d)
	if err := st.chargeItems(in, sizeMul(3, len(pairs))); err != nil {
		return nil, err
	}
	items := make([]any, len(pairs))
	for i, p := range pairs {
		items[i] = tuple{p.Key.Interface(), p.Value.Interface()}
	}
	return items, nil
}

// filterTrim is Jinja's trim: str.strip(chars).
func filterTrim(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "trim", "chars"); err != nil {
		return errorValue(err)
	}
	var chars *string
	if v := kwarg(params, 0, "chars"); v != nil && !v.IsNil() {
		s := v.String()
		chars = &s
	}
	s, err := stateOf(e.Environment.Context).str("filter trim", in)
	if err != nil {
		return errorValue(err)
	}
	return exec.AsValue(pyStrip(s, chars, true, true))
}

// filterDefault is Jinja's default: the default replaces Undefined (and,
// with boolean=True, any false value), not None.
func filterDefault(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if err := checkParams(params, "default", "default_value", "boolean"); err != nil {
		return errorValue(err)
	}
	def := kwarg(params, 0, "default_value")
	if def == nil {
		def = exec.AsValue("")
	}
	boolean := kwarg(params, 1, "boolean")
	if isUndefined(in) || in.IsError() || boolean != nil && boolean.IsTrue() && !in.IsTrue() {
		return def
	}
	return in
}

// filterString is str().
func filterString(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "string"); err != nil {
		return errorValue(err)
	}
	return errorString(stateOf(e.Environment.Context).str("filter string", in))
}

// filterJoin is Jinja's join(d="", attribute=None): str() of each item.
func filterJoin(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "join", "d", "attribute"); err != nil {
		return errorValue(err)
	}
	st := stateOf(e.Environment.Context)
	sep := ""
	if v := kwarg(params, 0, "d"); v != nil {
		s, err := st.str("filter join", v)
		if err != nil {
			return errorValue(err)
		}
		sep = s
	}
	attribute := kwarg(params, 1, "attribute")
	var parts []string
	for _, item := range iterate(in) {
		if attribute != nil && !attribute.IsNil() {
			item = attributeOf(item, attribute)
		}
		s, err := st.str("filter join", item)
		if err != nil {
			return errorValue(err)
		}
		parts = append(parts, s)
	}
	return errorString(joinStrings(st, "filter join", parts, sep))
}

// iterate lists what a for loop over v visits: items of a list, keys of a
// dict, characters of a string.
func iterate(v *exec.Value) []*exec.Value {
	var out []*exec.Value
	if isUndefined(v) || v.IsNil() {
		return nil
	}
	v.Iterate(func(_, _ int, key, _ *exec.Value) bool {
		out = append(out, key)
		return true
	}, func() {})
	return out
}

// attributeOf resolves Jinja's attribute="a.b" or attribute=0 lookups.
func attributeOf(item, attribute *exec.Value) *exec.Value {
	if !attribute.IsString() {
		return opGetItem(nil, &exec.VarArgs{Args: []*exec.Value{item, attribute}})
	}
	for part := range strings.SplitSeq(attribute.String(), ".") {
		if isUndefined(item) {
			return item
		}
		item = opGetItem(nil, &exec.VarArgs{Args: []*exec.Value{item, exec.AsValue(part)}})
	}
	return item
}

func stringFilter(name string, f func(string) string) exec.FilterFunction {
	in := "filter " + name
	return func(e *exec.Evaluator, v *exec.Value, params *exec.VarArgs) *exec.Value {
		if v.IsError() {
			return v
		}
		if err := checkParams(params, name); err != nil {
			return errorValue(err)
		}
		st := stateOf(e.Environment.Context)
		s, err := st.str(in, v)
		if err != nil {
			return errorValue(err)
		}
		return errorString(mapCase(st, in, s, f))
	}
}

// testDefined is Jinja's defined: false only for Undefined (None is
// defined).
func testDefined(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
	return !isUndefined(in) && !in.IsError(), nil
}

func testUndefined(ctx *exec.Context, in *exec.Value, params *exec.VarArgs) (bool, error) {
	defined, err := testDefined(ctx, in, params)
	return !defined, err
}

func testNone(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
	return isNone(in), nil
}

// testMapping: dicts are mappings; namespaces are not.
func testMapping(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
	_, ns := in.Interface().(namespace)
	return !isUndefined(in) && in.IsDict() && !ns, nil
}

// testNumber: Python numbers include bools.
func testNumber(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
	return !isUndefined(in) && (in.IsNumber() || in.IsBool()), nil
}

// testSequence: anything with a length and items (str, list, dict).
func testSequence(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
	return !isUndefined(in) && (in.IsString() || in.IsList() || in.IsDict()), nil
}

// testIterable: str, list and dict.
func testIterable(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
	return !isUndefined(in) && (in.IsString() || in.IsList() || in.IsDict()), nil
}

func testTrue(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
	return !isUndefined(in) && in.IsBool() && in.Bool(), nil
}

func testFalse(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
	return !isUndefined(in) && in.IsBool() && !in.Bool(), nil
}

// filterDictSort is Jinja's dictsort(case_sensitive=False, by="key",
// reverse=False): the (key, value) pairs sorted.
func filterDictSort(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "dictsort", "case_sensitive", "by", "reverse"); err != nil {
		return errorValue(err)
	}
	if isUndefined(in) || !in.IsDict() {
		return errorValue(fmt.Errorf("dictsort: expected a mapping, not %s", typeName(in)))
	}
	caseSensitive, reverse, byValue := false, false, false
	if v := kwarg(params, 0, "case_sensitive"); v != nil {
		caseSensitive = v.IsTrue()
	}
	if v := kwarg(params, 1, "by"); v != nil {
		switch v.String() {
		case "key":
		case "value":
			byValue = true
		default:
			return errorValue(fmt.Errorf("dictsort: you can only sort by either 'key' or 'value'"))
		}
	}
	if v := kwarg(params, 2, "reverse"); v != nil {
		reverse = v.IsTrue()
	}
	if err := stateOf(e.Environment.Context).chargeItems("filter dictsort", sizeMul(4, len(dictPairs(in)))); err != nil {
		return errorValue(err) // a copy of the pairs, and a 2-tuple for each
	}
	pairs := slices.Clone(dictPairs(in))
	var sortErr error
	slices.SortStableFunc(pairs, func(a, b *exec.Pair) int {
		x, y := a.Key, b.Key
		if byValue {
			x, y = a.Value, b.Value
		}
		c, err := pyCompare(x, y, caseSensitive)
		if err != nil {
			sortErr = err
		}
		if reverse {
			return -c
		}
		return c
	})
	if sortErr != nil {
		return errorValue(sortErr)
	}
	items := make([]any, len(pairs))
	for i, p := range pairs {
		items[i] = tuple{p.Key.Interface(), p.Value.Interface()}
	}
	return exec.AsValue(items)
}

// extremeFilter is Jinja's min/max(case_sensitive=False, attribute=None):
// the smallest (sign -1) or largest (sign 1) item, compared by attribute
// when given; Undefined for an empty sequence.
func extremeFilter(name string, sign int) exec.FilterFunction {
	return func(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		if err := checkParams(params, name, "case_sensitive", "attribute"); err != nil {
			return errorValue(err)
		}
		caseSensitive := false
		if v := kwarg(params, 0, "case_sensitive"); v != nil {
			caseSensitive = v.IsTrue()
		}
		attribute := kwarg(params, 1, "attribute")
		key := func(item *exec.Value) *exec.Value {
			if attribute != nil && !attribute.IsNil() {
				return attributeOf(item, attribute)
			}
			return item
		}
		var best *exec.Value
		for _, item := range iterate(in) {
			if best == nil {
				best = item
				continue
			}
			c, err := pyCompare(key(item), key(best), caseSensitive)
			if err != nil {
				return errorValue(err)
			}
			if c*sign > 0 {
				best = item
			}
		}
		if best == nil {
			return exec.AsValue(nil)
		}
		return best
	}
}

// filterRound is Jinja's round(precision=0, method="common"): Python's
// round (half to even on the binary value), or floor or ceil; a float.
func filterRound(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "round", "precision", "method"); err != nil {
		return errorValue(err)
	}
	x, ok := asNumber(in)
	if !ok {
		return errorValue(fmt.Errorf("round: must be a real number, not %s", typeName(in)))
	}
	precision := 0
	if v := kwarg(params, 0, "precision"); v != nil {
		precision, _ = pyInt(v)
	}
	method := "common"
	if v := kwarg(params, 1, "method"); v != nil {
		method = v.String()
	}
	scale := math.Pow(10, float64(precision))
	switch method {
	case "common":
		if precision < 0 || precision > 300 {
			return exec.AsValue(math.RoundToEven(x.f*scale) / scale)
		}
		r, _ := strconv.ParseFloat(strconv.FormatFloat(x.f, 'f', precision, 64), 64)
		return exec.AsValue(r)
	case "floor":
		return exec.AsValue(math.Floor(x.f*scale) / scale)
	case "ceil":
		return exec.AsValue(math.Ceil(x.f*scale) / scale)
	}
	return errorValue(fmt.Errorf("round: method must be 'common', 'ceil' or 'floor'"))
}

// filterReverse is Jinja's reverse: a string reversed, or the items of a
// sequence in reverse order.
func filterReverse(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "reverse"); err != nil {
		return errorValue(err)
	}
	st := stateOf(e.Environment.Context)
	if in.IsString() {
		if err := st.charge("filter reverse", len(in.String())); err != nil {
			return errorValue(err)
		}
		runes := []rune(in.String())
		slices.Reverse(runes)
		return exec.AsValue(string(runes))
	}
	if err := st.chargeItems("filter reverse", in.Len()); err != nil {
		return errorValue(err)
	}
	items := iterate(in)
	out := make([]any, len(items))
	for i, item := range items {
		out[len(items)-1-i] = item.Interface()
	}
	return exec.AsValue(out)
}
