package chat

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// percentFormat is Python's printf-style formatting, format % args: a
// tuple or list supplies the arguments in turn, a dict serves %(key)s, any
// other value is the single argument. Conversions: d i u f F e E g G x X o
// c s r a and %%, with flags - + space 0 #, width and precision.
func percentFormat(st *renderState, in, format string, args *exec.Value) (string, error) {
	var list []*exec.Value
	mapping := args.IsDict() && !isUndefined(args)
	switch {
	case mapping:
	case args.IsList() && !isUndefined(args):
		for i := range args.Len() {
			list = append(list, args.Index(i))
		}
	default:
		list = []*exec.Value{args}
	}
	next := 0
	b := st.builder()
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			return "", fmt.Errorf("ValueError: incomplete format")
		}
		var arg *exec.Value
		if format[i] == '(' {
			end := strings.IndexByte(format[i:], ')')
			if end < 0 || !mapping {
				return "", fmt.Errorf("TypeError: format requires a mapping")
			}
			arg, _ = dictGet(args, exec.AsValue(format[i+1:i+end]))
			if isUndefined(arg) {
				return "", fmt.Errorf("KeyError: %s", pyQuote(format[i+1:i+end]))
			}
			i += end + 1
		}
		start := i
		for i < len(format) && strings.IndexByte("-+ 0#", format[i]) >= 0 {
			i++
		}
		for i < len(format) && (format[i] >= '0' && format[i] <= '9' || format[i] == '.') {
			i++
		}
		if i >= len(format) {
			return "", fmt.Errorf("ValueError: incomplete format")
		}
		spec, verb := format[start:i], format[i]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if arg == nil {
			if mapping {
				arg = args
			} else {
				if next >= len(list) {
					return "", fmt.Errorf("TypeError: not enough arguments for format string")
				}
				arg = list[next]
				next++
			}
		}
		text, err := formatOne(st, in, spec, verb, arg)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
		if b.over {
			break
		}
	}
	if !mapping && next < len(list) && !b.over {
		return "", fmt.Errorf("TypeError: not all arguments converted during string formatting")
	}
	return st.finish(in, b)
}

// formatOne formats one conversion; spec holds its flags, width and
// precision, which Go's fmt reads as C's printf does. Width and precision
// have at most six digits, and what they add must fit the budget.
func formatOne(st *renderState, in, spec string, verb byte, arg *exec.Value) (string, error) {
	widthText, precisionText, _ := strings.Cut(strings.TrimLeft(spec, "-+ 0#"), ".")
	if len(widthText) > 6 || len(precisionText) > 6 {
		return "", fmt.Errorf("ValueError: width too big")
	}
	width, _ := strconv.Atoi(widthText)
	precision, _ := strconv.Atoi(precisionText)
	if err := st.fits(in, width+precision+400); err != nil { // 400: the digits of 1e308
		return "", err
	}
	switch verb {
	case 's', 'r', 'a':
		var text string
		var err error
		if verb == 's' {
			text, err = st.str(in, arg)
		} else {
			text, err = st.repr(in, arg)
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%"+spec+"s", text), nil
	case 'd', 'i', 'u', 'x', 'X', 'o', 'c':
		n, ok := asNumber(arg)
		if !ok {
			return "", fmt.Errorf("TypeError: %%%c format: a real number is required, not %s", verb, typeName(arg))
		}
		i := n.i
		if n.isFloat {
			i = int(n.f)
		}
		switch verb {
		case 'c':
			return fmt.Sprintf("%"+spec+"c", rune(i)), nil
		case 'x', 'X', 'o':
			return fmt.Sprintf("%"+spec+string(verb), i), nil
		}
		return fmt.Sprintf("%"+spec+"d", i), nil
	case 'f', 'F', 'e', 'E', 'g', 'G':
		n, ok := asNumber(arg)
		if !ok {
			return "", fmt.Errorf("TypeError: must be real number, not %s", typeName(arg))
		}
		if !strings.Contains(spec, ".") {
			spec += ".6" // Python's default precision; Go's %g would be shortest
		}
		return fmt.Sprintf("%"+spec+string(verb), n.f), nil
	}
	return "", fmt.Errorf("ValueError: unsupported format character '%c'", verb)
}

// strftime formats t as Python's time.strftime does on glibc, for the
// directives chat templates use (%d %b %Y, %B %d, %Y-%m-%d, ...) and
// glibc's %-d style (no padding).
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 >= len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		num := func(n, width int) {
			s := strconv.Itoa(n)
			if pad {
				s = strings.Repeat("0", max(0, width-len(s))) + s
			}
			b.WriteString(s)
		}
		switch format[i] {
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'd':
			num(t.Day(), 2)
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'm':
			num(int(t.Month()), 2)
		case 'y':
			num(t.Year()%100, 2)
		case 'Y':
			num(t.Year(), 4)
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			num((t.Hour()+11)%12+1, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'j':
			num(t.YearDay(), 3)
		case 'w':
			num(int(t.Weekday()), 1)
		case 'u':
			num((int(t.Weekday())+6)%7+1, 1)
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if !pad {
				b.WriteByte('-')
			}
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
