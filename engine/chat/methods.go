package chat

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// Methods callable on values, as x.strip() or d.items(). The immutable
// sandbox transformers uses allows the non-mutating methods of str, dict
// and list; list.append and dict.update fail there, and fail here.

// strMethod is a method of str: self is the receiver, st the render whose
// budget any string or list it builds is charged to.
type strMethod func(st *renderState, self string, args *exec.VarArgs) (any, error)

// valueMethod is a method of list or dict.
type valueMethod func(st *renderState, self *exec.Value, args *exec.VarArgs) (any, error)

// methodTables are the methods templates can call, by receiver type.
// Calls reach them through the method helper (calls.go), never through
// gonja's method sets, so that each one sees the render's budget.
type methodTables struct {
	str  map[string]strMethod
	list map[string]valueMethod
	dict map[string]valueMethod
}

func newMethodTables() *methodTables {
	return &methodTables{str: strMethods(), list: listMethods(), dict: dictMethods()}
}

func strMethods() map[string]strMethod {
	methods := map[string]strMethod{
		"strip":      stripMethod("strip", true, true),
		"lstrip":     stripMethod("lstrip", true, false),
		"rstrip":     stripMethod("rstrip", false, true),
		"split":      splitMethod("split", false),
		"rsplit":     splitMethod("rsplit", true),
		"startswith": affixMethod("startswith", strings.HasPrefix),
		"endswith":   affixMethod("endswith", strings.HasSuffix),
		"upper":      caseMethod("upper", pyUpper),
		"lower":      caseMethod("lower", pyLower),
		"title":      caseMethod("title", pyTitle),
		"capitalize": caseMethod("capitalize", pyCapitalize),
		"replace":    replaceMethod,
		"join":       joinMethod,
		"count":      countMethod,
		"center":     padMethod("center"),
		"ljust":      padMethod("ljust"),
		"rjust":      padMethod("rjust"),
		"zfill":      zfillMethod,
		"partition":  partitionMethod("partition", strings.Cut),
		"rpartition": partitionMethod("rpartition", cutLast),
	}
	for name, bound := range gonjaStrMethods {
		if m, ok := builtins.Methods.Str.Get(name); ok {
			methods[name] = boundedMethod(name, m, bound)
		}
	}
	return methods
}

func stripMethod(name string, left, right bool) strMethod {
	return func(_ *renderState, self string, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name, "chars"); err != nil {
			return nil, err
		}
		var chars *string
		if v := kwarg(args, 0, "chars"); v != nil && !v.IsNil() {
			if !v.IsString() {
				return nil, fmt.Errorf("%s arg must be None or str", name)
			}
			s := v.String()
			chars = &s
		}
		return pyStrip(self, chars, left, right), nil
	}
}

func splitMethod(name string, fromRight bool) strMethod {
	return func(st *renderState, self string, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name, "sep", "maxsplit"); err != nil {
			return nil, err
		}
		var sep *string
		if v := kwarg(args, 0, "sep"); v != nil && !v.IsNil() {
			if !v.IsString() {
				return nil, fmt.Errorf("must be str or None, not %s", typeName(v))
			}
			s := v.String()
			sep = &s
		}
		maxsplit := -1
		if v := kwarg(args, 1, "maxsplit"); v != nil {
			n, ok := pyInt(v)
			if !ok {
				return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(v))
			}
			maxsplit = n
		}
		// At most one part more than separators, or than maxsplit; the
		// parts are held twice, as []string and as the []any returned.
		parts := len(self)/2 + 1
		if sep != nil && *sep != "" {
			parts = strings.Count(self, *sep) + 1
		}
		if maxsplit >= 0 {
			parts = min(parts, maxsplit+1)
		}
		if err := st.chargeItems("str."+name+"()", sizeMul(2, parts)); err != nil {
			return nil, err
		}
		split, err := pySplit(self, sep, maxsplit, fromRight)
		if err != nil {
			return nil, err
		}
		list := make([]any, len(split))
		for i, p := range split {
			list[i] = p
		}
		return list, nil
	}
}

