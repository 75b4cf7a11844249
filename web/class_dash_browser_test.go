package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/web/qr/qrtest"
)

// TestBrowserQuizCountsLive (issue 37, point 13): on a classroom server
// three students answer a lesson's question, one in a browser of its own
// (clicking, then reloading the page and clicking another option) and two
// over HTTP (one answering twice); the instructor's page, open all along,
// shows without a reload how many picked each option, each student's
// first answer only, and marks the right one. The dashboard fits a phone.
func TestBrowserQuizCountsLive(t *testing.T) {
	skipShort(t)
	url, s := serve(t, Config{Classroom: true}, nil)
	base := strings.TrimSuffix(url, "/")
	l, st, q := quizQuestion(t, s)
	id := l.ID + "/" + st.ID + "/" + q.ID
	page := base + "/lessons/" + l.ID + "/" + st.ID
	a, b, c := q.Options[0].ID, q.Options[1].ID, q.Options[2].ID

	teacher := browser(t)
	do(t, teacher, "the instructor's page", chromedp.Navigate(base+"/?teach="+s.TeachToken()), chromedp.WaitReady(css("[data-testid=class-quiz-empty]")))
	waitJS(t, teacher, "the class's status", `!document.querySelector("[data-testid=class-status]").hidden`)
	do(t, teacher, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))

	student, cancel := chromedp.NewContext(teacher, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	option := func(o string) string {
		return fmt.Sprintf(`[data-question=%q] [data-testid=quiz-option][data-option=%q]`, q.ID, o)
	}
	for _, o := range []string{a, b} { // a first, then, reloaded, b: a counts
		do(t, student, "the lesson page", chromedp.Navigate(page), chromedp.WaitReady(css("body[data-ready=true]")))
		do(t, student, "answer "+o, chromedp.Click(css(option(o))))
		waitJS(t, student, "the answer sent", `document.querySelector("[data-testid=quiz]").dataset.sent === "1"`)
	}
	for _, picks := range [][]string{{b}, {b, c}} {
		cl := studentClient(t, page)
		for _, o := range picks {
			if status, _ := postAnswer(t, cl, base, answerJSON(l, st, q, o)); status != http.StatusOK {
				t.Fatalf("answer %s: status %d", o, status)
			}
		}
	}

	count := func(o string) string {
		return fmt.Sprintf(`document.querySelector('[data-question=%q] [data-option=%q]')?.dataset.count`, id, o)
	}
	waitJS(t, teacher, "the counts", fmt.Sprintf(`%s === "1" && %s === "2" && %s === "0"`, count(a), count(b), count(c)))
	if !evalJS[bool](t, teacher, `window.notReloaded === true`) {
		t.Error("the instructor's page reloaded to show the counts")
	}
	right := q.Options[q.Correct()].ID
	if got := evalJS[string](t, teacher, fmt.Sprintf(`[...document.querySelectorAll('[data-question=%q] [data-correct=true]')].map((e) => e.dataset.option).join()`, id)); got != right {
		t.Errorf("the page marks %q right, want %q", got, right)
	}
	if got := evalJS[string](t, teacher, `document.querySelector("[data-testid=class-question-total]").textContent`); got != "answers: 3" {
		t.Errorf("the question's total: got %q, want %q", got, "answers: 3")
	}
	shoot(t, teacher, "screenshot-dashboard.png")

	do(t, teacher, "phone", chromedp.EmulateViewport(360, 780))
	wide := evalJS[[]string](t, teacher, `(() => {
		const w = document.documentElement.clientWidth, wide = [];
		for (const e of document.querySelectorAll("[data-testid=class-dash], [data-testid=class-dash] *")) {
			if (e.getBoundingClientRect().right > w + 1 && !e.closest("svg > *")) wide.push(e.tagName.toLowerCase() + "." + String(e.className.baseVal ?? e.className).split(" ")[0]);
		}
		return wide.slice(0, 6);
	})()`)
	if len(wide) > 0 {
		t.Errorf("at 360 px the dashboard sticks out: %v", wide)
	}
}

// TestBrowserClassLinkQR (issue 37, point 13): the instructor's page shows
// the students' link (the address the server listens on: loopback here)
// in large type, and a QR code whose modules, read back from the page's
// SVG, decode to exactly that link.
func TestBrowserClassLinkQR(t *testing.T) {
	skipShort(t)
	url, s := serve(t, Config{Classroom: true}, nil)
	ctx := browser(t)
	do(t, ctx, "the instructor's page", chromedp.Navigate(strings.TrimSuffix(url, "/")+"/?teach="+s.TeachToken()), chromedp.WaitVisible(css("[data-testid=class-qr]")))
	got := evalJS[map[string]any](t, ctx, `(() => {
		const a = document.querySelector("[data-testid=class-link]"), qr = document.querySelector("[data-testid=class-qr]");
		const box = qr.getBoundingClientRect();
		return {text: a.textContent, href: a.getAttribute("href"), size: Number(qr.dataset.size), path: qr.querySelector("path").getAttribute("d"),
			width: box.width, height: box.height,
			big: parseFloat(getComputedStyle(a).fontSize) / parseFloat(getComputedStyle(document.body).fontSize)};
	})()`)
	if got["text"] != url || got["href"] != url {
		t.Errorf("the link reads %q (href %q), want %s", got["text"], got["href"], url)
	}
	if big := got["big"].(float64); big < 1.5 {
		t.Errorf("the link's type is %.2f times the page's, want large type (1.5 or more)", big)
	}
	if w, h := got["width"].(float64), got["height"].(float64); w < 100 || w != h {
		t.Errorf("the QR code is %v×%v px, want a square of 100 px or more", w, h)
	}
	text, err := qrtest.Decode(qrModules(t, int(got["size"].(float64)), got["path"].(string)))
	if err != nil || string(text) != url {
		t.Errorf("the QR code reads %q, %v; want %s", text, err, url)
	}
}
