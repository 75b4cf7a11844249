package chat

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// The helpers below implement Python's operators for the rewrite pass
// (rewrite.go). Each takes the evaluated operands and returns a value or an
// error value, as gonja functions do.

// maxValueBytes bounds strings built by + ~ * and %, and maxListItems lists
// built by + and *, whatever the output budget (budget.go), which all of
// them are charged to as well.
const (
	maxValueBytes = maxOutputBytes
	maxListItems  = 1 << 20
)

// number is a Python int or float operand.
type number struct {
	i       int
	f       float64
	isFloat bool
}

func asNumber(v *exec.Value) (number, bool) {
	if i, ok := pyInt(v); ok {
		return number{i: i, f: float64(i)}, true
	}
	if !isUndefined(v) && v.IsFloat() {
		return number{f: v.Float(), isFloat: true}, true
	}
	return number{}, false
}

func operandError(op string, a, b *exec.Value) *exec.Value {
	return exec.AsValue(fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(a), typeName(b)))
}

func helperArgs(va *exec.VarArgs, n int) ([]*exec.Value, *exec.Value) {
	if len(va.Args) != n || len(va.KwArgs) != 0 {
		return nil, exec.AsValue(fmt.Errorf("internal: operator helper called with %d arguments", len(va.Args)))
	}
	return va.Args, nil
}

// numberArgs takes the two operands of an arithmetic operator op that
// works on numbers alone; bad is the error value when one is not a number.
func numberArgs(va *exec.VarArgs, op string) (x, y number, bad *exec.Value) {
	args, bad := helperArgs(va, 2)
	if bad != nil {
		return x, y, bad
	}
	x, xNum := asNumber(args[0])
	y, yNum := asNumber(args[1])
	if !xNum || !yNum {
		return x, y, operandError(op, args[0], args[1])
	}
	return x, y, nil
}

func opAdd(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 2)
	if bad != nil {
		return bad
	}
	a, b := args[0], args[1]
	if x, ok := asNumber(a); ok {
		if y, ok := asNumber(b); ok {
			if x.isFloat || y.isFloat {
				return exec.AsValue(x.f + y.f)
			}
			return exec.AsValue(x.i + y.i)
		}
	}
	switch {
	case a.IsString() && b.IsString():
		if err := stateOf(e.Environment.Context).charge("operator +", len(a.String())+len(b.String())); err != nil {
			return errorValue(err)
		}
		if len(a.String())+len(b.String()) > maxValueBytes {
			return exec.AsValue(fmt.Errorf("string longer than %d bytes", maxValueBytes))
		}
		return exec.AsValue(a.String() + b.String())
	case a.IsList() && b.IsList() && !isUndefined(a) && !isUndefined(b):
		if err := stateOf(e.Environment.Context).chargeItems("operator +", a.Len()+b.Len()); err != nil {
			return errorValue(err)
		}
		if a.Len()+b.Len() > maxListItems {
			return exec.AsValue(fmt.Errorf("list longer than %d items", maxListItems))
		}
		list := make([]any, 0, a.Len()+b.Len())
		for _, v := range []*exec.Value{a, b} {
			for i := range v.Len() {
				list = append(list, v.Index(i).Interface())
			}
		}
		return exec.AsValue(list)
	}
	return operandError("+", a, b)
}

// opConcat is ~: str() of both sides (Undefined as "").
func opConcat(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 2)
	if bad != nil {
		return bad
	}
	st := stateOf(e.Environment.Context)
	var sides [2]string
	for i, v := range args {
		s, err := st.str("operator ~", v)
		if err != nil {
			return errorValue(err)
		}
		sides[i] = s
	}
	if err := st.charge("operator ~", len(sides[0])+len(sides[1])); err != nil {
		return errorValue(err)
	}
	if len(sides[0])+len(sides[1]) > maxValueBytes {
		return exec.AsValue(fmt.Errorf("string longer than %d bytes", maxValueBytes))
	}
	return exec.AsValue(sides[0] + sides[1])
}