// affixMethod is startswith/endswith(affix, start=None, end=None), where
// affix may be a tuple of strings.
func affixMethod(name string, has func(s, affix string) bool) strMethod {
	return func(_ *renderState, self string, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name, "affix", "start", "end"); err != nil {
			return nil, err
		}
		affix := kwarg(args, 0, "affix")
		if affix == nil {
			return nil, fmt.Errorf("%s() takes at least 1 argument (0 given)", name)
		}
		s, ok := runeSlice(self, kwarg(args, 1, "start"), kwarg(args, 2, "end"))
		if !ok {
			return false, nil
		}
		var affixes []*exec.Value
		if affix.IsList() {
			affixes = iterate(affix)
		} else {
			affixes = []*exec.Value{affix}
		}
		for _, a := range affixes {
			if !a.IsString() {
				return nil, fmt.Errorf("%s first arg must be str or a tuple of str, not %s", name, typeName(a))
			}
			if has(s, a.String()) {
				return true, nil
			}
		}
		return false, nil
	}
}

// runeSlice is s[start:end] in characters, as Python slices a str, with
// start and end None or absent for the ends; false when the slice is empty
// because start passes end. It copies nothing.
func runeSlice(s string, start, end *exec.Value) (string, bool) {
	if (start == nil || start.IsNil()) && (end == nil || end.IsNil()) {
		return s, true
	}
	n := utf8.RuneCountInString(s)
	lo, hi := 0, n
	if start != nil && !start.IsNil() {
		lo, _ = pyInt(start)
	}
	if end != nil && !end.IsNil() {
		hi, _ = pyInt(end)
	}
	lo, hi = sliceBounds(lo, hi, n)
	if lo > hi {
		return "", false
	}
	// Byte offsets of the lo-th and hi-th characters.
	from, to, i := len(s), len(s), 0
	for offset := range s {
		if i == lo {
			from = offset
		}
		if i == hi {
			to = offset
			break
		}
		i++
	}
	return s[from:to], true
}

// sliceBounds clamps Python slice indexes (negative from the end) to [0, n].
func sliceBounds(lo, hi, n int) (int, int) {
	clamp := func(i int) int {
		if i < 0 {
			i += n
		}
		return max(0, min(i, n))
	}
	return clamp(lo), clamp(hi)
}

func caseMethod(name string, f func(string) string) strMethod {
	in := "str." + name + "()"
	return func(st *renderState, self string, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name); err != nil {
			return nil, err
		}
		return mapCase(st, in, self, f)
	}
}

// mapCase applies a case mapping once its largest result fits the budget.
func mapCase(st *renderState, in, s string, f func(string) string) (string, error) {
	if err := st.fits(in, caseBound(st, s, nil)); err != nil {
		return "", err
	}
	out := f(s)
	return out, st.charge(in, len(out))
}

func replaceMethod(st *renderState, self string, args *exec.VarArgs) (any, error) {
	if err := checkParams(args, "replace", "old", "new", "count"); err != nil {
		return nil, err
	}
	old, repl := kwarg(args, 0, "old"), kwarg(args, 1, "new")
	if old == nil || repl == nil || !old.IsString() || !repl.IsString() {
		return nil, fmt.Errorf("replace() needs two str arguments")
	}
	count := -1
	if v := kwarg(args, 2, "count"); v != nil {
		count, _ = pyInt(v)
	}
	n := strings.Count(self, old.String())
	if old.String() == "" {
		n = utf8.RuneCountInString(self) + 1
	}
	if count >= 0 {
		n = min(n, count)
	}
	if err := st.charge("str.replace()", replacedSize(self, old.String(), repl.String(), n)); err != nil {
		return nil, err
	}
	return strings.Replace(self, old.String(), repl.String(), count), nil
}

