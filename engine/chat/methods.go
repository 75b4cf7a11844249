package chat

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// Methods callable on values, as x.strip() or d.items(). The immutable
// sandbox transformers uses allows the non-mutating methods of str, dict
// and list; list.append and dict.update fail there, and fail here.

// gonjaStrMethods are the str methods taken from gonja as they are.
var gonjaStrMethods = []string{
	"casefold", "encode", "expandtabs", "find", "format", "format_map",
	"isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "islower",
	"isnumeric", "isprintable", "isspace", "istitle", "isupper",
	"removeprefix", "removesuffix", "rfind", "splitlines", "swapcase",
}

func strMethods() *exec.MethodSet[string] {
	methods := map[string]exec.Method[string]{
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
	for _, name := range gonjaStrMethods {
		if m, ok := builtins.Methods.Str.Get(name); ok {
			methods[name] = boundedMethod(m)
		}
	}
	return exec.NewMethodSet(methods)
}

// boundedMethod refuses integer arguments (widths) that would build a
// string past maxValueBytes.
func boundedMethod(m exec.Method[string]) exec.Method[string] {
	return func(self string, selfValue *exec.Value, args *exec.VarArgs) (any, error) {
		for _, a := range args.Args {
			if a.IsInteger() && a.Integer() > maxValueBytes {
				return nil, fmt.Errorf("argument %d is too large", a.Integer())
			}
		}
		return m(self, selfValue, args)
	}
}

func stripMethod(name string, left, right bool) exec.Method[string] {
	return func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
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

func splitMethod(name string, fromRight bool) exec.Method[string] {
	return func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
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
		parts, err := pySplit(self, sep, maxsplit, fromRight)
		if err != nil {
			return nil, err
		}
		list := make([]any, len(parts))
		for i, p := range parts {
			list[i] = p
		}
		return list, nil
	}
}

// affixMethod is startswith/endswith(affix, start=None, end=None), where
// affix may be a tuple of strings.
func affixMethod(name string, has func(s, affix string) bool) exec.Method[string] {
	return func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name, "affix", "start", "end"); err != nil {
			return nil, err
		}
		affix := kwarg(args, 0, "affix")
		if affix == nil {
			return nil, fmt.Errorf("%s() takes at least 1 argument (0 given)", name)
		}
		runes := []rune(self)
		lo, hi := 0, len(runes)
		if v := kwarg(args, 1, "start"); v != nil && !v.IsNil() {
			lo, _ = pyInt(v)
		}
		if v := kwarg(args, 2, "end"); v != nil && !v.IsNil() {
			hi, _ = pyInt(v)
		}
		lo, hi = sliceBounds(lo, hi, len(runes))
		if lo > hi {
			return false, nil
		}
		s := string(runes[lo:hi])
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

func caseMethod(name string, f func(string) string) exec.Method[string] {
	return func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name); err != nil {
			return nil, err
		}
		return f(self), nil
	}
}

func replaceMethod(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
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
	if len(self)+n*len(repl.String()) > maxValueBytes {
		return nil, fmt.Errorf("string longer than %d bytes", maxValueBytes)
	}
	return strings.Replace(self, old.String(), repl.String(), count), nil
}

// joinMethod is sep.join(items): every item must be a str.
func joinMethod(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
	if err := checkParams(args, "join", "iterable"); err != nil {
		return nil, err
	}
	items := kwarg(args, 0, "iterable")
	if items == nil {
		return nil, fmt.Errorf("join() takes exactly one argument (0 given)")
	}
	var parts []string
	size := 0
	for i, item := range iterate(items) {
		if !item.IsString() {
			return nil, fmt.Errorf("sequence item %d: expected str instance, %s found", i, typeName(item))
		}
		if size += len(item.String()) + len(self); size > maxValueBytes {
			return nil, fmt.Errorf("string longer than %d bytes", maxValueBytes)
		}
		parts = append(parts, item.String())
	}
	return strings.Join(parts, self), nil
}

// dictMethods read the dict in order through selfValue: gonja hands methods
// a Go map copy (self), whose order is lost.
func dictMethods() *exec.MethodSet[map[string]any] {
	return exec.NewMethodSet(map[string]exec.Method[map[string]any]{
		"items": func(_ map[string]any, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "items"); err != nil {
				return nil, err
			}
			return itemPairs(d), nil
		},
		"keys": func(_ map[string]any, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "keys"); err != nil {
				return nil, err
			}
			var keys []any
			for _, p := range dictPairs(d) {
				keys = append(keys, p.Key.Interface())
			}
			return keys, nil
		},
		"values": func(_ map[string]any, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "values"); err != nil {
				return nil, err
			}
			var values []any
			for _, p := range dictPairs(d) {
				values = append(values, p.Value.Interface())
			}
			return values, nil
		},
		"get": func(_ map[string]any, d *exec.Value, args *exec.VarArgs) (any, error) {
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
		"copy": func(_ map[string]any, d *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "copy"); err != nil {
				return nil, err
			}
			return &exec.Dict{Pairs: append([]*exec.Pair(nil), dictPairs(d)...)}, nil
		},
	})
}

