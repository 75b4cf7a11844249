package live

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"tracer/lessons"
	"tracer/web/view"
)

// A class's quiz. In classroom mode a student's lesson page posts the
// option first chosen for each question (POST /quiz), and the instructor's
// page shows, for every question answered so far, how many students
// picked each option. No names: a student is an anonymous id in a cookie
// the lesson page sets (StudentCookie), and the dashboard shows counts
// only. Only a student's first answer to a question counts: the page
// shows at once whether an option is right, so later answers would count
// what the feedback said rather than what the class thought, and a
// student clicking round the options cannot stuff the counts.

// StudentCookie holds a student's anonymous id on a classroom server: 16
// random bytes and the server's signature of them, in hex, so that an id
// the server did not hand out counts nothing. HttpOnly keeps it from the
// page's scripts; SameSite=Strict keeps other sites' pages from answering
// in a student's name.
const StudentCookie = "tracer_student"

// Limits on the quiz's answers.
const (
	maxAnswerBody  = 1 << 10 // bytes of one answer's JSON
	maxQuizAnswers = 1 << 17 // answers counted, all students and questions together
	quizTextRunes  = 90      // a question as the dashboard shows it, in characters
	optionRunes    = 50      // an option as the dashboard shows it
)

// quizRef names one question by its place in the lessons' catalog.
type quizRef struct{ lesson, step, question int }

// studentID is a student's anonymous id: the random part of the cookie.
type studentID [16]byte

// quizTally counts a class's answers.
type quizTally struct {
	key [32]byte // signs the students' ids

	mu      sync.Mutex
	counted map[quizVote]bool // the questions each student has answered
	counts  map[quizRef][]int // (options,): students who picked each option first
	order   []quizRef         // the questions, by their first answer
	version uint64            // counts the answers counted, so a page hears of each change once
}

// quizVote is one student's answer to one question, whatever its option.
type quizVote struct {
	student studentID
	q       quizRef
}

func newQuizTally() (*quizTally, error) {
	t := &quizTally{counted: map[quizVote]bool{}, counts: map[quizRef][]int{}}
	if _, err := rand.Read(t.key[:]); err != nil {
		return nil, fmt.Errorf("web: classroom quiz key: %w", err)
	}
	return t, nil
}

// sign returns id's signature.
func (t *quizTally) sign(id studentID) []byte {
	m := hmac.New(sha256.New, t.key[:])
	m.Write(id[:])
	return m.Sum(nil)[:16]
}

// newStudent returns a fresh id with its cookie value.
func (t *quizTally) newStudent() (string, error) {
	var id studentID
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("web: student id: %w", err)
	}
	return hex.EncodeToString(id[:]) + "." + hex.EncodeToString(t.sign(id)), nil
}

// student reads the id in r's cookie, and reports whether there is one
// this server signed.
func (t *quizTally) student(r *http.Request) (studentID, bool) {
	var id studentID
	c, err := r.Cookie(StudentCookie)
	if err != nil {
		return id, false
	}
	raw, sig, ok := strings.Cut(c.Value, ".")
	got, err1 := hex.DecodeString(raw)
	mac, err2 := hex.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil || len(got) != len(id) {
		return id, false
	}
	copy(id[:], got)
	return id, hmac.Equal(mac, t.sign(id))
}

// count counts a student's answer, unless the student answered the
// question before; it reports whether it did.
func (t *quizTally) count(id studentID, q quizRef, option, options int) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := quizVote{id, q}
	if t.counted[v] {
		return false, nil
	}
	if len(t.counted) >= maxQuizAnswers {
		return false, fmt.Errorf("this class has counted %d quiz answers, the server's limit: restart tracer serve --classroom for a fresh count", len(t.counted))
	}
	t.counted[v] = true
	c := t.counts[q]
	if c == nil {
		c = make([]int, options)
		t.counts[q] = c
		t.order = append(t.order, q)
	}
	c[option]++
	t.version++
	return true, nil
}

// at returns the version the answers are at.
func (t *quizTally) at() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.version
}

// snapshot returns the counts by question, newest question first, and
// the version they are at.
func (t *quizTally) snapshot() ([]quizRef, [][]int, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	refs := slices.Clone(t.order)
	slices.Reverse(refs)
	counts := make([][]int, len(refs))
	for i, q := range refs {
		counts[i] = slices.Clone(t.counts[q])
	}
	return refs, counts, t.version
}

