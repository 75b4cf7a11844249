package chat

import (
	"errors"
	"fmt"
	"strings"

	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Names of the helpers the rewrite pass calls. They contain a space, so no
// template can name them.
const (
	helperGetItem  = "tracer getitem"
	helperAdd      = "tracer add"
	helperConcat   = "tracer concat"
	helperMul      = "tracer mul"
	helperMod      = "tracer mod"
	helperPow      = "tracer pow"
	helperDiv      = "tracer div"
	helperFloorDiv = "tracer floordiv"
	helperStr      = "tracer str"
	helperNot      = "tracer not"
	helperLess     = "tracer lt"
	helperLessEq   = "tracer le"
	helperMore     = "tracer gt"
	helperMoreEq   = "tracer ge"
	helperNone     = "tracer none"
	helperLoop     = "tracer loop"
	helperMethod   = "tracer method"
	helperSlice    = "tracer slice"
	helperEqual    = "tracer eq"
	helperNotEqual = "tracer ne"
)

// instrument rewrites a parsed template in place so that gonja evaluates it
// as Jinja would, where gonja's evaluator differs and offers no extension
// point:
//
//   - x[i] goes through helperGetItem (Python indexing: negative indexes,
//     code points of strings, undefined when missing);
//   - + ~ * % ** / // < <= > >= == != go through Python-semantics helpers
//     (3 * 'a', [1] * 2, '%s' % x, 2 ** 3 == 8, floor division, list
//     ordering, size limits);
//   - {{ x }} prints str(x) (None, True, floats and containers as Python
//     spells them);
//   - none (gonja reads only None) is None, not Undefined, and not x is a
//     bool;
//   - 'a' in x | f tests against x | f (gonja applies f to the test);
//   - x[a:b:c] goes through helperSlice (Python's slicing, charged to the
//     output budget);
//   - x.name(args) goes through helperMethod (calls.go), which runs the
//     methods with the render's budget;
//   - a macro whose body reads varargs or kwargs accepts extra arguments;
//   - for-loop bodies and macro calls are counted (see limits.go).
func instrument(tpl *nodes.Template) error {
	var r rewriter
	return r.nodes(tpl.Nodes)
}

// rewriter walks the tree; seen collects the names read, for macros.
type rewriter struct {
	seen map[string]bool
}

func (r *rewriter) nodes(list []nodes.Node) error {
	for i, n := range list {
		rewritten, err := r.node(n)
		if err != nil {
			return err
		}
		list[i] = rewritten
	}
	return nil
}

func (r *rewriter) wrapper(w *nodes.Wrapper) error {
	if w == nil {
		return nil
	}
	return r.nodes(w.Nodes)
}

func (r *rewriter) node(n nodes.Node) (nodes.Node, error) {
	switch n := n.(type) {
	case *nodes.Output:
		n.Expression = printed(r.expr(n.Expression))
		n.Condition = r.expr(n.Condition)
		if n.Alternative != nil {
			n.Alternative = printed(r.expr(n.Alternative))
		}
	case *nodes.ControlStructureBlock:
		cs, err := r.statement(n.ControlStructure)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Location.Line, err)
		}
		n.ControlStructure = cs
	case *nodes.Wrapper:
		return n, r.wrapper(n)
	}
	return n, nil
}

