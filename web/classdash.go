package web

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"tracer/web/qr"
	"tracer/web/view"
	"tracer/web/words"
)

// classView is the instructor's dashboard: the students' link with its
// QR code, and the class's quiz answers so far.
func (s *Server) classView(r *http.Request, w words.Words) *view.ClassView {
	link := "http://" + s.studentAddr(r) + "/"
	v := &view.ClassView{Link: link, Quiz: s.QuizView(w.Lang)}
	if c, err := qr.Encode([]byte(link)); err == nil {
		v.QR = qrView(c)
	} else { // a host name past 200 bytes: the link alone
		s.Log.Warn("classroom: no QR code of the students' link", "err", err)
	}
	return v
}

// studentAddr is the host:port students type: Config.StudentAddr, else
// the address the server listens on (loopback included: on loopback
// only, the students are this machine's), else, when it listens on every
// interface or the caller serves Handler, the host the request came to.
func (s *Server) studentAddr(r *http.Request) string {
	if s.cfg.StudentAddr != "" {
		return s.cfg.StudentAddr
	}
	if a, _ := s.listen.Load().(*net.TCPAddr); a != nil && !a.IP.IsUnspecified() {
		return a.String()
	}
	return r.Host
}

// qrView draws a code's dark modules as one SVG path: a unit square a
// module, each run of dark modules along a row one rectangle, shifted by
// the quiet zone.
func qrView(c *qr.Code) view.QRView {
	var b strings.Builder
	for y := range c.Size {
		for x := 0; x < c.Size; x++ {
			if !c.Dark(x, y) {
				continue
			}
			run := 1
			for c.Dark(x+run, y) {
				run++
			}
			n := strconv.Itoa(run)
			b.WriteString("M" + strconv.Itoa(x+view.QuietZone) + " " + strconv.Itoa(y+view.QuietZone) + "h" + n + "v1h-" + n + "z")
			x += run - 1
		}
	}
	return view.QRView{Size: c.Size, Path: b.String()}
}