func opMul(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 2)
	if bad != nil {
		return bad
	}
	a, b := args[0], args[1]
	x, xNum := asNumber(a)
	y, yNum := asNumber(b)
	switch {
	case xNum && yNum:
		if x.isFloat || y.isFloat {
			return exec.AsValue(x.f * y.f)
		}
		return exec.AsValue(x.i * y.i)
	case a.IsString() && yNum && !y.isFloat:
		return repeatString(stateOf(e.Environment.Context), a.String(), y.i)
	case b.IsString() && xNum && !x.isFloat:
		return repeatString(stateOf(e.Environment.Context), b.String(), x.i)
	case a.IsList() && yNum && !y.isFloat:
		return repeatList(stateOf(e.Environment.Context), a, y.i)
	case b.IsList() && xNum && !x.isFloat:
		return repeatList(stateOf(e.Environment.Context), b, x.i)
	case (a.IsString() || a.IsList()) && yNum, (b.IsString() || b.IsList()) && xNum:
		return errorValue(fmt.Errorf("TypeError: can't multiply sequence by non-int of type 'float'"))
	}
	return operandError("*", a, b)
}

func repeatString(st *renderState, s string, n int) *exec.Value {
	if n <= 0 || s == "" {
		return exec.AsValue("")
	}
	if err := st.charge("operator *", sizeMul(len(s), n)); err != nil {
		return errorValue(err)
	}
	if n > maxValueBytes/len(s) {
		return exec.AsValue(fmt.Errorf("string longer than %d bytes", maxValueBytes))
	}
	return exec.AsValue(strings.Repeat(s, n))
}

func repeatList(st *renderState, v *exec.Value, n int) *exec.Value {
	if n <= 0 || v.Len() == 0 {
		return exec.AsValue([]any{})
	}
	if err := st.chargeItems("operator *", sizeMul(n, v.Len())); err != nil {
		return errorValue(err)
	}
	if n > maxListItems/v.Len() {
		return exec.AsValue(fmt.Errorf("list longer than %d items", maxListItems))
	}
	list := make([]any, 0, n*v.Len())
	for range n {
		for i := range v.Len() {
			list = append(list, v.Index(i).Interface())
		}
	}
	return exec.AsValue(list)
}

// opMod is % : Python's modulo (the sign of the divisor) for numbers,
// printf-style formatting for a string on the left.
func opMod(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 2)
	if bad != nil {
		return bad
	}
	a, b := args[0], args[1]
	if a.IsString() {
		s, err := percentFormat(stateOf(e.Environment.Context), "operator %", a.String(), b)
		if err != nil {
			return exec.AsValue(err)
		}
		return exec.AsValue(s)
	}
	x, xNum := asNumber(a)
	y, yNum := asNumber(b)
	if !xNum || !yNum {
		return operandError("%", a, b)
	}
	if x.isFloat || y.isFloat {
		if y.f == 0 {
			return exec.AsValue(fmt.Errorf("ZeroDivisionError: float modulo"))
		}
		r := math.Mod(x.f, y.f)
		if r != 0 && (r < 0) != (y.f < 0) {
			r += y.f
		}
		return exec.AsValue(r)
	}
	if y.i == 0 {
		return exec.AsValue(fmt.Errorf("ZeroDivisionError: integer modulo by zero"))
	}
	r := x.i % y.i
	if r != 0 && (r < 0) != (y.i < 0) {
		r += y.i
	}
	return exec.AsValue(r)
}

// opPow is **: int ** non-negative int stays an int, as in Python.
func opPow(_ *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	x, y, bad := numberArgs(va, "** or pow()")
	if bad != nil {
		return bad
	}
	if x.isFloat || y.isFloat || y.i < 0 {
		return exec.AsValue(math.Pow(x.f, y.f))
	}
	switch x.i {
	case 0, 1:
		if y.i == 0 {
			return exec.AsValue(1)
		}
		return exec.AsValue(x.i)
	case -1:
		return exec.AsValue(1 - 2*(y.i%2))
	}
	if math.Abs(math.Pow(x.f, y.f)) >= math.MaxInt64 {
		return exec.AsValue(fmt.Errorf("integer power %d ** %d is too large", x.i, y.i))
	}
	result := 1
	for range y.i { // |x| >= 2, so fewer than 63 rounds
		result *= x.i
	}
	return exec.AsValue(result)
}

