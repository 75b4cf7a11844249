package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"tracer/lessons"
	"tracer/web/live"
)

// quizQuestion finds a lesson step whose first question has at least
// three options, for the quiz's tests.
func quizQuestion(t *testing.T, s *Server) (*lessons.Lesson, *lessons.Step, *lessons.Question) {
	t.Helper()
	for i := range s.lessons.Cat.Lessons {
		l := &s.lessons.Cat.Lessons[i]
		for j := range l.Steps {
			if st := &l.Steps[j]; len(st.Questions) > 0 && len(st.Questions[0].Options) >= 3 {
				return l, st, &st.Questions[0]
			}
		}
	}
	t.Fatal("no lesson has a question of three options")
	return nil, nil, nil
}

// studentClient is a student's browser without the browser: a cookie
// jar that has opened the lesson page at url, which must ask it to send
// its answers.
func studentClient(t *testing.T, url string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `data-answer-url="/quiz"`) {
		t.Fatalf("the classroom's lesson page %s does not send its answers (no data-answer-url)", url)
	}
	return c
}

// postAnswer posts an answer's JSON and returns the status and the reply.
func postAnswer(t *testing.T, c *http.Client, base, body string, header ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/quiz", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("the answer's reply is not JSON: %q", b)
	}
	return res.StatusCode, m
}

// answerJSON is an answer to q of st in l.
func answerJSON(l *lessons.Lesson, st *lessons.Step, q *lessons.Question, option string) string {
	return fmt.Sprintf(`{"lesson": %q, "step": %q, "question": %q, "option": %q}`, l.ID, st.ID, q.ID, option)
}

// quizCounts reads the counts by option of the question id in the
// dashboard's HTML.
func quizCounts(html, id string) map[string]string {
	i := strings.Index(html, `data-question="`+id+`"`)
	if i < 0 {
		return nil
	}
	html = html[i:]
	if j := strings.Index(html[1:], `data-question="`); j >= 0 {
		html = html[:j+1]
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`data-option="([^"]+)" data-count="(\d+)"`).FindAllStringSubmatch(html, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestQuizAnswersCountOncePerStudent (issue 37, point 13): on a classroom
// server three students answer a lesson's question; the instructor's
// socket hears the counts per option (the first answer of each student
// only, the instructor's own not counted), and the instructor's page,
// reloaded, shows them too, in English or Hindi, with no student's id on
// it.
func TestQuizAnswersCountOncePerStudent(t *testing.T) {
	s, ts := startServer(t, Config{Classroom: true}, nil)
	l, st, q := quizQuestion(t, s)
	page := ts.URL + "/lessons/" + l.ID + "/" + st.ID
	_, _, leaderID := getPage(t, ts.URL+"/?teach="+s.TeachToken())
	teacher := dial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws?session="+leaderID+"&teach="+s.TeachToken())

	a, b, c := q.Options[0].ID, q.Options[1].ID, q.Options[2].ID
	// Each student's answers in turn, and their cookies, which the
	// dashboard must not show.
	var ids []string
	for i, picks := range [][]string{{a}, {b, a}, {b, c, b}} {
		cl := studentClient(t, page)
		u, _ := url.Parse(ts.URL)
		for _, ck := range cl.Jar.Cookies(u) {
			ids = append(ids, ck.Value)
		}
		for k, o := range picks {
			status, reply := postAnswer(t, cl, ts.URL, answerJSON(l, st, q, o))
			if status != http.StatusOK || reply["counted"] != (k == 0) {
				t.Errorf("student %d, answer %d (%s): got %d %v, want counted %v", i, k, o, status, reply, k == 0)
			}
		}
	}
	instructor := &http.Client{}
	status, reply := postAnswer(t, instructor, ts.URL, answerJSON(l, st, q, c), "Cookie", live.TeachCookie+"="+s.TeachToken())
	if status != http.StatusOK || reply["counted"] != false {
		t.Errorf("the instructor's answer: got %d %v, want it not counted", status, reply)
	}

	want := map[string]string{a: "1", b: "2", c: "0"}
	id := l.ID + "/" + st.ID + "/" + q.ID
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for {
		teacher.SetReadDeadline(deadline)
		_, data, err := teacher.ReadMessage()
		if err != nil {
			t.Fatalf("the instructor's socket: %v (last quiz message %.300s)", err, last)
		}
		var m struct{ Type, HTML string }
		if json.Unmarshal(data, &m) != nil || m.Type != "quiz" {
			continue
		}
		last = m.HTML
		if fmt.Sprint(quizCounts(m.HTML, id)) == fmt.Sprint(want) {
			break
		}
	}
	html := instructorPage(t, s, ts.URL+"/")
	if got := quizCounts(html, id); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the instructor's page shows %v, want %v", got, want)
	}
	marked := regexp.MustCompile(`data-option="([^"]+)" data-count="\d+" data-correct="true"`).FindAllStringSubmatch(html, -1)
	if right := q.Options[q.Correct()].ID; len(marked) != 1 || marked[0][1] != right {
		t.Errorf("the instructor's page marks %v right, want %s alone", marked, right)
	}
	hindi := instructorPage(t, s, ts.URL+"/?lang=hi")
	for _, want := range []string{"क्विज़ के जवाब", "जवाब: 3", "पाठ ", strings.ReplaceAll(strings.Fields(q.Question.In(lessons.Hindi))[0], "`", "")} {
		if !strings.Contains(hindi, want) {
			t.Errorf("the instructor's page in Hindi does not say %q", want)
		}
	}
	for _, v := range ids {
		if cut, _, _ := strings.Cut(v, "."); strings.Contains(html+last, cut) {
			t.Errorf("the dashboard shows a student's id %s", cut)
		}
	}
}

// instructorPage returns the page at url as the instructor's browser,
// holding the secret in its cookie, gets it.
func instructorPage(t *testing.T, s *Server, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Cookie", live.TeachCookie+"="+s.TeachToken())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the instructor's page %s: %s", url, res.Status)
	}
	return string(b)
}

