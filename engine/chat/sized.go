package chat

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Filters that build strings or lists from a size argument (center,
// indent, batch, slice, ...) replace gonja's, which allocate whatever they
// are asked for, and the gonja filters kept are guarded: both work out the
// size of their result and charge it to the render's budget (budget.go)
// before they build it.

// sizedFilters replace gonja's filters of the same name.
func sizedFilters() map[string]exec.FilterFunction {
	return map[string]exec.FilterFunction{
		"center":   filterCenter,
		"format":   filterFormat,
		"indent":   filterIndent,
		"list":     filterList,
		"pprint":   filterPPrint,
		"replace":  filterReplace,
		"batch":    filterBatch,
		"slice":    filterSlice,
		"wordwrap": filterWordwrap,
	}
}

// keptFilters are gonja's filters used as they are, with how many times
// the text of their input their result or work can take: gonja spells its
// input out (to sort it, escape it, parse a number from it) in all those
// with a factor above 0, so the input's text must fit the budget that many
// times before they run. Their results are charged after.
var keptFilters = map[string]int{
	"attr": 0, "first": 0, "last": 0, "length": 0, "count": 0, "safe": 0,
	"sum": 0, "select": 0, "reject": 0, "selectattr": 0, "rejectattr": 0,
	"map": 0,
	"abs": 1, "float": 1, "int": 1, "filesizeformat": 1, "sort": 1,
	"unique": 1, "groupby": 1, "striptags": 1, "wordcount": 1, "truncate": 1,
	"urlencode": 3, "escape": 6, "e": 6, "forceescape": 6, "xmlattr": 6,
	"urlize": 16,
}

// guardFilter runs one of gonja's filters within the budget (see
// keptFilters).
func guardFilter(name string, growth int, f exec.FilterFunction) exec.FilterFunction {
	in := "filter " + name
	return func(e *exec.Evaluator, v *exec.Value, params *exec.VarArgs) *exec.Value {
		if v.IsError() {
			return v
		}
		st := stateOf(e.Environment.Context)
		if growth > 0 {
			if err := st.fits(in, sizeMul(growth, st.textSize(v, growth))); err != nil {
				return errorValue(err)
			}
		}
		out := f(e, v, params)
		switch {
		case out.IsError() || isUndefined(out):
		case out.IsString():
			if err := st.charge(in, len(out.String())); err != nil {
				return errorValue(err)
			}
		case out.IsList():
			if err := st.chargeItems(in, out.Len()); err != nil {
				return errorValue(err)
			}
		}
		return out
	}
}

// textSize is the length of v's text (a string's bytes, a container's
// repr), or more than what is left of the budget divided by growth when it
// is longer: the repr is spelled out only that far.
func (s *renderState) textSize(v *exec.Value, growth int) int {
	switch {
	case isUndefined(v):
		return 0
	case v.IsString():
		return len(v.String())
	}
	b := &textBuilder{limit: max(0, s.left()/max(1, growth))}
	writeRepr(b, v, 0)
	if b.over {
		return b.limit + 1
	}
	return b.Len()
}

// filterCenter is Jinja's center(width=80): str.center.
func filterCenter(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "center", "width"); err != nil {
		return errorValue(err)
	}
	width := 80
	if v := kwarg(params, 0, "width"); v != nil {
		n, ok := pyInt(v)
		if !ok {
			return errorValue(fmt.Errorf("center: width must be an integer, not %s", typeName(v)))
		}
		width = n
	}
	st := stateOf(e.Environment.Context)
	s, err := st.str("filter center", in)
	if err != nil {
		return errorValue(err)
	}
	return errorString(pad(st, "filter center", "center", s, width, " "))
}

// filterFormat is Jinja's format(*args, **kwargs): s % args, or s % kwargs.
func filterFormat(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(params.Args) > 0 && len(params.KwArgs) > 0 {
		return errorValue(fmt.Errorf("format: can't handle positional and keyword arguments at the same time"))
	}
	st := stateOf(e.Environment.Context)
	format, err := st.str("filter format", in)
	if err != nil {
		return errorValue(err)
	}
	args := make(tuple, len(params.Args))
	for i, a := range params.Args {
		args[i] = a.Interface()
	}
	operand := exec.AsValue(args)
	if len(params.KwArgs) > 0 {
		dict := &exec.Dict{}
		for k, v := range params.KwArgs {
			dict.Pairs = append(dict.Pairs, &exec.Pair{Key: exec.AsValue(k), Value: v})
		}
		operand = exec.AsValue(dict)
	}
	return errorString(percentFormat(st, "filter format", format, operand))
}

