package chat

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"tracer/engine/bench"
)

// testBudget is the output budget the budget tests render with.
const testBudget = 1 << 20

// budgetHog is one template that, without the output budget, allocates far
// more than it (gigabytes, or past what Go can allocate at all).
type budgetHog struct {
	name    string
	src     string
	wantErr string // a substring of the error; "" means it renders
}

// sharedLists builds c and d, equal lists of lists of lists, sharing
// nothing between them but everything within.
const sharedLists = "{% set a = ['x'] * 1000 %}{% set b = [a] * 1000 %}{% set c = [b] * 1000 %}" +
	"{% set a2 = ['x'] * 1000 %}{% set b2 = [a2] * 1000 %}{% set d = [b2] * 1000 %}"

// budgetHogs are the templates that must fail on the budget (or, where
// Python fails first, with Python's error) quickly and without allocating.
// Templates build their big string from 'x' * 1000000 and friends: one
// string under the 1 MiB test budget, then something that repeats it.
var budgetHogs = []budgetHog{
	// The cases of the issue.
	{"center filter", "{{ 'a'|center(10**12) }}", "output budget of 1 MiB exceeded in filter center"},
	{"format width", "{{ '{:>10000000000}'.format(1) }}", "output budget of 1 MiB exceeded in str.format()"},
	{"replace filter", "{% set s = 'x' * 1000 %}{{ s|replace('x', 'x' * 100000) }}", "output budget of 1 MiB exceeded in filter replace"},
	{"indent filter", "{{ ('a\\n' * 100000)|indent(10000) }}", "output budget of 1 MiB exceeded in filter indent"},
	{"indent of a float repetition", "{{ ('a\\n' * 1e6)|indent(10000) }}", "can't multiply sequence by non-int of type 'float'"},
	{"tojson indent", "{{ messages|tojson(indent=10**9) }}", "output budget of 1 MiB exceeded in filter tojson"},
	{"list of a long string", "{{ ['x' * 15000000] * 100 }}", "output budget of 1 MiB exceeded in operator *"},
	{"printed shared list", "{% set s = 'x' * 1000000 %}{{ [s] * 1000 }}", "output budget of 1 MiB exceeded in printing"},
	{"map center", "{{ range(1000)|map('center', 100000)|list }}", "output budget of 1 MiB exceeded in filter center"},

	// Lists of list literals shared many times: the printers must not wrap
	// each item for gonja (found by FuzzRender: 20 MB before the budget).
	{"tojson of shared list literals", "{%set a=[]%}{%set b=[a]*1000%}{%set c=[b]*1000%}{{c|tojson}}", "output budget of 1 MiB exceeded in filter tojson"},
	{"tojson of shared dict literals", "{%set a={}%}{%set b=[a]*1000%}{%set c=[b]*1000%}{{c|tojson}}", "output budget of 1 MiB exceeded in filter tojson"},
	{"printed shared list literals", "{%set a=[]%}{%set b=[a]*1000%}{%set c=[b]*1000%}{{c}}", "output budget of 1 MiB exceeded in printing"},
	{"string of shared list literals", "{%set a=[[]]%}{%set b=[a]*1000%}{%set c=[b]*1000%}{{c|string}}", "output budget of 1 MiB exceeded"},

	// Operators.
	{"string repetition", "{{ 'x' * 10**12 }}", "output budget of 1 MiB exceeded in operator *"},
	{"string repetition by a float", "{{ 'x' * 1e12 }}", "can't multiply sequence"},
	{"list repetition", "{{ [0] * 10**6 }}", "output budget of 1 MiB exceeded in operator *"},
	{"addition", "{% set s = 'x' * 600000 %}{{ s + s }}", "output budget of 1 MiB exceeded in operator +"},
	{"list addition", "{% set l = [0] * 20000 %}{{ (l + l + l)|length }}", "output budget of 1 MiB exceeded in operator +"},
	{"concatenation", "{% set s = 'x' * 600000 %}{{ s ~ s }}", "output budget of 1 MiB exceeded in operator ~"},
	{"concatenation of a shared list", "{% set s = 'x' * 100000 %}{{ ([s] * 1000) ~ '' }}", "output budget of 1 MiB exceeded in operator ~"},
	{"percent width", "{% for i in range(100) %}{{ '%999999s' % 'x' }}{% endfor %}", "output budget of 1 MiB exceeded"},
	{"percent of a shared list", "{% set s = 'x' * 100000 %}{{ '%s' % ([s] * 1000,) }}", "output budget of 1 MiB exceeded in operator %"},
	{"doubling", "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "output budget of 1 MiB exceeded in operator +"},

	// Filters.
	{"join filter", "{% set s = 'x' * 100000 %}{{ ([s] * 100)|join(',') }}", "output budget of 1 MiB exceeded in filter join"},
	{"format filter", "{% set s = 'x' * 100000 %}{{ '%s'|format([s] * 1000) }}", "output budget of 1 MiB exceeded in filter format"},
	{"wordwrap wrapstring", "{% set w = 'y' * 100000 %}{{ ('a ' * 10000)|wordwrap(1, wrapstring=w) }}", "output budget of 1 MiB exceeded in filter wordwrap"},
	{"truncate of a shared list", "{% set s = 'x' * 100000 %}{{ ([s] * 1000)|truncate(10) }}", "output budget of 1 MiB exceeded in filter truncate"},
	{"list of a range", "{{ range(60000)|list }}", "output budget of 1 MiB exceeded in filter list"},
	{"list of a string", "{{ ('x' * 100000)|list }}", "output budget of 1 MiB exceeded in filter list"},
	{"batch fill", "{{ [1]|batch(10**12, fill_with=0)|list }}", "output budget of 1 MiB exceeded in filter batch"},
	{"slice count", "{{ [1, 2]|slice(10**9)|list }}", "output budget of 1 MiB exceeded in filter slice"},
	{"pprint of a shared list", "{% set s = 'x' * 100000 %}{{ ([s] * 1000)|pprint }}", "output budget of 1 MiB exceeded in filter pprint"},
	{"string of a shared list", "{% set s = 'x' * 100000 %}{{ ([s] * 1000)|string }}", "output budget of 1 MiB exceeded in filter string"},
	{"tojson of a shared list", "{% set s = 'x' * 100000 %}{{ ([s] * 1000)|tojson }}", "output budget of 1 MiB exceeded in filter tojson"},
	{"escape", "{{ ('<' * 500000)|e }}", "output budget of 1 MiB exceeded in filter e"},
	{"sort of shared lists", "{% set s = 'x' * 100000 %}{{ ([[s] * 100] * 10)|sort }}", "output budget of 1 MiB exceeded in filter sort"},
	{"upper", "{{ ('ß' * 400000)|upper }}", "output budget of 1 MiB exceeded in filter upper"},
	{"reverse", "{{ (range(50000)|list)|reverse|list }}", "output budget of 1 MiB exceeded in filter"},
	{"trim of a shared list", "{% set s = 'x' * 100000 %}{{ ([s] * 1000)|trim }}", "output budget of 1 MiB exceeded in filter trim"},
	{"int of a shared list", "{% set s = 'x' * 100000 %}{{ ([s] * 1000)|int }}", "output budget of 1 MiB exceeded in filter int"},
	{"wordcount of a shared list", "{% set s = 'x ' * 100000 %}{{ ([s] * 1000)|wordcount }}", "output budget of 1 MiB exceeded in filter wordcount"},
	{"dictsort in a loop", "{% for i in range(3500) %}{% set x = {'a': 1, 'b': 2}|dictsort %}{% endfor %}", "output budget of 1 MiB exceeded in filter dictsort"},
	{"items in a loop", "{% for i in range(3500) %}{% set x = {'a': 1, 'b': 2}|items %}{% endfor %}", "output budget of 1 MiB exceeded in filter items"},

	// Methods.
	{"ljust", "{{ 'x'.ljust(10**12) }}", "output budget of 1 MiB exceeded in str.ljust()"},
	{"rjust", "{{ 'x'.rjust(10**12, '*') }}", "output budget of 1 MiB exceeded in str.rjust()"},
	{"center method", "{{ 'x'.center(10**12) }}", "output budget of 1 MiB exceeded in str.center()"},
	{"zfill", "{{ '7'.zfill(10**12) }}", "output budget of 1 MiB exceeded in str.zfill()"},
	{"replace method", "{% set s = 'x' * 1000 %}{{ s.replace('x', 'y' * 100000) }}", "output budget of 1 MiB exceeded in str.replace()"},
	{"join method", "{% set s = 'x' * 100000 %}{{ ','.join([s] * 100) }}", "output budget of 1 MiB exceeded in str.join()"},
	{"format of a shared list", "{% set s = 'x' * 100000 %}{{ '{}'.format([s] * 1000) }}", "output budget of 1 MiB exceeded in str.format()"},
	{"format nested width", "{{ '{:>{}}'.format(1, 10**10) }}", "output budget of 1 MiB exceeded in str.format()"},
	{"format precision", "{{ '{:.1000000000f}'.format(1.5) }}", "output budget of 1 MiB exceeded in str.format()"},
	{"expandtabs", "{{ ('\\t' * 1000).expandtabs('', 10**9) }}", "output budget of 1 MiB exceeded in str.expandtabs()"},
	{"split", "{{ ('a ' * 400000).split()|length }}", "output budget of 1 MiB exceeded in str.split()"},
	{"splitlines", "{{ ('\\n' * 500000).splitlines()|length }}", "output budget of 1 MiB exceeded in str.splitlines()"},
	{"upper method", "{{ ('ß' * 400000).upper() }}", "output budget of 1 MiB exceeded in str.upper()"},
	{"list copy in a loop", "{% set l = range(1000)|list %}{% for i in range(100) %}{% set c = l.copy() %}{% endfor %}", "output budget of 1 MiB exceeded in list.copy()"},
	{"method on a shared list", "{% set s = 'x' * 1000000 %}{{ ([s] * 1000).count(1) }}", ""},
	{"in on a shared list", "{% set s = 'x' * 1000000 %}{{ ([s] * 1000) in 'abc' }}", "requires string as left operand"},

	// Globals, slicing and indexing.
	{"range in a loop", "{% for i in range(100) %}{% set r = range(10000) %}{% endfor %}", "output budget of 1 MiB exceeded in range()"},
	{"strftime_now", "{{ strftime_now('%A' * 200000) }}", "output budget of 1 MiB exceeded in strftime_now()"},
	{"slicing in a loop", "{% set l = [0] * 30000 %}{% for i in range(10) %}{% set m = l[1:] %}{% endfor %}", "output budget of 1 MiB exceeded in slicing"},
	{"string slicing in a loop", "{% set s = 'x' * 300000 %}{% for i in range(10) %}{% set m = s[::-1] %}{% endfor %}", "output budget of 1 MiB exceeded in slicing"},
	{"indexing a long string", "{% set s = 'x' * 500000 %}{% for i in range(1000) %}{% set y = s[i] %}{% endfor %}ok", ""},
	{"startswith on a long string", "{% set s = 'x' * 500000 %}{% for i in range(1000) %}{% if s.startswith('y') %}{% endif %}{% endfor %}ok", ""},

	// A list of a list of a list, each level a thousand times the one
	// below: small to build, a billion items to walk.
	{"namespace store of a shared list", sharedLists + "{% set ns = namespace() %}{% set ns.v = c %}ok", ""},
	{"comparing shared lists", sharedLists + "{{ c == d }}|{{ c < d }}|{{ c != d }}|{{ c is eq d }}|{{ d in [c] }}|{{ [c, d].count(c) }}", ""},
	{"tojson of shared lists", sharedLists + "{{ c|tojson }}", "output budget of 1 MiB exceeded in filter tojson"},
	{"join of shared lists", sharedLists + "{{ c|join }}", "output budget of 1 MiB exceeded in filter join"},
	{"printing shared lists", sharedLists + "{{ c }}", "output budget of 1 MiB exceeded in printing"},
	{"escaping shared lists", sharedLists + "{{ c|e }}", "output budget of 1 MiB exceeded in filter e"},
	{"sorting shared lists", sharedLists + "{{ [c, d]|sort|length }}", "output budget of 1 MiB exceeded in filter sort"},

	// Blocks and macros.
	{"macro text", "{% macro m() %}{{ 'x' * 600000 }}{% endmacro %}{{ m() ~ m() }}", "output budget of 1 MiB exceeded"},
	{"filter block", "{% filter upper %}{% for i in range(2000) %}{{ 'x' * 1000 }}{% endfor %}{% endfilter %}", "output budget of 1 MiB exceeded"},
	{"set block", "{% set b %}{% for i in range(2000) %}{{ 'x' * 1000 }}{% endfor %}{% endset %}", "output budget of 1 MiB exceeded"},
	{"output", "{% for i in range(2000) %}" + strings.Repeat("x", 1000) + "{% endfor %}", "output budget of 1 MiB exceeded in the rendered text"},
	{"swallowed by default", "{{ ('x' * 10**9)|default('') }}{{ 'ok' }}", "output budget of 1 MiB exceeded in operator *"},
}

// renderBudget renders src on the fuzz conversation with the output budget
// given, failing the test if it takes longer than limit.
func renderBudget(t *testing.T, src string, budget int, limit time.Duration) (string, error) {
	t.Helper()
	tmpl, err := Parse(src, fuzzVars)
	if err != nil {
		return "", err
	}
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		text, err := tmpl.Render(fuzzConversation, Options{
			AddGenerationPrompt: true,
			Tools:               []any{Object{{"type", "function"}}},
			OutputBudget:        budget,
		})
		done <- result{text, err}
	}()
	select {
	case r := <-done:
		return r.text, r.err
	case <-time.After(limit):
		t.Fatalf("template %q did not finish within %v", src, limit)
		return "", nil
	}
}