// opDiv is /: true division.
func opDiv(_ *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	x, y, bad := numberArgs(va, "/")
	if bad != nil {
		return bad
	}
	if y.f == 0 {
		return exec.AsValue(fmt.Errorf("ZeroDivisionError: division by zero"))
	}
	return exec.AsValue(x.f / y.f)
}

// opFloorDiv is //: floor division, an int for ints.
func opFloorDiv(_ *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	x, y, bad := numberArgs(va, "//")
	if bad != nil {
		return bad
	}
	if y.f == 0 {
		return exec.AsValue(fmt.Errorf("ZeroDivisionError: integer division or modulo by zero"))
	}
	if x.isFloat || y.isFloat {
		return exec.AsValue(math.Floor(x.f / y.f))
	}
	q := x.i / y.i
	if (x.i%y.i != 0) && ((x.i < 0) != (y.i < 0)) {
		q--
	}
	return exec.AsValue(q)
}

// opStr is str(), which {{ }} prints.
func opStr(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 1)
	if bad != nil {
		return bad
	}
	return errorString(stateOf(e.Environment.Context).str("printing {{ }}", args[0]))
}

// opGetItem is obj[key] as Jinja's getitem does it: Python indexing
// (negative indexes count from the end, strings index code points), then
// the attribute of that name; Undefined when neither exists.
func opGetItem(_ *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 2)
	if bad != nil {
		return bad
	}
	obj, key := args[0], args[1]
	undefined := exec.AsValue(nil)
	switch {
	case isUndefined(obj):
		return exec.AsValue(fmt.Errorf("cannot read item %s of an undefined value", shortRepr(key)))
	case obj.IsNil():
		return undefined
	case obj.IsString():
		i, ok := pyInt(key)
		if !ok {
			return undefined
		}
		s := obj.String()
		if i < 0 {
			i += utf8.RuneCountInString(s)
		}
		if i < 0 {
			return undefined
		}
		for _, r := range s { // the i-th character, without a []rune copy of s
			if i == 0 {
				return exec.AsValue(string(r))
			}
			i--
		}
		return undefined
	case obj.IsList():
		i, ok := pyInt(key)
		if !ok {
			return undefined
		}
		n := obj.Len()
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return undefined
		}
		return obj.Index(i)
	case obj.IsDict():
		if v, ok := dictGet(obj, key); ok {
			return v
		}
		return undefined
	}
	if v, found := obj.GetItem(key.Interface()); found {
		return v
	}
	if key.IsString() {
		if v, found := obj.GetAttribute(key.String()); found {
			return v
		}
	}
	return undefined
}

// opNot is not x, a bool (gonja's gives 0 or 1 for numbers).
func opNot(_ *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 1)
	if bad != nil {
		return bad
	}
	return exec.AsValue(!pyTruth(args[0]))
}

// pyTruth is Python's bool(v).
func pyTruth(v *exec.Value) bool {
	switch {
	case isUndefined(v) || v.IsNil():
		return false
	case v.IsBool():
		return v.Bool()
	case v.IsInteger():
		return v.Integer() != 0
	case v.IsFloat():
		return v.Float() != 0
	case v.IsString(), v.IsList():
		return v.Len() > 0
	case v.IsDict():
		if _, ok := v.Interface().(namespace); ok {
			return true
		}
		return len(dictPairs(v)) > 0
	}
	return true
}

// compareHelper is one of < <= > >=, ordering as Python does (see pyCompare).
func compareHelper(op string, holds func(c int) bool) func(*exec.Evaluator, *exec.VarArgs) *exec.Value {
	return func(_ *exec.Evaluator, va *exec.VarArgs) *exec.Value {
		args, bad := helperArgs(va, 2)
		if bad != nil {
			return bad
		}
		c, err := pyCompare(args[0], args[1], true)
		if err != nil {
			return exec.AsValue(fmt.Errorf("'%s' not supported between instances of '%s' and '%s'", op, typeName(args[0]), typeName(args[1])))
		}
		return exec.AsValue(holds(c))
	}
}

var (
	opLess   = compareHelper("<", func(c int) bool { return c < 0 })
	opLessEq = compareHelper("<=", func(c int) bool { return c <= 0 })
	opMore   = compareHelper(">", func(c int) bool { return c > 0 })
	opMoreEq = compareHelper(">=", func(c int) bool { return c >= 0 })
)
