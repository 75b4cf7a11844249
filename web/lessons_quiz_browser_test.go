package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/lessons"
)

// TestBrowserQuizFeedbackSaysItOnce answers every quiz question, right and
// wrong, in each language: the page's verdict ("Correct!", "Not quite")
// opens the feedback, and the feedback itself does not say it again
// ("Correct! Correct.", "… नहीं नहीं।").
func TestBrowserQuizFeedbackSaysItOnce(t *testing.T) {
	skipShort(t)
	base, s := serve(t, Config{}, nil)
	base = strings.TrimSuffix(base, "/")
	ctx := browser(t)
	ui := s.lessons.Cat.UI
	asked := 0
	for _, lang := range lessons.Languages() {
		verdicts := []string{ui.Get(lessons.KeyCorrect, lang), ui.Get(lessons.KeyNotQuite, lang)}
		for _, l := range s.lessons.Cat.Lessons {
			for _, st := range l.Steps {
				if len(st.Questions) == 0 {
					continue
				}
				url := fmt.Sprintf("%s/lessons/%s/%s?lang=%s", base, l.ID, st.ID, lang)
				do(t, ctx, "open "+url, chromedp.Navigate(url), chromedp.WaitReady(css("[data-testid=quiz]")))
				for _, q := range st.Questions {
					for _, o := range q.Options {
						sel := fmt.Sprintf(`[data-question=%q] [data-testid=quiz-option][data-option=%q]`, q.ID, o.ID)
						do(t, ctx, "answer", chromedp.Click(css(sel)))
						text := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('[data-question=%q] [data-testid=quiz-feedback]').textContent.trim()`, q.ID))
						asked++
						for _, v := range verdicts {
							rest := strings.TrimSpace(strings.TrimPrefix(text, v))
							if rest == text {
								continue
							}
							if word := firstWord(rest); isVerdictWord(word, lang) {
								t.Errorf("%s %s/%s %s: the feedback repeats its verdict: %q", lang, l.ID, q.ID, o.ID, text)
							}
						}
					}
				}
			}
		}
	}
	if asked == 0 {
		t.Fatal("no quiz found in the lessons")
	}
}

// firstWord is the first word of s without its punctuation.
func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return strings.TrimRight(w, ".:!,।")
}

// isVerdictWord reports whether a word says right or wrong by itself.
func isVerdictWord(w, lang string) bool {
	switch lang {
	case lessons.Hindi:
		return w == "सही" || w == "नहीं" || w == "ग़लत"
	}
	switch strings.ToLower(w) {
	case "correct", "right", "yes", "no", "wrong":
		return true
	}
	return false
}