func TestOutputBudget(t *testing.T) {
	for _, tt := range budgetHogs {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderBudget(t, tt.src, testBudget, 10*time.Second)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got error %v, want it to render", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("got %d bytes of output, want an error containing %q", len(got), tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("got error %q, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(tt.wantErr, "output budget") && !errors.Is(err, ErrOutputBudget) {
				t.Errorf("errors.Is(%v, ErrOutputBudget) = false, want true", err)
			}
		})
	}
}

// TestOutputBudgetOption checks the budget the caller sets: 0 is the
// default, a budget is counted in bytes, a negative one is refused, and
// ordinary templates render the same under any budget they fit.
func TestOutputBudgetOption(t *testing.T) {
	chatML := "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}" +
		"{% if tools %}{{ tools|tojson(indent=2) }}{% endif %}{{ messages|map(attribute='role')|join(',')|upper }}"
	want, err := renderBudget(t, chatML, 0, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		budget  int
		wantErr string
	}{
		{"default", 0, ""},
		{"test budget", testBudget, ""},
		{"the text's own size is not enough", 200, "output budget of 200 bytes exceeded"},
		{"tiny", 1, "output budget of 1 bytes exceeded"},
		{"negative", -1, "Options.OutputBudget is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderBudget(t, chatML, tt.budget, 10*time.Second)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got error %v", err)
			case tt.wantErr == "" && got != want:
				t.Fatalf("got %q, want %q", got, want)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("got %q, %v; want an error containing %q", got, err, tt.wantErr)
			}
		})
	}
}