// answer is what a lesson page posts: the option chosen for a question.
type answer struct {
	Lesson   string `json:"lesson"`
	Step     string `json:"step"`
	Question string `json:"question"`
	Option   string `json:"option"`
}

// answerExample shows a well-formed answer.
const answerExample = `{"lesson": "kv-cache", "step": "quick-check", "question": "why-kv-cache", "option": "avoid-recomputing"}`

// answerReply is the answer to a lesson page's answer.
type answerReply struct {
	Type    string `json:"type"` // "answer"
	Counted bool   `json:"counted"`
	Message string `json:"message,omitempty"` // why it was not counted
}

// StudentPage gives a student's lesson page an anonymous id to answer
// with, unless its browser holds one already: true when the page should
// send its quiz answers (a classroom server, a page not the instructor's).
func (s *Protocol) StudentPage(w http.ResponseWriter, r *http.Request) bool {
	if s.Class == nil || s.Instructor(r) {
		return false
	}
	if _, ok := s.Class.quiz.student(r); ok {
		return true
	}
	v, err := s.Class.quiz.newStudent()
	if err != nil {
		s.Log.Warn("classroom", "err", err)
		return false
	}
	http.SetCookie(w, &http.Cookie{Name: StudentCookie, Value: v, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return true
}

// HandleAnswer counts a student's answer to a lesson's quiz question
// (POST /quiz, a JSON answer): the first answer of each student to each
// question counts, later ones are answered {"counted": false}. A bad
// answer gets 400 and a message that says what to send.
func (s *Protocol) HandleAnswer(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, msg []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		w.Write(msg)
	}
	fail := func(status int, format string, args ...any) {
		reply(status, ErrorMessage(fmt.Sprintf(format, args...)))
	}
	done := func(counted bool, why string) {
		b, _ := json.Marshal(answerReply{Type: "answer", Counted: counted, Message: why})
		reply(http.StatusOK, b)
	}
	if s.Class == nil {
		fail(http.StatusNotFound, "quiz answers are counted only on a classroom server (tracer serve --classroom)")
		return
	}
	if !sameOrigin(r) {
		fail(http.StatusForbidden, "an answer from another site's page: answer on the lesson page itself")
		return
	}
	a, err := readAnswer(http.MaxBytesReader(w, r.Body, maxAnswerBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(http.StatusRequestEntityTooLarge, "an answer is at most %d bytes of JSON, like %s", maxAnswerBody, answerExample)
			return
		}
		fail(http.StatusBadRequest, "%v", err)
		return
	}
	q, option, options, err := s.findAnswer(a)
	if err != nil {
		fail(http.StatusBadRequest, "bad answer: %v", err)
		return
	}
	if s.Instructor(r) {
		done(false, "the instructor's answers are not counted")
		return
	}
	id, ok := s.Class.quiz.student(r)
	if !ok {
		fail(http.StatusBadRequest, "this page has no student id (the %s cookie): reload the lesson page, then answer again", StudentCookie)
		return
	}
	counted, err := s.Class.quiz.count(id, q, option, options)
	switch {
	case err != nil:
		fail(http.StatusServiceUnavailable, "%v", err)
	case !counted:
		done(false, "only your first answer to a question is counted")
	default:
		done(true, "")
	}
}

// readAnswer reads exactly one JSON answer with every field given.
func readAnswer(body io.Reader) (answer, error) {
	var a answer
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return a, err
		}
		return a, fmt.Errorf("bad answer: want a JSON object like %s: %v", answerExample, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return a, err
		}
		return a, errors.New("bad answer: extra data after the JSON object")
	}
	for _, f := range []struct{ name, v string }{{"lesson", a.Lesson}, {"step", a.Step}, {"question", a.Question}, {"option", a.Option}} {
		if f.v == "" {
			return a, fmt.Errorf("bad answer: no %q: want a JSON object like %s", f.name, answerExample)
		}
	}
	return a, nil
}

