package chat

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// The output budget bounds the memory one render can take. Go cannot
// recover from running out of memory, so a template must be stopped before
// it allocates, not after: every filter, method and operator that builds a
// string or a list first works out the size of its result (len(s)*n for
// s*n, the padded width for center, ...) and charges it to the render's
// budget, which fails once the bytes built in the whole render would pass
// it. Strings cost their bytes, lists listItemBytes per item (the
// interface value each item is held in); the rendered text is charged as
// it is written.

// DefaultOutputBudget is the output budget of a render whose
// Options.OutputBudget is 0: 4 MiB. A chat prompt is a few KiB; a real
// template builds a small multiple of the conversation's text.
const DefaultOutputBudget = 4 << 20

// listItemBytes is what one list item costs against the budget: the
// interface value that holds it in a []any.
const listItemBytes = 16

// loopItemBytes is what each item a for loop iterates costs against the
// budget, charged before the loop starts: gonja gives every item its own
// context (several hundred bytes) before the body runs once, so a loop
// whose body fails at once would still cost that for every item.
const loopItemBytes = 256

// ErrOutputBudget is wrapped by the error Render returns when a template
// builds more than its output budget (see *BudgetError).
var ErrOutputBudget = errors.New("chat template output budget exceeded")

// BudgetError reports the filter, method or operator that would have
// passed the render's output budget.
type BudgetError struct {
	Budget int    // bytes allowed in one render
	Used   int    // bytes built before the refused one
	Need   int    // bytes the refused builder asked for; -1 when unknown
	In     string // what asked: "center()", "operator *", "tojson", ...
}

// Error names the budget and the builder and says how to allow more.
func (e *BudgetError) Error() string {
	need := "more"
	if e.Need >= 0 && e.Need < math.MaxInt {
		need = fmt.Sprintf("%d more", e.Need)
	}
	return fmt.Sprintf("output budget of %s exceeded in %s: it would build %s bytes after %d (the caller sets the budget with Options.OutputBudget)",
		byteSize(e.Budget), e.In, need, e.Used)
}

// Is makes errors.Is(err, ErrOutputBudget) true.
func (e *BudgetError) Is(target error) bool { return target == ErrOutputBudget }

