package chat

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nikolalohinski/gonja/v2/builtins"
	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"
)

// This file assembles the gonja environment that stands in for
// transformers' Jinja environment: ImmutableSandboxedEnvironment with
// trim_blocks and lstrip_blocks, the loopcontrols extension and
// transformers' {% generation %}, its tojson filter and raise_exception
// and strftime_now globals.

// newConfig is Jinja's lexer configuration in transformers. Trailing
// newlines are handled by prepareSource.
func newConfig() *config.Config {
	cfg := config.New()
	cfg.TrimBlocks = true
	cfg.LeftStripBlocks = true
	cfg.KeepTrailingNewline = true
	cfg.AutoEscape = false
	cfg.StrictUndefined = false
	return cfg
}

// newEnvironment returns a fresh environment; gonja's shared sets are only
// copied from, never changed.
func newEnvironment() (*exec.Environment, error) {
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters)
	for name, f := range map[string]exec.FilterFunction{
		"tojson":     filterToJSON,
		"items":      filterItems,
		"trim":       filterTrim,
		"default":    filterDefault,
		"d":          filterDefault,
		"string":     filterString,
		"join":       filterJoin,
		"dictsort":   filterDictSort,
		"reverse":    filterReverse,
		"min":        extremeFilter("min", -1),
		"max":        extremeFilter("max", 1),
		"round":      filterRound,
		"upper":      stringFilter("upper", pyUpper),
		"lower":      stringFilter("lower", pyLower),
		"capitalize": stringFilter("capitalize", pyCapitalize),
		"title":      stringFilter("title", jinjaTitle),
	} {
		if err := filters.Replace(name, f); err != nil {
			return nil, err
		}
	}
	for name, f := range sizedFilters() {
		if err := filters.Replace(name, f); err != nil {
			return nil, err
		}
	}
	for name, growth := range keptFilters {
		f, ok := filters.Get(name)
		if !ok {
			return nil, fmt.Errorf("gonja has no %s filter", name)
		}
		if err := filters.Replace(name, guardFilter(name, growth, f)); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"random"} { // not deterministic
		if err := filters.Replace(name, unsupportedFilter(name)); err != nil {
			return nil, err
		}
	}

	tests := exec.NewTestSet(map[string]exec.TestFunction{}).Update(builtins.Tests)
	for name, t := range map[string]exec.TestFunction{
		"defined":   testDefined,
		"undefined": testUndefined,
		"none":      testNone,
		"mapping":   testMapping,
		"number":    testNumber,
		"sequence":  testSequence,
		"iterable":  testIterable,
		"true":      testTrue,
		"false":     testFalse,
		"in":        testIn,
		"eq":        testEqual,
		"equalto":   testEqual,
		"==":        testEqual,
		"ne":        testNotEqual,
		"!=":        testNotEqual,
	} {
		if err := tests.Replace(name, t); err != nil {
			return nil, err
		}
	}

	statements := map[string]parser.ControlStructureParser{
		"set":        parseSet,
		"with":       parseWith,
		"filter":     parseFilterBlock,
		"generation": parseGeneration,
	}
	for _, name := range []string{"if", "for", "macro", "call", "raw", "break", "continue", "autoescape"} {
		p, ok := controlStructures.All.Get(name)
		if !ok {
			return nil, fmt.Errorf("gonja has no %s statement", name)
		}
		statements[name] = p
	}

	globals := map[string]any{
		"range":           rangeFunction,
		"dict":            dictFunction,
		"namespace":       namespaceFunction,
		"raise_exception": raiseException,
		"strftime_now":    strftimeNow,
		helperGetItem:     opGetItem,
		helperAdd:         opAdd,
		helperConcat:      opConcat,
		helperMul:         opMul,
		helperMod:         opMod,
		helperPow:         opPow,
		helperDiv:         opDiv,
		helperFloorDiv:    opFloorDiv,
		helperStr:         opStr,
		helperNot:         opNot,
		helperLess:        opLess,
		helperLessEq:      opLessEq,
		helperMore:        opMore,
		helperMoreEq:      opMoreEq,
		helperNone:        noneValue,
		helperLoop:        loopItems,
		helperMethod:      methodHelper(newMethodTables()),
		helperSlice:       opSlice,
		helperEqual:       opEqual,
		helperNotEqual:    opNotEqual,
	}
	for _, name := range []string{"cycler", "joiner"} {
		if f, ok := builtins.GlobalFunctions.Get(name); ok {
			globals[name] = f
		}
	}

	return &exec.Environment{
		Context:           exec.NewContext(globals),
		Filters:           filters,
		Tests:             tests,
		ControlStructures: exec.NewControlStructureSet(statements),
		// str, list and dict methods go through the method helper.
		Methods: exec.Methods{
			Bool:  builtins.Methods.Bool,
			Int:   builtins.Methods.Int,
			Float: builtins.Methods.Float,
			Str:   exec.NewMethodSet(map[string]exec.Method[string]{}),
			Dict:  exec.NewMethodSet(map[string]exec.Method[map[string]any]{}),
			List:  exec.NewMethodSet(map[string]exec.Method[[]any]{}),
		},
	}, nil
}