// fuzzSeeds lists FuzzRender's templates: its own seeds, the jinja2
// comparison cases, the committed corpus and the budget hogs.
func fuzzSeeds(t testing.TB) []string {
	t.Helper()
	seeds := []string{
		"{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
		"{% if tools %}{{ tools|tojson(indent=2) }}{% endif %}{{ messages[-1]['content'][::-1] }}",
		"{% set ns = namespace(a=[]) %}{% for m in messages if m.role != 'system' %}{% set ns.a = ns.a + [m.content|trim] %}{% endfor %}{{ ns.a|join('\\n') }}",
		"{% macro r(x) %}{% if x is mapping %}{% for k, v in x|items %}{{ k }}={{ r(v) }}{% endfor %}{% else %}{{ x }}{% endif %}{% endmacro %}{{ r(messages[2]) }}",
		"{{ (messages[0].content if messages else '')|upper }}{{ '%s-%d' % ('a', 1) }}",
		"{%- raw -%} {{ x }} {%- endraw -%}{# c #}{% generation %}g{% endgeneration %}",
	}
	for _, c := range loadJinjaCases(t) {
		seeds = append(seeds, c.Template)
	}
	files, err := filepath.Glob("testdata/fuzz/FuzzRender/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		src, err := readCorpusString(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seeds = append(seeds, src)
	}
	for _, h := range budgetHogs {
		seeds = append(seeds, h.src)
	}
	return seeds
}