// findAnswer looks an answer up in the lessons: the question, the option's
// index and the question's number of options.
func (s *Protocol) findAnswer(a answer) (quizRef, int, int, error) {
	cat := s.Class.lessons
	li := slices.IndexFunc(cat.Lessons, func(l lessons.Lesson) bool { return l.ID == a.Lesson })
	if li < 0 {
		return quizRef{}, 0, 0, fmt.Errorf("no lesson %.60q: answer from a lesson's page (/lessons)", a.Lesson)
	}
	l := &cat.Lessons[li]
	si := l.Index(a.Step)
	if si < 0 {
		return quizRef{}, 0, 0, fmt.Errorf("lesson %q has no step %.60q: reload the lesson page", l.ID, a.Step)
	}
	st := &l.Steps[si]
	qi := slices.IndexFunc(st.Questions, func(q lessons.Question) bool { return q.ID == a.Question })
	if qi < 0 {
		return quizRef{}, 0, 0, fmt.Errorf("step %q of lesson %q has no question %.60q: reload the lesson page", st.ID, l.ID, a.Question)
	}
	q := &st.Questions[qi]
	oi := slices.IndexFunc(q.Options, func(o lessons.Option) bool { return o.ID == a.Option })
	if oi < 0 {
		ids := make([]string, len(q.Options))
		for i, o := range q.Options {
			ids[i] = o.ID
		}
		return quizRef{}, 0, 0, fmt.Errorf("question %q has no option %.60q: want one of %s", q.ID, a.Option, strings.Join(ids, ", "))
	}
	return quizRef{li, si, qi}, oi, len(q.Options), nil
}

// QuizView is the class's quiz answers as the instructor's page shows
// them, in lang; the zero view outside classroom mode.
func (s *Protocol) QuizView(lang string) view.ClassQuizView {
	v, _ := s.quizView(lang)
	return v
}

// quizView is QuizView and the version of the answers it shows.
func (s *Protocol) quizView(lang string) (view.ClassQuizView, uint64) {
	if s.Class == nil {
		return view.ClassQuizView{}, 0
	}
	w := s.Words(lang)
	v := view.ClassQuizView{Title: w.T("dbg-class-quiz"), Empty: w.T("dbg-class-quiz-none"), Correct: w.T("dbg-class-quiz-correct")}
	refs, counts, version := s.Class.quiz.snapshot()
	for i, ref := range refs {
		l := &s.Class.lessons.Lessons[ref.lesson]
		st := &l.Steps[ref.step]
		q := &st.Questions[ref.question]
		total := 0
		for _, c := range counts[i] {
			total += c
		}
		qv := view.ClassQuestionView{
			ID:     l.ID + "/" + st.ID + "/" + q.ID,
			Lesson: w.F("lesson-n", "n", strconv.Itoa(ref.lesson+1)),
			Text:   shorten(q.Question.In(lang), quizTextRunes),
			Total:  w.F("dbg-class-quiz-total", "n", strconv.Itoa(total)),
		}
		for j, o := range q.Options {
			c := counts[i][j]
			qv.Options = append(qv.Options, view.ClassOptionView{
				ID: o.ID, Label: string(rune('A' + j)), Text: shorten(o.Text.In(lang), optionRunes),
				Count: c, Width: strconv.Itoa(100*c/max(total, 1)) + "%", Correct: o.Correct,
			})
		}
		v.Questions = append(v.Questions, qv)
	}
	return v, version
}

// shorten drops a text's code marks (backticks) and cuts it to n
// characters, with an ellipsis when cut.
func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "`", "")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// msgQuiz is the type of the instructor's quiz answers, sent when they
// change: {"type": "quiz", "html": "..."}, the ClassQuiz component.
const msgQuiz = "quiz"

// quizMessage renders the class's answers for the instructor's page in
// lang, unless they are still at version sent; it returns nil then, else
// the message and its version.
func (s *Protocol) quizMessage(lang string, sent uint64) ([]byte, uint64) {
	if s.Class == nil {
		return nil, sent
	}
	if s.Class.quiz.at() == sent {
		return nil, sent
	}
	v, version := s.quizView(lang)
	var b bytes.Buffer
	if err := view.ClassQuiz(v).Render(context.Background(), &b); err != nil {
		return ErrorMessage("could not show the quiz answers: " + err.Error()), version
	}
	msg, _ := json.Marshal(struct {
		Type string `json:"type"`
		HTML string `json:"html"`
	}{msgQuiz, b.String()})
	return msg, version
}