// byteSize spells a budget as people write it: 4 MiB, 512 KiB, 1000 bytes.
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// sizeMul and sizeAdd compute result sizes without overflow: anything
// negative or past math.MaxInt comes out as math.MaxInt, which no budget
// admits.
func sizeMul(a, b int) int {
	if a < 0 || b < 0 {
		return math.MaxInt
	}
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

func sizeAdd(sizes ...int) int {
	total := 0
	for _, n := range sizes {
		if n < 0 || n > math.MaxInt-total {
			return math.MaxInt
		}
		total += n
	}
	return total
}

// charge counts n bytes that the builder named in is about to allocate.
// It fails, before the allocation, when they would pass the budget; once
// it has failed it fails every later call, so a template that swallows the
// error (with default(), say) still stops.
func (s *renderState) charge(in string, n int) error {
	if err := s.fits(in, n); err != nil {
		return err
	}
	s.used += n
	return nil
}

// chargeItems counts a list of n items.
func (s *renderState) chargeItems(in string, n int) error {
	return s.charge(in, sizeMul(n, listItemBytes))
}

// fits checks, without counting, that an upper bound of a result's size
// fits what is left of the budget; the builder charges the actual size
// after. It keeps builders whose exact size is costly to know (case
// mapping, escaping) from allocating past the budget.
func (s *renderState) fits(in string, n int) error {
	if s.exceeded != nil {
		return s.exceeded
	}
	if n < 0 || n > s.budget-s.used {
		s.exceeded = &BudgetError{Budget: s.budget, Used: s.used, Need: n, In: in}
		return s.exceeded
	}
	return nil
}

// left is what remains of the budget.
func (s *renderState) left() int { return s.budget - s.used }

// textBuilder is a strings.Builder that stops at limit bytes: a write that
// would pass it sets over and is dropped, as are all later ones. Text whose
// size is known only once written (a repr, JSON) is built in one, so that
// it costs at most limit bytes however large the value it describes (a list
// holding the same long string a thousand times is small, its repr is not).
type textBuilder struct {
	strings.Builder
	limit int
	over  bool
}

func (b *textBuilder) room(n int) bool {
	if b.over || n > b.limit-b.Len() {
		b.over = true
		return false
	}
	return true
}

// Write, WriteString, WriteByte and WriteRune write unless that would pass
// the limit.
func (b *textBuilder) Write(p []byte) (int, error) {
	if !b.room(len(p)) {
		return len(p), nil
	}
	return b.Builder.Write(p)
}

func (b *textBuilder) WriteString(s string) (int, error) {
	if !b.room(len(s)) {
		return len(s), nil
	}
	return b.Builder.WriteString(s)
}

func (b *textBuilder) WriteByte(c byte) error {
	if b.room(1) {
		return b.Builder.WriteByte(c)
	}
	return nil
}

func (b *textBuilder) WriteRune(r rune) (int, error) {
	if !b.room(utf8.RuneLen(r)) {
		return 0, nil
	}
	return b.Builder.WriteRune(r)
}

// finish charges the built text to the budget and returns it; the builder
// refused past the budget, so the text never exceeded it.
func (s *renderState) finish(in string, b *textBuilder) (string, error) {
	if b.over {
		return "", s.charge(in, math.MaxInt)
	}
	if err := s.charge(in, b.Len()); err != nil {
		return "", err
	}
	return b.String(), nil
}

// builder returns a textBuilder limited to what is left of the budget.
func (s *renderState) builder() *textBuilder {
	return &textBuilder{limit: max(0, s.left())}
}

// str is Python's str(v) built within the budget: a string as it is (no
// new bytes), anything else by its repr.
func (s *renderState) str(in string, v *exec.Value) (string, error) {
	if isUndefined(v) {
		return "", nil
	}
	if v.IsString() {
		return v.String(), nil
	}
	return s.repr(in, v)
}

// repr is Python's repr(v) built within the budget.
func (s *renderState) repr(in string, v *exec.Value) (string, error) {
	b := s.builder()
	writeRepr(b, v, 0)
	return s.finish(in, b)
}

// shortRepr is repr(v) cut to about 200 bytes, for error messages.
func shortRepr(v *exec.Value) string {
	b := &textBuilder{limit: 200}
	writeRepr(b, v, 0)
	if b.over {
		return b.String() + "..."
	}
	return b.String()
}

// errorString turns a builder's failure into the value gonja passes on.
func errorString(text string, err error) *exec.Value {
	if err != nil {
		return errorValue(err)
	}
	return exec.AsValue(text)
}

// replacedSize is the length of strings.Replace(s, old, repl, -1) when
// old occurs n times (n counts the places an empty old matches).
func replacedSize(s, old, repl string, n int) int {
	if len(repl) <= len(old) {
		return len(s)
	}
	return sizeAdd(len(s), sizeMul(n, len(repl)-len(old)))
}

// joinStrings is strings.Join(parts, sep), charged before it is built.
func joinStrings(st *renderState, in string, parts []string, sep string) (string, error) {
	size := sizeMul(max(0, len(parts)-1), len(sep))
	for _, p := range parts {
		size = sizeAdd(size, len(p))
	}
	if err := st.charge(in, size); err != nil {
		return "", err
	}
	return strings.Join(parts, sep), nil
}

// loopItems is a for loop's iterable, charged loopItemBytes an item before
// gonja materialises it (the rewrite pass wraps every loop's iterable in
// it).
func loopItems(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	args, bad := helperArgs(va, 1)
	if bad != nil {
		return bad
	}
	v := args[0]
	if v.IsList() || v.IsDict() || v.IsString() {
		if err := stateOf(e.Environment.Context).charge("for loop", sizeMul(v.Len(), loopItemBytes)); err != nil {
			return errorValue(err)
		}
	}
	return v
}
