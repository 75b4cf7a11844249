package chat

import (
	"fmt"
	"io"
	"time"

	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Limits on one render. Jinja has no while loop: a template repeats work
// only through for loops and macro calls, so counting those (steps) and
// checking the clock at each bounds the time any template can take. A real
// chat template takes a few hundred steps and well under a millisecond.
const (
	maxSteps       = 100_000  // loop iterations plus macro calls
	maxMacroDepth  = 200      // nested macro calls (Python stops near 1000 frames)
	maxRange       = 100_000  // as jinja2.sandbox.MAX_RANGE
	maxOutputBytes = 16 << 20 // rendered text, and any one macro's text
	maxMacroBytes  = 64 << 20 // text returned by all macro calls together
	renderTimeout  = 10 * time.Second
)

// stateKey names the per-render state in the template context. It is not a
// valid identifier, so templates cannot read or replace it.
const stateKey = "tracer chat state"

// renderState is what one Render call counts and remembers.
type renderState struct {
	steps    int
	depth    int
	produced int // bytes returned by macro calls
	deadline time.Time
	now      time.Time   // what strftime_now formats
	raised   *RaiseError // set by raise_exception

	budget   int          // output budget in bytes (budget.go)
	used     int          // bytes of strings and lists built so far
	exceeded *BudgetError // set when a builder was refused
}

func newRenderState(now time.Time, budget int) *renderState {
	if now.IsZero() {
		now = time.Now()
	}
	if budget == 0 {
		budget = DefaultOutputBudget
	}
	return &renderState{deadline: time.Now().Add(renderTimeout), now: now, budget: budget}
}

func (s *renderState) step() error {
	s.steps++
	if s.steps > maxSteps {
		return fmt.Errorf("template ran more than %d loop iterations and macro calls", maxSteps)
	}
	if time.Now().After(s.deadline) {
		return fmt.Errorf("template took longer than %v", renderTimeout)
	}
	return nil
}

func stateOf(ctx *exec.Context) *renderState {
	v, _ := ctx.Get(stateKey)
	s, _ := v.(*renderState)
	if s == nil { // never nil in a Render call; keeps hand-run templates working
		s = newRenderState(time.Time{}, 0)
		ctx.Set(stateKey, s)
	}
	return s
}

// stepNode is put first in every for-loop body (rewrite.go): each
// iteration costs a step.
type stepNode struct{ location *tokens.Token }

func (n *stepNode) Position() *tokens.Token { return n.location }
func (n *stepNode) String() string          { return "step" }

// Execute counts one step. It also bounds the text a loop piles up where
// gonja renders into a buffer of its own (a macro body, a caller block):
// such a buffer grows by at most one loop body between two steps, and may
// not pass what is left of the output budget (the rendered text is
// charged as it is written, by limitedWriter).
func (n *stepNode) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	s := stateOf(r.Environment.Context)
	if err := s.step(); err != nil {
		return err
	}
	if _, charged := r.Output.(*limitedWriter); charged {
		return nil
	}
	if buf, ok := r.Output.(interface{ Len() int }); ok {
		if buf.Len() > maxOutputBytes {
			return errOutputTooLarge
		}
		if err := s.fits("a macro or caller body", buf.Len()); err != nil {
			return err
		}
	}
	return nil
}

// countedMacroNode is a macro definition whose calls are counted: each
// costs a step, and nesting is bounded, since unbounded recursion would
// overflow Go's stack, which no recover can catch.
type countedMacroNode struct {
	*controlStructures.MacroControlStructure
}

// Execute defines the macro as gonja does, then replaces the callable with
// one that counts.
func (m *countedMacroNode) Execute(r *exec.Renderer, tag *nodes.ControlStructureBlock) error {
	if err := m.MacroControlStructure.Execute(r, tag); err != nil {
		return err
	}
	ctx := r.Environment.Context
	v, _ := ctx.Get(m.Name)
	inner, ok := v.(exec.Macro)
	if !ok {
		return fmt.Errorf("macro %s: unexpected definition", m.Name)
	}
	ctx.Set(m.Name, exec.Macro(func(params *exec.VarArgs) *exec.Value {
		s := stateOf(ctx)
		if err := s.step(); err != nil {
			return exec.AsValue(err)
		}
		if s.depth >= maxMacroDepth {
			return exec.AsValue(fmt.Errorf("macro %s: calls nested deeper than %d", m.Name, maxMacroDepth))
		}
		s.depth++
		defer func() { s.depth-- }()
		result := inner(params)
		if !result.IsError() {
			n := len(result.String())
			if s.produced += n; n > maxOutputBytes || s.produced > maxMacroBytes {
				return exec.AsValue(fmt.Errorf("macro %s: text longer than allowed (%d bytes in one call, %d in all)", m.Name, maxOutputBytes, maxMacroBytes))
			}
			if err := s.charge("macro "+m.Name+"()", n); err != nil {
				return exec.AsValue(err)
			}
		}
		return result
	}))
	return nil
}

// errOutputTooLarge stops a render whose text passes maxOutputBytes.
var errOutputTooLarge = fmt.Errorf("rendered text is longer than %d bytes", maxOutputBytes)

// limitedWriter fails once more than max bytes are written, or when what
// is written passes the render's output budget (state, when not nil).
type limitedWriter struct {
	w     io.Writer
	max   int
	n     int
	state *renderState
}

// Len is the number of bytes written.
func (l *limitedWriter) Len() int { return l.n }

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n+len(p) > l.max {
		return 0, errOutputTooLarge
	}
	if l.state != nil {
		if err := l.state.charge("the rendered text", len(p)); err != nil {
			return 0, err
		}
	}
	l.n += len(p)
	return l.w.Write(p)
}