func (r *rewriter) statement(cs nodes.ControlStructure) (nodes.ControlStructure, error) {
	switch s := cs.(type) {
	case *controlStructures.IfControlStructure:
		r.exprs(s.Conditions)
		for _, w := range s.Wrappers {
			if err := r.wrapper(w); err != nil {
				return nil, err
			}
		}
	case *controlStructures.ForControlStructure:
		if s.Recursive {
			return nil, errors.New("recursive for loops are not supported")
		}
		s.ObjectEvaluator = helperCall(helperLoop, s.Position(), r.expr(s.ObjectEvaluator))
		s.IfCondition = r.expr(s.IfCondition)
		if err := r.wrapper(s.BodyWrapper); err != nil {
			return nil, err
		}
		if err := r.wrapper(s.EmptyWrapper); err != nil {
			return nil, err
		}
		body := s.BodyWrapper
		step := &nodes.ControlStructureBlock{Location: body.Location, Name: "step", ControlStructure: &stepNode{body.Location}}
		body.Nodes = append([]nodes.Node{step}, body.Nodes...)
	case *controlStructures.MacroControlStructure:
		return r.macro(s)
	case *controlStructures.CallControlStructure:
		r.exprs(s.Call.Args)
		r.kwargs(s.Call.Kwargs)
		if err := r.wrapper(s.Body); err != nil {
			return nil, err
		}
	case *controlStructures.AutoescapeControlStructure:
		if err := r.wrapper(s.Wrapper); err != nil {
			return nil, err
		}
	case *controlStructures.RawControlStructure, *controlStructures.BreakControlStructure,
		*controlStructures.ContinueControlStructure:
	case *setStatement:
		s.Value, s.Condition, s.Alternative = r.expr(s.Value), r.expr(s.Condition), r.expr(s.Alternative)
		if attr, ok := s.Target.(*nodes.GetAttribute); ok {
			attr.Node = r.expr(attr.Node)
		}
		for _, f := range s.Filters {
			r.filterCall(f)
		}
		if err := r.wrapper(s.Body); err != nil {
			return nil, err
		}
	case *withStatement:
		r.exprs(s.Values)
		if err := r.wrapper(s.Body); err != nil {
			return nil, err
		}
	case *filterStatement:
		for _, f := range s.Filters {
			r.filterCall(f)
		}
		if err := r.wrapper(s.Body); err != nil {
			return nil, err
		}
	case *generationStatement:
		if err := r.wrapper(s.Body); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unsupported statement %s", cs)
	}
	return cs, nil
}

// macro rewrites a macro definition and makes its calls counted.
func (r *rewriter) macro(s *controlStructures.MacroControlStructure) (nodes.ControlStructure, error) {
	for _, p := range s.Kwargs {
		if !isParameterMarker(p.Value) { // no default: Undefined when not passed
			p.Value = r.expr(p.Value)
		}
	}
	outer := r.seen
	r.seen = map[string]bool{}
	err := r.wrapper(s.Wrapper)
	// Jinja gives a macro *varargs and **kwargs when its body reads them.
	if s.VarArgsName == "" && r.seen["varargs"] {
		s.VarArgsName = "varargs"
	}
	if s.KwArgsName == "" && r.seen["kwargs"] {
		s.KwArgsName = "kwargs"
	}
	for name := range r.seen {
		if outer != nil {
			outer[name] = true
		}
	}
	r.seen = outer
	if err != nil {
		return nil, err
	}
	return &countedMacroNode{s}, nil
}

// isParameterMarker tells gonja's stand-in for a macro parameter without a
// default (a None node at the parameter's name) from a written None.
func isParameterMarker(e nodes.Expression) bool {
	n, ok := e.(*nodes.None)
	return ok && !strings.EqualFold(n.Location.Val, "none")
}

var helperOperators = map[tokens.Type]string{
	tokens.Addition:           helperAdd,
	tokens.Tilde:              helperConcat,
	tokens.Multiply:           helperMul,
	tokens.Modulo:             helperMod,
	tokens.Power:              helperPow,
	tokens.Division:           helperDiv,
	tokens.FloorDivision:      helperFloorDiv,
	tokens.LowerThan:          helperLess,
	tokens.LowerThanOrEqual:   helperLessEq,
	tokens.GreaterThan:        helperMore,
	tokens.GreaterThanOrEqual: helperMoreEq,
	tokens.Equals:             helperEqual,
	tokens.Ne:                 helperNotEqual,
}

