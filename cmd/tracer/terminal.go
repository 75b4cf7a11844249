package main

import (
	"fmt"
	"io"
)

// terminalWriter escapes the control characters in what it writes, so a
// string from a file, a trace or a model (a model name, a token, generated
// text) cannot move the cursor, rewrite the screen or retitle the window
// of the person reading tracer's output. Newline and tab pass; every other
// C0 control, DEL and the C1 controls (U+0080–U+009F) are written as
// \u00XX, which inside a JSON string is the same character again, so JSON
// output stays exactly what it was.
type terminalWriter struct{ w io.Writer }

// needsEscape reports whether p holds a byte terminalWriter rewrites.
func needsEscape(p []byte) bool {
	for i, b := range p {
		if isControl(b) || b == 0xC2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9F {
			return true
		}
	}
	return false
}

func isControl(b byte) bool { return b < 0x20 && b != '\n' && b != '\t' || b == 0x7F }

func (t terminalWriter) Write(p []byte) (int, error) {
	if !needsEscape(p) {
		return t.w.Write(p)
	}
	out := make([]byte, 0, len(p)+32)
	for i := 0; i < len(p); i++ {
		switch b := p[i]; {
		case isControl(b):
			out = fmt.Appendf(out, `\u%04x`, b)
		case b == 0xC2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9F:
			out = fmt.Appendf(out, `\u%04x`, p[i+1])
			i++
		default:
			out = append(out, b)
		}
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