// joinMethod is sep.join(items): every item must be a str.
func joinMethod(st *renderState, self string, args *exec.VarArgs) (any, error) {
	if err := checkParams(args, "join", "iterable"); err != nil {
		return nil, err
	}
	items := kwarg(args, 0, "iterable")
	if items == nil {
		return nil, fmt.Errorf("join() takes exactly one argument (0 given)")
	}
	list := iterate(items)
	parts := make([]string, len(list))
	for i, item := range list {
		if !item.IsString() {
			return nil, fmt.Errorf("sequence item %d: expected str instance, %s found", i, typeName(item))
		}
		parts[i] = item.String()
	}
	return joinStrings(st, "str.join()", parts, self)
}

// dictColumn is the list of one side of d's pairs, keys or values, in
// order; in names the method for the budget.
func dictColumn(st *renderState, in string, d *exec.Value, side func(*exec.Pair) *exec.Value) ([]any, error) {
	pairs := dictPairs(d)
	if err := st.chargeItems(in, len(pairs)); err != nil {
		return nil, err
	}
	out := make([]any, len(pairs))
	for i, p := range pairs {
		out[i] = side(p).Interface()
	}
	return out, nil
}

// dictMethods read the dict in order through the receiver value (gonja's
// Go map copy would lose the order).
func dictMethods() map[string]valueMethod {
	return map[string]valueMethod{
		"items": func(st *renderState, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "items"); err != nil {
				return nil, err
			}
			return itemPairs(st, "dict.items()", d)
		},
		"keys": func(st *renderState, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "keys"); err != nil {
				return nil, err
			}
			return dictColumn(st, "dict.keys()", d, func(p *exec.Pair) *exec.Value { return p.Key })
		},
		"values": func(st *renderState, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "values"); err != nil {
				return nil, err
			}
			return dictColumn(st, "dict.values()", d, func(p *exec.Pair) *exec.Value { return p.Value })
		},
		"get": func(_ *renderState, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "get", "key", "default"); err != nil {
				return nil, err
			}
			key := kwarg(args, 0, "key")
			if key == nil {
				return nil, fmt.Errorf("get expected at least 1 argument, got 0")
			}
			if v, ok := dictGet(d, key); ok {
				return v.Interface(), nil
			}
			if def := kwarg(args, 1, "default"); def != nil {
				return def.Interface(), nil
			}
			return noneValue, nil
		},
		"copy": func(st *renderState, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "copy"); err != nil {
				return nil, err
			}
			pairs := dictPairs(d)
			if err := st.chargeItems("dict.copy()", len(pairs)); err != nil {
				return nil, err
			}
			return &exec.Dict{Pairs: slices.Clone(pairs)}, nil
		},
	}
}

// listMethods are the non-mutating list methods: count, index, copy.
func listMethods() map[string]valueMethod {
	return map[string]valueMethod{
		"count": func(_ *renderState, l *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "count", "value"); err != nil || len(args.Args) != 1 {
				return nil, fmt.Errorf("count() takes exactly one argument")
			}
			n := 0
			for i := range l.Len() {
				if pyEqual(l.Index(i), args.Args[0]) {
					n++
				}
			}
			return n, nil
		},
		"index": func(_ *renderState, l *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "index", "value"); err != nil || len(args.Args) != 1 {
				return nil, fmt.Errorf("index() takes exactly one argument")
			}
			for i := range l.Len() {
				if pyEqual(l.Index(i), args.Args[0]) {
					return i, nil
				}
			}
			return nil, fmt.Errorf("ValueError: %s is not in list", shortRepr(args.Args[0]))
		},
		"copy": func(st *renderState, l *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "copy"); err != nil {
				return nil, err
			}
			return copyList(st, "list.copy()", l)
		},
	}
}

// copyList copies a list's items into a new one, charged to the budget.
func copyList(st *renderState, in string, l *exec.Value) ([]any, error) {
	if err := st.chargeItems(in, l.Len()); err != nil {
		return nil, err
	}
	out := make([]any, l.Len())
	for i := range out {
		out[i] = l.Index(i).Interface()
	}
	return out, nil
}