// expr rewrites one expression tree (see instrument).
func (r *rewriter) expr(e nodes.Expression) nodes.Expression {
	switch n := e.(type) {
	case nil:
		return nil
	case *nodes.None:
		return noneName(n.Location)
	case *nodes.Name:
		if r.seen != nil {
			r.seen[n.Name.Val] = true
		}
		if n.Name.Val == "none" {
			return noneName(n.Name)
		}
	case *nodes.List:
		r.exprs(n.Val)
	case *nodes.Tuple:
		r.exprs(n.Val)
	case *nodes.Dict:
		for _, p := range n.Pairs {
			p.Key, p.Value = r.expr(p.Key), r.expr(p.Value)
		}
	case *nodes.Pair:
		n.Key, n.Value = r.expr(n.Key), r.expr(n.Value)
	case *nodes.GetItem:
		if n.Arg == nil {
			return n
		}
		return helperCall(helperGetItem, n.Location, r.expr(n.Node), r.expr(n.Arg))
	case *nodes.GetSlice:
		bound := func(e nodes.Expression) nodes.Expression {
			if e == nil {
				return noneName(n.Location)
			}
			return r.expr(e)
		}
		return helperCall(helperSlice, n.Location, r.expr(n.Node), bound(n.Start), bound(n.End), bound(n.Step))
	case *nodes.GetAttribute:
		n.Node = r.expr(n.Node)
	case *nodes.Call:
		if attr, ok := n.Func.(*nodes.GetAttribute); ok && attr.Attribute != "" && (n.Parent == nil || attr.Node == n.Parent) {
			// A method call on attr.Node, which gonja also sets as Parent
			// unless the receiver is in brackets.
			r.exprs(n.Args)
			r.kwargs(n.Kwargs)
			at := attr.Location
			if at == nil {
				at = &tokens.Token{}
			}
			name := &nodes.String{Location: &tokens.Token{Type: tokens.String, Val: attr.Attribute, Line: at.Line, Col: at.Col}, Val: attr.Attribute}
			call := helperCall(helperMethod, n.Location, append([]nodes.Expression{r.expr(attr.Node), name}, n.Args...)...)
			call.Kwargs = n.Kwargs
			return call
		} else {
			n.Func, n.Parent = r.expr(n.Func), r.expr(n.Parent)
		}
		r.exprs(n.Args)
		r.kwargs(n.Kwargs)
	case *nodes.Negation:
		return helperCall(helperNot, n.Operator, r.expr(n.Term))
	case *nodes.UnaryExpression:
		n.Term = r.expr(n.Term)
	case *nodes.BinaryExpression:
		n.Left, n.Right = r.expr(n.Left), r.expr(n.Right)
		if helper, ok := helperOperators[n.Operator.Token.Type]; ok {
			return helperCall(helper, n.Operator.Token, n.Left, n.Right)
		}
	case *nodes.FilteredExpression:
		if moved := filterInTest(n); moved != nil {
			return r.expr(moved)
		}
		n.Expression = r.expr(n.Expression)
		for _, f := range n.Filters {
			r.filterCall(f)
		}
	case *nodes.TestExpression:
		n.Expression = r.expr(n.Expression)
		r.exprs(n.Test.Args)
		r.kwargs(n.Test.Kwargs)
	}
	return e
}

func (r *rewriter) exprs(list []nodes.Expression) {
	for i := range list {
		list[i] = r.expr(list[i])
	}
}

func (r *rewriter) kwargs(m map[string]nodes.Expression) {
	for k, v := range m {
		m[k] = r.expr(v)
	}
}

func (r *rewriter) filterCall(f *nodes.FilterCall) {
	r.exprs(f.Args)
	r.kwargs(f.Kwargs)
}

// filterInTest fixes `a in b | f` (and `a not in b | f`): gonja parses it
// as (a in b) | f, Jinja as a in (b | f). Filtering a boolean is never
// meant, so the filters move onto the tested collection. It returns nil
// when n is not such an expression.
func filterInTest(n *nodes.FilteredExpression) nodes.Expression {
	test, ok := n.Expression.(*nodes.TestExpression)
	if negation, negated := n.Expression.(*nodes.Negation); negated {
		test, ok = negation.Term.(*nodes.TestExpression)
	}
	if !ok || test.Test.Name != "in" || len(test.Test.Args) != 1 {
		return nil
	}
	test.Test.Args[0] = &nodes.FilteredExpression{Expression: test.Test.Args[0], Filters: n.Filters}
	return n.Expression
}

func noneName(at *tokens.Token) *nodes.Name {
	return &nodes.Name{Name: &tokens.Token{Type: tokens.Name, Val: helperNone, Line: at.Line, Col: at.Col}}
}

// printed wraps what {{ }} prints in str().
func printed(e nodes.Expression) nodes.Expression {
	return helperCall(helperStr, e.Position(), e)
}

func helperCall(name string, at *tokens.Token, args ...nodes.Expression) *nodes.Call {
	if at == nil {
		at = &tokens.Token{}
	}
	return &nodes.Call{
		Location: at,
		Func:     &nodes.Name{Name: &tokens.Token{Type: tokens.Name, Val: name, Line: at.Line, Col: at.Col}},
		Args:     args,
		Kwargs:   map[string]nodes.Expression{},
	}
}