// readCorpusString reads a corpus file of Go's fuzzing format holding one
// string.
func readCorpusString(name string) (string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	header, rest, ok := strings.Cut(string(data), "\n")
	if !ok || header != "go test fuzz v1" {
		return "", errors.New("not a go test fuzz v1 file")
	}
	literal, ok := strings.CutPrefix(strings.TrimSpace(rest), "string(")
	if !ok || !strings.HasSuffix(literal, ")") {
		return "", errors.New("not one string")
	}
	return strconv.Unquote(strings.TrimSuffix(literal, ")"))
}

// renderAllowance is what one render under testBudget may allocate in
// all: the budget a few times over (a strings.Builder doubles its buffer, a
// repr is spelled out to check that it fits, the text is copied out of the
// output buffer), a margin, and what gonja itself allocates for each loop
// iteration or macro call (new scopes, loop variables): about 2 KiB.
func renderAllowance(steps int) uint64 {
	return 6*testBudget + 4<<20 + uint64(steps)*4<<10
}

// TestRenderMemory renders every template FuzzRender knows, the budget
// hogs included, under the test budget and checks that none allocates more
// than renderAllowance in all, so none held more at any moment either.
func TestRenderMemory(t *testing.T) {
	most, mostSrc := uint64(0), ""
	defer func() { t.Logf("the most any render allocated: %d bytes, by %.100q", most, mostSrc) }()
	// The process's peak resident memory over all the renders: what one
	// render may allocate, twice over for the collector, and a margin.
	rss, peakOK := bench.RSSBytes(), bench.ResetPeakRSS()
	defer func() {
		peak := bench.PeakRSSBytes()
		if !peakOK || peak <= 0 || rss <= 0 {
			return
		}
		limit := rss + 2*int64(most) + 32<<20
		t.Logf("peak RSS %.1f MiB (%.1f MiB at the start); limit %.1f MiB", float64(peak)/(1<<20), float64(rss)/(1<<20), float64(limit)/(1<<20))
		if peak > limit {
			t.Errorf("peak RSS while rendering every template is %d bytes, want at most %d", peak, limit)
		}
	}()
	for i, src := range fuzzSeeds(t) {
		tmpl, err := Parse(src, fuzzVars)
		if err != nil {
			continue
		}
		got, steps := measureRender(t, tmpl)
		if got > most {
			most, mostSrc = got, src
		}
		if want := renderAllowance(steps); got > want {
			t.Errorf("template %d %.200q allocated %d bytes in %d steps, want at most %d", i, src, got, steps, want)
		}
	}
}

