package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"tracer/web/live"
)

// TestClassCountsAndRecall (issue 37, point 13): the instructor's page
// hears, every second, how many students follow and how many explore on
// their own, and the counts follow 30 real WebSocket clients connecting,
// detaching and leaving; "bring everyone back" (recall) makes every
// detached student follow again, its page taking the instructor's view.
// A student cannot recall the class.
func TestClassCountsAndRecall(t *testing.T) {
	s, ts := startServer(t, Config{Classroom: true}, nil)
	token := s.TeachToken()
	_, _, leaderID := getPage(t, ts.URL+"/?teach="+token)
	wsURL := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws?session="
	teacher := dial(t, wsURL+leaderID+"&teach="+token)

	// counts waits for the instructor's class message to say following
	// and detached.
	counts := func(following, detached int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		var last string
		for time.Now().Before(deadline) {
			teacher.SetReadDeadline(deadline)
			_, data, err := teacher.ReadMessage()
			if err != nil {
				t.Fatalf("the instructor's socket: %v (last class message %s)", err, last)
			}
			var m struct {
				Type                string
				Following, Detached int
			}
			if json.Unmarshal(data, &m) != nil || m.Type != "class" {
				continue
			}
			last = string(data)
			if m.Following == following && m.Detached == detached {
				return
			}
		}
		t.Fatalf("the instructor's page says %s, want %d following and %d on their own", last, following, detached)
	}

	const n = 30
	students := make([]*websocket.Conn, n)
	ids := make([]string, n)
	for i := range students {
		_, _, ids[i] = getPage(t, ts.URL+"/")
		students[i] = dial(t, wsURL+ids[i])
	}
	counts(n, 0)

	for i := range 10 { // ten explore on their own
		if o := roundTrip(t, students[i], `{"type": "detach"}`); o.Type != live.MsgView || strings.Contains(o.HTML, `data-following="true"`) {
			t.Fatalf("student %d detached: got %s (following %v)", i, o.Type, strings.Contains(o.HTML, `data-following="true"`))
		}
	}
	counts(n-10, 10)

	for _, i := range []int{0, 1, 2, 3, 4, 20, 21, 22, 23, 24} { // five detached and five following leave
		students[i].Close()
	}
	counts(n-10-5, 5)

	if o := roundTrip(t, students[12], `{"type": "recall"}`); o.Type != live.MsgError || !strings.Contains(o.Message, "only the instructor") {
		t.Errorf("a student's recall: got %+v, want an error", o)
	}
	teacher.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := teacher.WriteMessage(websocket.TextMessage, []byte(`{"type": "recall"}`)); err != nil {
		t.Fatal(err)
	}
	counts(n-10, 0)
	for i := 5; i < 10; i++ { // each recalled page shows the instructor's view, following
		deadline := time.Now().Add(10 * time.Second)
		for {
			if o := read(t, students[i]); o.Type == live.MsgView && strings.Contains(o.HTML, `data-following="true"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("student %d: no following view after the recall", i)
			}
		}
		if sess, ok := s.Sessions.Get(ids[i]); !ok || !sess.Following() {
			t.Errorf("student %d: session following %v after the recall", i, ok && sess.Following())
		}
	}
}
