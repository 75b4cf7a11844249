package web

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// stepperPanels reads what a page's stepper shows: the step's position,
// the test ids of everything in it (its panels, in order) and its text,
// the classroom banner left out (a follower's says it follows).
const stepperPanels = `(() => {
	const s = document.getElementById("stepper").cloneNode(true);
	s.querySelectorAll("[data-testid=classroom-banner]").forEach((b) => b.remove());
	const p = s.querySelector("[data-testid=step-index]");
	return {
		index: Number(p.dataset.index),
		ids: [...s.querySelectorAll("[data-testid]")].map((e) => e.dataset.testid).join(" "),
		text: s.textContent.replace(/\s+/g, " ").trim(),
		chosen: s.querySelector("[data-testid=chosen-panel]")?.textContent.replace(/\s+/g, " ").trim() ?? "",
	};
})()`

type panels struct {
	Index  int    `json:"index"`
	IDs    string `json:"ids"`
	Text   string `json:"text"`
	Chosen string `json:"chosen"`
}

// TestBrowserClassFollowers runs a class in real Chromium: an instructor
// records a stories260K run and steps through it; three followers, two in
// English and one in Hindi, show at every move the instructor's step with
// the same panels (the English ones word for word), built from the
// classroom's stream; a follower whose connection drops comes back at the
// instructor's step.
func TestBrowserClassFollowers(t *testing.T) {
	skipShort(t)
	url, srv := serve(t, Config{Classroom: true, ModelsDir: realModels(t)}, nil)
	teacher := browser(t)
	open(t, teacher, url+"?teach="+srv.TeachToken())
	fillRun(t, teacher, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "6"})
	runAndWait(t, teacher, "run-generate", "done")
	_, n := index(t, teacher)

	langs := []string{"en", "en", "hi"}
	var students []context.Context
	for _, lang := range langs {
		ctx, cancel := chromedp.NewContext(teacher, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		open(t, ctx, url+"?lang="+lang)
		students = append(students, ctx)
	}
	hindi := func(ctx context.Context) panels {
		t.Helper()
		return evalJS[panels](t, ctx, stepperPanels)
	}
	for _, pos := range []int{0, 1, n - 1, 2, 0} {
		do(t, teacher, "move", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`window.tracer.send({type: "step", index: %d})`, pos)))
		at := fmt.Sprintf(`document.querySelector("[data-testid=step-index]").dataset.index === "%d"`, pos)
		waitJS(t, teacher, fmt.Sprintf("the instructor at %d", pos), at)
		want := evalJS[panels](t, teacher, stepperPanels)
		if want.Chosen == "" {
			t.Fatalf("the instructor's step %d shows no chosen token", pos)
		}
		for i, st := range students {
			waitJS(t, st, fmt.Sprintf("follower %d at %d", i, pos), at+` && document.querySelector("[data-testid=classroom-banner]").dataset.following === "true"`)
			got := hindi(st)
			if got.IDs != want.IDs {
				t.Errorf("step %d, follower %d (%s): panels %q, want the instructor's %q", pos, i, langs[i], got.IDs, want.IDs)
			}
			if langs[i] == "en" && got.Text != want.Text {
				t.Errorf("step %d, follower %d: shows %q, want the instructor's %q", pos, i, got.Text, want.Text)
			}
			if langs[i] == "hi" && got.Text == want.Text {
				t.Errorf("step %d, the Hindi follower shows the English text", pos)
			}
		}
	}
	// The followers' chart links name their own session, never the
	// placeholder the stream carries.
	for i, st := range students {
		hrefs := evalJS[[]string](t, st, `[...document.querySelectorAll("#stepper a[href*='session=']")].map((a) => a.getAttribute("href"))`)
		session := evalJS[string](t, st, `document.body.dataset.session`)
		if len(hrefs) == 0 {
			t.Errorf("follower %d: no download links", i)
		}
		for _, h := range hrefs {
			if !slices.Contains([]string{"/chart?session=" + session}, h[:min(len(h), len("/chart?session=")+len(session))]) {
				t.Errorf("follower %d: link %q does not name its session %s", i, h, session)
			}
		}
	}

	// A follower that loses its connection reconnects and shows the
	// instructor's step, moved meanwhile.
	session := evalJS[string](t, students[0], `document.body.dataset.session`)
	srv.Hub.Mu.Lock()
	for c := range srv.Hub.BySession[session] {
		srv.Hub.Drop(c)
	}
	srv.Hub.Mu.Unlock()
	do(t, teacher, "move", chromedp.Evaluate[chromedp.Void](`window.tracer.send({type: "step", index: 3})`))
	waitJS(t, students[0], "the reconnected follower at 3", `document.querySelector("[data-testid=step-index]").dataset.index === "3"`)
	if c := srv.Hub.Count(); c != 4 {
		t.Errorf("got %d connections after the reconnect, want 4", c)
	}
}