// countMethod is str.count(sub, start=None, end=None).
func countMethod(_ *renderState, self string, args *exec.VarArgs) (any, error) {
	if err := checkParams(args, "count", "sub", "start", "end"); err != nil {
		return nil, err
	}
	sub := kwarg(args, 0, "sub")
	if sub == nil || !sub.IsString() {
		return nil, fmt.Errorf("count() needs a str argument")
	}
	s, ok := runeSlice(self, kwarg(args, 1, "start"), kwarg(args, 2, "end"))
	if !ok {
		return 0, nil
	}
	if sub.String() == "" {
		return utf8.RuneCountInString(s) + 1, nil
	}
	return strings.Count(s, sub.String()), nil
}

// padMethod is str.center/ljust/rjust(width, fillchar=' ').
func padMethod(name string) strMethod {
	return func(st *renderState, self string, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name, "width", "fillchar"); err != nil {
			return nil, err
		}
		width, ok := pyInt(kwarg(args, 0, "width"))
		if !ok {
			return nil, fmt.Errorf("%s() needs an integer width", name)
		}
		fill := " "
		if v := kwarg(args, 1, "fillchar"); v != nil {
			if !v.IsString() || utf8.RuneCountInString(v.String()) != 1 {
				return nil, fmt.Errorf("The fill character must be exactly one character long")
			}
			fill = v.String()
		}
		return pad(st, "str."+name+"()", name, self, width, fill)
	}
}

// pad is str.center/ljust/rjust: self padded with fill (one character) to
// width characters, charged before it is built.
func pad(st *renderState, in, how, self string, width int, fill string) (string, error) {
	margin := width - utf8.RuneCountInString(self)
	if margin <= 0 {
		return self, nil
	}
	if err := st.charge(in, sizeAdd(len(self), sizeMul(margin, len(fill)))); err != nil {
		return "", err
	}
	left := 0
	switch how {
	case "center":
		left = margin/2 + (margin & width & 1) // as CPython
	case "rjust":
		left = margin
	}
	return strings.Repeat(fill, left) + self + strings.Repeat(fill, margin-left), nil
}

// zfillMethod is str.zfill(width): zeros after any sign.
func zfillMethod(st *renderState, self string, args *exec.VarArgs) (any, error) {
	if err := checkParams(args, "zfill", "width"); err != nil {
		return nil, err
	}
	width, ok := pyInt(kwarg(args, 0, "width"))
	if !ok {
		return nil, fmt.Errorf("zfill() needs an integer width")
	}
	margin := width - utf8.RuneCountInString(self)
	if margin <= 0 {
		return self, nil
	}
	if err := st.charge("str.zfill()", sizeAdd(len(self), margin)); err != nil {
		return nil, err
	}
	sign := ""
	if strings.HasPrefix(self, "+") || strings.HasPrefix(self, "-") {
		sign, self = self[:1], self[1:]
	}
	return sign + strings.Repeat("0", margin) + self, nil
}

// partitionMethod is str.partition/rpartition(sep): a 3-tuple.
func partitionMethod(name string, cut func(s, sep string) (string, string, bool)) strMethod {
	return func(st *renderState, self string, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name, "sep"); err != nil {
			return nil, err
		}
		sep := kwarg(args, 0, "sep")
		if sep == nil || !sep.IsString() || sep.String() == "" {
			return nil, fmt.Errorf("%s() needs a non-empty str separator", name)
		}
		if err := st.chargeItems("str."+name+"()", 3); err != nil {
			return nil, err
		}
		before, after, found := cut(self, sep.String())
		switch {
		case found:
			return tuple{before, sep.String(), after}, nil
		case name == "partition":
			return tuple{self, "", ""}, nil
		}
		return tuple{"", "", self}, nil
	}
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
