package chat

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// This file implements the statements whose gonja versions keep their
// expressions in unexported fields, out of reach of the rewrite pass
// ({% set %}, {% with %}, {% filter %}), and transformers' {% generation %}.

// setStatement is {% set name = value %}, {% set ns.attr = value %}, with an
// optional `if cond else other`, or the block form
// {% set name | filters %}...{% endset %}.
type setStatement struct {
	location    *tokens.Token
	Target      nodes.Expression // *nodes.Name or *nodes.GetAttribute
	Value       nodes.Expression
	Condition   nodes.Expression
	Alternative nodes.Expression
	Body        *nodes.Wrapper
	Filters     []*nodes.FilterCall
}

func (s *setStatement) Position() *tokens.Token { return s.location }
func (s *setStatement) String() string          { return fmt.Sprintf("set(line %d)", s.location.Line) }

// parseBody parses a block statement's body up to its end tag (endset,
// endwith, ...), which takes no arguments.
func parseBody(p *parser.Parser, endTag string) (*nodes.Wrapper, error) {
	body, end, err := p.WrapUntil(endTag)
	if err != nil {
		return nil, err
	}
	if !end.End() {
		return nil, end.Error(endTag+" takes no arguments", nil)
	}
	return body, nil
}

func parseSet(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	s := &setStatement{location: p.Current()}
	target, err := args.ParseVariableOrLiteral()
	if err != nil {
		return nil, err
	}
	switch t := target.(type) {
	case *nodes.Name:
	case *nodes.GetAttribute:
		if t.Attribute == "" {
			return nil, args.Error("set can only assign to a name or a namespace attribute", nil)
		}
	default:
		return nil, args.Error("set can only assign to a name or a namespace attribute", nil)
	}
	s.Target = target
	if args.Current(tokens.Comma) != nil {
		return nil, args.Error("set with several targets (tuple unpacking) is not supported", nil)
	}

	if args.Match(tokens.Assign) == nil { // block form
		for args.Match(tokens.Pipe) != nil {
			f, err := args.ParseFilter()
			if err != nil {
				return nil, err
			}
			s.Filters = append(s.Filters, f)
		}
		if !args.End() {
			return nil, args.Error("expected '=' or the end of the set tag", args.Current())
		}
		body, err := parseBody(p, "endset")
		if err != nil {
			return nil, err
		}
		s.Body = body
		return s, nil
	}

	if s.Value, err = args.ParseExpression(); err != nil {
		return nil, err
	}
	if s.Condition, s.Alternative, err = args.ParseCondition(); err != nil {
		return nil, err
	}
	if !args.End() {
		return nil, args.Error("malformed set tag", args.Current())
	}
	return s, nil
}

// Execute evaluates the value and binds it.
func (s *setStatement) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	value, err := s.value(r)
	if err != nil {
		return err
	}
	switch t := s.Target.(type) {
	case *nodes.Name:
		r.Environment.Context.Set(t.Name.Val, value.Interface())
	case *nodes.GetAttribute:
		obj := r.Eval(t.Node)
		if obj.IsError() {
			return obj
		}
		ns, ok := obj.Interface().(namespace)
		if !ok {
			return errors.New("cannot assign attribute on non-namespace object")
		}
		if reaches(value.Interface(), ns) {
			return errors.New("cannot store a namespace inside itself")
		}
		ns[t.Attribute] = value.Interface()
	}
	return nil
}

func (s *setStatement) value(r *exec.Renderer) (*exec.Value, error) {
	var value *exec.Value
	switch {
	case s.Body != nil:
		text, err := renderToString(r, s.Body)
		if err != nil {
			return nil, err
		}
		value = exec.AsValue(text)
		for _, f := range s.Filters {
			if value = r.Evaluator().ExecuteFilter(f, value); value.IsError() {
				return nil, value
			}
		}
	case s.Condition != nil:
		cond := r.Eval(s.Condition)
		if cond.IsError() {
			return nil, cond
		}
		switch {
		case cond.IsTrue():
			value = r.Eval(s.Value)
		case s.Alternative != nil:
			value = r.Eval(s.Alternative)
		default:
			value = exec.AsValue(nil) // Undefined, as in Jinja
		}
	default:
		value = r.Eval(s.Value)
	}
	if value.IsError() {
		return nil, value
	}
	return value, nil
}