// filterIndent is Jinja's indent(width=4, first=False, blank=False): every
// line after the first (the first too with first) starts with width
// spaces, or with width when it is a string; empty lines only with blank.
func filterIndent(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "indent", "width", "first", "blank"); err != nil {
		return errorValue(err)
	}
	st := stateOf(e.Environment.Context)
	width := 4
	prefix := ""
	if v := kwarg(params, 0, "width"); v != nil {
		switch n, ok := pyInt(v); {
		case v.IsString():
			prefix, width = v.String(), -1
		case ok:
			width = n
		default:
			return errorValue(fmt.Errorf("indent: width must be an integer or a string, not %s", typeName(v)))
		}
	}
	first := kwarg(params, 1, "first") != nil && kwarg(params, 1, "first").IsTrue()
	blank := kwarg(params, 2, "blank") != nil && kwarg(params, 2, "blank").IsTrue()
	s, err := st.str("filter indent", in)
	if err != nil {
		return errorValue(err)
	}
	lines := strings.Split(s, "\n")
	indented := 0
	for i, line := range lines {
		if i == 0 && first || i > 0 && (line != "" || blank) {
			indented++
		}
	}
	if width >= 0 {
		if err := st.fits("filter indent", width); err != nil {
			return errorValue(err)
		}
		prefix = strings.Repeat(" ", width)
	}
	if err := st.charge("filter indent", sizeAdd(len(s), sizeMul(indented, len(prefix)))); err != nil {
		return errorValue(err)
	}
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i == 0 && first || i > 0 && (line != "" || blank) {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
	return exec.AsValue(b.String())
}

// filterList is Jinja's list: the characters of a string, the keys of a
// dict, the items of a list.
func filterList(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "list"); err != nil {
		return errorValue(err)
	}
	st := stateOf(e.Environment.Context)
	if in.IsString() {
		s := in.String()
		// Each character is a string of its own: its bytes and a list item.
		if err := st.charge("filter list", sizeAdd(len(s), sizeMul(utf8.RuneCountInString(s), listItemBytes))); err != nil {
			return errorValue(err)
		}
		out := make([]any, 0, utf8.RuneCountInString(s))
		for _, r := range s {
			out = append(out, string(r))
		}
		return exec.AsValue(out)
	}
	n := 0
	if !isUndefined(in) && !in.IsNil() && (in.IsList() || in.IsDict()) {
		n = in.Len()
		if in.IsDict() {
			n = len(dictPairs(in))
		}
	}
	if err := st.chargeItems("filter list", n); err != nil {
		return errorValue(err)
	}
	items := iterate(in)
	out := make([]any, len(items))
	for i, item := range items {
		out[i] = item.Interface()
	}
	return exec.AsValue(out)
}

// filterPPrint is Jinja's pprint: the value's repr.
func filterPPrint(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "pprint"); err != nil {
		return errorValue(err)
	}
	return errorString(stateOf(e.Environment.Context).repr("filter pprint", in))
}

// filterReplace is Jinja's replace(old, new, count=None) on str(s).
func filterReplace(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "replace", "old", "new", "count"); err != nil {
		return errorValue(err)
	}
	st := stateOf(e.Environment.Context)
	s, err := st.str("filter replace", in)
	if err != nil {
		return errorValue(err)
	}
	old, repl := kwarg(params, 0, "old"), kwarg(params, 1, "new")
	if old == nil || repl == nil {
		return errorValue(fmt.Errorf("replace() needs old and new"))
	}
	oldText, err := st.str("filter replace", old)
	if err != nil {
		return errorValue(err)
	}
	replText, err := st.str("filter replace", repl)
	if err != nil {
		return errorValue(err)
	}
	count := -1
	if v := kwarg(params, 2, "count"); v != nil && !v.IsNil() {
		if count, _ = pyInt(v); count < 0 {
			count = -1
		}
	}
	n := strings.Count(s, oldText)
	if oldText == "" {
		n = utf8.RuneCountInString(s) + 1
	}
	if count >= 0 {
		n = min(n, count)
	}
	if err := st.charge("filter replace", replacedSize(s, oldText, replText, n)); err != nil {
		return errorValue(err)
	}
	return exec.AsValue(strings.Replace(s, oldText, replText, count))
}

// countAndFill reads the arguments batch and slice share: a positive
// integer named name first, then fill_with (nil when absent or None).
func countAndFill(params *exec.VarArgs, filter, name string) (int, *exec.Value, error) {
	if err := checkParams(params, filter, name, "fill_with"); err != nil {
		return 0, nil, err
	}
	n, ok := pyInt(kwarg(params, 0, name))
	if !ok || n < 1 {
		return 0, nil, fmt.Errorf("%s: %s must be a positive integer", filter, name)
	}
	fill := kwarg(params, 1, "fill_with")
	if fill != nil && fill.IsNil() {
		fill = nil
	}
	return n, fill, nil
}

