package web

import (
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"tracer/web/qr/qrtest"
	"tracer/web/view"
)

// qrPathRun is one rectangle of the dashboard's QR path: a run of dark
// modules along a row, "M{x} {y}h{n}v1h-{n}z".
var qrPathRun = regexp.MustCompile(`^M(\d+) (\d+)h(\d+)v1h-(\d+)z`)

// qrModules reads the modules of a QR code of size modules a side back
// from the SVG path the dashboard draws, the quiet zone taken off.
func qrModules(t *testing.T, size int, d string) [][]bool {
	t.Helper()
	m := make([][]bool, size)
	for y := range m {
		m[y] = make([]bool, size)
	}
	for rest := d; rest != ""; {
		r := qrPathRun.FindStringSubmatch(rest)
		if r == nil || r[3] != r[4] {
			t.Fatalf("the QR path does not read as runs of modules at %.40q", rest)
		}
		x, _ := strconv.Atoi(r[1])
		y, _ := strconv.Atoi(r[2])
		n, _ := strconv.Atoi(r[3])
		x, y = x-view.QuietZone, y-view.QuietZone
		if y < 0 || y >= size || x < 0 || x+n > size {
			t.Fatalf("the QR path draws outside the code: %s", r[0])
		}
		for k := range n {
			m[y][x+k] = true
		}
		rest = rest[len(r[0]):]
	}
	return m
}

// TestClassLinkAndQR (issue 37, point 13): the instructor's page shows the
// students' link, with the address serve gives it (Config.StudentAddr),
// else the one the page was reached at, and a QR code that decodes to
// exactly that link. Students' pages have no dashboard.
func TestClassLinkAndQR(t *testing.T) {
	link := regexp.MustCompile(`data-testid="class-link">([^<]*)<`)
	qrAttrs := regexp.MustCompile(`data-testid="class-qr" data-size="(\d+)"[^>]*>\s*<rect[^>]*></rect>\s*<path d="([^"]*)"`)
	for _, c := range []struct {
		name, addr string
	}{
		{"the address serve gives", "192.168.1.5:8080"},
		{"an IPv6 address", "[2001:db8::5]:18434"},
		{"the address the page was reached at", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Config{Classroom: true, StudentAddr: c.addr})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s.Handler())
			t.Cleanup(func() { s.Close(); ts.Close() })
			want := "http://" + c.addr + "/"
			if c.addr == "" {
				want = ts.URL + "/"
			}
			html := instructorPage(t, s, ts.URL+"/")
			m := link.FindStringSubmatch(html)
			if m == nil || m[1] != want {
				t.Fatalf("the instructor's page shows the link %v, want %s", m, want)
			}
			q := qrAttrs.FindStringSubmatch(html)
			if q == nil {
				t.Fatal("the instructor's page has no QR code")
			}
			size, _ := strconv.Atoi(q[1])
			got, err := qrtest.Decode(qrModules(t, size, q[2]))
			if err != nil || string(got) != want {
				t.Errorf("the QR code reads %q, %v; want %s", got, err, want)
			}
			if _, student, _ := getPage(t, ts.URL+"/"); strings.Contains(student, "class-dash") {
				t.Error("a student's page shows the instructor's dashboard")
			}
		})
	}
}
