package chat

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// The str methods taken from gonja as they are (format, expandtabs,
// splitlines, ...) know nothing of the output budget, so each comes with
// an upper bound of what it builds, checked before it runs.

// gonjaStrMethods are the str methods taken from gonja, each with an upper
// bound of the size of what it builds, checked before it runs.
var gonjaStrMethods = map[string]func(st *renderState, self string, args *exec.VarArgs) int{
	"casefold":   caseBound,
	"swapcase":   caseBound,
	"encode":     func(_ *renderState, self string, _ *exec.VarArgs) int { return 2 * len(self) },
	"expandtabs": expandTabsBound,
	"format":     formatBound,
	"format_map": formatBound,
	"splitlines": func(_ *renderState, self string, _ *exec.VarArgs) int {
		return sizeMul(lineBreaks(self)+1, listItemBytes)
	},
	"find":         noBound,
	"rfind":        noBound,
	"isalnum":      noBound,
	"isalpha":      noBound,
	"isascii":      noBound,
	"isdecimal":    noBound,
	"isdigit":      noBound,
	"islower":      noBound,
	"isnumeric":    noBound,
	"isprintable":  noBound,
	"isspace":      noBound,
	"istitle":      noBound,
	"isupper":      noBound,
	"removeprefix": noBound,
	"removesuffix": noBound,
}

func noBound(*renderState, string, *exec.VarArgs) int { return 0 }

// caseBound: Unicode case mapping makes a string at most three times
// longer in bytes ("ΐ" -> "Ϊ́").
func caseBound(_ *renderState, self string, _ *exec.VarArgs) int { return sizeMul(3, len(self)) }

// boundedMethod runs one of gonja's str methods once an upper bound of
// what it builds fits the budget, then charges what it built.
func boundedMethod(name string, m exec.Method[string], bound func(*renderState, string, *exec.VarArgs) int) strMethod {
	in := "str." + name + "()"
	return func(st *renderState, self string, args *exec.VarArgs) (any, error) {
		if err := st.fits(in, bound(st, self, args)); err != nil {
			return nil, err
		}
		result, err := m(self, exec.AsValue(self), args)
		if err != nil {
			return nil, err
		}
		switch r := result.(type) {
		case string:
			err = st.charge(in, len(r))
		case []byte:
			err = st.charge(in, len(r))
		case []string:
			err = st.chargeItems(in, len(r))
		}
		return result, err
	}
}

// expandTabsBound: each tab becomes at most tabsize spaces (8 by default).
func expandTabsBound(_ *renderState, self string, args *exec.VarArgs) int {
	tab := 8
	for _, a := range args.Args {
		if n, ok := pyInt(a); ok {
			tab = max(tab, n)
		}
	}
	return sizeAdd(len(self), sizeMul(strings.Count(self, "\t"), tab))
}

// lineBreaks counts the characters str.splitlines splits at.
func lineBreaks(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			n++
		}
	}
	return n
}

// formatBound bounds the length of str.format(*args, **kwargs): the
// format's own text, plus for each replacement field the longest
// argument's text and the numbers in the field (width, precision; a
// nested field such as {:>{}} takes its width from an argument, so then
// the largest integer argument too), plus room for a number's digits.
func formatBound(st *renderState, format string, args *exec.VarArgs) int {
	values := append(slices.Clone(args.Args), slices.Collect(maps.Values(args.KwArgs))...)
	longest, largest := 0, 0
	for _, v := range values {
		longest = max(longest, st.textSize(v, 1))
		if n, ok := pyInt(v); ok {
			largest = max(largest, n)
		}
	}
	const digits = 1000 // float('1e308') in 'f' with grouping, and more
	total := len(format)
	for i := 0; i < len(format); i++ {
		if format[i] != '{' {
			continue
		}
		end := strings.IndexByte(format[i:], '}')
		if end < 0 {
			break
		}
		field := format[i+1 : i+end]
		total = sizeAdd(total, longest, digits)
		if strings.Contains(field, "{") {
			total = sizeAdd(total, largest)
		}
		for _, number := range strings.FieldsFunc(field, func(r rune) bool { return r < '0' || r > '9' }) {
			n, err := strconv.Atoi(number)
			if err != nil {
				return math.MaxInt
			}
			total = sizeAdd(total, n)
		}
		i += end
	}
	return total
}
