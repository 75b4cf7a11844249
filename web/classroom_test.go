package web

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"tracer/web/live"

	"github.com/gorilla/websocket"
)

var pageSession = regexp.MustCompile(`data-session="([0-9a-f]+)"`)

// getPage fetches a page and returns its status, body and session id.
func getPage(t *testing.T, url string) (int, string, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	id := ""
	if m := pageSession.FindSubmatch(b); m != nil {
		id = string(m[1])
	}
	return res.StatusCode, string(b), id
}

func TestClassroom(t *testing.T) {
	s, ts := startServer(t, Config{Classroom: true}, nil)
	token := s.TeachToken()
	if len(token) != 64 {
		t.Fatalf("got token %q, want 64 hex digits", token)
	}

	status, page, leaderID := getPage(t, ts.URL+"/?teach="+token)
	if status != http.StatusOK || !strings.Contains(page, `data-role="instructor"`) || leaderID != s.Class.Leader.ID {
		t.Fatalf("instructor page: got %d, role instructor %v", status, strings.Contains(page, `data-role="instructor"`))
	}
	if status, _, _ := getPage(t, ts.URL+"/?teach="+strings.Repeat("0", 64)); status != http.StatusForbidden {
		t.Errorf("a wrong token: got %d, want 403", status)
	}
	// Knowing the instructor's session id is not enough.
	_, page, id := getPage(t, ts.URL+"/?session="+leaderID)
	if id == leaderID || strings.Contains(page, token) {
		t.Errorf("/?session=<the instructor's> gave the instructor's page without the token")
	}
	status, page, studentID := getPage(t, ts.URL+"/")
	if status != http.StatusOK || !strings.Contains(page, `data-role="student"`) || !strings.Contains(page, `data-following="true"`) || strings.Contains(page, token) {
		t.Fatalf("student page: got %d; want a following student's page without the token", status)
	}

	wsURL := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws?session="
	if _, res, err := websocket.DefaultDialer.Dial(wsURL+leaderID, nil); err == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("the instructor's socket without the token: got %v, want 403", err)
	}
	teacher := dial(t, wsURL+leaderID+"&teach="+token)
	student := dial(t, wsURL+studentID)
	roundTrip(t, student, `{"type": "view"}`)

	// The student cannot drive; the instructor can, and the student follows.
	if o := roundTrip(t, student, `{"type": "next"}`); o.Type != live.MsgError || !strings.Contains(o.Message, "following the instructor") {
		t.Errorf("a following student's next: got %+v, want an error", o)
	}
	if o := roundTrip(t, teacher, `{"type": "step", "index": 3}`); o.Index != 3 {
		t.Fatalf("instructor: got index %d, want 3", o.Index)
	}
	if o := read(t, student); o.Type != live.MsgView || o.Index != 3 || !strings.Contains(o.HTML, `data-following="true"`) {
		t.Errorf("student: got %s at %d, want the instructor's view at 3", o.Type, o.Index)
	}

	// Detached, the student explores alone.
	if o := roundTrip(t, student, `{"type": "detach"}`); o.Index != 3 || !strings.Contains(o.HTML, `data-following="false"`) {
		t.Errorf("detach: got index %d, want the copy at 3, detached", o.Index)
	}
	if o := roundTrip(t, student, `{"type": "next"}`); o.Index != 4 {
		t.Errorf("detached next: got %d, want 4", o.Index)
	}
	if o := roundTrip(t, teacher, `{"type": "first"}`); o.Index != 0 {
		t.Errorf("instructor: got %d, want 0", o.Index)
	}
	if o := roundTrip(t, student, `{"type": "view"}`); o.Index != 4 {
		t.Errorf("detached student moved with the instructor: at %d, want 4", o.Index)
	}
	// Rejoining follows the instructor again.
	if o := roundTrip(t, student, `{"type": "rejoin"}`); o.Index != 0 || !strings.Contains(o.HTML, `data-following="true"`) {
		t.Errorf("rejoin: got index %d, want the instructor's 0", o.Index)
	}
	if o := roundTrip(t, teacher, `{"type": "detach"}`); o.Type != live.MsgError {
		t.Errorf("the instructor's detach: got %+v, want an error", o)
	}
}
