package trace

import (
	"strings"
	"testing"
)

func TestDecodeHTML(t *testing.T) {
	const tiny = `{"format":"tracer/v1","model":{"name":"m","kind":"toy"}}`
	for _, tc := range []struct {
		name, in, want string // want: the error's text, "" for success
	}{
		{"no embedded trace", "<!DOCTYPE html><p>hi</p>", "without an embedded trace"},
		{"cut off", "<html>" + HTMLMarker + `{"format":`, "cut off"},
		{"empty", "<html>" + HTMLMarker + "  " + HTMLEnd, "empty or not a JSON object"},
		{"not an object", "<html>" + HTMLMarker + "[1]" + HTMLEnd, "empty or not a JSON object"},
		{"foreign JSON", "<html>" + HTMLMarker + `{"a":1}` + HTMLEnd, `no "format" field`},
		{"escaped markup", "<html>" + HTMLMarker + strings.Replace(tiny, `"m"`, `"\u003c/script\u003e"`, 1) + HTMLEnd + "</html>", "?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Decode([]byte(tc.in))
			switch {
			case tc.want == "?": // reads, or fails validation for its own reasons, never as HTML
				if err != nil && strings.Contains(err.Error(), "HTML") {
					t.Errorf("got %v, want the embedded trace read", err)
				}
				if err == nil && tr.Model.Name != "</script>" {
					t.Errorf("got model name %q, want %q", tr.Model.Name, "</script>")
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// FuzzFromHTML: no panic, and what FromHTML returns is a JSON object's
// opening that sits inside the input after the marker.
func FuzzFromHTML(f *testing.F) {
	f.Add([]byte("<html>" + HTMLMarker + `{"format":"tracer/v1"}` + HTMLEnd))
	f.Add([]byte("<html>" + HTMLMarker + HTMLMarker + HTMLEnd + HTMLEnd))
	f.Add([]byte("<p>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := FromHTML(data)
		if err != nil {
			return
		}
		if len(got) == 0 || got[0] != '{' {
			t.Fatalf("got %.40q, want a JSON object", got)
		}
		i := strings.Index(string(data), HTMLMarker)
		if i < 0 || !strings.Contains(string(data[i:]), string(got)) {
			t.Fatalf("got %.40q, which is not after the marker in the input", got)
		}
		Decode(data) // must not panic
	})
}
