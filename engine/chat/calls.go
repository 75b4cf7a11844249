package chat

import (
	"fmt"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Method calls. gonja calls a method through its own method sets, which
// see neither the render (so no budget) nor the cost of their receiver:
// for every call it spells the receiver out for an error message it may
// not need, and copies a list or dict receiver deeply, which for a list
// that holds one long string a thousand times is a thousand copies. The
// rewrite pass (rewrite.go) therefore turns x.name(args) into a call of
// the method helper, which runs this package's methods with the render's
// state; what they do not cover (a callable held in a dict or namespace,
// methods of numbers) goes to gonja as before.

// methodHelper returns the method helper: its arguments are the receiver,
// the method's name and the call's arguments.
func methodHelper(tables *methodTables) func(*exec.Evaluator, *exec.VarArgs) *exec.Value {
	return func(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
		if len(va.Args) < 2 || !va.Args[1].IsString() {
			return errorValue(fmt.Errorf("internal: method helper called with %d arguments", len(va.Args)))
		}
		self, name := va.Args[0], va.Args[1].String()
		args := &exec.VarArgs{Args: va.Args[2:], KwArgs: va.KwArgs}
		st := stateOf(e.Environment.Context)
		if isUndefined(self) || self.IsNil() {
			return gonjaMethod(e, self, name, args)
		}
		var (
			result any
			err    error
		)
		switch {
		case self.IsString():
			m, ok := tables.str[name]
			if !ok {
				return errorValue(fmt.Errorf("'str' object has no attribute '%s'", name))
			}
			result, err = m(st, self.String(), args)
		case self.IsList():
			m, ok := tables.list[name]
			if !ok {
				return errorValue(fmt.Errorf("'%s' object has no attribute '%s'", typeName(self), name))
			}
			result, err = m(st, self, args)
		case self.IsDict():
			item, found := dictItem(self, name)
			if found && item.IsCallable() {
				return gonjaMethod(e, self, name, args) // a macro kept in a dict or namespace
			}
			m, ok := tables.dict[name]
			if _, isNamespace := self.Interface().(namespace); !ok || isNamespace {
				return errorValue(fmt.Errorf("'%s' object has no attribute '%s'", typeName(self), name))
			}
			result, err = m(st, self, args)
		default:
			return gonjaMethod(e, self, name, args)
		}
		if err != nil {
			return errorValue(err)
		}
		return exec.AsValue(result)
	}
}

// dictItem looks name up in a dict or namespace as gonja's attribute
// lookup does.
func dictItem(d *exec.Value, name string) (*exec.Value, bool) {
	if ns, ok := d.Interface().(namespace); ok {
		v, found := ns[name]
		return exec.AsValue(v), found
	}
	return dictGet(d, exec.AsValue(name))
}

// gonjaMethod calls self.name(args) as gonja evaluates it, with the
// operands bound to names no template can write.
func gonjaMethod(e *exec.Evaluator, self *exec.Value, name string, args *exec.VarArgs) *exec.Value {
	ctx := e.Environment.Context.Inherit()
	env := *e.Environment
	env.Context = ctx
	sub := &exec.Evaluator{Environment: &env, Config: e.Config, Loader: e.Loader}
	bind := func(key string, v *exec.Value) *nodes.Name {
		ctx.Set(key, v.Interface())
		return &nodes.Name{Name: &tokens.Token{Type: tokens.Name, Val: key}}
	}
	receiver := bind("tracer receiver", self)
	call := &nodes.Call{
		Location: &tokens.Token{},
		Func:     &nodes.GetAttribute{Location: &tokens.Token{}, Node: receiver, Attribute: name},
		Parent:   receiver,
		Kwargs:   map[string]nodes.Expression{},
	}
	for i, a := range args.Args {
		call.Args = append(call.Args, bind(fmt.Sprintf("tracer arg %d", i), a))
	}
	for k, v := range args.KwArgs {
		call.Kwargs[k] = bind("tracer kwarg "+k, v)
	}
	return sub.Eval(call)
}