// filterBatch is Jinja's batch(linecount, fill_with=None): the items in
// lists of linecount, the last one filled up with fill_with when given.
func filterBatch(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	size, fill, err := countAndFill(params, "batch", "linecount")
	if err != nil {
		return errorValue(err)
	}
	filled := fill != nil
	items := iterate(in)
	rows := (len(items) + size - 1) / size
	padding := 0
	if filled && len(items)%size != 0 {
		padding = size - len(items)%size
	}
	if err := stateOf(e.Environment.Context).chargeItems("filter batch", sizeAdd(len(items), rows, padding)); err != nil {
		return errorValue(err)
	}
	out := make([]any, 0, rows)
	for start := 0; start < len(items); start += size {
		row := make([]any, 0, min(size, len(items)-start)+padding)
		for _, item := range items[start:min(start+size, len(items))] {
			row = append(row, item.Interface())
		}
		if start+size >= len(items) {
			for range padding {
				row = append(row, fill.Interface())
			}
		}
		out = append(out, row)
	}
	return exec.AsValue(out)
}

// filterSlice is Jinja's slice(slices, fill_with=None): the items in
// slices columns, the shorter ones filled up with fill_with when given.
func filterSlice(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	slices, fill, err := countAndFill(params, "slice", "slices")
	if err != nil {
		return errorValue(err)
	}
	filled := fill != nil
	items := iterate(in)
	if err := stateOf(e.Environment.Context).chargeItems("filter slice", sizeAdd(len(items), sizeMul(2, slices))); err != nil {
		return errorValue(err)
	}
	per, extra := len(items)/slices, len(items)%slices
	out := make([]any, 0, slices)
	offset := 0
	for i := range slices {
		n := per
		if i < extra {
			n++
		}
		column := make([]any, 0, n+1)
		for _, item := range items[offset : offset+n] {
			column = append(column, item.Interface())
		}
		offset += n
		if filled && i >= extra {
			column = append(column, fill.Interface())
		}
		out = append(out, column)
	}
	return exec.AsValue(out)
}

// filterWordwrap wraps each paragraph (line) of str(s) at width
// characters, words joined by single spaces, as gonja's wordwrap does, in
// linear time.
func filterWordwrap(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := checkParams(params, "wordwrap", "width", "break_long_words", "wrapstring", "break_on_hyphens"); err != nil {
		return errorValue(err)
	}
	width := 79
	if v := kwarg(params, 0, "width"); v != nil {
		n, ok := pyInt(v)
		if !ok {
			return errorValue(fmt.Errorf("wordwrap: width must be an integer, not %s", typeName(v)))
		}
		width = n
	}
	wrap := "\n"
	if v := kwarg(params, 2, "wrapstring"); v != nil && !v.IsNil() {
		wrap = v.String()
	}
	st := stateOf(e.Environment.Context)
	s, err := st.str("filter wordwrap", in)
	if err != nil {
		return errorValue(err)
	}
	if width <= 0 {
		return exec.AsValue(s)
	}
	// Every break replaces at least one space or newline.
	if err := st.charge("filter wordwrap", sizeAdd(len(s), sizeMul(strings.Count(s, " ")+strings.Count(s, "\n")+1, len(wrap)))); err != nil {
		return errorValue(err)
	}
	var b strings.Builder
	for i, paragraph := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteString(wrap)
		}
		line := 0 // characters on the current line
		for j, word := range strings.Fields(paragraph) {
			n := utf8.RuneCountInString(word)
			switch {
			case j == 0:
			case line+1+n <= width:
				b.WriteByte(' ')
				line++
			default:
				b.WriteString(wrap)
				line = 0
			}
			b.WriteString(word)
			line += n
		}
	}
	return exec.AsValue(b.String())
}

// testIn is Jinja's `in` test (x in seq): a substring of a string, an item
// of a list, a key of a dict. Unlike gonja's it never spells out a list to
// look for it in a string.
func testIn(_ *exec.Context, in *exec.Value, params *exec.VarArgs) (bool, error) {
	if len(params.Args) != 1 {
		return false, fmt.Errorf("in: expected one container")
	}
	seq := params.Args[0]
	switch {
	case isUndefined(seq) || seq.IsNil():
		return false, fmt.Errorf("argument of type '%s' is not iterable", typeName(seq))
	case seq.IsString():
		if in.IsList() || in.IsDict() || isUndefined(in) {
			return false, fmt.Errorf("'in <string>' requires string as left operand, not %s", typeName(in))
		}
		return strings.Contains(seq.String(), in.String()), nil
	case seq.IsDict():
		if ns, ok := seq.Interface().(namespace); ok {
			_, found := ns[in.String()]
			return in.IsString() && found, nil
		}
		_, found := dictGet(seq, in)
		return found, nil
	case seq.IsList():
		for i := range seq.Len() {
			if pyEqual(seq.Index(i), in) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("argument of type '%s' is not iterable", typeName(seq))
}