// measureRender renders tmpl as Render does, under the test budget, and
// returns the bytes allocated and the steps the render took.
func measureRender(t testing.TB, tmpl *Template) (allocated uint64, steps int) {
	t.Helper()
	allocated, st, _, _ := measureRenderState(t, tmpl)
	return allocated, st.steps
}

// measureRenderState is measureRender, also returning the render's state,
// text and error.
func measureRenderState(t testing.TB, tmpl *Template) (allocated uint64, st *renderState, text string, err error) {
	t.Helper()
	opts := Options{AddGenerationPrompt: true, Tools: []any{Object{{"type", "function"}}}}
	name, err := tmpl.pick(opts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := tmpl.variables(fuzzConversation, opts)
	if err != nil {
		t.Fatal(err)
	}
	st = newRenderState(time.Time{}, testBudget)
	data[stateKey] = st
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	text, err = execute(tmpl.compiled[name], data, st)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, st, text, err
}

// TestSlice checks x[a:b:c], which the package now evaluates itself, against
// Python's answers.
func TestSlice(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"{{ 'abcdef'[1:4] }}", "bcd"},
		{"{{ 'abcdef'[::-2] }}", "fdb"},
		{"{{ 'abcdef'[-2:] }}", "ef"},
		{"{{ 'abcdef'[10:] }}|{{ 'abcdef'[:-10] }}", "|"},
		{"{{ 'héllo👋'[1:3] }}|{{ 'héllo👋'[-1] }}|{{ 'héllo👋'[::-1] }}", "él|👋|👋olléh"},
		{"{{ [1, 2, 3][::-1] }}|{{ [1, 2, 3][5:0:-1] }}|{{ [1, 2, 3][-5:2] }}", "[3, 2, 1]|[3, 2]|[1, 2]"},
		{"{{ ({'a': 1}|items|first)[1:] }}|{{ ({'a': 1}|items|first)[:5] }}", "(1,)|('a', 1)"},
		{"{{ messages[1:]|length }}|{{ messages[::2]|map(attribute='role')|join(',') }}", "3|system,assistant"},
		{"{{ 'abc'[none:none:none] }}", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := renderBudget(t, tt.src, 0, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	for _, src := range []string{"{{ 'abc'[::0] }}", "{{ 'abc'['a':] }}"} {
		if got, err := renderBudget(t, src, 0, 10*time.Second); err == nil {
			t.Errorf("%s: got %q, want an error", src, got)
		}
	}
}

// TestLimitsUnderALargeBudget checks that the limits older than the budget
// still hold when a caller sets a budget above them.
func TestLimitsUnderALargeBudget(t *testing.T) {
	tests := []struct {
		name, src, wantErr string
	}{
		{"one string", "{{ 'x' * 20000000 }}", "string longer than 16777216 bytes"},
		{"one list", "{{ ([0] * 2000000)|length }}", "list longer than 1048576 items"},
		{"the text", "{% for i in range(20000) %}" + strings.Repeat("x", 1000) + "{% endfor %}", "rendered text is longer than 16777216 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderBudget(t, tt.src, 1<<30, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %d bytes, %v; want an error containing %q", len(got), err, tt.wantErr)
			}
		})
	}
}