func unsupportedFilter(name string) exec.FilterFunction {
	return func(*exec.Evaluator, *exec.Value, *exec.VarArgs) *exec.Value {
		return errorValue(fmt.Errorf("the %s filter is not supported (its output is not deterministic)", name))
	}
}

// rangeFunction is range([start,] stop[, step]), refusing more than
// maxRange items as Jinja's sandbox does.
func rangeFunction(e *exec.Evaluator, params *exec.VarArgs) *exec.Value {
	if len(params.KwArgs) > 0 || len(params.Args) == 0 || len(params.Args) > 3 {
		return errorValue(errors.New("range expected 1 to 3 integer arguments"))
	}
	var n [3]int
	for i, a := range params.Args {
		v, ok := pyInt(a)
		if !ok {
			return errorValue(fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(a)))
		}
		n[i] = v
	}
	start, stop, step := 0, n[0], 1
	if len(params.Args) > 1 {
		start, stop = n[0], n[1]
	}
	if len(params.Args) == 3 {
		step = n[2]
	}
	if step == 0 {
		return errorValue(errors.New("range() arg 3 must not be zero"))
	}
	count := 0
	if step > 0 && stop > start {
		count = (stop - start + step - 1) / step
	} else if step < 0 && stop < start {
		count = (start - stop - step - 1) / -step
	}
	if count > maxRange {
		return errorValue(fmt.Errorf("range too big: the sandbox blocks ranges larger than %d", maxRange))
	}
	if err := stateOf(e.Environment.Context).chargeItems("range()", count); err != nil {
		return errorValue(err)
	}
	list := make([]any, count)
	for i := range list {
		list[i] = start + i*step
	}
	return exec.AsValue(list)
}

// dictFunction is dict(**kwargs); the keys come out sorted (gonja does not
// keep keyword order).
func dictFunction(_ *exec.Evaluator, params *exec.VarArgs) *exec.Value {
	if len(params.Args) > 0 {
		return errorValue(errors.New("dict() with positional arguments is not supported"))
	}
	obj := Object{}
	for k, v := range params.KwArgs {
		obj = append(obj, Member{k, v})
	}
	sortObject(obj)
	dict := &exec.Dict{}
	for _, m := range obj {
		dict.Pairs = append(dict.Pairs, &exec.Pair{Key: exec.AsValue(m.Key), Value: m.Value.(*exec.Value)})
	}
	return exec.AsValue(dict)
}

// namespace is Jinja's namespace(): the only object whose attributes
// {% set ns.attr = value %} may assign.
type namespace map[string]any

// String prints the namespace as Jinja does: <Namespace {'a': 1}>.
// Only gonja's own messages use it, so it is cut short.
func (n namespace) String() string { return shortRepr(exec.AsValue(n)) }

func namespaceFunction(e *exec.Evaluator, params *exec.VarArgs) *exec.Value {
	st := stateOf(e.Environment.Context)
	ns := namespace{}
	for _, a := range params.Args {
		if !a.IsDict() {
			return errorValue(fmt.Errorf("namespace() positional arguments must be mappings, not %s", typeName(a)))
		}
		for _, p := range dictPairs(a) {
			key, err := st.str("namespace()", p.Key)
			if err != nil {
				return errorValue(err)
			}
			ns[key] = p.Value.Interface()
		}
	}
	for k, v := range params.KwArgs {
		if reaches(v, ns) {
			return errorValue(errors.New("cannot store a namespace inside itself"))
		}
		ns[k] = v.Interface()
	}
	return exec.AsValue(ns)
}

// raiseException is transformers' raise_exception(message): rendering stops
// with a *RaiseError carrying the message.
func raiseException(e *exec.Evaluator, params *exec.VarArgs) *exec.Value {
	st := stateOf(e.Environment.Context)
	msg := ""
	if len(params.Args) > 0 {
		text, err := st.str("raise_exception()", params.Args[0])
		if err != nil {
			return errorValue(err)
		}
		msg = text
	}
	err := &RaiseError{Message: msg}
	st.raised = err
	return errorValue(err)
}

// strftimeNow is transformers' strftime_now(format): the render's time
// (Options.Now, or the clock) formatted as by time.strftime.
func strftimeNow(e *exec.Evaluator, params *exec.VarArgs) *exec.Value {
	if len(params.Args) != 1 || !params.Args[0].IsString() {
		return errorValue(errors.New("strftime_now expects one format string"))
	}
	st := stateOf(e.Environment.Context)
	format := params.Args[0].String()
	// A directive of two bytes writes at most nine ("Wednesday").
	if err := st.fits("strftime_now()", sizeMul(5, len(format))); err != nil {
		return errorValue(err)
	}
	text := strftime(st.now, format)
	return errorString(text, st.charge("strftime_now()", len(text)))
}

// sourceLoader serves the one template being compiled; chat templates
// cannot include, import or extend others.
type sourceLoader struct{ name, source string }

func (l sourceLoader) Read(path string) (io.Reader, error) {
	if path == l.name {
		return strings.NewReader(l.source), nil
	}
	return nil, fmt.Errorf("chat templates cannot load other templates (%q)", path)
}

func (l sourceLoader) Resolve(path string) (string, error)    { return path, nil }
func (l sourceLoader) Inherit(string) (loaders.Loader, error) { return l, nil }

func sortObject(obj Object) {
	slices.SortFunc(obj, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
}