// TestQuizAnswerErrors: an answer is checked like the server's other
// inputs: a lesson, step, question or option the lessons do not have, a
// malformed or oversized body, a page without the server's student id, or
// another site's page get a clear refusal; outside classroom mode the
// lesson page sends nothing and /quiz is not there.
func TestQuizAnswerErrors(t *testing.T) {
	s, ts := startServer(t, Config{Classroom: true}, nil)
	l, st, q := quizQuestion(t, s)
	page := ts.URL + "/lessons/" + l.ID + "/" + st.ID
	cl := studentClient(t, page)
	good := answerJSON(l, st, q, q.Options[0].ID)
	for _, c := range []struct {
		name, body string
		header     []string
		client     *http.Client
		status     int
		says       string
	}{
		{"unknown lesson", `{"lesson": "nope", "step": "a", "question": "b", "option": "c"}`, nil, cl, 400, `no lesson "nope"`},
		{"unknown step", fmt.Sprintf(`{"lesson": %q, "step": "nope", "question": "b", "option": "c"}`, l.ID), nil, cl, 400, `has no step "nope"`},
		{"unknown question", fmt.Sprintf(`{"lesson": %q, "step": %q, "question": "nope", "option": "c"}`, l.ID, st.ID), nil, cl, 400, `has no question "nope"`},
		{"unknown option", answerJSON(l, st, q, "nope"), nil, cl, 400, `has no option "nope": want one of ` + q.Options[0].ID},
		{"missing option", fmt.Sprintf(`{"lesson": %q, "step": %q, "question": %q}`, l.ID, st.ID, q.ID), nil, cl, 400, `no "option"`},
		{"unknown field", `{"lesson": "a", "name": "Asha"}`, nil, cl, 400, `unknown field "name"`},
		{"two objects", good + good, nil, cl, 400, "extra data"},
		{"not JSON", "option=a", nil, cl, 400, "want a JSON object like"},
		{"too big", `{"lesson": "` + strings.Repeat("x", 2000) + `"}`, nil, cl, 413, "at most 1024 bytes"},
		{"no student id", good, nil, &http.Client{}, 400, "reload the lesson page"},
		{"forged student id", good, []string{"Cookie", live.StudentCookie + "=00112233445566778899aabbccddeeff.00112233445566778899aabbccddeeff"}, &http.Client{}, 400, "reload the lesson page"},
		{"another site", good, []string{"Origin", "http://evil.example"}, cl, 403, "another site"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, reply := postAnswer(t, c.client, ts.URL, c.body, c.header...)
			if msg, _ := reply["message"].(string); status != c.status || !strings.Contains(msg, c.says) {
				t.Errorf("got %d %q, want %d saying %q", status, msg, c.status, c.says)
			}
		})
	}
	if v := s.QuizView("en"); len(v.Questions) != 0 {
		t.Errorf("refused answers were counted: %+v", v.Questions)
	}

	ps, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	plain := httptest.NewServer(ps.Handler())
	t.Cleanup(func() { ps.Close(); plain.Close() })
	res, err := http.Get(plain.URL + "/lessons/" + l.ID + "/" + st.ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(body), "data-answer-url") || len(res.Cookies()) > 0 {
		t.Errorf("outside classroom mode the lesson page sends its answers (cookies %v)", res.Cookies())
	}
	if status, reply := postAnswer(t, &http.Client{}, plain.URL, good); status != http.StatusNotFound || !strings.Contains(fmt.Sprint(reply["message"]), "--classroom") {
		t.Errorf("/quiz outside classroom mode: got %d %v, want 404", status, reply)
	}
}