// listMethods are the non-mutating list methods: count, index, copy.
func listMethods() *exec.MethodSet[[]any] {
	return exec.NewMethodSet(map[string]exec.Method[[]any]{
		"count": func(_ []any, l *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "count", "value"); err != nil || len(args.Args) != 1 {
				return nil, fmt.Errorf("count() takes exactly one argument")
			}
			n := 0
			for _, item := range iterate(l) {
				if item.EqualValueTo(args.Args[0]) {
					n++
				}
			}
			return n, nil
		},
		"index": func(_ []any, l *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "index", "value"); err != nil || len(args.Args) != 1 {
				return nil, fmt.Errorf("index() takes exactly one argument")
			}
			for i, item := range iterate(l) {
				if item.EqualValueTo(args.Args[0]) {
					return i, nil
				}
			}
			return nil, fmt.Errorf("ValueError: %s is not in list", pyRepr(args.Args[0]))
		},
		"copy": func(_ []any, l *exec.Value, args *exec.VarArgs) (any, error) {
			if err := checkParams(args, "copy"); err != nil {
				return nil, err
			}
			var out []any
			for _, item := range iterate(l) {
				out = append(out, item.Interface())
			}
			return out, nil
		},
	})
}

// countMethod is str.count(sub, start=None, end=None).
func countMethod(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
	if err := checkParams(args, "count", "sub", "start", "end"); err != nil {
		return nil, err
	}
	sub := kwarg(args, 0, "sub")
	if sub == nil || !sub.IsString() {
		return nil, fmt.Errorf("count() needs a str argument")
	}
	runes := []rune(self)
	lo, hi := 0, len(runes)
	if v := kwarg(args, 1, "start"); v != nil && !v.IsNil() {
		lo, _ = pyInt(v)
	}
	if v := kwarg(args, 2, "end"); v != nil && !v.IsNil() {
		hi, _ = pyInt(v)
	}
	lo, hi = sliceBounds(lo, hi, len(runes))
	if lo > hi {
		return 0, nil
	}
	s := string(runes[lo:hi])
	if sub.String() == "" {
		return utf8.RuneCountInString(s) + 1, nil
	}
	return strings.Count(s, sub.String()), nil
}

// padMethod is str.center/ljust/rjust(width, fillchar=' ').
func padMethod(name string) exec.Method[string] {
	return func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name, "width", "fillchar"); err != nil {
			return nil, err
		}
		width, ok := pyInt(kwarg(args, 0, "width"))
		if !ok {
			return nil, fmt.Errorf("%s() needs an integer width", name)
		}
		if width > maxValueBytes {
			return nil, fmt.Errorf("string longer than %d bytes", maxValueBytes)
		}
		fill := " "
		if v := kwarg(args, 1, "fillchar"); v != nil {
			if !v.IsString() || utf8.RuneCountInString(v.String()) != 1 {
				return nil, fmt.Errorf("The fill character must be exactly one character long")
			}
			fill = v.String()
		}
		margin := width - utf8.RuneCountInString(self)
		if margin <= 0 {
			return self, nil
		}
		left := 0
		switch name {
		case "center":
			left = margin/2 + (margin & width & 1) // as CPython
		case "rjust":
			left = margin
		}
		return strings.Repeat(fill, left) + self + strings.Repeat(fill, margin-left), nil
	}
}

// zfillMethod is str.zfill(width): zeros after any sign.
func zfillMethod(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
	if err := checkParams(args, "zfill", "width"); err != nil {
		return nil, err
	}
	width, ok := pyInt(kwarg(args, 0, "width"))
	if !ok || width > maxValueBytes {
		return nil, fmt.Errorf("zfill() needs a reasonable integer width")
	}
	margin := width - utf8.RuneCountInString(self)
	if margin <= 0 {
		return self, nil
	}
	sign := ""
	if strings.HasPrefix(self, "+") || strings.HasPrefix(self, "-") {
		sign, self = self[:1], self[1:]
	}
	return sign + strings.Repeat("0", margin) + self, nil
}

// partitionMethod is str.partition/rpartition(sep): a 3-tuple.
func partitionMethod(name string, cut func(s, sep string) (string, string, bool)) exec.Method[string] {
	return func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
		if err := checkParams(args, name, "sep"); err != nil {
			return nil, err
		}
		sep := kwarg(args, 0, "sep")
		if sep == nil || !sep.IsString() || sep.String() == "" {
			return nil, fmt.Errorf("%s() needs a non-empty str separator", name)
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