// renderToString renders body in a new scope and returns its text.
func renderToString(r *exec.Renderer, body *nodes.Wrapper) (string, error) {
	var buf strings.Builder
	sub := r.Inherit()
	sub.Output = &limitedWriter{w: &buf, max: maxOutputBytes, state: stateOf(r.Environment.Context)}
	if err := sub.ExecuteWrapper(body); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// withStatement is {% with a = x, b = y %}...{% endwith %}: the names are
// bound, from values evaluated in the outer scope, for the body only.
type withStatement struct {
	location *tokens.Token
	Names    []string
	Values   []nodes.Expression
	Body     *nodes.Wrapper
}

func (s *withStatement) Position() *tokens.Token { return s.location }
func (s *withStatement) String() string          { return fmt.Sprintf("with(line %d)", s.location.Line) }

func parseWith(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	s := &withStatement{location: p.Current()}
	for !args.End() {
		name := args.Match(tokens.Name)
		if name == nil || args.Match(tokens.Assign) == nil {
			return nil, args.Error("expected name = value in with tag", args.Current())
		}
		value, err := args.ParseExpression()
		if err != nil {
			return nil, err
		}
		s.Names = append(s.Names, name.Val)
		s.Values = append(s.Values, value)
		if args.Match(tokens.Comma) == nil && !args.End() {
			return nil, args.Error("expected ',' in with tag", args.Current())
		}
	}
	body, err := parseBody(p, "endwith")
	if err != nil {
		return nil, err
	}
	s.Body = body
	return s, nil
}

// Execute renders the body with the names bound.
func (s *withStatement) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	sub := r.Inherit()
	for i, e := range s.Values {
		v := r.Eval(e)
		if v.IsError() {
			return v
		}
		sub.Environment.Context.Set(s.Names[i], v.Interface())
	}
	return sub.ExecuteWrapper(s.Body)
}

// filterStatement is {% filter f | g(x) %}...{% endfilter %}: the body's
// text goes through the filters.
type filterStatement struct {
	location *tokens.Token
	Filters  []*nodes.FilterCall
	Body     *nodes.Wrapper
}

func (s *filterStatement) Position() *tokens.Token { return s.location }
func (s *filterStatement) String() string          { return fmt.Sprintf("filter(line %d)", s.location.Line) }

func parseFilterBlock(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	s := &filterStatement{location: p.Current()}
	for {
		f, err := args.ParseFilter()
		if err != nil {
			return nil, err
		}
		s.Filters = append(s.Filters, f)
		if args.Match(tokens.Pipe) == nil {
			break
		}
	}
	if !args.End() {
		return nil, args.Error("malformed filter tag", args.Current())
	}
	body, err := parseBody(p, "endfilter")
	if err != nil {
		return nil, err
	}
	s.Body = body
	return s, nil
}

// Execute renders the body, filters it and writes the result.
func (s *filterStatement) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	text, err := renderToString(r, s.Body)
	if err != nil {
		return err
	}
	value := exec.AsValue(text)
	for _, f := range s.Filters {
		if value = r.Evaluator().ExecuteFilter(f, value); value.IsError() {
			return value
		}
	}
	out, err := stateOf(r.Environment.Context).str("filter block", value)
	if err != nil {
		return err
	}
	_, err = io.WriteString(r.Output, out)
	return err
}

// generationStatement is transformers' {% generation %}...{% endgeneration %}
// (AssistantTracker), which marks assistant text for
// return_assistant_tokens_mask; rendering just renders its body.
type generationStatement struct {
	location *tokens.Token
	Body     *nodes.Wrapper
}

func (s *generationStatement) Position() *tokens.Token { return s.location }
func (s *generationStatement) String() string {
	return fmt.Sprintf("generation(line %d)", s.location.Line)
}

func parseGeneration(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	if !args.End() {
		return nil, args.Error("generation takes no arguments", args.Current())
	}
	body, err := parseBody(p, "endgeneration")
	if err != nil {
		return nil, err
	}
	return &generationStatement{location: p.Current(), Body: body}, nil
}

// Execute renders the body.
func (s *generationStatement) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	return r.ExecuteWrapper(s.Body)
}
